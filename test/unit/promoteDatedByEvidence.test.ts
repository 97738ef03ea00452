// Promote to Memory (engine.promote) and "Newer means said later" (README "Memories that stay
// true"): a memory promoted from an observation is dated by when the observation said it, so a
// 2024 decision promoted today does not retire a decision made since; it is history of it from
// the start. Real engine in a temporary folder.
import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Memory, Scope } from '../../src/core/model/records';
import { recallContext } from '../../src/core/tools/recallContext';
import { openTestEngine, removeDir, scopeMaker, storedMemory, toolContext } from './mcpFixture';

const MARCH_2024 = Date.UTC(2024, 2, 1);

describe('a memory promoted from an observation is dated by the observation', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  const fresh = scopeMaker('promote-dated');
  const get = (scope: Scope, id: number): Promise<Memory> => storedMemory(engine, scope, id);

  before(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  it('a 2024 "use Jest" promoted today is history of today\'s "use Vitest", which stays current', async () => {
    const scope = fresh();
    const [old] = await engine.observe([{ type: 'decision', title: 'Unit test runner', narrative: 'We use Jest for unit tests', files_modified: ['package.json'], created_at_epoch: MARCH_2024 }], scope);
    const vitest = await engine.remember({ memory_type: 'decision', title: 'Unit test runner', text: 'We use Vitest for unit tests', files: ['package.json'] }, scope);
    const before = Date.now();
    const promoted = await engine.promote(old.id, scope);

    const v = await get(scope, vitest.id);
    assert.equal(v.status, 'active', `Vitest superseded by ${v.superseded_by}`);
    assert.equal(promoted.status, 'superseded');
    assert.equal(promoted.superseded_by, vitest.id);
    assert.equal(promoted.created_at_epoch, MARCH_2024);
    assert.ok(promoted.updated_at_epoch >= before, 'stored now');

    const pack = await recallContext(toolContext(engine, scope), { query: 'which unit test runner do we use' });
    assert.ok(pack.items.some((i) => i.source_kind === 'memory' && i.source_id === vitest.id), pack.text);
    assert.ok(!pack.items.some((i) => i.source_kind === 'memory' && i.source_id === promoted.id), pack.text);
  });

  it('a recent observation promoted supersedes an older memory it contradicts (control)', async () => {
    const scope = fresh();
    const jest = await engine.remember({ memory_type: 'decision', title: 'Unit test runner', text: 'We use Jest for unit tests', files: ['package.json'] }, scope);
    const [recent] = await engine.observe([{ type: 'decision', title: 'Unit test runner', narrative: 'We use Vitest for unit tests', files_modified: ['package.json'] }], scope);
    const promoted = await engine.promote(recent.id, scope);
    assert.equal(promoted.status, 'active');
    assert.equal((await get(scope, jest.id)).superseded_by, promoted.id);
  });

  it('an observation dated after now (a client\'s clock) counts as said now', async () => {
    const scope = fresh();
    const future = Date.UTC(9000, 0, 1);
    const [o] = await engine.observe([{ type: 'decision', title: 'Formatter', narrative: 'We format with Prettier', created_at_epoch: future }], scope);
    const before = Date.now();
    const promoted = await engine.promote(o.id, scope);
    assert.ok(promoted.created_at_epoch >= before && promoted.created_at_epoch <= Date.now(), String(promoted.created_at_epoch));
  });
});
