// Several current memories of one topic_key in one project and scope, left by what never retired
// them: a store an earlier build took to schema v4 before its upgrade replayed the topics, and an
// import of an old export holding them. The store's open (once) and every import retire all but
// the newest, as remember retires them and the v3 -> v4 upgrade does (the same replay): the
// tools then serve the current one only, get_observations shows the others superseded, and
// another project's memories of the same key, or memories with no topic_key, are left alone.
// A kill -9 in the middle of the repair leaves a store the next open finishes the same way.

import { strict as assert } from 'node:assert';
import * as lancedb from '@lancedb/lancedb';
import { HASHED_DEFAULT_DIMENSION, HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import type { Memory, Scope } from '../../src/core/model/records';
import { cellNodeId } from '../../src/core/store/cells';
import { Store } from '../../src/core/store/store';
import { EXPORT_FORMAT } from '../../src/core/store/portability';
import { TABLES, memoriesSchema } from '../../src/core/store/schema';
import { getObservations } from '../../src/core/tools/getObservations';
import { recall } from '../../src/core/tools/recall';
import { recallContext } from '../../src/core/tools/recallContext';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { memoryRow, writeMemoryStore } from './fixtures/memoryStore';
import type { MemorySeed } from './fixtures/memoryStore';
import { openKilledAt, rawStatusOf } from './fixtures/openKilledAt';
import { tempDirs, toolContext } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const APP = 'github.com/acme/orders-app';
const OTHER = 'github.com/acme/other-app';
const DAY = 86_400_000;
const T0 = Date.UTC(2025, 2, 3);

const SEEDS: MemorySeed[] = [
  // One topic said three times in APP, all left current.
  { id: 11, title: 'Orders database', text: 'We use PostgreSQL 14 for the orders service.', topic_key: 'orders-db', day: 0, facts: [['orders service', 'uses', 'postgresql 14']] },
  { id: 12, title: 'Orders database', text: 'We moved the orders service to MySQL.', topic_key: 'orders-db', day: 2, facts: [['orders service', 'uses', 'mysql']] },
  { id: 13, title: 'Orders database', text: 'The orders service runs on SQLite now.', topic_key: 'orders-db', day: 5 },
  // No topic_key: never retired by the repair.
  { id: 14, title: 'Orders database backups', text: 'Orders database backups run nightly to cold storage.', topic_key: null, day: 1 },
  // Another project's memory of the same key, said after all of APP's: never meets them.
  { id: 41, project: OTHER, title: 'Orders database', text: 'The other app keeps orders database rows in Redis.', topic_key: 'orders-db', day: 7 },
];

/** A store as an earlier build at schema v4 left it: its upgrade never replayed the topics, so every memory is current. */
function writeOldV4Store(dir: string): Promise<void> {
  return writeMemoryStore(dir, { version: 4, rows: SEEDS.map((seed) => memoryRow(seed, APP, T0)), memories: memoriesSchema(), dimension: HASHED_DEFAULT_DIMENSION });
}

const open = (dir: string): Promise<MemoryEngine> => MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });

async function memoriesOf(engine: MemoryEngine, scope: Scope, ids: number[]): Promise<Map<number, Memory>> {
  return new Map((await engine.getMemories(ids, scope, { includeSuppressed: true })).map((m) => [m.id, m]));
}

/** Every memory row and memory cell status, read through an open of the store. */
async function snapshot(dir: string): Promise<{ memories: Record<number, Record<string, unknown>>; cells: Record<number, string> }> {
  const engine = await open(dir);
  try {
    const memories: Record<number, Record<string, unknown>> = {};
    for (const r of await engine.store.rows(TABLES.memories, null)) memories[Number(r.id)] = r;
    const cells: Record<number, string> = {};
    for (const r of await engine.store.rows(TABLES.cells, `source_kind = 'memory'`, { select: ['source_id', 'status'] })) cells[Number(r.source_id)] = String(r.status);
    return { memories, cells };
  } finally {
    await engine.close();
  }
}

describe('store: several current memories of one topic_key are repaired to one', function () {
  this.timeout(300_000);
  const dirs = tempDirs();
  after(() => dirs.removeAll());

  it('a store an earlier build took to v4: its open leaves the newest current, the others superseded by it', async () => {
    const dir = dirs.make('topics-v4');
    await writeOldV4Store(dir);
    const engine = await open(dir);
    try {
      const app = { project: APP };
      const m = await memoriesOf(engine, app, [11, 12, 13, 14]);
      const at = (id: number): Memory => m.get(id)!;
      assert.deepEqual([11, 12, 13, 14].map((id) => at(id).status), ['superseded', 'superseded', 'active', 'active']);
      // Superseded by the newest, as remember would have: each by the one said after it.
      assert.deepEqual([11, 12, 13, 14].map((id) => at(id).superseded_by), [12, 13, null, null]);
      assert.deepEqual([at(11).valid_to_epoch, at(12).valid_to_epoch], [T0 + 2 * DAY, T0 + 5 * DAY]);
      assert.deepEqual(at(13).supersedes, [12]);
      assert.deepEqual(at(11).temporal_facts!.map((f) => f.status), ['closed']);
      // Another project's memory of the same key, newer than all of APP's: untouched, and it retired nothing of APP's.
      const [other] = await engine.getMemories([41], { project: OTHER });
      assert.deepEqual([other.status, other.superseded_by, other.supersedes], ['active', null, null]);

      // The tools serve the current one only.
      const ctx = toolContext(engine, app);
      const pack = await recallContext(ctx, { query: 'which database does the orders service use' });
      const inPack = pack.items.filter((i) => i.source_kind === 'memory').map((i) => i.source_id);
      assert.ok(inPack.includes(13) && !inPack.includes(11) && !inPack.includes(12), pack.text);
      const rm = await retrieveMemory(ctx, { prompt: 'which database does the orders service use' });
      const paths = rm.retrieval!.facts.map((f) => f.source_path);
      assert.ok(paths.includes('memory/13') && !paths.includes('memory/11') && !paths.includes('memory/12'), rm.content_text);
      assert.ok(!paths.includes('memory/41'), rm.content_text);
      const near = await recall(ctx, { text: 'orders service database', k: 50 });
      for (const id of [11, 12]) assert.ok(!near.nodes.some((n) => n.node_id === cellNodeId(APP, 'memory', id)), JSON.stringify(near.nodes));
      // By id the retired one is there, superseded.
      const details = await getObservations(ctx, { ids: [11] });
      assert.equal((details.details[0] as Record<string, unknown>).status, 'superseded');
      // What remember does next goes on from the one current memory.
      const next = await engine.remember({ memory_type: 'decision', title: 'Orders database', text: 'Orders are stored in CockroachDB.', topic_key: 'orders-db' }, app);
      assert.deepEqual(next.supersedes, [13]);
    } finally {
      await engine.close();
    }
  });

  it('does it once: opening the repaired store again changes nothing', async () => {
    const dir = dirs.make('topics-v4-again');
    await writeOldV4Store(dir);
    const first = await snapshot(dir);
    const second = await snapshot(dir);
    assert.deepEqual(second, first);
    assert.deepEqual([first.cells[11], first.cells[12], first.cells[13], first.cells[14], first.cells[41]], ['superseded', 'superseded', 'active', 'active', 'active']);
    // A retired memory's access count is kept.
    assert.equal(first.memories[11].access_count, 3);
  });

  it('an open of a store already repaired reads no memory (a big store opens as fast as before)', async () => {
    const dir = dirs.make('topics-v4-cheap');
    await writeOldV4Store(dir);
    const db = await lancedb.connect(dir);
    const proto = Object.getPrototypeOf(await db.openTable('memories')) as { query: (...args: unknown[]) => unknown };
    db.close();
    const original = proto.query;
    let reads = 0;
    proto.query = function (this: { name: string }, ...args: unknown[]) {
      if (this.name === 'memories') reads++;
      return original.apply(this, args);
    };
    const readsOfOpen = async (): Promise<number> => {
      reads = 0;
      (await Store.open({ uri: dir, dimension: HASHED_DEFAULT_DIMENSION })).close();
      return reads;
    };
    try {
      assert.ok((await readsOfOpen()) > 0, 'control: the first open repairs');
      assert.equal(await readsOfOpen(), 0);
    } finally {
      proto.query = original;
    }
  });

  it('killed in the middle of the repair, the next open finishes it the same way', async () => {
    const whole = dirs.make('topics-v4-whole');
    await writeOldV4Store(whole);
    const expected = await snapshot(whole);
    for (const point of ['execute:1', 'execute:2']) {
      const dir = dirs.make('topics-v4-kill');
      await writeOldV4Store(dir);
      const r = await openKilledAt(dir, point);
      assert.equal(r.signal, 'SIGKILL', `control: killed at ${point} (${r.code} ${r.stderr.slice(0, 500)})`);
      // Killed in the repair: its cells written, not its memories; or both, not the meta saying it is done.
      const half = { 'execute:1': ['active', 'superseded'], 'execute:2': ['superseded', 'superseded'] }[point];
      assert.deepEqual(await rawStatusOf(dir, 11), half, `killed at ${point}: memory 11 and its cell`);
      const after = await snapshot(dir);
      assert.deepEqual(after, expected, `killed at ${point}`);
    }
  });

  it('an import of a file holding several current memories of one topic_key stores one current, in its project only', async () => {
    const dir = dirs.make('topics-import');
    const engine = await open(dir);
    try {
      const seeds: MemorySeed[] = [
        { id: 101, title: 'Job queue', text: 'Background jobs run on RabbitMQ.', topic_key: 'jobs-queue', day: 0 },
        { id: 102, title: 'Job queue', text: 'Background jobs moved to Amazon SQS.', topic_key: 'jobs-queue', day: 3 },
        { id: 103, title: 'Job queue retries', text: 'Background job retries back off exponentially.', topic_key: null, day: 1 },
        { id: 104, project: OTHER, title: 'Job queue', text: 'The other app runs background jobs on Sidekiq.', topic_key: 'jobs-queue', day: 4 },
      ];
      const lines = [
        JSON.stringify({ kind: EXPORT_FORMAT, schema_version: 4, exported_at: new Date(T0).toISOString(), project: null }),
        ...seeds.map((s) => JSON.stringify({ kind: 'memory', record: memoryRow(s, APP, T0) })),
      ];
      const imported = await engine.importJsonl(async function* () {
        yield* lines;
      });
      assert.equal(imported, 4);
      const m = await memoriesOf(engine, { project: APP }, [101, 102, 103]);
      assert.deepEqual([101, 102, 103].map((id) => m.get(id)?.status), ['superseded', 'active', 'active']);
      assert.deepEqual([m.get(101)?.superseded_by, m.get(102)?.supersedes], [102, [101]]);
      const [other] = await engine.getMemories([104], { project: OTHER });
      assert.deepEqual([other.status, other.superseded_by], ['active', null]);
      const pack = await recallContext(toolContext(engine, { project: APP }), { query: 'which queue do background jobs run on' });
      const inPack = pack.items.filter((i) => i.source_kind === 'memory').map((i) => i.source_id);
      assert.ok(inPack.includes(102) && !inPack.includes(101), pack.text);
    } finally {
      await engine.close();
    }
  });
});
