// Latency of each MCP tool over loopback HTTP (the SDK client against startHttpServer) at
// growing store sizes, and the git import rate on a real repository's history.
//   npx tsx bench/tools.ts [--sizes 10000,100000] [--calls 40] [--embedder hashed|use-lite|none] [--repo <git dir>] [--json] [--out file]
// Run heavy sizes alone on the machine. Prints a table and a JSON document (only JSON
// with --json). Never asserts anything.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ObservationInput } from '../src/core/api';
import { importGitHistory } from '../src/core/capture/gitImport';
import type { Embedder } from '../src/core/embed/embedder';
import { HashedEmbedder } from '../src/core/embed/hashed';
import { WorkerEmbedder } from '../src/core/embed/workerEmbedder';
import { MemoryEngine } from '../src/core/engine';
import type { Scope } from '../src/core/model/records';
import { findTool } from '../src/core/tools/registry';
import type { ToolContext } from '../src/core/tools/types';
import { startHttpServer } from '../src/mcp/httpServer';
import { connectHttp } from './mcpServers';
import { percentile, rng, round, runBench, syntheticCorpus, table } from './synthetic';

process.env.LANCEDB_LOG ??= 'error';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    calls: { type: 'string', default: '40' },
    embedder: { type: 'string', default: 'hashed' },
    repo: { type: 'string' },
    'embed-timeout': { type: 'string', default: '1800' },
    json: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});

const sizes = values.sizes.split(',').filter(Boolean).map(Number);
const calls = Number(values.calls);
const scope: Scope = { project: 'bench/tools' };
const log = (m: string): void => {
  process.stderr.write(`${m}\n`);
};

async function makeEmbedder(): Promise<Embedder | 'none'> {
  if (values.embedder === 'none') return 'none';
  if (values.embedder === 'use-lite') return WorkerEmbedder.start({ provider: 'use-lite' });
  return new HashedEmbedder();
}

async function fill(engine: MemoryEngine, count: number): Promise<{ seconds: number; queries: string[] }> {
  const corpus = syntheticCorpus(count, calls);
  const started = Date.now();
  const r = rng(7);
  const batch = 1000;
  for (let i = 0; i < count; i += batch) {
    const inputs: ObservationInput[] = [];
    for (let j = i; j < Math.min(count, i + batch); j++) {
      const words = corpus.texts[j].split(/\s+/);
      const files = words.filter((w) => w.startsWith('src/')).slice(0, 3);
      inputs.push({
        type: corpus.types[j],
        title: corpus.titles[j],
        narrative: corpus.texts[j],
        files_modified: files.length ? files : undefined,
        // Ordered times and explicit sessions of 50: the bench measures reads, not session tracking.
        created_at_epoch: Date.UTC(2025, 0, 1) + j * 60_000 + Math.floor(r() * 30_000),
        memory_session_id: `bench-session-${Math.floor(j / 50)}`,
        dedupe_key: `bench:${j}`,
      });
    }
    await engine.observe(inputs, scope);
    if ((i / batch) % 10 === 0) log(`  filled ${Math.min(count, i + batch)}/${count}`);
  }
  await engine.flush();
  return { seconds: (Date.now() - started) / 1000, queries: corpus.queries };
}

async function waitForVectors(engine: MemoryEngine, timeoutS: number): Promise<{ seconds: number; embedded: number; cells: number }> {
  const started = Date.now();
  for (;;) {
    const s = await engine.stats(scope);
    if (s.cells_with_vectors >= s.cells || values.embedder === 'none' || Date.now() - started > timeoutS * 1000) {
      return { seconds: (Date.now() - started) / 1000, embedded: s.cells_with_vectors, cells: s.cells };
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

type Call = { name: string; args: (i: number) => Record<string, unknown> };

type Invoke = (name: string, args: Record<string, unknown>) => Promise<{ isError?: unknown }>;

async function measure(invoke: Invoke, call: Call): Promise<{ p50: number; p95: number; mean: number; errors: number }> {
  const times: number[] = [];
  let errors = 0;
  await invoke(call.name, call.args(0)); // warm-up
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    const result = await invoke(call.name, call.args(i));
    times.push(performance.now() - t);
    if (result.isError) errors++;
  }
  return { p50: round(percentile(times, 50), 1), p95: round(percentile(times, 95), 1), mean: round(times.reduce((s, x) => s + x, 0) / times.length, 1), errors };
}

async function benchSize(size: number): Promise<Record<string, unknown>[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'code-memory-bench-tools-'));
  const engine = await MemoryEngine.open({ storeUri: dir, embedder: await makeEmbedder(), maintenanceIntervalMs: 0, logger: log });
  try {
    log(`size ${size}: filling the store through engine.observe`);
    const filled = await fill(engine, size);
    const vectors = await waitForVectors(engine, Number(values['embed-timeout']));
    log(`size ${size}: ${filled.seconds} s to observe, ${vectors.seconds} s for vectors (${vectors.embedded}/${vectors.cells})`);
    // The lease holder compacts and builds the ANN index once the vectors are written: measure
    // the quiet store, after that upkeep, and print how long it took.
    const upkeepStarted = Date.now();
    await engine.settled();
    const upkeepS = (Date.now() - upkeepStarted) / 1000;
    log(`size ${size}: ${upkeepS} s of upkeep after the vectors (compaction, ANN index)`);
    const ids = (await engine.listObservations(scope, { limit: 200 })).map((o) => o.id);
    const server = await startHttpServer({ engine, scope });
    const client = await connectHttp(server.url, server.token);
    await client.listTools();
    const q = (i: number): string => filled.queries[i % filled.queries.length];
    const plan: Call[] = [
      { name: 'recall', args: (i) => ({ text: q(i), k: 10 }) },
      { name: 'recall_context', args: (i) => ({ query: q(i) }) },
      { name: 'retrieve_memory', args: (i) => ({ prompt: q(i), session_id: `bench-${i}` }) },
      { name: 'get_observations', args: (i) => ({ ids: [ids[i % ids.length], ids[(i * 7 + 3) % ids.length]], source: 'observation' }) },
    ];
    const rows: Record<string, unknown>[] = [];
    const overHttp: Invoke = (name, args) => client.callTool({ name, arguments: args }) as Promise<{ isError?: unknown }>;
    // The same tool called in-process, to show what the HTTP and MCP layers add.
    const ctx: ToolContext = { engine, scope, transportSessionId: 'bench-direct' };
    const direct: Invoke = (name, args) => findTool(name)!.run(ctx, args);
    for (const call of plan) {
      const m = await measure(overHttp, call);
      const d = await measure(direct, call);
      rows.push({ cells: vectors.cells, tool: call.name, calls, p50_ms: m.p50, p95_ms: m.p95, mean_ms: m.mean, direct_p50_ms: d.p50, direct_p95_ms: d.p95, errors: m.errors + d.errors, embedded: `${vectors.embedded}/${vectors.cells}`, fill_s: round(filled.seconds, 1), vectors_s: round(vectors.seconds, 1), upkeep_s: round(upkeepS, 1) });
      log(`  ${call.name}: p50 ${m.p50} ms, p95 ${m.p95} ms over HTTP; in-process p50 ${d.p50} ms`);
    }
    await client.close();
    await server.close();
    return rows;
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchImport(repo: string): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'code-memory-bench-import-'));
  const engine = await MemoryEngine.open({ storeUri: dir, embedder: await makeEmbedder(), maintenanceIntervalMs: 0, logger: log });
  try {
    const started = Date.now();
    const result = await importGitHistory(engine, repo, { scope: { project: 'bench/import' }, includeMerges: true });
    await engine.flush();
    const seconds = (Date.now() - started) / 1000;
    const again = Date.now();
    const second = await importGitHistory(engine, repo, { scope: { project: 'bench/import' }, includeMerges: true });
    const secondSeconds = (Date.now() - again) / 1000;
    return {
      // A mirror's work-tree-less folder is often just 'repo'; its parent names the project.
      repository: path.basename(repo) === 'repo' ? path.basename(path.dirname(repo)) : path.basename(repo),
      commits_imported: result.imported,
      skipped: result.skipped,
      sessions: result.sessions,
      seconds: round(seconds, 1),
      commits_per_s: round((result.imported + result.skipped) / seconds, 1),
      rerun_imported: second.imported,
      rerun_seconds: round(secondSeconds, 1),
    };
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const latency: Record<string, unknown>[] = [];
  for (const size of sizes) latency.push(...(await benchSize(size)));
  const importRow = values.repo ? await benchImport(values.repo) : null;
  const report = { node: process.version, cpus: os.cpus().length, load_average_1m: round(os.loadavg()[0], 1), embedder: values.embedder, calls_per_tool: calls, latency, import_git: importRow };
  if (values.out) writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);
  if (!values.json) {
    process.stdout.write(`${table(latency)}\n\n`);
    if (importRow) process.stdout.write(`${table([importRow])}\n\n`);
  }
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

runBench(main);
