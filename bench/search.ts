// Vector search latency and recall on the cells table: exact (brute-force dot product) at
// growing sizes, and ANN indexes (HNSW_SQ, IVF_PQ) with recall@10 against exact search.
// Also times an optimize() after 1,000 new rows on an indexed table (the write-path cost).
//   npx tsx bench/search.ts [--sizes 1000,10000,100000] [--ann 10000,100000] [--kinds hnsw_sq,ivf_pq] [--queries 50] [--json]
// Prints a table and a JSON document (only JSON with --json). Never asserts anything.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import * as lancedb from '@lancedb/lancedb';
import { HashedEmbedder } from '../src/core/embed/hashed';
import { ANN_DISTANCE, ensureAnnIndex, vectorIndexName, type AnnIndexKind } from '../src/core/store/annIndex';
import { rowsToArrow } from '../src/core/store/arrowRows';
import { cellsSchema } from '../src/core/store/schema';
import { percentile, round, sayer, syntheticCorpus, table } from './synthetic';

process.env.LANCEDB_LOG ??= 'error';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,5000,10000,25000,50000,100000' },
    ann: { type: 'string', default: '10000,100000' },
    kinds: { type: 'string', default: 'hnsw_sq,ivf_pq' },
    queries: { type: 'string', default: '50' },
    dim: { type: 'string', default: '512' },
    json: { type: 'boolean', default: false },
  },
});
const sizes = values.sizes.split(',').map(Number).sort((a, b) => a - b);
const annSizes = new Set(values.ann.split(',').filter(Boolean).map(Number));
const kinds = values.kinds.split(',').filter(Boolean) as AnnIndexKind[];
const queryCount = Number(values.queries);
const dim = Number(values.dim);
const say = sayer(values.json);

const HNSW_SETTINGS = [{ ef: 60 }, { ef: 120 }, { ef: 60, refineFactor: 4 }, { ef: 120, refineFactor: 4 }];
const IVF_SETTINGS = [{ nprobes: 20, refineFactor: 10 }, { nprobes: 80, refineFactor: 20 }];
type Settings = { ef?: number; nprobes?: number; refineFactor?: number };

async function main(): Promise<void> {
  const max = sizes[sizes.length - 1];
  const extra = 1000;
  const embedder = new HashedEmbedder(dim);
  say(`generating and embedding ${max + extra} synthetic observations (${embedder.name})...`);
  const corpus = syntheticCorpus(max + extra, queryCount);
  let t = performance.now();
  const vectors = await embedder.embed(corpus.texts.map((x, i) => `${corpus.titles[i]}\n${x}`));
  const embedSeconds = (performance.now() - t) / 1000;
  const queryVectors = await embedder.embed(corpus.queries);
  const schema = cellsSchema(dim);
  const row = (i: number) => ({
    node_id: `n${i}`,
    layer: 'L0',
    source_kind: 'observation',
    source_id: i,
    project: i % 2 === 0 ? 'p0' : `p${1 + (i % 4)}`,
    branch: 'main',
    type: corpus.types[i],
    title: corpus.titles[i],
    text: corpus.texts[i],
    search_text: corpus.texts[i],
    files: null,
    commit_sha: null,
    session_id: `s${Math.floor(i / 40)}`,
    created_at_epoch: 1_700_000_000_000 + i * 1000,
    last_accessed_epoch: null,
    access_count: 0,
    status: 'active',
    embed_model: embedder.name,
    vector: vectors[i],
  });

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-bench-search-'));
  const db = await lancedb.connect(dir, { readConsistencyInterval: 0 });
  const cells = await db.createEmptyTable('cells', schema);
  const where = `project = 'p0' AND embed_model = '${embedder.name}'`;

  async function search(q: Float32Array, s: Settings | null, metric: 'dot' | 'l2' = 'dot'): Promise<{ ids: string[]; ms: number }> {
    let query = cells.vectorSearch(Array.from(q)).distanceType(metric).where(where).select(['node_id']).limit(10);
    if (s === null) query = query.bypassVectorIndex();
    else {
      if (s.ef !== undefined) query = query.ef(s.ef);
      if (s.nprobes !== undefined) query = query.nprobes(s.nprobes);
      if (s.refineFactor !== undefined) query = query.refineFactor(s.refineFactor);
    }
    const started = performance.now();
    const rows = (await query.toArray()) as Array<{ node_id: string }>;
    return { ids: rows.map((r) => r.node_id), ms: performance.now() - started };
  }

  async function measure(s: Settings | null, truth?: string[][], metric: 'dot' | 'l2' = 'dot'): Promise<{ p50: number; p95: number; recall?: number; ids: string[][] }> {
    for (let w = 0; w < 3; w++) await search(queryVectors[w], s, metric);
    const ms: number[] = [];
    const ids: string[][] = [];
    let hit = 0;
    let total = 0;
    for (let i = 0; i < queryVectors.length; i++) {
      const res = await search(queryVectors[i], s, metric);
      ms.push(res.ms);
      ids.push(res.ids);
      if (truth) {
        const want = new Set(truth[i]);
        total += want.size;
        hit += res.ids.filter((x) => want.has(x)).length;
      }
    }
    return { p50: round(percentile(ms, 50)), p95: round(percentile(ms, 95)), recall: truth ? round(hit / Math.max(1, total), 3) : undefined, ids };
  }

  const exactRows: Array<Record<string, unknown>> = [];
  const annRows: Array<Record<string, unknown>> = [];
  const writeRows: Array<Record<string, unknown>> = [];
  let loaded = 0;
  for (const size of sizes) {
    for (let start = loaded; start < size; start += 10_000) {
      const end = Math.min(size, start + 10_000);
      await cells.add(rowsToArrow(schema, Array.from({ length: end - start }, (_, k) => row(start + k))));
    }
    loaded = size;
    await cells.optimize({ cleanupOlderThan: new Date() });
    const exact = await measure(null);
    const exactL2 = await measure(null, exact.ids, 'l2');
    exactRows.push({ cells: size, mode: 'exact dot', p50_ms: exact.p50, p95_ms: exact.p95 });
    exactRows.push({ cells: size, mode: 'exact l2', p50_ms: exactL2.p50, p95_ms: exactL2.p95, same_top10_as_dot: exactL2.recall });
    say(`exact  ${size}: dot p50 ${exact.p50} ms, p95 ${exact.p95} ms; l2 p50 ${exactL2.p50} ms (overlap with dot ${exactL2.recall})`);
    if (!annSizes.has(size)) continue;
    for (const kind of kinds) {
      t = performance.now();
      await ensureAnnIndex(cells, { threshold: 0, kind, replace: true });
      const buildSeconds = round((performance.now() - t) / 1000, 1);
      say(`${kind} built over ${size} cells in ${buildSeconds} s`);
      for (const s of kind === 'hnsw_sq' ? HNSW_SETTINGS : IVF_SETTINGS) {
        const ann = await measure(s, exact.ids, ANN_DISTANCE);
        annRows.push({ cells: size, mode: kind, settings: JSON.stringify(s), build_s: buildSeconds, p50_ms: ann.p50, p95_ms: ann.p95, recall_at_10: ann.recall });
        say(`  ${JSON.stringify(s)}: p50 ${ann.p50} ms, p95 ${ann.p95} ms, recall@10 ${ann.recall}`);
      }
      if (size === sizes[sizes.length - 1]) {
        // Write-path cost once indexed: 1,000 new cells, then the store's regular optimize().
        await cells.add(rowsToArrow(schema, Array.from({ length: extra }, (_, k) => row(size + k))));
        const unindexed = await measure(kind === 'hnsw_sq' ? { ef: 120, refineFactor: 4 } : { nprobes: 20, refineFactor: 10 }, (await measure(null)).ids, ANN_DISTANCE);
        t = performance.now();
        await cells.optimize({ cleanupOlderThan: new Date() });
        const optimizeSeconds = round((performance.now() - t) / 1000, 1);
        writeRows.push({ cells: size, mode: kind, add_rows: extra, optimize_s: optimizeSeconds, recall_with_unindexed_rows: unindexed.recall, p50_ms_with_unindexed_rows: unindexed.p50 });
        say(`  +${extra} rows: recall ${unindexed.recall} before optimize (p50 ${unindexed.p50} ms); optimize ${optimizeSeconds} s`);
        await cells.delete(`source_id >= ${size}`);
      }
      await cells.dropIndex(vectorIndexName());
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  const result = {
    bench: 'search',
    machine: { cpus: os.cpus().length, node: process.version },
    embedder: embedder.name,
    filter: 'project scope (half of the cells) + embed_model',
    hashed_embed_texts_per_s: round((max + extra) / embedSeconds, 0),
    exact: exactRows,
    ann: annRows,
    write_path: writeRows,
  };
  if (!values.json) {
    console.log('\n' + table(exactRows) + '\n\n' + table(annRows) + (writeRows.length ? '\n\n' + table(writeRows) : '') + '\n');
  }
  console.log(JSON.stringify(result, null, values.json ? 2 : 0));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
