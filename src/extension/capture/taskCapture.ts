import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import type { CaptureRecorder } from './recorder';

/** The tail of a command's output kept for finding the first failing test (bytes of text). */
const OUTPUT_TAIL = 32_000;
/** Outputs of ended shell executions kept for the task that ran them. */
const RECENT_OUTPUTS = 8;

interface EndedOutput {
  terminal: string;
  output: string;
  endedAt: number;
}

/**
 * Outcomes: task, test-task and terminal command results (exit status and, through shell
 * integration where the host has it, the output's first failing test), and debug sessions.
 */
export class TaskCapture implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly outputs = new Map<vscode.TerminalShellExecution, { text: string }>();
  private readonly recent: EndedOutput[] = [];
  private readonly runningTasks = new Map<string, number>();
  private readonly debugStarts = new Map<string, number>();

  constructor(private readonly recorder: CaptureRecorder) {
    this.disposables.push(
      vscode.tasks.onDidStartTaskProcess((e) => this.runningTasks.set(e.execution.task.name, Date.now())),
      vscode.tasks.onDidEndTaskProcess((e) => this.onTaskEnd(e)),
      vscode.debug.onDidStartDebugSession((s) => this.onDebug(s, false)),
      vscode.debug.onDidTerminateDebugSession((s) => this.onDebug(s, true)),
    );
    // Shell integration events exist from VS Code 1.93; older hosts simply do not report commands.
    const w = vscode.window as Partial<typeof vscode.window>;
    if (typeof w.onDidStartTerminalShellExecution === 'function') this.disposables.push(w.onDidStartTerminalShellExecution((e) => this.onShellStart(e)));
    if (typeof w.onDidEndTerminalShellExecution === 'function') this.disposables.push(w.onDidEndTerminalShellExecution((e) => this.onShellEnd(e)));
  }

  private onShellStart(e: vscode.TerminalShellExecutionStartEvent): void {
    if (!this.recorder.active) return;
    const buffer = { text: '' };
    this.outputs.set(e.execution, buffer);
    // Read off the event path; only a bounded tail is kept.
    void (async () => {
      try {
        for await (const chunk of e.execution.read()) {
          buffer.text += chunk;
          if (buffer.text.length > OUTPUT_TAIL * 2) buffer.text = buffer.text.slice(-OUTPUT_TAIL);
        }
      } catch {
        // the terminal went away: keep what was read
      }
    })();
  }

  private takeOutput(execution: vscode.TerminalShellExecution): string | null {
    const buffer = this.outputs.get(execution);
    this.outputs.delete(execution);
    return buffer ? buffer.text.slice(-OUTPUT_TAIL) : null;
  }

  private onTaskEnd(e: vscode.TaskProcessEndEvent): void {
    const t0 = performance.now();
    const task = e.execution.task;
    const started = this.runningTasks.get(task.name) ?? 0;
    this.runningTasks.delete(task.name);
    if (!this.recorder.active) return;
    const scopeUri = typeof task.scope === 'object' ? task.scope.uri : undefined;
    const folder = this.recorder.folderFor(scopeUri);
    if (!folder) return;
    const ran = this.recent.filter((o) => o.endedAt >= started && o.terminal.includes(task.name)).pop();
    this.recorder.record(
      { kind: 'task', folder, name: task.name, source: task.source, group: task.group?.id ?? null, exitCode: e.exitCode ?? null, output: ran?.output ?? null, at: Date.now() },
      t0,
    );
  }

  private onShellEnd(e: vscode.TerminalShellExecutionEndEvent): void {
    const t0 = performance.now();
    const output = this.takeOutput(e.execution);
    if (!this.recorder.active) return;
    const terminal = e.terminal.name;
    // A task's own command is reported with the task, not as a terminal command of its own.
    if (/^Task - /.test(terminal) || [...this.runningTasks.keys()].some((name) => terminal.includes(name))) {
      this.recent.push({ terminal, output: output ?? '', endedAt: Date.now() });
      if (this.recent.length > RECENT_OUTPUTS) this.recent.shift();
      return;
    }
    const command = e.execution.commandLine.value.trim();
    if (!command) return;
    const cwd = e.execution.cwd;
    const folder = this.recorder.folderFor(cwd);
    if (!folder) return;
    const located = cwd ? this.recorder.locate(cwd) : undefined;
    this.recorder.record({ kind: 'terminal', folder, command, cwd: located?.path ?? null, exitCode: e.exitCode ?? null, output, at: Date.now() }, t0);
  }

  private onDebug(session: vscode.DebugSession, ended: boolean): void {
    const t0 = performance.now();
    const started = this.debugStarts.get(session.id);
    if (ended) this.debugStarts.delete(session.id);
    else this.debugStarts.set(session.id, Date.now());
    if (!this.recorder.active) return;
    const folder = this.recorder.folderFor(session.workspaceFolder?.uri);
    if (!folder) return;
    this.recorder.record({ kind: 'debug', folder, name: session.name, type: session.type, ended, ms: ended && started ? Date.now() - started : null, at: Date.now() }, t0);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
