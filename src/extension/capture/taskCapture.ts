import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import type { CaptureRecorder } from './recorder';

/** Task, test-task and terminal command outcomes, where this VS Code exposes them. */
export class TaskCapture implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly recorder: CaptureRecorder) {
    this.disposables.push(vscode.tasks.onDidEndTaskProcess((e) => this.onTaskEnd(e)));
    // Shell integration events exist from VS Code 1.93; older hosts simply do not report commands.
    const onShellEnd = (vscode.window as Partial<typeof vscode.window>).onDidEndTerminalShellExecution;
    if (typeof onShellEnd === 'function') this.disposables.push(onShellEnd((e) => this.onShellEnd(e)));
  }

  private onTaskEnd(e: vscode.TaskProcessEndEvent): void {
    const t0 = performance.now();
    if (!this.recorder.active) return;
    const task = e.execution.task;
    const scopeUri = typeof task.scope === 'object' ? task.scope.uri : undefined;
    const folder = this.recorder.folderFor(scopeUri);
    if (!folder) return;
    this.recorder.record(
      { kind: 'task', folder, name: task.name, source: task.source, group: task.group?.id ?? null, exitCode: e.exitCode ?? null, at: Date.now() },
      t0,
    );
  }

  private onShellEnd(e: vscode.TerminalShellExecutionEndEvent): void {
    const t0 = performance.now();
    if (!this.recorder.active) return;
    const command = e.execution.commandLine.value.trim();
    if (!command) return;
    const cwd = e.execution.cwd;
    const folder = this.recorder.folderFor(cwd);
    if (!folder) return;
    const located = cwd ? this.recorder.locate(cwd) : undefined;
    this.recorder.record({ kind: 'terminal', folder, command, cwd: located?.path ?? null, exitCode: e.exitCode ?? null, at: Date.now() }, t0);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
