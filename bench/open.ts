// Where the time of opening a store and answering the first question goes: the embedder's
// start, MemoryEngine.open (with every LanceDB call it makes timed by name), and the first and
// second search, on an existing store (e.g. one kept by `bench/scale.ts --keep-store`).
//   npx tsx bench/open.ts --store <dir> [--project bench/scale] [--embedder hashed|use-lite|none] [--runs 3]
// Prints numbers; asserts nothing.

import { parseArgs } from 'node:util';
import * as lancedb from '@lancedb/lancedb';
import type { Embedder } from '../src/core/embed/embedder';
import { WorkerEmbedder } from '../src/core/embed/workerEmbedder';
import { MemoryEngine } from '../src/core/engine';
import { round, runBench } from './synthetic';

process.env.LANCEDB_LOG ??= 'error';

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    project: { type: 'string', default: 'bench/scale' },
    embedder: { type: 'string', default: 'hashed' },
    runs: { type: 'string', default: '3' },
  },
});
if (!values.store) throw new Error('--store <dir> is required (a store kept by bench/scale.ts --keep-store)');

// Every LanceDB call, timed by name (a call's time includes waiting for the others it overlaps).
const spent = new Map<string, { ms: number; n: number }>();
function timeMethods(proto: object, prefix: string): void {
  for (const name of Object.getOwnPropertyNames(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (!d || typeof d.value !== 'function' || name === 'constructor') continue;
    const original = d.value as (...a: unknown[]) => unknown;
    (proto as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
      const t = performance.now();
      const out = original.apply(this, args);
      if (out instanceof Promise) {
        return out.finally(() => {
          const s = spent.get(`${prefix}.${name}`) ?? { ms: 0, n: 0 };
          s.ms += performance.now() - t;
          s.n++;
          spent.set(`${prefix}.${name}`, s);
        });
      }
      return out;
    };
  }
}

async function once(): Promise<Record<string, number>> {
  spent.clear();
  const t0 = performance.now();
  let embedder: Embedder | 'none' = 'none';
  if (values.embedder !== 'none') embedder = await WorkerEmbedder.start({ provider: values.embedder === 'use-lite' ? 'use-lite' : 'hashed' });
  const t1 = performance.now();
  const engine = await MemoryEngine.open({ storeUri: values.store!, embedder, logger: () => undefined });
  const t2 = performance.now();
  const scope = { project: values.project! };
  await engine.search('retry timeout when the session cache is empty', { scope, limit: 10 });
  const t3 = performance.now();
  await engine.search('build config default option missing', { scope, limit: 10 });
  const t4 = performance.now();
  await engine.close();
  if (embedder !== 'none') await embedder.close?.();
  return { embedder_start_ms: round(t1 - t0, 1), engine_open_ms: round(t2 - t1, 1), first_search_ms: round(t3 - t2, 1), second_search_ms: round(t4 - t3, 1), open_to_first_answer_ms: round(t3 - t0, 1) };
}

async function main(): Promise<void> {
  // Patch the classes LanceDB hands out (found from a real connection, not from its exports).
  const db = await lancedb.connect(values.store!, { readConsistencyInterval: 0 });
  timeMethods(Object.getPrototypeOf(db), 'db');
  const names = await db.tableNames();
  if (names.length) timeMethods(Object.getPrototypeOf(await db.openTable(names[0])), 'table');
  timeMethods(lancedb.QueryBase.prototype, 'query');
  for (let i = 0; i < Number(values.runs); i++) {
    const r = await once();
    const calls = [...spent.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 12).map(([k, v]) => `${k} ${Math.round(v.ms)} ms/${v.n}`);
    process.stdout.write(`${JSON.stringify(r)}\n  LanceDB calls (open + 2 searches): ${calls.join(', ')}\n`);
  }
}

runBench(main);
