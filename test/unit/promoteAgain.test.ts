// A decision that was replaced and later made again is current again: promoted anew from what
// said it since it was replaced (what said it before is what the replacement overruled).
import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { recallContext } from '../../src/core/tools/recallContext';
import { openTestEngine, removeDir, toolContext } from './mcpFixture';

describe('a replaced decision made again', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  before(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  async function session(scope: Scope, id: string, text: string, at: number, times = 2): Promise<void> {
    await engine.observe(
      [
        { type: 'decision', title: text, narrative: text, files_modified: ['package.json'], memory_session_id: id, created_at_epoch: at },
        { type: 'note', title: 'Test runner', narrative: text, files_modified: ['package.json'], memory_session_id: id, created_at_epoch: at + 1000 },
      ].slice(0, times),
      scope,
    );
    await engine.endSession(scope, id, 'idle');
  }

  it('Jest (promoted), then Vitest, then Jest decided again in a later session: Jest is current', async () => {
    const scope: Scope = { project: 'github.com/acme/reinstate' };
    const t0 = Date.now() - 3 * 86_400_000;
    await session(scope, 's1', 'We decided to use Jest for unit tests.', t0);
    let all = await engine.listMemories(scope, { includeSuppressed: true });
    assert.ok(all.some((m) => /jest/i.test(m.text) && m.status === 'active'), `control: Jest promoted: ${all.map((m) => `${m.id} ${m.status} ${m.text}`).join(' | ')}`);
    await engine.remember({ memory_type: 'decision', title: 'Test runner', text: 'We switched from Jest to Vitest for unit tests.', files: ['package.json'] }, scope);
    all = await engine.listMemories(scope, { includeSuppressed: true });
    assert.ok(all.some((m) => /jest/i.test(m.text) && m.status === 'superseded'), `control: Jest superseded: ${all.map((m) => `${m.id} ${m.status} ${m.text}`).join(' | ')}`);
    await new Promise((r) => setTimeout(r, 20));
    await session(scope, 's2', 'We decided to use Jest for unit tests.', Date.now());
    await session(scope, 's3', 'We decided to use Jest for unit tests.', Date.now() + 10);
    all = await engine.listMemories(scope, { includeSuppressed: true });
    const current = all.filter((m) => m.status === 'active').map((m) => m.text);
    await engine.settled();
    const pack = await recallContext(toolContext(engine, scope), { query: 'which test runner do we use for unit tests' });
    assert.deepEqual(current.filter((t) => /jest|vitest/i.test(t)), ['We decided to use Jest for unit tests.'], `${all.map((m) => `${m.id} ${m.status} ${m.text}`).join(' | ')}\n${pack.text}`);
  });

  it('a replaced decision said once since (with all it was said before) is not promoted again', async () => {
    const scope: Scope = { project: 'github.com/acme/reinstate-once' };
    await session(scope, 's1', 'We decided to use Jest for unit tests.', Date.now() - 3 * 86_400_000);
    await engine.remember({ memory_type: 'decision', title: 'Test runner', text: 'We switched from Jest to Vitest for unit tests.', files: ['package.json'] }, scope);
    await new Promise((r) => setTimeout(r, 20));
    await session(scope, 's2', 'We decided to use Jest for unit tests.', Date.now(), 1);
    const all = await engine.listMemories(scope, { includeSuppressed: true });
    assert.ok(all.some((m) => /use jest/i.test(m.text) && m.status === 'superseded'), 'control: Jest was promoted, then replaced');
    const current = all.filter((m) => m.status === 'active').map((m) => m.text);
    assert.deepEqual(current, ['We switched from Jest to Vitest for unit tests.'], all.map((m) => `${m.id} ${m.status} ${m.text}`).join(' | '));
  });
});
