// Memories that stay true, at the edges (README "What the store promises" > "Memories that stay
// true", `remember`'s `supersedes`, recall_context "Time:"): supersession by facts only about the
// same files, chains that lose a middle link, no cycles, suppressed memories stay hidden,
// conflicts with history close, and a memory promoted from old evidence is dated by it.

import * as assert from 'node:assert/strict';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import type { Memory, Scope } from '../../src/core/model/records';
import { getObservations } from '../../src/core/tools/getObservations';
import { recallContext } from '../../src/core/tools/recallContext';
import { rememberTool } from '../../src/core/tools/write';
import { makeRepo } from './gitImportFixture';
import { openTestEngine, removeDir, scopeMaker, storedMemory, tempDir, toolContext } from './mcpFixture';

const memory = storedMemory;

const factsOf = (m: Memory): string[] => (m.temporal_facts ?? []).map((f) => `${f.subject} ${f.predicate} ${f.object}`);
const openConflicts = (m: Memory): number[] => (m.conflicts ?? []).filter((c) => c.resolution === 'open').map((c) => c.id);

/** Memory ids a recall_context pack presents as current (not marked HISTORY). */
async function currentInPack(engine: MemoryEngine, scope: Scope, query: string): Promise<{ ids: number[]; text: string }> {
  const out = await recallContext(toolContext(engine, scope), { query });
  const ids = out.items.filter((i) => i.source_kind === 'memory').map((i) => i.source_id);
  return { ids: ids.filter((id) => !new RegExp(`\\(memory ${id}, [^)]*\\) \\[HISTORY`).test(out.text)), text: out.text };
}

describe('memories that stay true: edges (real engine)', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  const fresh = scopeMaker('truth');

  before(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  describe('1. "switched from A to B" ends facts about the same files only', () => {
    it('about other files: the older decision stays current, is flagged, and its subject is not borrowed', async () => {
      const scope = fresh();
      const a = await engine.remember({ memory_type: 'decision', title: 'Decision', text: 'We use PostgreSQL for the orders service', files: ['orders/db.ts'] }, scope);
      const b = await engine.remember({ memory_type: 'decision', title: 'Note', text: 'Reporting: switched from PostgreSQL to DuckDB.', files: ['reports/query.ts'] }, scope);
      const a2 = await memory(engine, scope, a.id);
      assert.equal(a2.status, 'active', `superseded by ${a2.superseded_by}`);
      assert.equal(b.supersedes, null);
      assert.ok(!factsOf(b).includes('orders service uses duckdb'), JSON.stringify(factsOf(b)));
      assert.deepEqual(factsOf(a2), ['orders service uses postgresql']);
      assert.equal(a2.temporal_facts![0].status, 'current');
      assert.deepEqual(openConflicts(b), [a.id]);
      assert.deepEqual(openConflicts(a2), [b.id]);
      assert.match(b.conflicts![0].reason, /different files/);
    });

    it('about the same files: it supersedes and takes the subject (control)', async () => {
      const scope = fresh();
      const a = await engine.remember({ memory_type: 'decision', title: 'Decision', text: 'We use PostgreSQL for the orders service', files: ['orders/db.ts'] }, scope);
      const b = await engine.remember({ memory_type: 'decision', title: 'Note', text: 'Switched from PostgreSQL to DuckDB.', files: ['orders/db.ts'] }, scope);
      assert.deepEqual(b.supersedes, [a.id]);
      assert.deepEqual(factsOf(b), ['orders service uses duckdb']);
      assert.equal((await memory(engine, scope, a.id)).status, 'superseded');
    });
  });

  describe('2. a chain that loses its middle link', () => {
    it('A -> B -> C by topic_key, B forgotten: A is history of C, not current next to it', async () => {
      const scope = fresh();
      const a = await engine.remember({ memory_type: 'decision', title: 'Session cache', text: 'We use Memcached for the session cache', topic_key: 'cache' }, scope);
      const b = await engine.remember({ memory_type: 'decision', title: 'Session cache', text: 'We moved the session cache to Redis', topic_key: 'cache' }, scope);
      const c = await engine.remember({ memory_type: 'decision', title: 'Session cache', text: 'We moved the session cache to Valkey', topic_key: 'cache' }, scope);
      await engine.forget({ kind: 'memory', ids: [b.id] }, scope);
      const a2 = await memory(engine, scope, a.id);
      const c2 = await memory(engine, scope, c.id);
      assert.equal(a2.status, 'superseded');
      assert.equal(a2.superseded_by, c.id);
      assert.ok(a2.temporal_facts!.every((f) => f.status === 'closed'));
      assert.equal(c2.status, 'active');
      assert.deepEqual(c2.supersedes, [a.id]);
      const pack = await currentInPack(engine, scope, 'what do we use for the session cache');
      assert.ok(!pack.ids.includes(a.id), pack.text);
    });

    it('A -> B -> C by facts about the same files, B forgotten: A is history of C', async () => {
      const scope = fresh();
      const files = ['src/build.config.ts'];
      const a = await engine.remember({ memory_type: 'convention', title: 'Bundler', text: 'Use webpack for the build.', files }, scope);
      const b = await engine.remember({ memory_type: 'convention', title: 'Bundler', text: 'Use rollup for the build.', files }, scope);
      const c = await engine.remember({ memory_type: 'convention', title: 'Bundler', text: 'Use esbuild for the build.', files }, scope);
      assert.equal((await memory(engine, scope, b.id)).superseded_by, c.id, 'control');
      await engine.forget({ kind: 'memory', ids: [b.id] }, scope);
      const a2 = await memory(engine, scope, a.id);
      assert.equal(a2.status, 'superseded', JSON.stringify(a2.temporal_facts));
      assert.equal(a2.superseded_by, c.id);
      assert.deepEqual((await memory(engine, scope, c.id)).supersedes, [a.id]);
    });

    it('forgetting the newest memory still makes the one it replaced hold again; the rest of the chain stays history', async () => {
      const scope = fresh();
      const a = await engine.remember({ memory_type: 'decision', title: 'CI', text: 'We use Travis for CI', topic_key: 'ci' }, scope);
      const b = await engine.remember({ memory_type: 'decision', title: 'CI', text: 'We moved CI to CircleCI', topic_key: 'ci' }, scope);
      const c = await engine.remember({ memory_type: 'decision', title: 'CI', text: 'We moved CI to GitHub Actions', topic_key: 'ci' }, scope);
      await engine.forget({ kind: 'memory', ids: [c.id] }, scope);
      const b2 = await memory(engine, scope, b.id);
      assert.equal(b2.status, 'active');
      assert.equal(b2.superseded_by, null);
      assert.ok(b2.temporal_facts!.every((f) => f.status === 'current'));
      const a2 = await memory(engine, scope, a.id);
      assert.equal(a2.status, 'superseded');
      assert.equal(a2.superseded_by, b.id);
      // Forgetting the two newest together: the oldest holds again.
      await engine.forget({ kind: 'memory', ids: [b.id] }, scope);
      const a3 = await memory(engine, scope, a.id);
      assert.equal(a3.status, 'active');
      assert.equal(a3.superseded_by, null);
    });

    it('forgetting B and C of A -> B -> C together makes A hold again', async () => {
      const scope = fresh();
      const a = await engine.remember({ memory_type: 'decision', title: 'Queue', text: 'We use RabbitMQ for background jobs', topic_key: 'jobs' }, scope);
      const b = await engine.remember({ memory_type: 'decision', title: 'Queue', text: 'We moved background jobs to SQS', topic_key: 'jobs' }, scope);
      const c = await engine.remember({ memory_type: 'decision', title: 'Queue', text: 'We moved background jobs to Kafka', topic_key: 'jobs' }, scope);
      await engine.forget({ kind: 'memory', ids: [b.id, c.id] }, scope);
      const a2 = await memory(engine, scope, a.id);
      assert.equal(a2.status, 'active');
      assert.equal(a2.superseded_by, null);
    });

    it('a memory that holds again gets back the conflicts that closed when it became history', async () => {
      const scope = fresh();
      const x = await engine.remember({ memory_type: 'decision', title: 'Reporting storage', text: 'The orders service uses DuckDB', files: ['reports/orders.ts'] }, scope);
      const a = await engine.remember({ memory_type: 'decision', title: 'Orders storage', text: 'The orders service uses PostgreSQL', files: ['orders/db.ts'] }, scope);
      assert.deepEqual(openConflicts(a), [x.id], 'control: flagged');
      const b = await engine.remember({ memory_type: 'decision', title: 'Orders storage', text: 'The orders service uses SQLite', files: ['orders/db.ts'] }, scope);
      assert.deepEqual(b.supersedes, [a.id], 'control: B replaced A');
      assert.deepEqual(openConflicts(await memory(engine, scope, a.id)), [], 'A is history: its conflict closed');
      assert.ok(!openConflicts(await memory(engine, scope, x.id)).includes(a.id));
      await engine.forget({ kind: 'memory', ids: [b.id] }, scope);
      const a2 = await memory(engine, scope, a.id);
      assert.equal(a2.status, 'active');
      assert.deepEqual(openConflicts(a2), [x.id]);
      assert.deepEqual(openConflicts(await memory(engine, scope, x.id)), [a.id]);
    });
  });

  describe('3. resolveConflict makes no cycle', () => {
    it('marking B superseded by A after A was marked superseded by B is refused, and B stays current', async () => {
      const scope = fresh();
      const files = ['orders/lock.ts'];
      const a = await engine.remember({ memory_type: 'decision', title: 'Locking', text: 'Orders rely on optimistic locking.', files }, scope);
      const b = await engine.remember({ memory_type: 'decision', title: 'Locking again', text: 'We reverted to pessimistic row locks.', files }, scope);
      await engine.resolveConflict(scope, a.id, b.id, 'superseded');
      await assert.rejects(engine.resolveConflict(scope, b.id, a.id, 'superseded'), new RegExp(`memory ${a.id} is not current \\(superseded by memory ${b.id}\\)`));
      const b2 = await memory(engine, scope, b.id);
      assert.equal(b2.status, 'active');
      assert.equal(b2.superseded_by, null);
      assert.equal((await memory(engine, scope, a.id)).superseded_by, b.id);
    });

    it('a suppressed memory cannot be named as the successor', async () => {
      const scope = fresh();
      const a = await engine.remember({ memory_type: 'note', title: 'One', text: 'Deploys happen on Fridays.' }, scope);
      const b = await engine.remember({ memory_type: 'note', title: 'Two', text: 'Deploys happen on Tuesdays.' }, scope);
      await engine.setStatus('memory', b.id, 'suppressed', scope);
      await assert.rejects(engine.resolveConflict(scope, a.id, b.id, 'superseded'), /is not current \(suppressed\)/);
      assert.equal((await memory(engine, scope, a.id)).status, 'active');
    });
  });

  describe('4. a suppressed memory named in supersedes stays suppressed', () => {
    it('it keeps its status (hidden from get_observations and history answers), with the link recorded', async () => {
      const scope = fresh();
      const ctx = toolContext(engine, scope);
      const a = await engine.remember({ memory_type: 'decision', title: 'Deploy window', text: 'Deploys happen on Fridays after the zanzibar demo.' }, scope);
      await engine.setStatus('memory', a.id, 'suppressed', scope);
      const out = await rememberTool.run(ctx, { title: 'Deploy window', text: 'Deploys happen on Tuesdays.', supersedes: [a.id] });
      assert.equal(out.isError, false, out.text);
      const bId = Number(out.structured!.id);
      const a2 = await memory(engine, scope, a.id);
      assert.equal(a2.status, 'suppressed');
      assert.equal(a2.superseded_by, bId);
      await assert.rejects(getObservations(ctx, { ids: [a.id] }), /not_found|suppressed|No memory/i);
      const past = await recallContext(ctx, { query: 'when did we deploy before, zanzibar demo?' });
      assert.ok(!past.items.some((i) => i.source_kind === 'memory' && i.source_id === a.id), past.text);
      // Named again: already replaced.
      const again = await rememberTool.run(ctx, { title: 'Deploy window', text: 'Deploys happen on Mondays.', supersedes: [a.id] });
      assert.match(again.text, /^invalid_arguments: supersedes: memory \d+ was already superseded by memory/);
      // Its successor forgotten, it is unlinked and still suppressed.
      await engine.forget({ kind: 'memory', ids: [bId] }, scope);
      const a3 = await memory(engine, scope, a.id);
      assert.equal(a3.status, 'suppressed');
      assert.equal(a3.superseded_by, null);
    });
  });

  describe('5. a conflict with a memory that became history is closed', () => {
    it('C supersedes B: A no longer shows a possible conflict with B', async () => {
      const scope = fresh();
      const a = await engine.remember({ memory_type: 'decision', title: 'Orders storage', text: 'The orders service uses PostgreSQL', files: ['orders/db.ts'] }, scope);
      const b = await engine.remember({ memory_type: 'decision', title: 'Orders reporting storage', text: 'The orders service uses DuckDB', files: ['reports/orders.ts'], topic_key: 'reports-db' }, scope);
      assert.deepEqual(openConflicts(b), [a.id], 'control: flagged');
      const c = await engine.remember({ memory_type: 'decision', title: 'Reporting storage', text: 'Reports read from the warehouse export files', files: ['reports/orders.ts'], topic_key: 'reports-db' }, scope);
      assert.deepEqual(c.supersedes, [b.id], 'control: B is history');
      const a2 = await memory(engine, scope, a.id);
      assert.deepEqual(openConflicts(a2), []);
      assert.deepEqual(a2.conflicts!.map((x) => [x.id, x.resolution]), [[b.id, 'superseded']]);
      assert.deepEqual(openConflicts(await memory(engine, scope, b.id)), []);
      const pack = await recallContext(toolContext(engine, scope), { query: 'which database does the orders service use' });
      assert.doesNotMatch(pack.text, new RegExp(`\\(memory ${a.id}, [^)]*\\) \\[POSSIBLE CONFLICT`), pack.text);
    });

    it('B marked superseded by a third memory in review: the conflict of A with B closes too', async () => {
      const scope = fresh();
      const a = await engine.remember({ memory_type: 'decision', title: 'Orders storage', text: 'The orders service uses PostgreSQL', files: ['orders/db.ts'] }, scope);
      const b = await engine.remember({ memory_type: 'decision', title: 'Orders reporting storage', text: 'The orders service uses DuckDB', files: ['reports/orders.ts'] }, scope);
      const c = await engine.remember({ memory_type: 'note', title: 'Reporting', text: 'Reports read the warehouse export files.', files: ['reports/export.ts'] }, scope);
      await engine.resolveConflict(scope, b.id, c.id, 'superseded');
      assert.deepEqual(openConflicts(await memory(engine, scope, a.id)), []);
    });

    it('the mark is left out when the other side is no longer current (suppressed), though stored open', async () => {
      const scope = fresh();
      const a = await engine.remember({ memory_type: 'decision', title: 'Orders storage', text: 'The orders service uses PostgreSQL', files: ['orders/db.ts'] }, scope);
      const b = await engine.remember({ memory_type: 'decision', title: 'Orders reporting storage', text: 'The orders service uses DuckDB', files: ['reports/orders.ts'] }, scope);
      const q = 'which database does the orders service use';
      assert.match((await recallContext(toolContext(engine, scope), { query: q })).text, new RegExp(`\\(memory ${a.id}, [^)]*\\) \\[POSSIBLE CONFLICT with memory ${b.id}`), 'control');
      await engine.setStatus('memory', b.id, 'suppressed', scope);
      assert.deepEqual(openConflicts(await memory(engine, scope, a.id)), [b.id], 'stored open');
      const pack = await recallContext(toolContext(engine, scope), { query: q });
      assert.doesNotMatch(pack.text, /POSSIBLE CONFLICT/, pack.text);
    });
  });
});

describe('memories that stay true: a promoted memory is dated by its evidence (real git, real engine)', function () {
  this.timeout(120_000);
  const T2024 = Date.UTC(2024, 4, 1) / 1000;
  const T2025 = Date.UTC(2025, 4, 1) / 1000;
  let engine: MemoryEngine;
  let dir: string;
  const repos: string[] = [];
  beforeEach(async () => {
    dir = tempDir('supersede-truth');
    // The orphan sweep is run by hand below, so that nothing races it.
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, summariseOrphanSessions: false });
  });
  afterEach(async () => {
    await engine.close();
    removeDir(dir);
    for (const r of repos.splice(0)) removeDir(r);
  });

  it('a 2024 history that says "use Jest" twice does not retire today\'s "use Vitest": the promoted memory is history of it', async () => {
    const scope: Scope = { project: 'github.com/acme/truth-promoted-a' };
    const vitest = await engine.remember({ memory_type: 'decision', title: 'Test runner', text: 'Use Vitest for unit tests.', files: ['package.json'] }, scope);
    const { repo } = makeRepo([
      { subject: 'Set up tests', body: 'We decided to use Jest for unit tests.', files: { 'package.json': '{"devDependencies":{"jest":"29"}}\n' }, time: T2024 },
      { subject: 'More tests', body: 'We decided to use Jest for unit tests.', files: { 'package.json': '{"devDependencies":{"jest":"29.1"}}\n' }, time: T2024 + 600 },
    ]);
    repos.push(repo);
    assert.equal((await importGitHistory(engine, repo, { scope, documents: false })).imported, 2);
    await engine.endOrphanSessions();
    const all = await engine.listMemories(scope, { includeSuppressed: true });
    const jest = all.find((m) => m.id !== vitest.id);
    assert.ok(jest, 'control: the recurring 2024 decision was promoted');
    assert.equal(jest.created_at_epoch, (T2024 + 600) * 1000, 'dated from its latest evidence');
    const v = all.find((m) => m.id === vitest.id)!;
    assert.equal(v.status, 'active', `superseded by ${v.superseded_by}`);
    assert.equal(jest.status, 'superseded');
    assert.equal(jest.superseded_by, vitest.id);
    assert.deepEqual(v.supersedes, [jest.id]);
  });

  for (const order of ['oldest first', 'newest first'] as const) {
    it(`2024 "use Jest" and 2025 "use Vitest" in two sessions, summarised ${order}: Vitest holds`, async () => {
      const scope: Scope = { project: `github.com/acme/truth-promoted-${order.split(' ')[0]}` };
      const { repo, shas } = makeRepo([
        { subject: 'Set up tests', body: 'We decided to use Jest for unit tests.', files: { 'package.json': '{"jest":1}\n' }, time: T2024 },
        { subject: 'More tests', body: 'We decided to use Jest for unit tests.', files: { 'package.json': '{"jest":2}\n' }, time: T2024 + 600 },
        { subject: 'Move to Vitest', body: 'We decided to use Vitest for unit tests.', files: { 'package.json': '{"vitest":1}\n' }, time: T2025 },
        { subject: 'Vitest config', body: 'We decided to use Vitest for unit tests.', files: { 'package.json': '{"vitest":2}\n' }, time: T2025 + 600 },
      ]);
      repos.push(repo);
      await importGitHistory(engine, repo, { scope, documents: false });
      const sessions = [`git-${shas[0].slice(0, 12)}`, `git-${shas[2].slice(0, 12)}`];
      for (const s of order === 'oldest first' ? sessions : [...sessions].reverse()) await engine.endSession(scope, s, 'idle');
      const all = await engine.listMemories(scope, { includeSuppressed: true });
      const current = all.filter((m) => m.status === 'active' && /jest|vitest/i.test(m.text)).map((m) => m.text);
      assert.deepEqual(current, ['We decided to use Vitest for unit tests.'], all.map((m) => `${m.id} ${m.status} ${m.text}`).join(' | '));
      const jest = all.find((m) => /jest/i.test(m.text))!;
      const vitest = all.find((m) => /vitest/i.test(m.text))!;
      assert.equal(jest.superseded_by, vitest.id);
      assert.equal(jest.valid_to_epoch, (T2025 + 600) * 1000, 'held until the newer word was said');
      // The topic's trace is in the order things were said, the newest current.
      const latest = [vitest, jest].sort((x, y) => y.updated_at_epoch - x.updated_at_epoch || y.id - x.id)[0];
      assert.deepEqual((latest.topic_trace ?? []).map((t) => [t.id, t.status]), [[jest.id, 'closed'], [vitest.id, 'current']]);
    });
  }
});
