// README "Memories that stay true": "A branch's memory never retires a project-wide one, nor the
// other way round: what was decided on `try-redis` holds there until it is recorded project-wide".
// A project-wide memory that names a branch memory in `remember`'s `supersedes` meets it across
// the branch line as one with the same topic_key does: the branch memory shadows it there and
// stays current on its branch; the project-wide one is current everywhere else. Real engine.
import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Memory, Scope } from '../../src/core/model/records';
import { recallContext } from '../../src/core/tools/recallContext';
import { rememberTool } from '../../src/core/tools/write';
import { openTestEngine, removeDir, scopeMaker, storedMemory, toolContext } from './mcpFixture';

describe('supersedes named across the branch line', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  const fresh = scopeMaker('named-branch-line');
  const get = (scope: Scope, id: number): Promise<Memory> => storedMemory(engine, scope, id);

  before(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  it('a project-wide memory naming a branch memory leaves it current on its branch, and holds everywhere else', async () => {
    const scope = fresh();
    const onBranch = { ...scope, branch: 'try-redis' };
    const redis = await engine.remember({ memory_type: 'decision', title: 'Cache', text: 'We use Redis for the cache' }, onBranch);
    const r = await rememberTool.run(toolContext(engine, scope), { memory_type: 'decision', title: 'Cache', text: 'We use Valkey for the cache', supersedes: [redis.id] });
    assert.equal(r.isError, false, r.text);
    const valkeyId = Number(r.structured!.id);

    const branchMemory = await get(scope, redis.id);
    assert.equal(branchMemory.status, 'active', `superseded by ${branchMemory.superseded_by}`);
    assert.equal(branchMemory.superseded_by, null);
    assert.ok((branchMemory.supersedes ?? []).includes(valkeyId), JSON.stringify(branchMemory.supersedes));
    const valkey = await get(scope, valkeyId);
    assert.equal(valkey.status, 'active');
    assert.deepEqual(r.structured!.superseded, []);
    assert.doesNotMatch(r.text, /Superseded: memory/);

    const there = await recallContext(toolContext(engine, onBranch), { query: 'which cache do we use' });
    assert.ok(there.items.some((i) => i.source_kind === 'memory' && i.source_id === redis.id), there.text);
    assert.ok(!there.items.some((i) => i.source_kind === 'memory' && i.source_id === valkeyId), there.text);
    const elsewhere = await recallContext(toolContext(engine, { ...scope, branch: 'other' }), { query: 'which cache do we use' });
    assert.ok(elsewhere.items.some((i) => i.source_kind === 'memory' && i.source_id === valkeyId), elsewhere.text);
    assert.ok(!elsewhere.items.some((i) => i.source_kind === 'memory' && i.source_id === redis.id), elsewhere.text);
  });

  it('within one scope a named memory is superseded as before (control)', async () => {
    const scope = fresh();
    const a = await engine.remember({ memory_type: 'decision', title: 'Cache', text: 'We use Memcached for the cache' }, scope);
    const b = await engine.remember({ memory_type: 'decision', title: 'Cache', text: 'Sessions stay warm', supersedes: [a.id] }, scope);
    assert.equal((await get(scope, a.id)).superseded_by, b.id);
  });
});
