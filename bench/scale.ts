// The scale benchmark the README's Benchmarks table comes from: the real `code-memory` servers
// (dist/cli.js, as users run them) over stdio MCP and over HTTP, on stores of the given sizes.
//   npm run build && npx tsx bench/scale.ts [--sizes 10000,100000,1000000] [--embedder hashed|use-lite]
//     [--calls 50] [--batch 2000] [--writes 5000] [--import-commits 2000] [--transports stdio,http] [--keep-store] [--store dir] [--out file.json] [--bare-env] [--server-log file] [--server-cpu-prof dir] [--dist dir]
// Per size: fills a fresh store through the product's write path (engine.observe, `--batch`
// observations per call) and prints the fill rate and the time until every cell is
// vector-searchable; compacts it as the maintenance lease holder would; then per transport, on
// the store settled again (the last run's writes embedded and compacted), starts a fresh server
// process and measures cold open -> first answer, each tool's p50/p95 (every call a question that
// server has not been asked, so its query-vector cache does not answer for the embedder),
// get_observations of one id, the server's RSS after 100+ queries (VmRSS), and recall while a
// second process (`code-memory observe`, `--writes` observations) writes beside it, and while
// `code-memory import-git` imports a synthetic repository of `--import-commits` commits beside it
// and then while the lease holder writes those commits' vectors (the catch-up). Also times
// `code-memory --help`. The servers run with the environment the extension's agent
// configuration gives them (storeChildEnv; --bare-env: without it). Prints markdown tables (paste into the README) and, with --out, JSON.
// --store dir (one size only) keeps the filled store there and, when it was filled before,
// queries it again without refilling (the fill numbers are those of the first run; the
// `--writes` of each run stay in it: the servers' table gives the cells each one was measured on).
// --dist dir runs the servers of another build (a copy of dist/ inside the project, so that it
// finds node_modules), to compare two builds on one store. Never asserts: numbers only. Run big sizes alone on a quiet machine.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import * as lancedb from '@lancedb/lancedb';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ObservationInput } from '../src/core/api';
import type { Embedder } from '../src/core/embed/embedder';
import { HashedEmbedder } from '../src/core/embed/hashed';
import { DEFAULT_QUERY_CACHE_SIZE } from '../src/core/embed/queryCache';
import { USE_LITE_NAME } from '../src/core/embed/useLite';
import { WorkerEmbedder } from '../src/core/embed/workerEmbedder';
import { MemoryEngine } from '../src/core/engine';
import { storeChildEnv } from '../src/core/processEnv';
import { TABLES } from '../src/core/store/schema';
import type { Scope } from '../src/core/model/records';
import { benchModelHost, callTool, rssMb, startHttp, startStdio, type ServerLaunch } from './mcpServers';
import { allEmbedded, settleStore } from './settle';
import { syntheticRepo } from './syntheticRepo';
import { percentile, round, runBench, syntheticCorpus } from './synthetic';

process.env.LANCEDB_LOG ??= 'error';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000' },
    embedder: { type: 'string', default: 'hashed' },
    calls: { type: 'string', default: '50' },
    batch: { type: 'string', default: '2000' },
    writes: { type: 'string', default: '5000' },
    'import-commits': { type: 'string', default: '2000' },
    transports: { type: 'string', default: 'stdio,http' },
    'embed-timeout': { type: 'string', default: '3600' },
    'keep-store': { type: 'boolean', default: false },
    store: { type: 'string' },
    out: { type: 'string' },
    'bare-env': { type: 'boolean', default: false },
    'server-log': { type: 'string' },
    'server-cpu-prof': { type: 'string' },
    dist: { type: 'string', default: 'dist' },
  },
});

/** Where the servers' stderr (their upkeep log) goes: a file with --server-log (opened once, for every server), else nowhere. */
const serverStderr: 'ignore' | number = values['server-log'] ? openSync(values['server-log'], 'a') : 'ignore';

/** Node options of the servers: with --server-cpu-prof DIR, each writes a CPU profile there when it exits (Node refuses --cpu-prof in NODE_OPTIONS). */
const SERVER_NODE_ARGS: string[] = values['server-cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${values['server-cpu-prof']}`] : [];

const ROOT = path.resolve(__dirname, '..');
const DIST = path.resolve(ROOT, values.dist);
const CLI = path.join(DIST, 'cli.js');

/**
 * The servers' environment: the one the extension's agent configuration and the store's own
 * children get (storeChildEnv), or none of it with --bare-env, to measure what it is worth.
 */
// The servers' shared model host is this run's own, stopped after each transport's run, so that
// each starts it cold (as a first server on the machine would).
const modelHost = benchModelHost();
function serverEnv(): Record<string, string> {
  return { ...(values['bare-env'] ? { ...process.env } : storeChildEnv()), XDG_RUNTIME_DIR: modelHost.base } as Record<string, string>;
}

const sizes = values.sizes.split(',').filter(Boolean).map(Number);
const calls = Number(values.calls);
const batchSize = Number(values.batch);
const writes = Number(values.writes);
const importCommits = Number(values['import-commits']);
const transports = values.transports.split(',').filter(Boolean) as Array<'stdio' | 'http'>;
const embedderName = values.embedder;
/** The embed_model of a cell this embedder has embedded. */
const embedderModel = embedderName === 'use-lite' ? USE_LITE_NAME : new HashedEmbedder().name;
const embedTimeoutMs = Number(values['embed-timeout']) * 1000;
const PROJECT = 'bench/scale';
const scope: Scope = { project: PROJECT };
const log = (m: string): void => void process.stderr.write(`${m}\n`);

if (!['hashed', 'use-lite'].includes(embedderName)) throw new Error('--embedder must be hashed or use-lite');
if (!existsSync(CLI) || !existsSync(path.join(DIST, 'cliCommands.js'))) throw new Error(`${CLI} is missing: run \`npm run build\` first (the bench runs the built CLI, as users do)`);
if (!sizes.every((s) => Number.isInteger(s) && s > 0) || !(calls > 0) || !(batchSize > 0)) throw new Error('--sizes, --calls and --batch take positive integers');
if (values.store && sizes.length !== 1) throw new Error('--store takes one size');

type Stat = { p50: number; p95: number };
const stat = (times: number[]): Stat => ({ p50: round(percentile(times, 50), 1), p95: round(percentile(times, 95), 1) });
const median = (times: number[]): number => round(percentile(times, 50), 1);

/**
 * Observation j of `count` written from `base` on. Ordered times and explicit sessions of 50: the
 * bench measures reads, not session tracking. The times end at `base`, 1 ms apart, so that the
 * sessions are recent: a server finds no idle session to summarise while it is measured (with
 * times from long ago every session would be one, and a 100k store's two thousand summaries
 * would be written during the measurements, as no real store that ends its sessions has them).
 */
function observation(corpus: ReturnType<typeof syntheticCorpus>, j: number, count: number, base: number, key: string): ObservationInput {
  const files = corpus.texts[j].split(/\s+/).filter((w) => w.startsWith('src/')).slice(0, 3);
  return {
    type: corpus.types[j],
    title: corpus.titles[j],
    narrative: corpus.texts[j],
    files_modified: files.length ? files : undefined,
    created_at_epoch: base - count + j,
    memory_session_id: `bench-session-${key}-${Math.floor(j / 50)}`,
    dedupe_key: `bench:${key}:${j}`,
  };
}

async function makeEmbedder(): Promise<Embedder> {
  return embedderName === 'use-lite' ? WorkerEmbedder.start({ provider: 'use-lite' }) : new HashedEmbedder();
}

interface Filled {
  cells: number;
  fill_s: number;
  fill_per_s: number;
  vectors_s: number;
  embedded: number;
  optimize_s: number;
  ids: number[];
}

// The fill's sessions are never ended: a server, or the settling step, would take them for
// sessions a crashed process left open and summarise them while it is measured (a kept or 1M
// store is older than the 30 idle minutes by the time its servers start): a million status
// updates that a real store, which ends its sessions as it goes, never has to make at once.
const SESSION_IDLE_MINUTES = 5_256_000;
const benchEngine = async (dir: string): Promise<MemoryEngine> =>
  MemoryEngine.open({ storeUri: dir, embedder: await makeEmbedder(), maintenanceIntervalMs: 0, sessionIdleMs: SESSION_IDLE_MINUTES * 60_000, logger: log });

/** Fills `dir` through engine.observe in batches, then waits for every vector and compacts. */
async function fill(dir: string, size: number): Promise<Filled> {
  const corpus = syntheticCorpus(size, 0);
  const engine = await benchEngine(dir);
  try {
    const base = Date.now();
    const ids: number[] = [];
    const started = performance.now();
    for (let i = 0; i < size; i += batchSize) {
      const inputs: ObservationInput[] = [];
      for (let j = i; j < Math.min(size, i + batchSize); j++) inputs.push(observation(corpus, j, size, base, 'fill'));
      const stored = await engine.observe(inputs, scope);
      if (ids.length < 1000) ids.push(...stored.slice(0, 1000 - ids.length).map((o) => o.id));
      if (Math.floor(i / batchSize) % Math.max(1, Math.floor(50_000 / batchSize)) === 0) log(`  filled ${Math.min(size, i + batchSize)}/${size} in ${round((performance.now() - started) / 1000, 1)} s`);
    }
    await engine.flush();
    const fillS = (performance.now() - started) / 1000;
    // Vector-searchable: every cell has its vector (written back by the lease holder's queue).
    const s = await allEmbedded(engine, scope, embedTimeoutMs);
    const vectorsS = (performance.now() - started) / 1000;
    log(`  ${s.cells} cells, ${s.cells_with_vectors} with vectors, ${round(vectorsS, 1)} s after the fill started`);
    const optimizeStarted = performance.now();
    await engine.optimize();
    const optimizeS = (performance.now() - optimizeStarted) / 1000;
    return { cells: s.cells, fill_s: round(fillS, 1), fill_per_s: Math.round(size / fillS), vectors_s: round(vectorsS, 1), embedded: s.cells_with_vectors, optimize_s: round(optimizeS, 1), ids };
  } finally {
    await engine.close();
  }
}

/** Settles the store (settleStore); returns its cells, which earlier runs' `--writes` added to. */
async function settle(dir: string): Promise<number> {
  const engine = await benchEngine(dir);
  try {
    await settleStore(engine, scope, embedTimeoutMs);
    return await engine.store.count(TABLES.cells);
  } finally {
    await engine.close();
  }
}

/** The store in `dir`: filled now, or by an earlier run with --store (its record beside the tables). */
async function filledStore(dir: string, size: number): Promise<Filled> {
  const record = path.join(dir, 'bench-scale-fill.json');
  if (existsSync(record)) {
    const filled = JSON.parse(readFileSync(record, 'utf8')) as Filled & { size: number; embedder: string };
    if (filled.size !== size || filled.embedder !== embedderName) throw new Error(`--store ${dir} holds ${filled.size} cells by the ${filled.embedder} embedder: use a new folder`);
    log(`size ${size}: reusing the store filled before in ${dir}`);
    return filled;
  }
  log(`size ${size}: filling through engine.observe (${embedderName} embedder, batches of ${batchSize})`);
  const filled = await fill(dir, size);
  if (values.store) writeFileSync(record, `${JSON.stringify({ size, embedder: embedderName, ...filled })}\n`);
  return filled;
}

const cliArgs = (dir: string): string[] => ['--store', dir, '--project', PROJECT, '--embedder', embedderName, '--session-idle-minutes', String(SESSION_IDLE_MINUTES)];
const launch = (dir: string): ServerLaunch => ({ nodeArgs: SERVER_NODE_ARGS, cli: CLI, args: cliArgs(dir), env: serverEnv(), stderr: serverStderr });

/**
 * The questions one server is asked, in order. Each quiet call asks one it has not seen; past
 * them, the busy loops cycle through twice the query-vector cache's capacity, so no answer comes
 * from that cache: agents do repeat questions, but a bench repeating its own few would measure,
 * with the sentence encoder, a map lookup instead of a query embedding.
 */
class Questions {
  private next = 0;
  constructor(
    private readonly pool: string[],
    private readonly firstOfTheCycle: number,
  ) {}

  static forServer(size: number): Questions {
    const quiet = 4 * (calls + 1) + 100;
    return new Questions(syntheticCorpus(size, quiet + 2 * DEFAULT_QUERY_CACHE_SIZE).queries, quiet);
  }

  ask(): string {
    if (this.next === this.pool.length) this.next = this.firstOfTheCycle;
    return this.pool[this.next++];
  }
}

type Args = (text: string, i: number) => Record<string, unknown>;
const recallArgs: Args = (text) => ({ text, k: 10 });

async function series(client: Client, name: string, args: Args, n: number, questions: Questions): Promise<number[]> {
  await callTool(client, name, args(questions.ask(), n)); // warm-up
  const times: number[] = [];
  for (let i = 0; i < n; i++) times.push(await callTool(client, name, args(questions.ask(), i)));
  return times;
}

/** Recall, over and over, while `code-memory observe` stores `writes` observations in another process. */
async function underWrites(dir: string, client: Client, questions: Questions, corpus: ReturnType<typeof syntheticCorpus>): Promise<{ recall: Stat; calls: number; writer_s: number }> {
  const base = Date.now();
  const lines = Array.from({ length: writes }, (_, j) => JSON.stringify(observation(corpus, j, writes, base, `writer-${base}`))).join('\n');
  const started = performance.now();
  const writer = spawn(process.execPath, [CLI, 'observe', ...cliArgs(dir)], { stdio: ['pipe', 'ignore', 'ignore'], env: serverEnv() });
  let running = true;
  const done = new Promise<number>((resolve) => writer.once('exit', (code) => ((running = false), resolve(code ?? -1))));
  writer.stdin.end(`${lines}\n`);
  const times: number[] = [];
  while (running) times.push(await callTool(client, 'recall', recallArgs(questions.ask(), 0)));
  const code = await done;
  if (code !== 0) log(`  the writer (code-memory observe) exited with ${code}`);
  return { recall: stat(times), calls: times.length, writer_s: round((performance.now() - started) / 1000, 1) };
}

/** Cells of the store whose vector is not the current embedder's (LanceDB read directly: no engine, so no lease taken). */
async function cellsWaitingForVectors(dir: string): Promise<number> {
  const db = await lancedb.connect(dir, { readConsistencyInterval: 0 });
  try {
    const cells = await db.openTable(TABLES.cells);
    const waiting = await cells.countRows(`embed_model <> '${embedderModel}'`);
    cells.close();
    return waiting;
  } finally {
    db.close();
  }
}

type Busy = { recall: Stat; calls: number; seconds: number };

/**
 * Recall, over and over, while `code-memory import-git` imports a repository of new commits
 * beside the server, then while the store catches up with their vectors (the lease holder's
 * queue, often this server), until every cell has one again.
 */
async function underImport(dir: string, client: Client, questions: Questions): Promise<{ importing: Busy; catchUp: Busy } | null> {
  const repo = syntheticRepo(importCommits, Date.now() % 100_000);
  try {
    let started = performance.now();
    const importer = spawn(process.execPath, [CLI, 'import-git', repo, ...cliArgs(dir)], { stdio: 'ignore', env: serverEnv() });
    let running = true;
    const done = new Promise<number>((resolve) => importer.once('exit', (code) => ((running = false), resolve(code ?? -1))));
    const during: number[] = [];
    while (running) during.push(await callTool(client, 'recall', recallArgs(questions.ask(), 0)));
    if ((await done) !== 0) {
      log('  the importer (code-memory import-git) failed');
      return null;
    }
    const importing = { recall: stat(during), calls: during.length, seconds: round((performance.now() - started) / 1000, 1) };
    started = performance.now();
    const after: number[] = [];
    const deadline = Date.now() + embedTimeoutMs;
    for (let i = 0; Date.now() < deadline; i++) {
      if (i % 20 === 0 && (await cellsWaitingForVectors(dir)) === 0) break;
      after.push(await callTool(client, 'recall', recallArgs(questions.ask(), i)));
    }
    return { importing, catchUp: { recall: stat(after), calls: after.length, seconds: round((performance.now() - started) / 1000, 1) } };
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

async function benchTransport(dir: string, size: number, transport: 'stdio' | 'http', filled: Filled): Promise<Record<string, unknown>> {
  const questions = Questions.forServer(size);
  // Cold open -> first answer: from spawning the server to the first recall's result.
  const started = performance.now();
  const server = transport === 'stdio' ? await startStdio(launch(dir)) : await startHttp(launch(dir));
  try {
    await callTool(server.client, 'recall', recallArgs(questions.ask(), 0));
    const firstAnswerMs = Math.round(performance.now() - started);
    const r = stat(await series(server.client, 'recall', recallArgs, calls, questions));
    const rc = stat(await series(server.client, 'recall_context', (query) => ({ query }), calls, questions));
    const rm = stat(await series(server.client, 'retrieve_memory', (prompt, i) => ({ prompt, session_id: `bench-${i}` }), calls, questions));
    const go = stat(await series(server.client, 'get_observations', (_, i) => ({ ids: [filled.ids[(i * 7 + 3) % filled.ids.length]], source: 'observation' }), calls, questions));
    // RSS after at least 100 queries (more when --calls asks for more).
    let queries = 4 * (calls + 1) + 1;
    for (; queries < 100; queries++) await callTool(server.client, 'recall', recallArgs(questions.ask(), queries));
    const rss = rssMb(server.pid);
    const hostPid = await modelHost.pid();
    const hostRss = hostPid ? rssMb(hostPid) : null;
    const busy = writes > 0 ? await underWrites(dir, server.client, questions, syntheticCorpus(writes, 1, 99)) : null;
    const imported = importCommits > 0 ? await underImport(dir, server.client, questions) : null;
    const row = {
      transport,
      first_answer_ms: firstAnswerMs,
      recall: r,
      recall_context: rc,
      retrieve_memory: rm,
      get_observations_1_id: go,
      rss_mb: rss,
      rss_after_queries: queries,
      model_host_rss_mb: hostRss,
      recall_during_writes: busy?.recall ?? null,
      recall_calls_during_writes: busy?.calls ?? 0,
      writer_s: busy?.writer_s ?? null,
      recall_during_import: imported?.importing ?? null,
      recall_during_vector_catch_up: imported?.catchUp ?? null,
    };
    log(`  ${transport}: first answer ${firstAnswerMs} ms, recall ${r.p50}/${r.p95} ms, RSS ${rss} MB${hostRss ? ` (+ the shared model host ${hostRss} MB)` : ''}${busy ? `, recall during writes ${busy.recall.p50}/${busy.recall.p95} ms` : ''}${imported ? `, during an import ${imported.importing.recall.p50}/${imported.importing.recall.p95} ms, during its vectors' catch-up ${imported.catchUp.recall.p50}/${imported.catchUp.recall.p95} ms` : ''}`);
    return row;
  } finally {
    await server.close();
    await modelHost.stop();
  }
}

function helpMs(): { help_ms: number; node_ms: number } {
  const time = (args: string[]): number[] =>
    Array.from({ length: 10 }, () => {
      const t = performance.now();
      spawnSync(process.execPath, args, { stdio: 'ignore' });
      return performance.now() - t;
    });
  return { help_ms: median(time([CLI, '--help'])), node_ms: median(time(['-e', '0'])) };
}

const pair = (s: Stat | null): string => (s ? `${s.p50} / ${s.p95}` : '-');
const busyCell = (b: Busy | null): string => (b ? `${pair(b.recall)} (${b.calls} calls, ${b.seconds} s)` : '-');

function markdown(results: Array<{ size: number; filled: Filled; rows: Array<Record<string, unknown>> }>, help: ReturnType<typeof helpMs>): string {
  const lines = [
    `Embedder \`${embedderName}\`, ${os.cpus().length} cores, Node ${process.version}, load ${round(os.loadavg()[0], 1)}; ${calls} calls per tool after one warm-up; times in ms (p50 / p95).`,
    '',
    `| cells | transport | cold open → first answer | recall | recall_context | retrieve_memory | get_observations (1 id) p50 | RSS after queries | recall while another process writes | recall while import-git adds ${importCommits} commits | recall during their vectors' catch-up |`,
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const { rows } of results) {
    for (const row of rows) {
      const go = row.get_observations_1_id as Stat;
      lines.push(
        `| ${(row.cells as number).toLocaleString('en-US')} | ${row.transport} | ${row.first_answer_ms} | ${pair(row.recall as Stat)} | ${pair(row.recall_context as Stat)} | ${pair(row.retrieve_memory as Stat)} | ${go.p50} | ${row.rss_mb} MB (${row.rss_after_queries} q)${row.model_host_rss_mb ? ` + model host ${row.model_host_rss_mb} MB` : ''} | ${pair(row.recall_during_writes as Stat | null)} (${row.recall_calls_during_writes} calls, ${writes} writes in ${row.writer_s} s) | ${busyCell(row.recall_during_import as Busy | null)} | ${busyCell(row.recall_during_vector_catch_up as Busy | null)} |`,
      );
    }
  }
  lines.push('', '| cells | fill through engine.observe | fill rate | all cells vector-searchable after | compaction |', '|---:|---:|---:|---:|---:|');
  for (const { filled } of results) {
    lines.push(`| ${filled.cells.toLocaleString('en-US')} | ${filled.fill_s} s (batches of ${batchSize}) | ${filled.fill_per_s.toLocaleString('en-US')} obs/s | ${filled.embedded === filled.cells ? `${filled.vectors_s} s` : `not within the timeout (${filled.embedded} of ${filled.cells})`} | ${filled.optimize_s} s |`);
  }
  lines.push('', `\`code-memory --help\`: ${help.help_ms} ms (median of 10; \`node -e 0\` takes ${help.node_ms} ms here).`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const help = helpMs();
  const results: Array<{ size: number; filled: Filled; rows: Array<Record<string, unknown>> }> = [];
  for (const size of sizes) {
    const dir = values.store ? path.resolve(values.store) : mkdtempSync(path.join(os.tmpdir(), 'code-memory-bench-scale-'));
    try {
      const filled = await filledStore(dir, size);
      const rows: Array<Record<string, unknown>> = [];
      for (const transport of transports) {
        const cells = await settle(dir);
        rows.push({ cells, ...(await benchTransport(dir, size, transport, filled)) });
      }
      results.push({ size, filled, rows });
    } finally {
      if (values['keep-store'] || values.store) log(`  store kept in ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    }
  }
  rmSync(modelHost.base, { recursive: true, force: true });
  const command = `npx tsx bench/scale.ts ${process.argv.slice(2).join(' ')}`.trim();
  process.stdout.write(`${markdown(results, help)}\n\nPrinted by \`npm run build && ${command}\`.\n`);
  if (values.out) {
    const report = { command, node: process.version, cpus: os.cpus().length, load_average_1m: round(os.loadavg()[0], 1), embedder: embedderName, calls, writes, help, results: results.map(({ filled: { ids: _i, ...f }, rows }) => ({ ...f, rows })) };
    writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);
  }
}

runBench(main);
