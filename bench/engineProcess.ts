// The extension's engine as the window uses it: EngineClient starting dist/engineWorker.js (a
// child process) on a store of --observations notes, then --calls round trips of stats, a recall
// through invokeTool and, every tenth call, a search of 200 results; then the close. The time a
// window waits for its engine (start to ready) and what each message costs on top of the work.
//   npm run build && npx tsx bench/engineProcess.ts [--observations 3000] [--calls 300] [--rounds 3]
// Prints numbers; asserts nothing.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { MemoryEngine } from '../src/core/engine';
import { EngineClient } from '../src/extension/engineWorker/engineClient';
import { engineClientOptions } from '../test/unit/fixtures/engineClient';
import { percentile, round, runBench, table } from './synthetic';

const { values } = parseArgs({
  options: {
    observations: { type: 'string', default: '3000' },
    calls: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '3' },
  },
});

runBench(async () => {
  const workerPath = path.resolve(__dirname, '..', 'dist', 'engineWorker.js');
  if (!fs.existsSync(workerPath)) throw new Error(`${workerPath} is missing: run npm run build first`);
  const count = Number(values.observations);
  const calls = Number(values.calls);
  const store = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-engine-process-'));
  const scope = { project: 'github.com/acme/app' };
  try {
    const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    for (let i = 0; i < count; i += 500) {
      await engine.observe(
        Array.from({ length: Math.min(500, count - i) }, (_, k) => ({ type: 'note', title: `note ${i + k} about caching and parsers`, narrative: `the session cache eviction and the parser option ${(i + k) % 37}` })),
        scope,
      );
    }
    await engine.close();
    const rows: Array<Record<string, unknown>> = [];
    for (let r = 0; r < Number(values.rounds); r++) {
      const started = performance.now();
      const client = await EngineClient.start(engineClientOptions(workerPath, store));
      const ready = performance.now() - started;
      const times: Record<'stats' | 'recall' | 'search200', number[]> = { stats: [], recall: [], search200: [] };
      const timed = async (name: keyof typeof times, call: () => Promise<unknown>): Promise<void> => {
        const t = performance.now();
        await call();
        times[name].push(performance.now() - t);
      };
      for (let i = 0; i < calls; i++) {
        await timed('stats', () => client.stats(scope));
        await timed('recall', () => client.invokeTool('recall', scope, { text: `parser option ${i % 37} cache`, k: 10 }));
        if (i % 10 === 0) await timed('search200', () => client.search('session cache eviction', { scope, limit: 200 }));
      }
      const closing = performance.now();
      await client.close();
      const row: Record<string, unknown> = { round: r + 1, 'ready ms': Math.round(ready) };
      for (const [name, xs] of Object.entries(times)) row[`${name} p50/p95 ms`] = `${round(percentile(xs, 50))} / ${round(percentile(xs, 95))}`;
      row['close ms'] = Math.round(performance.now() - closing);
      rows.push(row);
    }
    console.log(`${count} observations, ${calls} calls a round, Node ${process.version}, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}`);
    console.log(table(rows));
  } finally {
    fs.rmSync(store, { recursive: true, force: true });
  }
});
