// What a forget by id costs as a project grows and is read: forget rewrites the fragments that
// held the forgotten rows and every fragment of those tables that holds deleted rows (the older
// copies that reads' access counts and edits leave), then prunes old versions.
//   npx tsx bench/forget.ts [--sizes 2000,20000] [--reads 0,200] [--forgets 3] [--json]
// Observations are written through observe (hashed embedder, vectors written by the background
// queue before the store is compacted), read through touch (what get_observations does), then
// forgotten one at a time. Never asserts anything.

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
    json: { type: 'boolean', default: false },
  },
});
const sizes = values.sizes.split(',').filter(Boolean).map(Number);
const readCounts = values.reads.split(',').filter(Boolean).map(Number);
const forgets = Number(values.forgets);
const scope: Scope = { project: 'bench/forget' };

async function run(size: number, reads: number): Promise<Record<string, number>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cm-bench-forget-'));
  try {
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, summariseOrphanSessions: false });
    const ids: number[] = [];
    for (let i = 0; i < size; i += 500) {
      const batch = Array.from({ length: Math.min(500, size - i) }, (_, j) => ({ type: 'note', title: `note ${i + j} about module ${(i + j) % 97}`, narrative: `work item ${i + j}: changed the parser and its tests` }));
      ids.push(...(await engine.observe(batch, scope)).map((o) => o.id));
    }
    await engine.flush();
    await engine.optimize(0);
    const r = rng(7);
    for (let i = 0; i < reads; i++) await engine.touch('observation', [ids[Math.floor(r() * ids.length)]], scope);
    const times: number[] = [];
    for (let i = 0; i < forgets; i++) {
      const started = performance.now();
      await engine.forget({ kind: 'observation', ids: [ids[Math.floor(r() * ids.length)]] }, scope);
      times.push(performance.now() - started);
    }
    await engine.close();
    return { observations: size, reads, forgets, p50_ms: round(percentile(times, 50)), max_ms: round(Math.max(...times)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows: Record<string, number>[] = [];
  for (const size of sizes) for (const reads of readCounts) rows.push(await run(size, reads));
  if (values.json) process.stdout.write(`${JSON.stringify(rows)}\n`);
  else process.stdout.write(`${table(rows)}\n`);
}

void main();
