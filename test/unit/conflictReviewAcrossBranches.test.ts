// Reviewing a possible conflict across the branch line (README "Memories that stay true": a
// branch's memory never retires a project-wide one, nor the other way round; two branches'
// memories never meet). A conflict flagged between a branch memory and a project-wide one may be
// kept or edited, but **Mark One Superseded…** must not make either history of the other: the
// project-wide memory would vanish for every caller on every branch because of a branch's word.

import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { branchScopes, openTestEngine, removeDir } from './mcpFixture';

describe('conflict review across the branch line', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  const fresh = branchScopes('github.com/acme/conflict-branches');

  before(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  after(async () => {
    await engine?.close();
    removeDir(dir);
  });

  async function memoryOf(scope: Scope, id: number) {
    const [m] = await engine.getMemories([id], { project: scope.project }, { includeSuppressed: true });
    return m;
  }

  async function flagged(s: { all: Scope; one: Scope }) {
    const wide = await engine.remember({ title: 'Session cache', text: 'We use Redis for the session cache.', memory_type: 'decision', files: ['src/cache.ts'] }, s.all);
    const branch = await engine.remember({ title: 'Session cache on one', text: 'We use SQLite for the job queue.', memory_type: 'decision', files: ['src/cache.ts'] }, s.one);
    return { wide, branch };
  }

  it('a conflict between a branch memory and a project-wide one is flagged (precondition)', async () => {
    const s = fresh();
    const { wide, branch } = await flagged(s);
    const w = await memoryOf(s.all, wide.id);
    assert.ok((w.conflicts ?? []).some((c) => c.id === branch.id && c.resolution === 'open'), JSON.stringify(w.conflicts));
  });

  it("marking the project-wide memory superseded by the branch's is refused; both stay current, the conflict open", async () => {
    const s = fresh();
    const { wide, branch } = await flagged(s);
    await assert.rejects(engine.resolveConflict(s.all, wide.id, branch.id, 'superseded'), /never retire/);
    const w = await memoryOf(s.all, wide.id);
    assert.equal(w.status, 'active');
    assert.equal(w.superseded_by, null);
    assert.ok((w.conflicts ?? []).some((c) => c.id === branch.id && c.resolution === 'open'), JSON.stringify(w.conflicts));
    assert.equal((await memoryOf(s.all, branch.id)).supersedes, null);
    const listed = await engine.listMemories(s.all, {});
    assert.ok(listed.some((m) => m.id === wide.id && m.status === 'active'));
  });

  it("marking the branch's memory superseded by the project-wide one is refused too", async () => {
    const s = fresh();
    const { wide, branch } = await flagged(s);
    await assert.rejects(engine.resolveConflict(s.all, branch.id, wide.id, 'superseded'), /never retire/);
    const b = await memoryOf(s.all, branch.id);
    assert.equal(b.status, 'active');
    assert.equal(b.superseded_by, null);
  });

  it('two branches\' memories: refused (they never meet)', async () => {
    const s = fresh();
    const one = await engine.remember({ title: 'Cache on one', text: 'We use Redis for the session cache.', memory_type: 'decision', files: ['src/cache.ts'] }, s.one);
    const two = await engine.remember({ title: 'Cache on two', text: 'We use Memcached for the session cache.', memory_type: 'decision', files: ['src/cache.ts'] }, s.two);
    await assert.rejects(engine.resolveConflict(s.all, one.id, two.id, 'superseded'), /never retire/);
    assert.equal((await memoryOf(s.all, one.id)).status, 'active');
  });

  it('controls: Keep Both across the branch line is recorded; within one scope Mark One Superseded works', async () => {
    const s = fresh();
    const { wide, branch } = await flagged(s);
    await engine.resolveConflict(s.all, wide.id, branch.id, 'keep_both');
    const w = await memoryOf(s.all, wide.id);
    assert.equal(w.conflicts?.find((c) => c.id === branch.id)?.resolution, 'kept_both');
    const a = await engine.remember({ title: 'Orders store', text: 'We use PostgreSQL for the orders table.', memory_type: 'decision', files: ['src/orders.ts'] }, s.all);
    const b = await engine.remember({ title: 'Payments store', text: 'We use SQLite for the payments ledger.', memory_type: 'decision', files: ['src/orders.ts'] }, s.all);
    await engine.resolveConflict(s.all, a.id, b.id, 'superseded');
    const older = await memoryOf(s.all, a.id);
    assert.equal(older.status, 'superseded');
    assert.equal(older.superseded_by, b.id);
  });
});
