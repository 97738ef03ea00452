// Ingest through the memory engine: observations/s until full-text searchable, until vector
// searchable (background embedding), single-observation latencies, and store size per 1,000
// observations after compaction.
//   npx tsx bench/ingest.ts [--count 2000] [--embedder hashed|use-lite] [--batch 100] [--json]
// Prints a table and a JSON document (only JSON with --json). Never asserts anything.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ObservationInput } from '../src/core/api';
import { VectorBackfill } from '../src/core/embed/backfill';
import { WorkerEmbedder } from '../src/core/embed/workerEmbedder';
import { MemoryEngine } from '../src/core/engine';
import { TABLES } from '../src/core/store/schema';
import { percentile, round, sayer, syntheticCorpus, table } from './synthetic';

process.env.LANCEDB_LOG ??= 'error';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '2000' },
    embedder: { type: 'string', default: 'hashed' },
    batch: { type: 'string', default: '100' },
    json: { type: 'boolean', default: false },
  },
});
const count = Number(values.count);
const batch = Number(values.batch);
const provider = values.embedder === 'use-lite' ? 'use-lite' : 'hashed';
const say = sayer(values.json);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function duBytes(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) total += fs.statSync(path.join(e.parentPath ?? e.path, e.name)).size;
  }
  return total;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-bench-ingest-'));
  const embedder = await WorkerEmbedder.start({ provider });
  const engine = await MemoryEngine.open({ storeUri: dir, embedder, maintenanceIntervalMs: 0 });
  const scope = { project: 'bench', branch: 'main' };
  const corpus = syntheticCorpus(count + 50, 0, 11);
  const input = (i: number): ObservationInput => ({
    type: corpus.types[i] === 'commit' ? 'change' : corpus.types[i],
    title: corpus.titles[i],
    narrative: corpus.texts[i],
    files_modified: [`src/module${i}/file${i}.ts`],
    concepts: [`topic${corpus.topics[i]}`],
  });

  say(`ingesting ${count} observations in batches of ${batch} (${embedder.name})...`);
  const started = performance.now();
  for (let i = 0; i < count; i += batch) {
    await engine.observe(Array.from({ length: Math.min(batch, count - i) }, (_, k) => input(i + k)), scope);
  }
  const ftsSeconds = (performance.now() - started) / 1000;
  const cells = await engine.store.count(TABLES.cells);

  // The engine may run its own embedding queue; if it does not make progress, run one here.
  const embedded = async (): Promise<number> => engine.store.count(TABLES.cells, `embed_model = '${embedder.name}'`);
  let own: VectorBackfill | null = null;
  const before = await embedded();
  await sleep(1500);
  if ((await embedded()) === before && before < cells) {
    own = new VectorBackfill({ cells: () => engine.store.table(TABLES.cells), embedder, batchSize: 128 });
    own.kick();
  }
  while ((await embedded()) < cells) await sleep(200);
  const vectorSeconds = (performance.now() - started) / 1000;
  await own?.idle();

  // Single observations: time until each is found by full text, and by vector.
  const ftsMs: number[] = [];
  const vecMs: number[] = [];
  for (let k = 0; k < 10; k++) {
    const marker = `zqmarker${k}x${Date.now().toString(36)}`;
    const obs = input(count + k);
    const t0 = performance.now();
    await engine.observe([{ ...obs, title: `${obs.title} ${marker}`, files_modified: [`src/marker${k}.ts`] }], scope);
    for (;;) {
      const hits = await engine.search(marker, { scope, limit: 3 });
      if (hits.some((h) => h.cell.title.includes(marker))) break;
      await sleep(5);
    }
    ftsMs.push(performance.now() - t0);
    own?.kick();
    for (;;) {
      const [row] = await engine.store.rows(TABLES.cells, `title LIKE '%${marker}%'`, { select: ['embed_model'] });
      if (row?.embed_model === embedder.name) break;
      await sleep(5);
    }
    vecMs.push(performance.now() - t0);
  }

  await own?.stop();
  await engine.flush();
  const rawBytes = duBytes(dir);
  await engine.optimize(0);
  const compactBytes = duBytes(dir);
  const observations = await engine.store.count(TABLES.observations);
  await engine.close();
  fs.rmSync(dir, { recursive: true, force: true });

  const result = {
    bench: 'ingest',
    machine: { cpus: os.cpus().length, node: process.version },
    embedder: embedder.name,
    observations,
    cells,
    batch_size: batch,
    fts_searchable_obs_per_s: round(count / ftsSeconds, 0),
    vector_searchable_obs_per_s: round(count / vectorSeconds, 1),
    single_observation_fts_searchable_ms: { p50: round(percentile(ftsMs, 50)), p95: round(percentile(ftsMs, 95)) },
    single_observation_vector_searchable_ms: { p50: round(percentile(vecMs, 50)), p95: round(percentile(vecMs, 95)) },
    store_bytes_per_1000_observations: {
      before_compaction: Math.round((rawBytes / observations) * 1000),
      after_compaction: Math.round((compactBytes / observations) * 1000),
    },
    embedding_queue: own ? 'bench-run VectorBackfill' : 'engine',
  };
  if (!values.json) {
    console.log(
      '\n' +
        table([
          { metric: 'full-text searchable', value: `${result.fts_searchable_obs_per_s} obs/s` },
          { metric: 'vector searchable', value: `${result.vector_searchable_obs_per_s} obs/s` },
          { metric: 'one observation, FTS p50/p95', value: `${result.single_observation_fts_searchable_ms.p50} / ${result.single_observation_fts_searchable_ms.p95} ms` },
          { metric: 'one observation, vector p50/p95', value: `${result.single_observation_vector_searchable_ms.p50} / ${result.single_observation_vector_searchable_ms.p95} ms` },
          { metric: 'store per 1,000 obs (compacted)', value: `${(result.store_bytes_per_1000_observations.after_compaction / 1e6).toFixed(2)} MB` },
          { metric: 'store per 1,000 obs (before)', value: `${(result.store_bytes_per_1000_observations.before_compaction / 1e6).toFixed(2)} MB` },
        ]) +
        '\n',
    );
  }
  console.log(JSON.stringify(result, null, values.json ? 2 : 0));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
