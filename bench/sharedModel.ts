// Several `code-memory mcp` servers with the bundled model (USE-lite) at once, as an agent per
// terminal and a VS Code window each start one: the model in each server's own thread
// (CODE_MEMORY_SHARED_MODEL=0) against one shared model host. Per setting: each server's cold
// open to first answer, recall p50 / p95 over all servers, each server's RSS after its queries,
// the host's RSS and the total.
//
//   npm run build && npx tsx bench/sharedModel.ts --store DIR [--servers 3] [--calls 100] [--rounds 2]
//
// DIR is a store `bench/scale.ts --store DIR --embedder use-lite` filled (its questions are in
// DIR/bench-scale-fill.json). Each server asks different questions, so that no query vector comes
// from another's cache.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { WorkerEmbedder } from '../src/core/embed/workerEmbedder';
import { MemoryEngine } from '../src/core/engine';
import { storeChildEnv } from '../src/core/processEnv';
import { benchModelHost, callTool, rssMb, startStdio, type Server } from './mcpServers';
import { settleStore } from './settle';
import { percentile, round, runBench } from './synthetic';

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    servers: { type: 'string', default: '3' },
    calls: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '1' },
  },
});
const servers = Number(values.servers);
const calls = Number(values.calls);
const rounds = Number(values.rounds);
if (!values.store) throw new Error('--store DIR: a store bench/scale.ts filled with --embedder use-lite');
if (![servers, calls, rounds].every((n) => Number.isInteger(n) && n > 0)) throw new Error('--servers, --calls and --rounds take positive integers');
const store = path.resolve(values.store);
const fill = JSON.parse(readFileSync(path.join(store, 'bench-scale-fill.json'), 'utf8')) as { embedder: string; queries: string[] };
if (fill.embedder !== 'use-lite') throw new Error(`${store} was filled for the ${fill.embedder} embedder: use a USE-lite store`);
const CLI = path.resolve(__dirname, '..', 'dist', 'cli.js');
const log = (m: string): void => void process.stderr.write(`${m}\n`);

interface Row {
  setting: string;
  first_answer_ms: number[];
  recall: { p50: number; p95: number };
  server_rss_mb: number[];
  host_rss_mb: number | null;
  total_mb: number;
}

/** Embeds and compacts what earlier runs left (settleStore), with the model in this process. */
async function settle(): Promise<void> {
  const engine = await MemoryEngine.open({ storeUri: store, embedder: WorkerEmbedder.start({ provider: 'use-lite' }), maintenanceIntervalMs: 0, sessionIdleMs: 5256000 * 60_000, logger: log });
  try {
    await settleStore(engine, { project: 'bench/scale' }, 3_600_000);
  } finally {
    await engine.close();
  }
}

async function measure(shared: boolean): Promise<Row> {
  const host = benchModelHost();
  const env = { ...storeChildEnv(), XDG_RUNTIME_DIR: host.base, CODE_MEMORY_SHARED_MODEL: shared ? '1' : '0', LANCEDB_LOG: 'error' } as Record<string, string>;
  const args = ['--store', store, '--project', 'bench/scale', '--embedder', 'use-lite', '--session-idle-minutes', '5256000'];
  const started: Server[] = [];
  const question = (s: number, i: number): string => fill.queries[(s * Math.ceil(fill.queries.length / servers) + i) % fill.queries.length];
  try {
    const firstAnswer: number[] = [];
    // One after the other, as windows and terminals open: the later ones find the host running.
    for (let s = 0; s < servers; s++) {
      const t = performance.now();
      const server = await startStdio({ nodeArgs: [], cli: CLI, args, env, stderr: 'ignore' });
      started.push(server);
      await callTool(server.client, 'recall', { text: question(s, 0), k: 10 });
      firstAnswer.push(Math.round(performance.now() - t));
    }
    const times: number[] = [];
    for (let i = 1; i <= calls; i++) for (let s = 0; s < servers; s++) times.push(await callTool(started[s].client, 'recall', { text: question(s, i), k: 10 }));
    const serverRss = started.map((s) => rssMb(s.pid));
    const hostPid = await host.pid();
    const hostRss = hostPid ? rssMb(hostPid) : null;
    const row = {
      setting: shared ? 'one shared model host' : 'the model in each server',
      first_answer_ms: firstAnswer,
      recall: { p50: round(percentile(times, 50), 1), p95: round(percentile(times, 95), 1) },
      server_rss_mb: serverRss,
      host_rss_mb: hostRss,
      total_mb: serverRss.reduce((a, b) => a + b, 0) + (hostRss ?? 0),
    };
    log(`${row.setting}: first answers ${firstAnswer.join(', ')} ms, recall ${row.recall.p50} / ${row.recall.p95} ms, RSS ${serverRss.join(' + ')}${hostRss ? ` + host ${hostRss}` : ''} = ${row.total_mb} MB`);
    return row;
  } finally {
    await Promise.all(started.map((s) => s.close()));
    await host.stop();
  }
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const shared of [false, true]) {
      await settle();
      rows.push(await measure(shared));
    }
  }
  const lines = [
    `${servers} \`code-memory mcp\` servers over stdio on one store, started one after the other; ${calls} recalls each after the first; ${os.cpus().length} cores, Node ${process.version}.`,
    '',
    '| where the model runs | cold open → first answer, each server (ms) | recall p50 / p95 (ms) | RSS of each server | model host | total |',
    '|---|---|---:|---|---:|---:|',
    ...rows.map((r) => `| ${r.setting} | ${r.first_answer_ms.join(', ')} | ${r.recall.p50} / ${r.recall.p95} | ${r.server_rss_mb.join(', ')} MB | ${r.host_rss_mb === null ? '-' : `${r.host_rss_mb} MB`} | ${r.total_mb} MB |`),
    '',
    `Printed by \`npm run build && npx tsx bench/sharedModel.ts ${process.argv.slice(2).join(' ')}\`.`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

runBench(main);
