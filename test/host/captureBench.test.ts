// Capture cost on the extension host, measured inside a real VS Code. Runs only when asked
// (`node bench/hostBench.mjs capture` sets CODE_MEMORY_HOST_GREP=capture-bench); prints one JSON line.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import { codeMemoryApi, printLine, skipUnlessAsked, sleep, waitFor, workspaceFolder } from './helpers';

describe('capture-bench: capture cost on the extension host', function () {
  this.timeout(600_000);

  before(skipUnlessAsked('capture-bench'));

  it('measures handler cost per event, drain cost and the extension host thread share', async () => {
    const api = await codeMemoryApi();
    const root = workspaceFolder().uri.fsPath;
    const keystrokes = Number(process.env.CODE_MEMORY_BENCH_KEYSTROKES ?? 2000);
    const files = Number(process.env.CODE_MEMORY_BENCH_FILES ?? 200);
    const switches = Number(process.env.CODE_MEMORY_BENCH_SWITCHES ?? 100);

    // Open the store first, so the numbers are capture's and not the first open's.
    await (await api.engine()).stats(null);
    const before = api.captureStats();
    const elu0 = performance.eventLoopUtilization();
    const t0 = performance.now();

    fs.mkdirSync(path.join(root, 'bench'), { recursive: true });
    const docs: vscode.Uri[] = [];
    for (let i = 0; i < 20; i++) {
      const uri = vscode.Uri.file(path.join(root, 'bench', `module${i}.ts`));
      fs.writeFileSync(uri.fsPath, `export function f${i}(x: number): number {\n  return x + ${i};\n}\n`);
      docs.push(uri);
    }
    // Editor switches (reads), keystrokes (edits), saves.
    for (let i = 0; i < switches; i++) await vscode.window.showTextDocument(docs[i % docs.length], { preview: false });
    const editor = await vscode.window.showTextDocument(docs[0]);
    for (let i = 0; i < keystrokes; i++) {
      await editor.edit((b) => b.insert(new vscode.Position(1, 0), i % 40 === 39 ? '\n' : 'x'), { undoStopBefore: false, undoStopAfter: false });
      if (i % 200 === 199) await editor.document.save();
    }
    await editor.document.save();
    // Files created and deleted by another process (the watcher).
    for (let i = 0; i < files; i++) fs.writeFileSync(path.join(root, 'bench', `gen${i}.txt`), `${i}\n`);
    await sleep(2000);
    for (let i = 0; i < files; i++) fs.rmSync(path.join(root, 'bench', `gen${i}.txt`));
    await sleep(2000);
    await api.flushCapture();
    await waitFor('the queue to drain', () => api.captureStats().drains > before.drains, 60_000);

    const wallMs = performance.now() - t0;
    const elu = performance.eventLoopUtilization(elu0);
    const after = api.captureStats();
    const calls = after.handlerCalls - before.handlerCalls;
    const handlerMs = after.handlerMs - before.handlerMs;
    const drains = after.drains - before.drains;
    const report = {
      bench: 'capture-host',
      vscode: vscode.version,
      activation_ms: Number(api.activationMs.toFixed(2)),
      heavy_modules_at_activation: api.heavyModulesAtActivation.length,
      workload: { keystrokes, editor_switches: switches, files_created_and_deleted: files },
      handler_calls: calls,
      events_recorded: after.events - before.events,
      handler_us_per_call: Number(((handlerMs / calls) * 1000).toFixed(2)),
      handler_max_ms: Number(after.handlerMaxMs.toFixed(3)),
      handler_total_ms: Number(handlerMs.toFixed(1)),
      drains,
      observations_written: after.observations - before.observations,
      drain_wall_ms_per_batch: Number(((after.drainMs - before.drainMs) / Math.max(1, drains)).toFixed(1)),
      bench_wall_ms: Math.round(wallMs),
      extension_host_busy_ms: Math.round(elu.active),
      capture_share_of_extension_host_busy: Number((handlerMs / elu.active).toFixed(4)),
      capture_share_of_wall: Number((handlerMs / wallMs).toFixed(5)),
      dropped: after.dropped - before.dropped,
      errors: after.errors - before.errors,
    };
    printLine(`CAPTURE_BENCH_JSON ${JSON.stringify(report)}`);
    assert.ok(calls > keystrokes, 'every keystroke went through the capture handler');
    assert.equal(report.errors, 0);
  });
});
