// Full-text search at scale: what a process that opens a big store pays for its first lexical
// search, and what each search costs after that, with and without the persistent index
// segments (see src/core/retrieve/lexicon.ts).
//   npx tsx bench/lexicon.ts [--size 100000] [--projects 1] [--delta 1000] [--queries 50] [--json]
// Fills a store's cells directly (synthetic observations, prepared like real ones), then, each
// in a fresh process: (1) no segments, the project's text read into memory; (2) after the
// maintenance-lease holder wrote segments; (3) the same plus --delta rows written since. Each
// process opens the engine (no embedder: lexical search alone), times its first search, its
// RSS, warm searches through the engine, and the lexical step alone (bm25_p50_ms). Prints a table and a JSON document. Never asserts anything.

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { MemoryEngine } from '../src/core/engine';
import { bm25Search } from '../src/core/retrieve/lexicalIndex';
import { retrievalSettings } from '../src/core/retrieve/settings';
import { prepareIndexText, prepareQueryText } from '../src/core/retrieve/textPrep';
import { lexiconFor } from '../src/core/retrieve/lexicon';
import { TABLES } from '../src/core/store/schema';
import { percentile, round, sayer, syntheticCorpus, table } from './synthetic';

process.env.LANCEDB_LOG ??= 'error';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '100000' },
    projects: { type: 'string', default: '1' },
    delta: { type: 'string', default: '1000' },
    queries: { type: 'string', default: '50' },
    json: { type: 'boolean', default: false },
    child: { type: 'string' },
  },
});

interface ChildResult {
  open_ms: number;
  first_search_ms: number;
  rss_mb_after_first: number;
  warm_p50_ms: number;
  warm_p95_ms: number;
  rss_mb_after_queries: number;
  /** The lexical step alone (refresh, postings read, BM25), without the engine's row reads. */
  bm25_p50_ms: number;
  segments: number;
  delta_docs: number;
}

const mb = (): number => round(process.memoryUsage().rss / 1024 / 1024, 0);

/** One fresh process: open, first search, warm searches. */
async function child(dir: string, queries: string[]): Promise<ChildResult> {
  const scope = { project: 'p0' };
  let t = performance.now();
  const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  const open = performance.now() - t;
  t = performance.now();
  await engine.search(queries[0], { scope, limit: 10 });
  const first = performance.now() - t;
  const rssFirst = mb();
  const ms: number[] = [];
  for (const q of queries.slice(1)) {
    t = performance.now();
    await engine.search(q, { scope, limit: 10 });
    ms.push(performance.now() - t);
  }
  const lexicon = lexiconFor(engine.store.table(TABLES.cells), engine.repos.lexicalSegments, 'p0');
  const bm25: number[] = [];
  const { extraWeight } = retrievalSettings();
  for (const q of queries.slice(1)) {
    const terms = prepareQueryText(q).split(' ');
    t = performance.now();
    bm25Search(await lexicon.corpus(extraWeight, terms), new Map(terms.map((x) => [x, 1])), 50);
    bm25.push(performance.now() - t);
  }
  const result: ChildResult = {
    open_ms: round(open, 0),
    first_search_ms: round(first, 0),
    rss_mb_after_first: rssFirst,
    warm_p50_ms: round(percentile(ms, 50), 1),
    warm_p95_ms: round(percentile(ms, 95), 1),
    rss_mb_after_queries: mb(),
    bm25_p50_ms: round(percentile(bm25, 50), 1),
    segments: lexicon.shape.segments.length,
    delta_docs: lexicon.shape.deltaDocs,
  };
  await engine.close();
  return result;
}

function runChild(dir: string): Promise<ChildResult> {
  const tsx = require.resolve('tsx/cli');
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [tsx, __filename, '--child', dir], { maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as ChildResult);
    });
  });
}

function cellRows(start: number, count: number, corpus: ReturnType<typeof syntheticCorpus>, projects: number, dimension: number): Record<string, unknown>[] {
  const zero = new Float32Array(dimension);
  return Array.from({ length: count }, (_, k) => {
    const i = start + k;
    return {
      node_id: `n${i}`,
      layer: 'L0',
      source_kind: 'observation',
      source_id: i + 1,
      project: `p${i % projects}`,
      branch: 'main',
      type: corpus.types[i],
      title: corpus.titles[i],
      text: corpus.texts[i],
      search_text: prepareIndexText({ title: corpus.titles[i], text: corpus.texts[i] }),
      files: null,
      commit_sha: null,
      session_id: `s${Math.floor(i / 40)}`,
      created_at_epoch: 1_700_000_000_000 + i * 1000,
      last_accessed_epoch: null,
      access_count: 0,
      status: 'active',
      embed_model: '',
      vector: zero,
    };
  });
}

async function main(): Promise<void> {
  const size = Number(values.size);
  const delta = Number(values.delta);
  const projects = Number(values.projects);
  const say = sayer(values.json);
  const corpus = syntheticCorpus(size + delta, Number(values.queries));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-bench-lexicon-'));
  // The queries reach the child processes in a file, so that they do not hold the corpus.
  fs.writeFileSync(`${dir}.queries.json`, JSON.stringify(corpus.queries));
  try {
    say(`filling ${size} cells (${projects} project(s); p0 holds ${Math.ceil(size / projects)})...`);
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    for (let start = 0; start < size; start += 10_000) {
      await engine.store.add(TABLES.cells, cellRows(start, Math.min(10_000, size - start), corpus, projects, engine.store.dimension));
    }
    await engine.store.optimize(0);
    const rows: Array<Record<string, unknown>> = [];
    const result: Record<string, unknown> = { size, projects, delta, queries: Number(values.queries) };

    say('no segments: a fresh process reads the project into memory...');
    const none = await runChild(dir);
    rows.push({ state: 'no segments (text read into memory)', ...none });

    say('writing segments (as the maintenance-lease holder)...');
    const t = performance.now();
    await engine.maintenance.indexLexicon();
    result.segment_build_s = round((performance.now() - t) / 1000, 1);
    await engine.close();
    const bytes = fs.readdirSync(path.join(dir, 'lexical_segments.lance', 'data')).reduce((n, f) => n + fs.statSync(path.join(dir, 'lexical_segments.lance', 'data', f)).size, 0);
    result.segment_mb_on_disk = round(bytes / 1024 / 1024, 1);

    say('segments: a fresh process...');
    rows.push({ state: 'segments', ...(await runChild(dir)) });

    if (delta > 0) {
      const writer = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      await writer.store.add(TABLES.cells, cellRows(size, delta, corpus, 1, writer.store.dimension));
      await writer.close();
      say(`segments + ${delta} rows written since: a fresh process...`);
      rows.push({ state: `segments + ${delta} new rows`, ...(await runChild(dir)) });
    }
    result.rows = rows;
    if (!values.json) {
      console.log(table(rows));
      console.log(`segment build ${String(result.segment_build_s)} s, ${String(result.segment_mb_on_disk)} MB on disk`);
    }
    console.log(JSON.stringify(result, null, values.json ? 2 : 0));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(`${dir}.queries.json`, { force: true });
  }
}

if (values.child) {
  const queries = JSON.parse(fs.readFileSync(`${values.child}.queries.json`, 'utf8')) as string[];
  child(values.child, queries).then(
    (r) => process.stdout.write(JSON.stringify(r) + '\n', () => process.exit(0)),
    (e) => {
      process.stderr.write(String((e as Error).stack ?? e) + '\n');
      process.exit(1);
    },
  );
} else {
  main().catch((e) => {
    process.stderr.write(String((e as Error).stack ?? e) + '\n');
    process.exitCode = 1;
  });
}
