import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Embedder } from '../../src/core/embed/embedder';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import { hasVectorIndex } from '../../src/core/store/annIndex';
import { TABLES } from '../../src/core/store/schema';
import { getObservations } from '../../src/core/tools/getObservations';
import { syntheticCorpus } from '../../bench/synthetic';

process.env.LANCEDB_LOG ??= 'error';

/** The hashed embedder, counting what it embeds (texts per call). */
class CountingEmbedder implements Embedder {
  readonly calls: string[][] = [];
  private readonly inner = new HashedEmbedder(64);
  readonly name = this.inner.name;
  readonly dimension = this.inner.dimension;
  embed(texts: string[]): Promise<Float32Array[]> {
    this.calls.push(texts);
    return this.inner.embed(texts);
  }
}

describe('engine: vectors and reads at scale', function () {
  this.timeout(300_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-vectors-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  for (const inChild of [false, true]) {
    it(`the lease holder embeds a large write in a few batches, then compacts and builds the ANN index${inChild ? ' (both in a child process)' : ''}; the other process only searches`, async () => {
      const holderEmbedder = new CountingEmbedder();
      const otherEmbedder = new CountingEmbedder();
      const logged: string[] = [];
      const holder = await MemoryEngine.open({ storeUri: dir, embedder: holderEmbedder, maintenanceIntervalMs: 0, annThreshold: 1500, upkeepQuietMs: 100, upkeepInChildFrom: inChild ? 1000 : 1e9, logger: (m) => logged.push(m) });
      const other = await MemoryEngine.open({ storeUri: dir, embedder: otherEmbedder, maintenanceIntervalMs: 0, annThreshold: 1500 });
      try {
        assert.equal(holder.lease.isHeld, true);
        assert.equal(other.lease.isHeld, false);
        const corpus = syntheticCorpus(2000, 10, 3);
        const big = { project: 'big' };
        const tiny = { project: 'tiny' };
        // Written through the other process: the holder still does the embedding.
        for (let i = 0; i < 2000; i += 500) {
          await other.observe(corpus.texts.slice(i, i + 500).map((t, j) => ({ type: 'change', title: corpus.titles[i + j], narrative: t, dedupe_key: `k${i + j}` })), big);
        }
        const tinyObs = await other.observe(corpus.texts.slice(0, 12).map((t, j) => ({ type: 'change', title: `tiny ${j}`, narrative: t })), tiny);
        holder.kickVectors();
        await holder.settled();
        assert.equal(await holder.store.count(TABLES.cells, `embed_model = '${holderEmbedder.name}'`), 2012);
        assert.deepEqual(otherEmbedder.calls, [], 'the process without the lease embedded');
        // Each cell embedded once, in calls small enough for a slow encoder to stop between.
        assert.equal(holderEmbedder.calls.flat().length, 2012);
        assert.ok(holderEmbedder.calls.every((c) => c.length <= 64));
        // Caught up after a large write-back: compacted, and past the threshold, indexed.
        const cells = holder.store.table(TABLES.cells);
        assert.equal(await hasVectorIndex(cells), true);
        assert.equal((await cells.stats()).fragmentStats.numFragments, 1);
        assert.equal((await other.stats(null)).ann_index, true);
        assert.equal(logged.includes('built the hnsw_sq vector index in a process of its own'), inChild);
        assert.equal(logged.some((m) => m.startsWith('compacted cells in a process of its own')), inChild);

        // A small project in the big store gets its k results through the index (prefilter).
        const plan = await cells.vectorSearch(Array.from((await holderEmbedder.embed(['x']))[0])).distanceType('l2').where(`project = 'tiny'`).limit(10).explainPlan();
        assert.match(plan, /ANNSubIndex/);
        const hits = await other.search(corpus.texts[3], { scope: tiny, limit: 10 });
        assert.equal(hits.length, 10);
        assert.ok(hits.every((h) => h.cell.project === 'tiny'));
        assert.equal(hits[0].cell.source_id, tinyObs[3].id);
      } finally {
        await other.close();
        await holder.close();
      }
    });
  }

  it('embeds a repeated query once (query vectors cached per text)', async () => {
    const embedder = new CountingEmbedder();
    const engine = await MemoryEngine.open({ storeUri: dir, embedder, maintenanceIntervalMs: 0 });
    try {
      const scope = { project: 'p' };
      await engine.observe([{ type: 'note', title: 'retry the payment webhook' }], scope);
      await engine.waitForVectors();
      const before = embedder.calls.length;
      await engine.search('payment webhook retries', { scope });
      await engine.search('payment webhook retries', { scope, limit: 3 });
      await engine.search('invoice renderer', { scope });
      // Queries are embedded one at a time; the everyday sentences a neighbour is compared with
      // (retrieve/hybrid.ts unrelatedFloor) come in one batch, once per embedder and process.
      assert.deepEqual(embedder.calls.slice(before).filter((c) => c.length === 1), [['payment webhook retries'], ['invoice renderer']]);
    } finally {
      await engine.close();
    }
  });

  it('get_observations records observation access times off its path: written by flush, and by close', async () => {
    const scope = { project: 'p' };
    let engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    const [a, b, c] = await engine.observe(['alpha', 'beta', 'gamma'].map((title) => ({ type: 'note', title })), scope);
    const ctx = { engine, scope, transportSessionId: 't' };
    const out = await getObservations(ctx, { ids: [c.id, a.id, c.id], source: 'observation' });
    assert.deepEqual(out.details.map((d) => (d as { id: number }).id), [c.id, a.id, c.id], 'one detail per id asked, in the order asked');
    assert.equal(typeof (out.details[0] as { last_accessed_epoch: unknown }).last_accessed_epoch, 'number');
    await engine.flush();
    const read = async (e: MemoryEngine): Promise<Record<number, number | null>> =>
      Object.fromEntries((await e.getObservations([a.id, b.id, c.id], scope)).map((o) => [o.id, o.last_accessed_epoch]));
    let times = await read(engine);
    assert.ok((times[a.id] ?? 0) > 0 && (times[c.id] ?? 0) > 0);
    assert.equal(times[b.id], null);
    const cellCounts = async (e: MemoryEngine): Promise<number[]> =>
      (await e.store.rows(TABLES.cells, `source_kind = 'observation'`, { select: ['source_id', 'access_count'] })).sort((x, y) => Number(x.source_id) - Number(y.source_id)).map((r) => Number(r.access_count));
    assert.deepEqual(await cellCounts(engine), [1, 0, 1]);

    // Pending at close: written before the store closes.
    await getObservations({ ...ctx, engine }, { ids: [b.id], source: 'observation' });
    await engine.close();
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      times = await read(engine);
      assert.ok((times[b.id] ?? 0) > 0, 'the access noted before close was lost');
      assert.deepEqual(await cellCounts(engine), [1, 1, 1]);
    } finally {
      await engine.close();
    }
  });

  it('observation access times wait for their batch: reads in a burst write nothing to the tables before it', async () => {
    const scope = { project: 'p' };
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      const [a] = await engine.observe([{ type: 'note', title: 'delta' }], scope);
      await engine.flush();
      const versions = async (): Promise<number[]> => Promise.all([TABLES.observations, TABLES.cells].map((t) => engine.store.table(t).version()));
      const before = await versions();
      const ctx = { engine, scope, transportSessionId: 't' };
      for (let i = 0; i < 5; i++) await getObservations(ctx, { ids: [a.id], source: 'observation' });
      // Longer than the second the batch used to wait: each write moved the rows read out of their indexed fragment.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.deepEqual(await versions(), before);
      await engine.flush();
      const after = await versions();
      assert.ok(after[0] > before[0] && after[1] > before[1], 'flush writes the batch');
      assert.ok(((await engine.getObservations([a.id], scope))[0].last_accessed_epoch ?? 0) > 0);
    } finally {
      await engine.close();
    }
  });

  it('a memory whose status or trace changes keeps its vector: only new words are embedded again', async () => {
    const embedder = new CountingEmbedder();
    const engine = await MemoryEngine.open({ storeUri: dir, embedder, maintenanceIntervalMs: 0, summariseOrphanSessions: false });
    try {
      const scope = { project: 'p' };
      const embedded = (): number => embedder.calls.flat().length;
      const vectorsWritten = async (): Promise<void> => {
        engine.kickVectors();
        await engine.settled();
      };
      const first = await engine.remember({ memory_type: 'decision', title: 'Bundler', text: 'We bundle with esbuild.', topic_key: 'bundler' }, scope);
      await vectorsWritten();
      assert.equal(embedded(), 1);
      // The second on the topic supersedes the first (its status, facts and trace change, not its words).
      await engine.remember({ memory_type: 'decision', title: 'Bundler', text: 'We bundle with vite now.', topic_key: 'bundler' }, scope);
      await vectorsWritten();
      assert.equal((await engine.getMemories([first.id], scope, { includeSuppressed: true }))[0]?.status, 'superseded');
      assert.equal(embedded(), 2, `embedded: ${JSON.stringify(embedder.calls)}`);
      assert.equal(await engine.store.count(TABLES.cells, `embed_model = ''`), 0);
      // An edit of its words is embedded again.
      await engine.editMemory(scope, first.id, { text: 'We bundled with esbuild until March.' });
      await vectorsWritten();
      assert.equal(embedded(), 3);
    } finally {
      await engine.close();
    }
  });
});
