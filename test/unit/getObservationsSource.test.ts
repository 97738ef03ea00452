// get_observations: every unsupported source is invalid_source, however long (the page: "Unsupported
// sources ... return a tool error"; README: invalid_source), and the error quotes a bounded part of it.
import * as assert from 'node:assert/strict';
import { OTHER, SCOPE, httpToolHarness } from './httpToolHarness';
import type { CallResult } from './httpToolHarness';
import { seed } from './mcpFixture';

const errText = (r: CallResult): string => r.content[0]?.text ?? '';

describe('get_observations: unsupported sources of any length', function () {
  this.timeout(120_000);
  let memoryId: number;
  const h = httpToolHarness({ fill: async (engine) => void (memoryId = (await seed(engine, SCOPE, OTHER)).memoryId) });
  const { call } = h;

  for (const [name, source] of [
    ['64 characters', 'x'.repeat(64)],
    ['65 characters', 'x'.repeat(65)],
    ['100 characters', 'x'.repeat(100)],
    ['100,000 characters', 'y'.repeat(100_000)],
    ['100 emoji', '\u{1F600}'.repeat(100)],
  ] as const) {
    it(`a source of ${name} is invalid_source, its quote bounded`, async () => {
      const r = await call('get_observations', { ids: [memoryId], source });
      assert.equal(r.isError, true);
      assert.match(errText(r), /^invalid_source: /, errText(r).slice(0, 200));
      assert.ok(errText(r).length < 400, `${errText(r).length} characters`);
    });
  }

  it('a supported source still answers, and a source that is no string is invalid_arguments', async () => {
    const ok = await call('get_observations', { ids: [memoryId], source: 'memory' });
    assert.equal(ok.isError, false, errText(ok));
    assert.match(errText(await call('get_observations', { ids: [memoryId], source: 7 })), /^invalid_arguments: /);
  });
});
