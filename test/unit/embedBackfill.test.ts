import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { VectorBackfill, type BackfillProgress } from '../../src/core/embed/backfill';
import type { Embedder } from '../../src/core/embed/embedder';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { WorkerEmbedder } from '../../src/core/embed/workerEmbedder';
import { rowsToArrow } from '../../src/core/store/arrowRows';
import { cellsSchema, TABLES } from '../../src/core/store/schema';
import { ensureScalarIndexes } from '../../src/core/store/indexes';
import { Store } from '../../src/core/store/store';

process.env.LANCEDB_LOG ??= 'error';

type Row = Record<string, unknown>;

function cellRow(i: number, dimension: number, extra: Row = {}): Row {
  return {
    node_id: `node-${i}`,
    layer: 'L0',
    source_kind: 'observation',
    source_id: i,
    project: 'demo',
    branch: 'main',
    type: 'change',
    title: `change ${i}`,
    text: `edited module${i % 13}.ts to handle case ${i}`,
    search_text: `edited module ${i}`,
    files: null,
    commit_sha: null,
    session_id: 's1',
    created_at_epoch: 1_700_000_000_000 + i,
    last_accessed_epoch: null,
    access_count: 0,
    status: 'active',
    embed_model: '',
    vector: new Float32Array(dimension),
    ...extra,
  };
}

async function cellsTable(dimension: number, count: number, extra: (i: number) => Row = () => ({})): Promise<lancedb.Table> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-backfill-'));
  const db = await lancedb.connect(dir, { readConsistencyInterval: 0 });
  const schema = cellsSchema(dimension);
  const rows = Array.from({ length: count }, (_, i) => cellRow(i, dimension, extra(i)));
  return db.createTable('cells', rowsToArrow(schema, rows), { schema });
}

async function byId(table: lancedb.Table): Promise<Map<string, Row>> {
  const rows = (await table.query().toArray()) as Row[];
  return new Map(rows.map((r) => [String(r.node_id), r]));
}

function vec(r: Row | undefined): number[] {
  return Array.from(r?.vector as ArrayLike<number>);
}

/** A second model of the same size: another name means "re-embed". */
class RenamedEmbedder implements Embedder {
  readonly dimension: number;
  constructor(readonly name: string, private readonly inner: Embedder) {
    this.dimension = inner.dimension;
  }
  async embed(texts: string[]): Promise<Float32Array[]> {
    return (await this.inner.embed(texts)).map((v) => v.map((x) => -x));
  }
}

describe('VectorBackfill', function () {
  this.timeout(120_000);

  it('embeds every waiting cell through the worker and keeps the other columns', async () => {
    const table = await cellsTable(64, 500, (i) => ({ access_count: i % 5 }));
    const embedder = await WorkerEmbedder.start({ provider: 'hashed', dimension: 64 });
    const progress: BackfillProgress[] = [];
    try {
      const backfill = new VectorBackfill({ cells: table, embedder, batchSize: 128, onProgress: (p) => progress.push(p) });
      backfill.kick();
      backfill.kick(); // a second kick while running is folded into the same work
      await backfill.idle();
      assert.equal(await table.countRows(`embed_model = 'hashed-ngram-64'`), 500);
      const rows = await byId(table);
      const [expected] = await new HashedEmbedder(64).embed(['change 7\nedited module7.ts to handle case 7']);
      assert.deepEqual(vec(rows.get('node-7')).map((x) => x.toFixed(5)), Array.from(expected).map((x) => x.toFixed(5)));
      assert.equal(rows.get('node-9')?.access_count, 4);
      assert.equal(rows.size, 500);
      assert.ok(progress.length >= 4);
      assert.deepEqual(progress.at(-1), { embedded: 500, remaining: 0 });
    } finally {
      await embedder.close();
    }
  });

  it('never undoes a concurrent write: changed text is re-embedded, counters kept, deleted rows stay deleted', async () => {
    const table = await cellsTable(32, 40);
    const hashed = new HashedEmbedder(32);
    let firstCall = true;
    const racing: Embedder = {
      name: hashed.name,
      dimension: 32,
      async embed(texts) {
        if (firstCall) {
          firstCall = false;
          // Other writers act while the batch is being embedded.
          await table.update({ where: `node_id = 'node-1'`, values: { text: 'rewritten text about caching' } });
          await table.update({ where: `node_id = 'node-2'`, valuesSql: { access_count: '42' } });
          await table.delete(`node_id = 'node-3'`);
        }
        return hashed.embed(texts);
      },
    };
    const backfill = new VectorBackfill({ cells: table, embedder: racing, batchSize: 10 });
    backfill.kick();
    await backfill.idle();
    backfill.kick(); // what the engine does after each write
    await backfill.idle();
    const rows = await byId(table);
    assert.equal(rows.has('node-3'), false);
    assert.equal(rows.get('node-2')?.access_count, 42);
    assert.equal(rows.get('node-2')?.embed_model, hashed.name);
    const [rewritten] = await hashed.embed(['change 1\nrewritten text about caching']);
    assert.deepEqual(vec(rows.get('node-1')).map((x) => x.toFixed(5)), Array.from(rewritten).map((x) => x.toFixed(5)));
    assert.equal(await table.countRows(`embed_model = '${hashed.name}'`), 39);
  });

  it('re-embeds on a model switch of the same size while rows of the new model are searchable', async () => {
    const table = await cellsTable(32, 300);
    const first = new HashedEmbedder(32);
    const a = new VectorBackfill({ cells: table, embedder: first, batchSize: 100 });
    a.kick();
    await a.idle();
    assert.equal(await table.countRows(`embed_model = '${first.name}'`), 300);

    const second = new RenamedEmbedder('other-model-32', first);
    let calls = 0;
    let midway: { newRows: number; oldRows: number; hitModels: string[] } | null = null;
    const observed: Embedder = {
      name: second.name,
      dimension: second.dimension,
      async embed(texts) {
        if (++calls === 3) {
          // Between two batches: search still answers, from the rows the new model already has.
          const [q] = await second.embed(['edited module5.ts to handle case 5']);
          const hits = (await table.vectorSearch(q).distanceType('dot').where(`embed_model = 'other-model-32'`).limit(5).toArray()) as Row[];
          // One read, so that a merge committing meanwhile cannot fall between two counts.
          const models = (await table.query().select(['embed_model']).toArray()).map((r) => String(r.embed_model));
          midway = {
            newRows: models.filter((m) => m === 'other-model-32').length,
            oldRows: models.filter((m) => m === first.name).length,
            hitModels: hits.map((h) => String(h.embed_model)),
          };
        }
        return second.embed(texts);
      },
    };
    const b = new VectorBackfill({ cells: table, embedder: observed, batchSize: 100, embedBatchSize: 100 });
    b.kick();
    await b.idle();
    // The next batch is embedded while the one before is written: at the second embed call the
    // first batch may still be in flight, at the third it is stored.
    const seen = midway as { newRows: number; oldRows: number; hitModels: string[] } | null;
    assert.ok(seen && seen.newRows >= 100 && seen.newRows < 300, JSON.stringify(seen));
    assert.equal(seen.newRows + seen.oldRows, 300);
    assert.deepEqual(seen.hitModels, Array(5).fill('other-model-32'));
    const [q] = await second.embed(['edited module5.ts to handle case 5']);
    const hits = (await table.vectorSearch(q).distanceType('dot').where(`embed_model = 'other-model-32'`).limit(5).toArray()) as Row[];
    assert.equal(hits[0].node_id, 'node-5');
    assert.equal(await table.countRows(`embed_model = 'other-model-32'`), 300);
    assert.equal(await table.countRows(`embed_model = '${first.name}'`), 0);
  });

  it('fills a cells table that the store re-created for a new dimension', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-backfill-resize-'));
    const store = await Store.open({ uri: dir, dimension: 32 });
    try {
      await store.add(TABLES.cells, Array.from({ length: 50 }, (_, i) => cellRow(i, 32)));
      const old = new HashedEmbedder(32);
      const getter = () => store.table(TABLES.cells);
      const a = new VectorBackfill({ cells: getter, embedder: old });
      a.kick();
      await a.idle();
      await a.stop();
      await store.resizeVectors(64);
      const next = new HashedEmbedder(64);
      const b = new VectorBackfill({ cells: getter, embedder: next });
      b.kick();
      await b.idle();
      assert.equal(await getter().countRows(`embed_model = '${next.name}'`), 50);
      const [row] = (await getter().query().where(`node_id = 'node-4'`).toArray()) as Row[];
      assert.equal(vec(row).length, 64);
    } finally {
      store.close();
    }
  });

  it('writes back next to the store\'s BTREE on node_id (LanceDB 0.31 panicked when the merge used it)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-backfill-btree-'));
    const store = await Store.open({ uri: dir, dimension: 32 });
    try {
      const cells = () => store.table(TABLES.cells);
      await store.add(TABLES.cells, Array.from({ length: 3000 }, (_, i) => cellRow(i, 32)));
      // Rebuilt over the rows, then more rows the index has not seen yet.
      await ensureScalarIndexes(cells(), TABLES.cells, undefined, true);
      await store.add(TABLES.cells, Array.from({ length: 500 }, (_, i) => cellRow(3000 + i, 32)));
      assert.ok((await cells().listIndices()).some((i) => i.columns.includes('node_id') && /btree/i.test(i.indexType)));
      const embedder = new HashedEmbedder(32);
      const backfill = new VectorBackfill({ cells, embedder, batchSize: 1000 });
      backfill.kick();
      await backfill.idle();
      assert.equal(await cells().countRows(`embed_model = '${embedder.name}'`), 3500);
      // The write-back moved every row; the compaction that follows it (the lease holder's
      // optimize) brings them back under the index.
      await store.optimize(0, [TABLES.cells]);
      assert.match(await cells().query().where(`node_id IN ('node-5', 'node-3100')`).explainPlan(), /ScalarIndexQuery.*node_id/);
      const found = (await cells().query().where(`node_id IN ('node-5', 'node-3100')`).select(['node_id', 'embed_model']).toArray()) as Row[];
      assert.deepEqual(found.map((r) => [r.node_id, r.embed_model]).sort(), [['node-3100', embedder.name], ['node-5', embedder.name]]);
    } finally {
      store.close();
    }
  });

  it('reports embedder failures, retries, and never throws into the caller', async () => {
    const table = await cellsTable(16, 20);
    const hashed = new HashedEmbedder(16);
    let calls = 0;
    const flaky: Embedder = {
      name: hashed.name,
      dimension: 16,
      async embed(texts) {
        calls++;
        if (calls <= 2) throw new Error('model not loaded yet');
        return hashed.embed(texts);
      },
    };
    const errors: string[] = [];
    const backfill = new VectorBackfill({ cells: table, embedder: flaky, retryDelayMs: 10, onError: (e) => errors.push(e.message) });
    backfill.kick();
    await backfill.idle();
    assert.deepEqual(errors, ['model not loaded yet']);
    for (let i = 0; i < 100 && (await table.countRows(`embed_model = '${hashed.name}'`)) < 20; i++) {
      await new Promise((r) => setTimeout(r, 20));
      await backfill.idle();
    }
    assert.equal(await table.countRows(`embed_model = '${hashed.name}'`), 20);
    assert.deepEqual(errors, ['model not loaded yet', 'model not loaded yet']);
    await backfill.stop();
  });

  it('with a slow encoder, writes what it has every writeAfterMs instead of waiting for a full batch', async () => {
    const table = await cellsTable(16, 100);
    const hashed = new HashedEmbedder(16);
    const slow: Embedder = {
      name: hashed.name,
      dimension: 16,
      async embed(texts) {
        await new Promise((r) => setTimeout(r, 30));
        return hashed.embed(texts);
      },
    };
    const progress: BackfillProgress[] = [];
    const backfill = new VectorBackfill({ cells: table, embedder: slow, embedBatchSize: 10, writeAfterMs: 50, onProgress: (p) => progress.push(p) });
    backfill.kick();
    await backfill.idle();
    assert.equal(await table.countRows(`embed_model = '${hashed.name}'`), 100);
    // Written in several merges, the first long before the last text was embedded.
    assert.ok(progress.length >= 2, `${progress.length} writes`);
    assert.ok(progress[0].embedded <= 50, `first write held ${progress[0].embedded} rows`);
  });

  it('writes what it has embedded when stopped mid-pass, and nothing more', async () => {
    const table = await cellsTable(16, 100);
    const hashed = new HashedEmbedder(16);
    let calls = 0;
    let backfill: VectorBackfill | null = null;
    let stopping: Promise<void> | null = null;
    const stopper: Embedder = {
      name: hashed.name,
      dimension: 16,
      async embed(texts) {
        if (++calls === 3) stopping = backfill!.stop();
        return hashed.embed(texts);
      },
    };
    backfill = new VectorBackfill({ cells: table, embedder: stopper, embedBatchSize: 10 });
    backfill.kick();
    await backfill.idle();
    await stopping;
    assert.equal(calls, 3);
    assert.equal(await table.countRows(`embed_model = '${hashed.name}'`), 30);
  });

  it('does nothing after stop', async () => {
    const table = await cellsTable(16, 10);
    const backfill = new VectorBackfill({ cells: table, embedder: new HashedEmbedder(16) });
    await backfill.stop();
    backfill.kick();
    await backfill.idle();
    assert.equal(await table.countRows(`embed_model = ''`), 10);
  });
});
