// Vector write-back: how long a store of N cells written without vectors (as capture and
// import write them) takes to become vector-searchable, with the embedding queue of
// src/core/embed/backfill.ts, and what the cells table looks like afterwards.
//   npx tsx bench/backfill.ts [--sizes 10000,100000] [--batch 8192] [--dimension 512] [--json]
// The cells are written straight into the store in appends of 1,000 (one fragment each, like
// engine.observe batches), then one backfill runs with the hashed embedder. Prints a table and
// a JSON document. Never asserts anything.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { VectorBackfill } from '../src/core/embed/backfill';
import { HashedEmbedder } from '../src/core/embed/hashed';
import { TABLES } from '../src/core/store/schema';
import { Store } from '../src/core/store/store';
import { round, runBench, syntheticCorpus, table } from './synthetic';

process.env.LANCEDB_LOG ??= 'error';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    batch: { type: 'string', default: '8192' },
    dimension: { type: 'string', default: '512' },
    json: { type: 'boolean', default: false },
  },
});

const log = (m: string): void => {
  process.stderr.write(`${m}\n`);
};

async function benchSize(size: number): Promise<Record<string, unknown>> {
  const dimension = Number(values.dimension);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'code-memory-bench-backfill-'));
  const store = await Store.open({ uri: dir, dimension });
  try {
    const corpus = syntheticCorpus(size, 1);
    const zero = new Float32Array(dimension);
    const fillStarted = performance.now();
    for (let i = 0; i < size; i += 1000) {
      const rows = [];
      for (let j = i; j < Math.min(size, i + 1000); j++) {
        rows.push({
          node_id: `00000000-0000-4000-8000-${String(j).padStart(12, '0')}`, layer: 'L0', source_kind: 'observation', source_id: j + 1,
          project: 'bench/backfill', branch: null, type: corpus.types[j], title: corpus.titles[j], text: corpus.texts[j],
          search_text: corpus.texts[j], files: null, commit_sha: null, session_id: `s${Math.floor(j / 50)}`, created_at_epoch: j,
          last_accessed_epoch: null, access_count: 0, status: 'active', embed_model: '', vector: zero,
        });
      }
      await store.add(TABLES.cells, rows);
    }
    const fillS = (performance.now() - fillStarted) / 1000;
    const embedder = new HashedEmbedder(dimension);
    let writes = 0;
    const backfill = new VectorBackfill({ cells: () => store.table(TABLES.cells), embedder, batchSize: Number(values.batch), onProgress: () => writes++, onError: (e) => log(`backfill: ${e.message}`) });
    const started = performance.now();
    backfill.kick();
    await backfill.idle();
    const backfillS = (performance.now() - started) / 1000;
    const embedded = await store.count(TABLES.cells, `embed_model = '${embedder.name}'`);
    // The embedder alone, for comparison: the write-back should cost little on top of it.
    const embedStarted = performance.now();
    for (let i = 0; i < size; i += 512) await embedder.embed(corpus.texts.slice(i, i + 512));
    const embedOnlyS = (performance.now() - embedStarted) / 1000;
    const cells = store.table(TABLES.cells);
    const before = await cells.stats();
    const compactStarted = performance.now();
    await store.optimize(0, [TABLES.cells]);
    const compactS = (performance.now() - compactStarted) / 1000;
    const after = await cells.stats();
    log(`size ${size}: ${round(backfillS, 1)} s to embed ${embedded}/${size} (${writes} merges), embedder alone ${round(embedOnlyS, 1)} s`);
    return {
      cells: size,
      batch: Number(values.batch),
      fill_s: round(fillS, 1),
      backfill_s: round(backfillS, 1),
      cells_per_s: Math.round(size / backfillS),
      embed_only_s: round(embedOnlyS, 1),
      embedded,
      merges: writes,
      fragments_after: before.fragmentStats.numFragments,
      compact_s: round(compactS, 1),
      fragments_compacted: after.fragmentStats.numFragments,
    };
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows: Record<string, unknown>[] = [];
  for (const size of values.sizes.split(',').filter(Boolean).map(Number)) rows.push(await benchSize(size));
  const report = { node: process.version, cpus: os.cpus().length, load_average_1m: round(os.loadavg()[0], 1), embedder: 'hashed', rows };
  if (!values.json) process.stdout.write(`${table(rows)}\n\n`);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

runBench(main);
