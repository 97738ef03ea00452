// Free text (a memory's text, a decision's narrative) holding half a surrogate pair is stored as
// U+FFFD, as the store writes it; only keys, paths and filter values refuse it.
import { strict as assert } from 'node:assert';
import type { MemoryEngine } from '../../src/core/engine';
import { openTestEngine, removeDir } from './mcpFixture';

const scope = { project: 'alpha' };
const LONE = 'broken emoji \ud83d here';

describe('free text holding half a surrogate pair is stored (as U+FFFD), not refused', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  before(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  after(async () => {
    await engine?.close();
    if (dir) removeDir(dir);
  });

  it('editMemory with text holding a lone surrogate (free text) does not throw a filter error', async () => {
    const m = await engine.remember({ title: 'Use pnpm', text: 'We use pnpm for installs' }, scope);
    const edited = await engine.editMemory(scope, m.id, { text: `We use pnpm ${LONE}` });
    assert.ok(edited.text.includes('pnpm'));
  });

  it('a session whose decision narrative holds a lone surrogate still ends (summary, promotion)', async () => {
    for (const s of ['s1', 's2', 's3']) {
      await engine.observe([{ type: 'decision', title: 'Switch to pnpm', narrative: `We decided to switch to pnpm ${LONE}.`, session_id: s } as never], scope);
      await engine.flush();
      await engine.endSession(scope, s, 'exit' as never);
    }
  });
});
