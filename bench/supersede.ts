// What supersession costs: `remember` reads the project's memories to decide what a new one
// supersedes or conflicts with, and recall_context looks up the memories behind its hits to
// mark them in time. Latency of both at growing numbers of memories in one project.
//   npx tsx bench/supersede.ts [--sizes 200,2000] [--calls 20] [--json]
// Memories are loaded through import (fast), then measured through the tool functions on a
// real store with the hashed embedder. Never asserts anything.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { HashedEmbedder } from '../src/core/embed/hashed';
import { MemoryEngine } from '../src/core/engine';
import type { Scope } from '../src/core/model/records';
import { recallContext } from '../src/core/tools/recallContext';
import { remember } from '../src/core/tools/write';
import { percentile, rng, round, table } from './synthetic';

process.env.LANCEDB_LOG ??= 'error';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '200,2000' },
    calls: { type: 'string', default: '20' },
    json: { type: 'boolean', default: false },
  },
});
const sizes = values.sizes.split(',').filter(Boolean).map(Number);
const calls = Number(values.calls);
const scope: Scope = { project: 'bench/supersede' };
const SERVICES = ['orders', 'billing', 'search', 'auth', 'catalog', 'shipping', 'payments', 'inventory'];
const STORES = ['PostgreSQL', 'SQLite', 'MySQL', 'DynamoDB', 'Redis', 'MongoDB'];

async function* memoryLines(count: number): AsyncIterable<string> {
  const r = rng(11);
  const now = Date.now() - 86_400_000;
  for (let i = 0; i < count; i++) {
    const service = `${SERVICES[i % SERVICES.length]}${Math.floor(i / SERVICES.length)}`;
    const store = STORES[Math.floor(r() * STORES.length)];
    const text = `We use ${store} for the ${service} service`;
    yield JSON.stringify({
      kind: 'memory',
      record: {
        id: 1_000_000 + i, project: scope.project, title: `${service} storage`, text, memory_type: 'decision',
        created_at_epoch: now + i, updated_at_epoch: now + i, status: 'active', scope: 'project', classification: 'decision',
        classification_reason: 'saved explicitly', current_context_eligible: true, branch: null, files: JSON.stringify([`${service}/db.ts`]),
        session_id: null, topic_key: `${service}-db`, topic_trace: null,
        temporal_facts: JSON.stringify([{ project: scope.project, subject: `${service} service`, predicate: 'uses', object: store.toLowerCase(), learned_at_epoch: now + i, confidence: 1, status: 'current', valid_from_epoch: now + i, valid_to_epoch: null }]),
      },
    });
  }
}

async function main(): Promise<void> {
  const rows: Array<Record<string, unknown>> = [];
  for (const size of sizes) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cm-bench-supersede-'));
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    try {
      const t0 = performance.now();
      await engine.importJsonl(memoryLines(size));
      process.stderr.write(`${size} memories imported in ${round((performance.now() - t0) / 1000, 1)} s\n`);
      const ctx = { engine, scope };
      const rememberMs: number[] = [];
      for (let i = 0; i < calls; i++) {
        const service = `${SERVICES[i % SERVICES.length]}${Math.floor(i / SERVICES.length)}`;
        const t = performance.now();
        // Every call supersedes one memory by its topic_key.
        await remember(ctx, { memory_type: 'decision', title: `${service} storage`, text: `We moved the ${service} service to CockroachDB`, topic_key: `${service}-db` });
        rememberMs.push(performance.now() - t);
      }
      const now: number[] = [];
      const history: number[] = [];
      for (let i = 0; i < calls; i++) {
        const service = `${SERVICES[i % SERVICES.length]}${Math.floor(i / SERVICES.length)}`;
        let t = performance.now();
        await recallContext(ctx, { query: `which database does the ${service} service use` });
        now.push(performance.now() - t);
        t = performance.now();
        await recallContext(ctx, { query: `what did the ${service} service use before` });
        history.push(performance.now() - t);
      }
      const stat = (xs: number[]): { p50: number; p95: number } => ({ p50: round(percentile(xs, 50), 1), p95: round(percentile(xs, 95), 1) });
      rows.push({ memories: size, op: 'remember (supersedes 1)', ...stat(rememberMs) });
      rows.push({ memories: size, op: 'recall_context (now)', ...stat(now) });
      rows.push({ memories: size, op: 'recall_context (history)', ...stat(history) });
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const report = { bench: 'supersede', calls, embedder: 'hashed', rows };
  if (!values.json) console.log(table(rows));
  console.log(JSON.stringify(report));
}

void main();
