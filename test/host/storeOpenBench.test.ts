// Store open on the extension host, measured inside a real VS Code on a kept benchmark store.
// Runs only when asked (`node bench/hostBench.mjs store-open --store DIR` sets
// CODE_MEMORY_HOST_GREP=store-open-bench and the store); prints one JSON line.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import { codeMemoryApi, printLine, skipUnlessAsked } from './helpers';

describe('store-open-bench: opening a large store on the extension host', function () {
  this.timeout(600_000);

  before(skipUnlessAsked('store-open-bench'));

  it('times the store open and the first answers', async () => {
    const api = await codeMemoryApi();
    const fill = JSON.parse(fs.readFileSync(path.join(api.storeUri, 'bench-scale-fill.json'), 'utf8')) as { queries: string[]; cells: number; embedder: string };
    const openedBefore = api.isEngineOpen();
    const t0 = performance.now();
    const engine = await api.engine();
    const engineMs = performance.now() - t0;
    const scope = { project: 'bench/scale' };
    const answers: number[] = [];
    let hits = 0;
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      hits += (await engine.search(fill.queries[i], { scope, limit: 10 })).length;
      answers.push(performance.now() - t);
    }
    if (hits === 0) throw new Error('the store answered nothing: is it a store bench/scale.ts filled?');
    const report = {
      bench: 'store-open-host',
      vscode: vscode.version,
      cells: fill.cells,
      store_embedder: fill.embedder,
      activation_ms: Number(api.activationMs.toFixed(1)),
      opened_before_the_bench: openedBefore,
      store_open_ms: api.storeOpenMs(),
      engine_ready_ms: Math.round(engineMs),
      first_answer_ms: Math.round(answers[0]),
      next_answers_ms: answers.slice(1).map((ms) => Math.round(ms)),
    };
    printLine(`STORE_OPEN_BENCH_JSON ${JSON.stringify(report)}`);
  });
});
