// What a forget by id costs as a project grows and is read: forget rewrites the fragments that
// held the forgotten rows and every fragment of those tables that holds deleted rows (the older
// copies that reads' access counts and edits leave), then prunes old versions.
//   npx tsx bench/forget.ts [--sizes 2000,20000] [--reads 0,200] [--forgets 3] [--prompted 0,300] [--json]
// Observations are written through observe (hashed embedder, vectors written by the background
// queue before the store is compacted), read through touch (what get_observations does), then
// forgotten one at a time. With --prompted N, N sessions of 5 observations also hold a prompt
// each and end with a summary: every forget by id takes the project's prompts and the summaries
// that may quote them, and resummarise_ms is what the sweep of sessions left without a summary
// then takes to write them again. Never asserts anything.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { HashedEmbedder } from '../src/core/embed/hashed';
import { MemoryEngine } from '../src/core/engine';
import type { Scope } from '../src/core/model/records';
import { percentile, rng, round, table } from './synthetic';

process.env.LANCEDB_LOG ??= 'error';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '2000,20000' },
    reads: { type: 'string', default: '0,200' },
    forgets: { type: 'string', default: '3' },
    prompted: { type: 'string', default: '0' },
    json: { type: 'boolean', default: false },
  },
});
const sizes = values.sizes.split(',').filter(Boolean).map(Number);
const readCounts = values.reads.split(',').filter(Boolean).map(Number);
const forgets = Number(values.forgets);
const promptedCounts = values.prompted.split(',').filter(Boolean).map(Number);
const scope: Scope = { project: 'bench/forget' };

/** `count` sessions of 5 observations two hours old (so the sweep takes them for idle), each with a prompt, each ended (summarised). */
async function promptedSessions(engine: MemoryEngine, count: number): Promise<void> {
  const at = Date.now() - 2 * 3600_000;
  for (let i = 0; i < count; i++) {
    const session = `bench-prompted-${i}`;
    await engine.observe(
      Array.from({ length: 5 }, (_, j) => ({ type: 'change', title: `session ${i} step ${j}: edited module ${(i + j) % 97}`, narrative: `changed module ${(i + j) % 97} and its tests`, memory_session_id: session, files_modified: [`src/module${(i + j) % 97}.ts`], created_at_epoch: at + i * 10_000 + j })),
      scope,
    );
    await engine.addPrompt(scope, session, `please rework module ${i % 97} so that its parser keeps comments (${i})`);
    await engine.endSession(scope, session, 'idle');
  }
}

async function run(size: number, reads: number, prompted: number): Promise<Record<string, number>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cm-bench-forget-'));
  try {
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, summariseOrphanSessions: false });
    const ids: number[] = [];
    for (let i = 0; i < size; i += 500) {
      const batch = Array.from({ length: Math.min(500, size - i) }, (_, j) => ({ type: 'note', title: `note ${i + j} about module ${(i + j) % 97}`, narrative: `work item ${i + j}: changed the parser and its tests` }));
      ids.push(...(await engine.observe(batch, scope)).map((o) => o.id));
    }
    await promptedSessions(engine, prompted);
    await engine.flush();
    await engine.optimize(0);
    const r = rng(7);
    for (let i = 0; i < reads; i++) await engine.touch('observation', [ids[Math.floor(r() * ids.length)]], scope);
    const times: number[] = [];
    const resummarised: number[] = [];
    let summariesDropped = 0;
    let resummarisedSessions = 0;
    for (let i = 0; i < forgets; i++) {
      await engine.addPrompt(scope, `bench-prompted-${i % Math.max(1, prompted)}`, 'one more prompt');
      const started = performance.now();
      const report = await engine.forget({ kind: 'observation', ids: [ids[Math.floor(r() * ids.length)]] }, scope);
      times.push(performance.now() - started);
      summariesDropped += report.session_summaries;
      const sweep = performance.now();
      resummarisedSessions += await engine.endOrphanSessions();
      resummarised.push(performance.now() - sweep);
    }
    await engine.close();
    return {
      observations: size,
      reads,
      prompted,
      forgets,
      p50_ms: round(percentile(times, 50)),
      max_ms: round(Math.max(...times)),
      summaries_dropped: summariesDropped,
      resummarised: resummarisedSessions,
      resummarise_p50_ms: round(percentile(resummarised, 50)),
      resummarise_max_ms: round(Math.max(...resummarised)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows: Record<string, number>[] = [];
  for (const size of sizes) for (const reads of readCounts) for (const prompted of promptedCounts) rows.push(await run(size, reads, prompted));
  if (values.json) process.stdout.write(`${JSON.stringify(rows)}\n`);
  else process.stdout.write(`${table(rows)}\n`);
}

void main();
