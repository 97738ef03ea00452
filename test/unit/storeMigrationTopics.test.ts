// A store of schema v2 or v3 (builds that never retired memories) can hold several current
// memories of one topic_key in one project and scope. Its upgrade applies the supersession rule
// of remember to them once: in the order they were said, each is retired by the next one, with
// the links and fields remember writes (status, superseded_by, valid_to_epoch, closed facts,
// the successor's supersedes, the search cell's status). The upgrade is idempotent, and a kill -9
// at any of its writes leaves a store the next open finishes the same way.

import { strict as assert } from 'node:assert';
import * as lancedb from '@lancedb/lancedb';
import { Schema } from 'apache-arrow';
import { MemoryEngine } from '../../src/core/engine';
import type { Memory } from '../../src/core/model/records';
import { MEMORY_V4_FIELDS, SCHEMA_VERSION, TABLES, memoriesSchema } from '../../src/core/store/schema';
import { memoryRow, writeMemoryStore } from './fixtures/memoryStore';
import type { MemorySeed } from './fixtures/memoryStore';
import { openKilledAt, rawStatusOf } from './fixtures/openKilledAt';
import { tempDirs } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const APP = 'legacy/app';
const OTHER = 'legacy/other';
const DAY = 86_400_000;
const T0 = Date.UTC(2025, 0, 10);

/** The memories of the old store: ids and what each is expected to become. */
const SEEDS: MemorySeed[] = [
  // One topic said three times project-wide (no branch, then `main`, which is project-wide too).
  { id: 11, title: 'Orders database', text: 'We use PostgreSQL 14 for the orders service.', topic_key: 'orders-db', day: 0, facts: [['orders service', 'uses', 'postgresql 14']] },
  { id: 12, title: 'Orders database', text: 'We moved the orders service to MySQL.', topic_key: 'orders-db', day: 2, branch: 'main', facts: [['orders service', 'uses', 'mysql']] },
  { id: 13, title: 'Orders database', text: 'The orders service runs on SQLite now.', topic_key: 'orders-db', day: 5 },
  // The same key on a branch: a scope of its own, where the newer retires the older.
  { id: 21, title: 'Orders database on the spike', text: 'The spike tries DuckDB for orders.', topic_key: 'orders-db', day: 1, branch: 'spike/duck' },
  { id: 22, title: 'Orders database on the spike', text: 'The spike settled on DuckDB 1.1 for orders.', topic_key: 'orders-db', day: 3, branch: 'spike/duck' },
  // A suppressed memory of the topic: a person hid it; it stays as it is.
  { id: 31, title: 'Orders database (hidden)', text: 'Orders were on Oracle once.', topic_key: 'orders-db', day: 4, status: 'suppressed' },
  // Another project's memory of the same key: never met.
  { id: 41, project: OTHER, title: 'Orders database', text: 'The other app uses Redis for orders.', topic_key: 'orders-db', day: 1 },
  // Keys old builds took from a memory's first fact (no topic_key was given): remember retires by a given key only.
  { id: 51, title: 'Billing runtime', text: 'The billing job uses Node 18.', topic_key: 'billing job', day: 1, facts: [['billing job', 'uses', 'node 18']] },
  { id: 52, title: 'Billing schedule', text: 'The billing job must be idempotent.', topic_key: 'billing job', day: 2, facts: [['billing job', 'must be', 'idempotent']] },
];

/** A store as schema v2 wrote it: memories without the v4 supersession columns, each with its search cell. */
function writeV2Store(dir: string): Promise<void> {
  const v4 = new Set(MEMORY_V4_FIELDS().map((f) => f.name));
  const rows = SEEDS.map((seed) => ({ ...memoryRow(seed, APP, T0), source_ids: '[7]' }));
  return writeMemoryStore(dir, { version: 2, rows, memories: new Schema(memoriesSchema().fields.filter((f) => !v4.has(f.name))), dimension: 16, cell: { access_count: 3 } });
}

const open = (dir: string): Promise<MemoryEngine> => MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });

interface Snapshot {
  version: string | null;
  memories: Record<number, Record<string, unknown>>;
  cells: Record<number, string>;
}

async function snapshot(dir: string): Promise<Snapshot> {
  const engine = await open(dir);
  try {
    const memories: Snapshot['memories'] = {};
    for (const r of await engine.store.rows(TABLES.memories, null)) memories[Number(r.id)] = r;
    const cells: Snapshot['cells'] = {};
    for (const r of await engine.store.rows(TABLES.cells, `source_kind = 'memory'`, { select: ['source_id', 'status'] })) cells[Number(r.source_id)] = String(r.status);
    return { version: await engine.store.getMeta('schema_version'), memories, cells };
  } finally {
    await engine.close();
  }
}

/** The meta version a store holds, read without opening (and so upgrading) it. */
async function storedVersion(dir: string): Promise<string> {
  const db = await lancedb.connect(dir);
  try {
    const rows = await (await db.openTable('meta')).query().where(`key = 'schema_version'`).toArray();
    return String(rows[0].value);
  } finally {
    db.close();
  }
}

describe('store: the upgrade of an old store retires memories of one topic_key as remember would', function () {
  this.timeout(300_000);
  const dirs = tempDirs();
  after(() => dirs.removeAll());

  it('leaves one current memory per topic_key, project and scope, with the links remember writes', async () => {
    const dir = dirs.make('topics-v2');
    await writeV2Store(dir);
    const engine = await open(dir);
    try {
      assert.equal(await engine.store.getMeta('schema_version'), String(SCHEMA_VERSION));
      const scope = { project: APP };
      const byId = new Map<number, Memory>((await engine.getMemories([11, 12, 13, 21, 22, 31, 51, 52], scope, { includeSuppressed: true })).map((m) => [m.id, m]));
      const m = (id: number): Memory => byId.get(id)!;
      // Project-wide chain, in the order the memories were said: 11 -> 12 -> 13.
      assert.deepEqual([m(11).status, m(12).status, m(13).status], ['superseded', 'superseded', 'active']);
      assert.deepEqual([m(11).superseded_by, m(12).superseded_by, m(13).superseded_by], [12, 13, null]);
      assert.deepEqual([m(11).valid_to_epoch, m(12).valid_to_epoch, m(13).valid_to_epoch], [T0 + 2 * DAY, T0 + 5 * DAY, null]);
      assert.deepEqual([m(11).supersedes, m(12).supersedes, m(13).supersedes], [null, [11], [12]]);
      assert.deepEqual(m(11).temporal_facts!.map((f) => [f.status, f.valid_to_epoch]), [['closed', T0 + 2 * DAY]]);
      assert.deepEqual(m(12).temporal_facts!.map((f) => [f.status, f.valid_to_epoch]), [['closed', T0 + 5 * DAY]]);
      assert.equal(m(12).updated_at_epoch, T0 + 5 * DAY);
      // The branch's own chain.
      assert.deepEqual([m(21).status, m(21).superseded_by, m(22).status, m(22).supersedes], ['superseded', 22, 'active', [21]]);
      // Untouched: the suppressed one, and keys no one gave.
      assert.deepEqual([m(31).status, m(31).superseded_by, m(31).valid_to_epoch], ['suppressed', null, null]);
      assert.deepEqual([m(51).status, m(52).status, m(51).superseded_by], ['active', 'active', null]);
      const [other] = await engine.getMemories([41], { project: OTHER });
      assert.deepEqual([other.status, other.superseded_by], ['active', null]);
      // What the tools read on the default branch: one current memory of the topic.
      const onMain = { project: APP, branch: 'main' };
      const hits = await engine.search('orders database', { scope: onMain, layers: ['L2'], limit: 20 });
      const ids = hits.map((h) => h.cell.source_id).sort((a, b) => a - b);
      assert.deepEqual(ids, [13], `current memories found: ${ids.join(', ')}`);
      const history = await engine.search('orders database', { scope: onMain, layers: ['L2'], limit: 20, includeSuperseded: true });
      assert.deepEqual(history.map((h) => h.cell.source_id).sort((a, b) => a - b), [11, 12, 13]);
      // What remember does next goes on from the one current memory.
      const next = await engine.remember({ memory_type: 'decision', title: 'Orders database', text: 'Orders are stored in CockroachDB.', topic_key: 'orders-db' }, scope);
      assert.deepEqual(next.supersedes, [13]);
    } finally {
      await engine.close();
    }
  });

  it('does it once: opening the upgraded store again changes nothing', async () => {
    const dir = dirs.make('topics-again');
    await writeV2Store(dir);
    const first = await snapshot(dir);
    const second = await snapshot(dir);
    assert.deepEqual(second, first);
    assert.equal(first.cells[11], 'superseded');
    assert.equal(first.cells[13], 'active');
    // The access counts and evidence of a retired memory are kept.
    assert.deepEqual([first.memories[11].access_count, first.memories[11].source_ids], [3, '[7]']);
  });

  it('killed at any write of the upgrade, the next open finishes it the same way', async () => {
    const whole = dirs.make('topics-whole');
    await writeV2Store(whole);
    const expected = await snapshot(whole);
    const points = ['addColumns:1', 'execute:1', 'execute:2'];
    for (const point of points) {
      const dir = dirs.make('topics-kill');
      await writeV2Store(dir);
      const r = await openKilledAt(dir, point);
      assert.equal(r.signal, 'SIGKILL', `control: killed at ${point} (${r.code} ${r.stderr.slice(0, 500)})`);
      assert.equal(await storedVersion(dir), '2', `killed at ${point}: the upgrade had not finished`);
      // The state each kill leaves: nothing retired yet; the cells written, not the memories; both.
      const half = { 'addColumns:1': ['active', 'active'], 'execute:1': ['active', 'superseded'], 'execute:2': ['superseded', 'superseded'] }[point];
      assert.deepEqual(await rawStatusOf(dir, 11), half, `killed at ${point}: memory 11 and its cell`);
      const after = await snapshot(dir);
      assert.deepEqual(after, expected, `killed at ${point}`);
    }
  });
});
