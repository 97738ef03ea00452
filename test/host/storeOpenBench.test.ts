// Store open on the extension host, measured inside a real VS Code on a kept benchmark store.
// Runs only when asked (`node bench/hostBench.mjs store-open --store DIR` sets
// CODE_MEMORY_HOST_GREP=store-open-bench and the store); prints one JSON line.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import { codeMemoryApi, printLine, skipUnlessAsked } from './helpers';

/** Quiet time before the second open, for the workbench to finish loading. */
const SETTLE_MS = 15_000;

type Api = Awaited<ReturnType<typeof codeMemoryApi>>;

/** Opens the store (timing the open as the extension measured it and as the caller waited) and asks 5 questions. */
async function timeOpen(api: Api, queries: string[], scope: { project: string }): Promise<Record<string, unknown>> {
  const t0 = performance.now();
  const engine = await api.engine();
  const engineMs = performance.now() - t0;
  const answers: number[] = [];
  let hits = 0;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    hits += (await engine.search(queries[i], { scope, limit: 10 })).length;
    answers.push(performance.now() - t);
  }
  if (hits === 0) throw new Error('the store answered nothing: is it a store bench/scale.ts filled?');
  return {
    store_open_ms: api.storeOpenMs(),
    engine_ready_ms: Math.round(engineMs),
    first_answer_ms: Math.round(answers[0]),
    next_answers_ms: answers.slice(1).map((ms) => Math.round(ms)),
  };
}

describe('store-open-bench: opening a large store on the extension host', function () {
  this.timeout(600_000);

  before(skipUnlessAsked('store-open-bench'));

  it('times the store open and the first answers', async () => {
    const api = await codeMemoryApi();
    const fill = JSON.parse(fs.readFileSync(path.join(api.storeUri, 'bench-scale-fill.json'), 'utf8')) as { queries: string[]; cells: number; embedder: string };
    const openedBefore = api.isEngineOpen();
    const scope = { project: 'bench/scale' };
    // At window start the store opens while the workbench loads beside it (on 2 cores, the
    // two compete); on a settled window it opens alone, as after a settings change.
    const atStart = await timeOpen(api, fill.queries, scope);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    // A model setting takes effect on the next use: the engine closes and the next get() opens it.
    const settings = vscode.workspace.getConfiguration('codeMemory');
    const candidates = settings.get<number>('rerank.candidates') ?? 30;
    await settings.update('rerank.candidates', candidates + 1, vscode.ConfigurationTarget.Global);
    while (api.isEngineOpen()) await new Promise((resolve) => setTimeout(resolve, 50));
    const settled = await timeOpen(api, fill.queries, scope);
    await settings.update('rerank.candidates', undefined, vscode.ConfigurationTarget.Global);
    const report = {
      bench: 'store-open-host',
      vscode: vscode.version,
      cells: fill.cells,
      store_embedder: fill.embedder,
      activation_ms: Number(api.activationMs.toFixed(1)),
      opened_before_the_bench: openedBefore,
      at_window_start: atStart,
      settled_window: settled,
    };
    printLine(`STORE_OPEN_BENCH_JSON ${JSON.stringify(report)}`);
  });
});
