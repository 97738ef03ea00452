import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { FRAGMENTS_BEFORE_COMPACTION } from '../../src/core/store/maintenance';
import { TABLES } from '../../src/core/store/schema';
import { Store } from '../../src/core/store/store';
import { UpkeepProcess } from '../../src/core/store/upkeepProcess';
import { remember } from '../../src/core/tools/write';
import { TIDY_AFTER_WRITES } from '../../src/core/upkeep';
import { isCommitConflict, retryConflicts } from '../../src/core/store/retry';

async function until(check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('store: background compaction and pruning', function () {
  this.timeout(300_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-maint-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('compaction and pruning racing a writer never break it or lose a row', async () => {
    const writer = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    const maintainer = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, logger: () => undefined });
    const scope = { project: 'p' };
    let writing = true;
    let rounds = 0;
    const maintenance = (async () => {
      while (writing) {
        await maintainer.optimize(0);
        rounds++;
      }
    })();
    const written: number[] = [];
    for (let b = 0; b < 30; b++) {
      const batch = Array.from({ length: 50 }, (_, i) => ({ type: 'note', title: `batch ${b} item ${i} marmot` }));
      written.push(...(await writer.observe(batch, scope)).map((o) => o.id));
    }
    writing = false;
    await maintenance;
    assert.ok(rounds > 0);
    const ids = (await writer.store.rows(TABLES.observations, null, { select: ['id'] })).map((r) => Number(r.id));
    assert.equal(ids.length, 1500);
    assert.deepEqual(new Set(ids), new Set(written));
    assert.equal(await writer.store.count(TABLES.cells), 1500);
    assert.equal((await writer.search('batch 29 item 49 marmot', { scope, limit: 1 }))[0].cell.title, 'batch 29 item 49 marmot');
    // Pruning left few versions behind.
    await writer.optimize(0);
    const versions = fs.readdirSync(path.join(dir, 'observations.lance', '_versions')).length;
    assert.ok(versions <= 3, `${versions} versions left`);
    await writer.close();
    await maintainer.close();
  });

  it('compacts tables that small commits left in pieces (prompt history, request log), whoever wrote them', async () => {
    // The lease holder opens first; the other process writes only prompts and log entries, as an
    // agent that asks and never observes does. Nothing writes a cell, yet the pieces get compacted.
    const holder = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 200, logger: () => undefined });
    const asker = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    const scope = { project: 'p' };
    const fragments = async (name: string): Promise<number> => (await holder.store.table(name as never).stats()).fragmentStats.numFragments;
    try {
      assert.equal(holder.lease.isHeld, true);
      const cellsVersion = await holder.store.table(TABLES.cells).version();
      for (let i = 0; i < 40; i++) {
        await asker.addPrompt(scope, `session-${i}`, `question ${i} about the marmot`);
        await asker.logRequest({ request_id: `r${i}`, tool: 'recall', project: 'p', session_id: null, arguments: '{}', response: '{}', status: 'ok', duration_ms: 1, created_at_epoch: Date.now() });
      }
      // 40 one-row commits each; the holder compacts a table once 16 pieces have gathered.
      await until(async () => (await fragments(TABLES.sessionPrompts)) < FRAGMENTS_BEFORE_COMPACTION && (await fragments(TABLES.requestLog)) < FRAGMENTS_BEFORE_COMPACTION);
      assert.equal(await holder.store.count(TABLES.sessionPrompts), 40);
      assert.equal(await holder.store.count(TABLES.requestLog), 40);
      assert.deepEqual(await asker.recentPrompts(scope, 'session-7', 2), ['question 7 about the marmot']);
      assert.equal(await holder.store.table(TABLES.cells).version(), cellsVersion, 'the cells were left alone');
    } finally {
      await asker.close();
      await holder.close();
    }
  });

  it('a process that takes the lease tidies what short-lived processes left in pieces, before its first timer tick', async () => {
    // Hooks and short agent runs write and exit before any of them held the lease for a minute:
    // their one-row commits pile up until a process that stays compacts them.
    const scope = { project: 'p' };
    for (let run = 0; run < 2; run++) {
      const brief = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 60_000 });
      for (let i = 0; i < 20; i++) {
        await brief.addPrompt(scope, `session-${run}-${i}`, `question ${i} about the marmot`);
        await brief.logRequest({ request_id: `r${run}-${i}`, tool: 'recall', project: 'p', session_id: null, arguments: '{}', response: '{}', status: 'ok', duration_ms: 1, created_at_epoch: Date.now() });
      }
      await brief.close();
    }
    const holder = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 3_600_000, upkeepQuietMs: 200, logger: () => undefined });
    const fragments = async (name: string): Promise<number> => (await holder.store.table(name as never).stats()).fragmentStats.numFragments;
    try {
      assert.ok((await fragments(TABLES.sessionPrompts)) >= 40, 'the brief processes left their commits in pieces');
      await until(async () => (await fragments(TABLES.sessionPrompts)) < FRAGMENTS_BEFORE_COMPACTION && (await fragments(TABLES.requestLog)) < FRAGMENTS_BEFORE_COMPACTION);
      assert.equal(await holder.store.count(TABLES.sessionPrompts), 40);
      assert.equal(await holder.store.count(TABLES.requestLog), 40);
      assert.deepEqual(await holder.recentPrompts(scope, 'session-1-7', 2), ['question 7 about the marmot']);
    } finally {
      await holder.close();
    }
  });

  for (const large of [false, true]) {
    it(`writes in quick succession get their tables compacted as they go, not a timer tick later${large ? ', a large table excepted' : ''}`, async () => {
      // One write at a time, as an agent saving a memory every turn or a capture burst does: each
      // leaves a piece of the records table and of the cells. Neither the timer nor the quiet
      // after writing comes within the test; every TIDY_AFTER_WRITES writes the holder tidies.
      // Large: the cells hold a batch of 300 observations first, and count as large from 200 rows.
      const holder = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 3_600_000, upkeepQuietMs: 3_600_000, upkeepInChildFrom: large ? 200 : 1e9, logger: () => undefined });
      const fragments = async (name: string): Promise<number> => (await holder.store.table(name as never).stats()).fragmentStats.numFragments;
      const scope = { project: 'p' };
      const ctx = { engine: holder, scope };
      try {
        assert.equal(holder.lease.isHeld, true);
        const before = large ? 300 : 0;
        if (large) await holder.observe(Array.from({ length: before }, (_, i) => ({ type: 'note', title: `earlier note ${i}` })), scope);
        const writes = 2 * TIDY_AFTER_WRITES + 20;
        for (let i = 0; i < writes; i++) await remember(ctx, { memory_type: 'note', title: `Status ${i}`, text: `The marmot count is ${i}.` });
        await holder.settled();
        // Without the tidy each table would be a piece per write (`writes` of them); with it, at
        // most the pieces since the last tidy that ran (the second may find the first still running).
        const bound = writes - TIDY_AFTER_WRITES / 2;
        assert.ok((await fragments(TABLES.memories)) < bound, `${await fragments(TABLES.memories)} pieces of the memories`);
        if (large) assert.ok((await fragments(TABLES.cells)) > writes, 'a large table is left to the upkeep once writing is quiet');
        else assert.ok((await fragments(TABLES.cells)) < bound, `${await fragments(TABLES.cells)} pieces of the cells`);
        assert.equal(await holder.store.count(TABLES.memories), writes);
        assert.equal(await holder.store.count(TABLES.cells), before + writes);
        assert.equal((await holder.search(`Status ${writes - 1}`, { scope, limit: 1 }))[0].cell.title, `Status ${writes - 1}`);
      } finally {
        await holder.close();
      }
    });
  }

  it("lists the store's projects through their indexes, whatever their names, compacted or not", async () => {
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      const names = ['alpha', "o'brien/api", 'zeta (2)', 'αβγ'];
      for (const [i, project] of names.entries()) {
        await engine.observe(Array.from({ length: 3 + i }, (_, k) => ({ type: 'note', title: `note ${k} of ${project}` })), { project });
      }
      assert.deepEqual(await engine.store.distinct(TABLES.observations, 'project'), [...names].sort());
      assert.deepEqual(await engine.store.distinct(TABLES.cells, 'project'), [...names].sort());
      assert.deepEqual(await engine.store.distinct(TABLES.memories, 'project'), []);
      // After compaction the index holds the rows; a project written since is in no index yet.
      await engine.optimize(0);
      await engine.observe([{ type: 'note', title: 'late' }], { project: 'late' });
      assert.deepEqual(await engine.store.distinct(TABLES.cells, 'project'), [...names, 'late'].sort());
    } finally {
      await engine.close();
    }
  });

  for (const inChild of [false, true]) {
    it(`compacts the cells${inChild ? ' in a child process' : ''} while the same process keeps updating them (its updates wait; the compaction is not preempted)`, async () => {
      const logged: string[] = [];
      const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, logger: (m) => logged.push(m), upkeepInChildFrom: inChild ? 1000 : 1e9 });
      const scope = { project: 'p' };
      try {
        const ids: number[] = [];
        for (let b = 0; b < 150; b++) {
          const batch = Array.from({ length: 40 }, (_, i) => ({ type: 'note', title: `batch ${b} item ${i} ${'marmot '.repeat(20)}` }));
          ids.push(...(await engine.observe(batch, scope)).map((o) => o.id));
        }
        const cells = engine.store.table(TABLES.cells);
        assert.ok((await cells.stats()).fragmentStats.numFragments >= 150);
        // Access times and statuses are written all the time by the process that also compacts
        // (its answers, its session ends): every update rewrites rows of some fragments.
        let updating = true;
        let updates = 0;
        // A touch counts each record once, however often it names it.
        let touched = 0;
        const updater = (async () => {
          while (updating) {
            const some = Array.from({ length: 20 }, () => ids[Math.floor(Math.random() * ids.length)]);
            await engine.touch('observation', some, scope);
            updates++;
            touched += new Set(some).size;
          }
        })();
        await until(() => updates > 0);
        // The cells' compaction alone: the engine's upkeep goes on to index the full text and
        // copy its postings, and the touches meanwhile would add fragments after the compaction.
        await engine.store.optimize(0, [TABLES.cells]);
        updating = false;
        await updater;
        assert.ok(updates > 1);
        assert.deepEqual(logged.filter((m) => /optimize cells failed/.test(m)), []);
        assert.ok((await cells.stats()).fragmentStats.numFragments < 10, 'the cells were compacted');
        assert.equal(logged.some((m) => /^compacted cells in a process of its own \(\d+ fragments to \d+\)$/.test(m)), inChild);
        // No update was lost: every touch counted.
        const counted = (await engine.store.rows(TABLES.cells, null, { select: ['access_count'] })).reduce((n, r) => n + Number(r.access_count), 0);
        assert.equal(counted, touched);
      } finally {
        await engine.close();
      }
    });
  }

  it('an upkeep process reports what went wrong, and one stopped ends without a trace', async () => {
    const store = await Store.open({ uri: dir, dimension: 8 });
    const upkeep = new UpkeepProcess();
    try {
      await assert.rejects(upkeep.run({ connect: { uri: dir }, table: 'no_such_table', op: 'optimize', olderThanMs: 0, attempts: 1 }), /no_such_table|not found/i);
      const stopped = upkeep.run({ connect: { uri: dir }, table: TABLES.cells, op: 'optimize', olderThanMs: 0, attempts: 1 });
      upkeep.stop();
      await assert.rejects(stopped, /ended \(SIGKILL\) before it answered/);
      const done = await upkeep.run({ connect: { uri: dir }, table: TABLES.cells, op: 'optimize', olderThanMs: 0, attempts: 1 });
      assert.equal(typeof done.fragmentsAfter, 'number');
      // Without its script (a bundle shipped without it) the store compacts in place instead.
      const missing = new UpkeepProcess(`${dir}/no-such-script.js`);
      assert.equal(missing.entry, null);
      await assert.rejects(missing.run({ connect: { uri: dir }, table: TABLES.cells, op: 'optimize', olderThanMs: 0, attempts: 1 }), /script is missing/);
    } finally {
      upkeep.stop();
      store.close();
    }
  });

  it('retries commit conflicts and passes other errors through', async () => {
    let calls = 0;
    const value = await retryConflicts(async () => {
      calls++;
      if (calls < 3) throw new Error('Retryable commit conflict for version 7: This Rewrite transaction was preempted');
      return 'ok';
    });
    assert.equal(value, 'ok');
    assert.equal(calls, 3);
    assert.ok(!isCommitConflict(new Error('Invalid input, No field named nope')));
    let other = 0;
    await assert.rejects(retryConflicts(async () => {
      other++;
      throw new Error('No field named nope');
    }), /nope/);
    assert.equal(other, 1);
  });
});
