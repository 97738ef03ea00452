// Terminal control sequences in what agents reported (a colour, a window title, a carriage return
// that writes over a line, backspaces) never reach the text the tools print.
import { strict as assert } from 'node:assert';
import type { MemoryEngine } from '../../src/core/engine';
import { printable } from '../../src/core/model/printable';
import { recallContext } from '../../src/core/tools/recallContext';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { openTestEngine, removeDir, toolContext } from './mcpFixture';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('printable text', function () {
  this.timeout(120_000);

  it('drops escape sequences (7-bit and 8-bit) and control characters, keeps tabs and line breaks', () => {
    assert.equal(printable('plain text\twith a tab\nand a line'), 'plain text\twith a tab\nand a line');
    assert.equal(printable('Deploy \u001b[31mfailed\u001b[0m'), 'Deploy failed');
    assert.equal(printable('a \u001b]0;pwned\u0007title \u001b]8;;http://x\u001b\\link\u001b]8;;\u001b\\'), 'a title link');
    assert.equal(printable('\u009b2Jcleared \u009d0;t\u009cdone'), 'cleared done');
    assert.equal(printable('one\r\ntwo\rthree'), 'one\ntwo\nthree');
    assert.equal(printable('ok\u0008\u0008no \u0007bell\u007f \u0000nul \u001bMup'), 'okno bell nul up');
    assert.equal(printable('naïve — 日本語 🙂'), 'naïve — 日本語 🙂');
  });

  describe('through the tools', () => {
    let engine: MemoryEngine;
    let dir: string;
    before(async () => {
      ({ engine, dir } = await openTestEngine());
    });
    after(async () => {
      await engine.close();
      removeDir(dir);
    });

    it("an agent's report with terminal control sequences: recall_context and retrieve_memory print it without them", async () => {
      const scope = { project: 'github.com/acme/printable' };
      await engine.observe(
        [{ type: 'note', title: 'Deploy \u001b]0;pwned\u0007 report \u001b[2J', narrative: 'Deploy of the billing service \u001b[31mfailed\u001b[0m\r\rfake: all good\u0008\u0008 on staging.' }],
        scope,
      );
      await engine.settled();
      const pack = await recallContext(toolContext(engine, scope), { query: 'deploy billing service staging' });
      const r = await retrieveMemory(toolContext(engine, scope), { prompt: 'What happened with the deploy of the billing service?' });
      assert.ok(pack.items.length > 0, pack.text);
      assert.match(pack.text, /Deploy of the billing service failed\n\nfake: all good on staging\./);
      assert.ok(!CONTROL.test(pack.text), JSON.stringify(pack.text));
      assert.ok(!CONTROL.test(r.content_text ?? ''), JSON.stringify(r.content_text));
      const strings = (v: unknown): string[] => (typeof v === 'string' ? [v] : v && typeof v === 'object' ? Object.values(v).flatMap(strings) : []);
      assert.deepEqual(
        [...strings(pack.items), ...strings(r)].filter((t) => CONTROL.test(t)),
        [],
        'a field of the structured answers holds a control character',
      );
    });
  });
});
