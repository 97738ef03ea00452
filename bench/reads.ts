// Reads by id and query hydration at growing store sizes, in-process (no HTTP): what
// get_observations, getNode and a search cost once the lease holder's upkeep after the
// write-back (compaction, scalar and vector indexes) has run, and after one more optimize.
//   npx tsx bench/reads.ts [--sizes 10000,100000] [--calls 100] [--fill observe|direct] [--json]
// The store is filled through engine.observe in batches of 1,000 with the hashed embedder, or
// with --fill direct through the observation repository's write (records and cells in batches
// of 5,000, without observe's dedupe checks: a 100k store in seconds rather than minutes).
// Prints a table and a JSON document. Never asserts anything.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ObservationInput } from '../src/core/api';
import { HashedEmbedder } from '../src/core/embed/hashed';
import { MemoryEngine } from '../src/core/engine';
import type { Scope } from '../src/core/model/records';
import { findTool } from '../src/core/tools/registry';
import type { ToolContext } from '../src/core/tools/types';
import { percentile, round, runBench, syntheticCorpus, table } from './synthetic';

process.env.LANCEDB_LOG ??= 'error';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    calls: { type: 'string', default: '100' },
    fill: { type: 'string', default: 'observe' },
    json: { type: 'boolean', default: false },
  },
});

const calls = Number(values.calls);
const scope: Scope = { project: 'bench/reads' };
const log = (m: string): void => {
  process.stderr.write(`${m}\n`);
};

async function time(fn: (i: number) => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  await fn(0);
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await fn(i + 1);
    times.push(performance.now() - t);
  }
  return { p50: round(percentile(times, 50), 1), p95: round(percentile(times, 95), 1) };
}

async function benchSize(size: number): Promise<Record<string, unknown>[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'code-memory-bench-reads-'));
  const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, logger: log });
  try {
    const corpus = syntheticCorpus(size, 50);
    const fillStarted = performance.now();
    if (values.fill === 'direct') {
      const repos = engine.repos.forProject(scope.project);
      for (let i = 0; i < size; i += 5000) {
        const n = Math.min(size, i + 5000) - i;
        const ids = await repos.ids.allocate(n);
        await repos.observations.write(ids.map((id, k) => {
          const j = i + k;
          const at = Date.UTC(2025, 0, 1) + j * 60_000;
          return {
            id, memory_session_id: `s-${Math.floor(j / 50)}`, content_session_id: null, project: scope.project, type: corpus.types[j],
            title: corpus.titles[j], subtitle: null, narrative: corpus.texts[j], facts: null, concepts: null, files_read: null,
            files_modified: null, commit_sha: null, branch: null, status: 'active', created_at: new Date(at).toISOString(),
            created_at_epoch: at, last_accessed_epoch: null, discovery_tokens: null, compressed_sources: null,
          };
        }));
      }
    }
    for (let i = 0; values.fill !== 'direct' && i < size; i += 1000) {
      const inputs: ObservationInput[] = [];
      for (let j = i; j < Math.min(size, i + 1000); j++) {
        inputs.push({ type: corpus.types[j], title: corpus.titles[j], narrative: corpus.texts[j], created_at_epoch: Date.UTC(2025, 0, 1) + j * 60_000, memory_session_id: `s-${Math.floor(j / 50)}`, dedupe_key: `reads:${j}` });
      }
      await engine.observe(inputs, scope);
    }
    const filled = performance.now();
    log(`size ${size}: filled in ${round((filled - fillStarted) / 1000, 1)} s (${values.fill})`);
    await engine.waitForVectors();
    const vectorsS = (performance.now() - filled) / 1000;
    const ids = (await engine.listObservations(scope, { limit: 500 })).map((o) => o.id);
    const nodes = (await engine.search(corpus.queries[0], { scope, limit: 50 })).map((h) => h.cell.node_id);
    const ctx: ToolContext = { engine, scope, transportSessionId: 'bench-reads' };
    const tool = findTool('get_observations')!;
    const rows: Record<string, unknown>[] = [];
    const measure = async (state: string): Promise<void> => {
      const plan: Array<[string, (i: number) => Promise<unknown>]> = [
        ['engine.getObservations (2 ids)', (i) => engine.getObservations([ids[i % ids.length], ids[(i * 7 + 3) % ids.length]], scope)],
        ['get_observations tool (2 ids)', (i) => tool.run(ctx, { ids: [ids[i % ids.length], ids[(i * 7 + 3) % ids.length]], source: 'observation' })],
        ['engine.getNode', (i) => engine.getNode(nodes[i % nodes.length], scope)],
        ['engine.search (k 10)', (i) => engine.search(corpus.queries[i % corpus.queries.length], { scope, limit: 10 })],
      ];
      for (const [name, fn] of plan) {
        const m = await time(fn);
        rows.push({ cells: size, state, read: name, p50_ms: m.p50, p95_ms: m.p95 });
        log(`  ${size} ${state} ${name}: p50 ${m.p50} ms, p95 ${m.p95} ms`);
      }
    };
    log(`size ${size}: vectors ${round(vectorsS, 1)} s after the fill`);
    const settleStarted = performance.now();
    await engine.settled();
    log(`size ${size}: upkeep after the write-back ${round((performance.now() - settleStarted) / 1000, 1)} s`);
    await measure('settled');
    await engine.flush();
    const started = performance.now();
    await engine.optimize();
    log(`size ${size}: upkeep (compaction, indexes) ${round((performance.now() - started) / 1000, 1)} s`);
    await measure('optimized again');
    return rows;
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows: Record<string, unknown>[] = [];
  for (const size of values.sizes.split(',').filter(Boolean).map(Number)) rows.push(...(await benchSize(size)));
  const report = { node: process.version, cpus: os.cpus().length, load_average_1m: round(os.loadavg()[0], 1), calls, rows };
  if (!values.json) process.stdout.write(`${table(rows)}\n\n`);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

runBench(main);
