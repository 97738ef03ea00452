// Text cut to a length limit is cut between characters, never inside one: half a surrogate pair
// is not valid Unicode (UTF-8 encoders refuse it, the store writes U+FFFD for it).

import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { SymbolDocs, documentSections, symbolDocs } from '../../src/core/capture/projectDocs';
import { LONE_SURROGATE } from '../../src/core/store/filters';
import { codePointCut, cutText } from '../../src/core/tokens';
import { summaryCell } from '../../src/core/store/cells';
import { triage } from '../../src/core/tools/triage';
import type { SessionSummary } from '../../src/core/model/records';
import { findTool } from '../../src/core/tools/registry';
import { openTestEngine, removeDir, toolContext } from './mcpFixture';

const EMOJI = '\u{1F600}';

describe('text cuts at a character boundary', function () {
  this.timeout(120_000);

  it("a session's title and a follow-up's rewritten query are cut between characters", () => {
    const request = `${'a'.repeat(119)}${EMOJI} and more`;
    const summary = { id: 1, memory_session_id: 's-1', project: 'p', request, created_at: '', created_at_epoch: 0 } as unknown as SessionSummary;
    const title = String(summaryCell(summary, null, [], 4).title);
    assert.ok(!LONE_SURROGATE.test(title), JSON.stringify(title.slice(-4)));
    for (let pad = 0; pad < 4; pad++) {
      const out = triage('and that one?', [`${'b'.repeat(pad)}${EMOJI.repeat(400)}`]);
      assert.ok(out.rewritten_query && !LONE_SURROGATE.test(out.rewritten_query), `pad ${pad}`);
    }
  });

  it('cutText and codePointCut never end after the first half of a surrogate pair', () => {
    const s = `ab${EMOJI}cd`;
    assert.equal(codePointCut(s, 3), 2);
    assert.equal(codePointCut(s, 4), 4);
    assert.equal(codePointCut(s, 99), s.length);
    assert.equal(codePointCut(s, 0), 0);
    assert.equal(cutText(s, 3), 'ab');
    assert.equal(cutText(s, 4), `ab${EMOJI}`);
    assert.equal(cutText(s, 2), 'ab');
    assert.equal(cutText(s, 10), s);
    assert.equal(cutText(EMOJI, 1), '');
  });

  describe('retrieve_memory', () => {
    const scope: Scope = { project: 'github.com/acme/emoji-cuts' };
    let engine: MemoryEngine;
    let dir: string;
    before(async () => {
      ({ engine, dir } = await openTestEngine());
    });
    after(async () => {
      await engine.close();
      removeDir(dir);
    });

    it('never answers half a surrogate pair where it shortens a long title or text', async () => {
      // The title is shortened to 199 characters and an ellipsis: the emoji starts at 198.
      const title = `wombat ${'a'.repeat(191)}${EMOJI} wombat burrow design`;
      assert.equal(title.indexOf(EMOJI), 198);
      const narrative = `wombat burrow design notes ${'b'.repeat(211)}${EMOJI} and more words after it ${'c'.repeat(100)}`;
      await engine.observe([{ type: 'note', title, narrative }], scope);
      await engine.flush();
      const r = await findTool('retrieve_memory')!.run(toolContext(engine, scope), { prompt: 'wombat burrow design' });
      assert.equal(r.isError, false, r.text);
      const out = r.structured as { retrieval: { facts: Array<{ statement: string }>; context_summary: string } };
      assert.ok(out.retrieval.facts.length > 0, r.text);
      const texts = [r.text, out.retrieval.context_summary, ...out.retrieval.facts.map((f) => f.statement), JSON.stringify(r.structured)];
      const bad = texts.filter((t) => LONE_SURROGATE.test(t));
      assert.deepEqual(bad.map((t) => t.length), [], `the answer holds half a surrogate pair: ${JSON.stringify(bad.map((t) => t.slice(190, 215)))}`);
      assert.ok(out.retrieval.facts.some((f) => f.statement.includes(`${'a'.repeat(191)}…`)), 'the title is cut before the emoji');
    });
  });

  describe('project documents', () => {
    it('cuts sections, headings and doc comments between characters', () => {
      const long = `${'x'.repeat(1499)}${EMOJI}${'y'.repeat(1600)}`;
      const heading = `${'h'.repeat(119)}${EMOJI} rest of the heading`;
      const sections = documentSections('README.md', `# ${heading}\n\n${long}\n`);
      assert.ok(sections.length >= 2, JSON.stringify(sections.map((s) => s.text.length)));
      for (const s of sections) {
        assert.ok(!LONE_SURROGATE.test(s.text), `a section's text holds half a surrogate pair (length ${s.text.length})`);
        assert.ok(!LONE_SURROGATE.test(s.title), `a section's title holds half a surrogate pair: ${JSON.stringify(s.title.slice(-5))}`);
      }
      assert.equal(sections.map((s) => s.text).join(''), long, 'the pieces hold the whole text');

      const docs = symbolDocs('src/tool.ts', `/**\n * ${'d'.repeat(1497)}${EMOJI} described at length\n */\nexport function describedTool() {}\n`);
      assert.equal(docs.length, 1);
      assert.ok(!LONE_SURROGATE.test(docs[0].text), 'a doc comment holds half a surrogate pair');

      const byName = new SymbolDocs([{ path: 'src/tool.ts', title: 'describedTool', text: `${'e'.repeat(9)}${EMOJI}tail` }], 3, 10);
      assert.equal(byName.textFor(['describedTool']), 'e'.repeat(9));
    });
  });
});
