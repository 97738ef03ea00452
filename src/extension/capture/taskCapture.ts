import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import { OUTPUT_TAIL, outputTail } from '../../core/capture/testOutput';
import type { CaptureRecorder } from './recorder';

/**
 * Read-only navigation a terminal is full of: not outcomes. One simple command only (no `;`,
 * `&&`, pipes or redirections), so `cd src && npm test` is still recorded.
 */
const NAVIGATION = /^(?:ls|ll|la|dir|cd|pushd|popd|pwd|clear|cls|history|exit|git\s+status)(?:\s+[^;&|<>`$()]*)?$/;

/** How long a task's end waits for the output of its command (the two events race). */
const OUTPUT_WAIT_MS = 3000;

interface TaskRun {
  /** The task's execution: the same object in its start and end events. */
  execution: vscode.TaskExecution;
  name: string;
  /** Output of the task's command, once its shell execution ended. */
  output: string | null;
  /** Set when the task ended before its command's output arrived. */
  onOutput?: () => void;
}

/** Which folder (or workspace, or global scope) a task belongs to. */
function scopeKey(task: vscode.Task): string {
  return typeof task.scope === 'object' ? task.scope.uri.toString() : String(task.scope);
}

/**
 * Outcomes: task, test-task and terminal command results (exit status and, through shell
 * integration where the host has it, the output's first failing test), and debug sessions.
 */
export class TaskCapture implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly outputs = new Map<vscode.TerminalShellExecution, { text: string; pid: Promise<number | undefined> }>();
  /** Task runs by the process id of their terminal's shell, which is the task's process id. */
  private readonly tasks = new Map<number, TaskRun>();
  /** Shell process ids of terminals that ran a task: a reused task terminal keeps its first one. */
  private readonly taskShells = new Set<number>();
  private readonly debugStarts = new Map<string, number>();

  constructor(private readonly recorder: CaptureRecorder) {
    this.disposables.push(
      vscode.tasks.onDidStartTaskProcess((e) => {
        if (e.processId === undefined) return;
        this.tasks.set(e.processId, { execution: e.execution, name: e.execution.task.name, output: null });
        this.taskShells.add(e.processId);
        if (this.taskShells.size > 100) this.taskShells.delete(this.taskShells.values().next().value as number);
      }),
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
    const buffer = { text: '', pid: Promise.resolve(e.terminal.processId).catch(() => undefined) };
    this.outputs.set(e.execution, buffer);
    // Read off the event path; only a bounded tail is kept.
    void (async () => {
      try {
        for await (const chunk of e.execution.read()) {
          buffer.text += chunk;
          if (buffer.text.length > OUTPUT_TAIL * 2) buffer.text = outputTail(buffer.text);
        }
      } catch {
        // the terminal went away: keep what was read
      }
    })();
  }

  private onTaskEnd(e: vscode.TaskProcessEndEvent): void {
    const t0 = performance.now();
    const task = e.execution.task;
    const pid = this.runOf(e.execution);
    const run = pid !== undefined ? this.tasks.get(pid) : undefined;
    const record = (startedAt = t0): void => {
      if (pid !== undefined) this.tasks.delete(pid);
      if (!this.recorder.active) return;
      const scopeUri = typeof task.scope === 'object' ? task.scope.uri : undefined;
      const folder = this.recorder.folderFor(scopeUri);
      if (!folder) return;
      this.recorder.record(
        { kind: 'task', folder, name: task.name, source: task.source, group: task.group?.id ?? null, exitCode: e.exitCode ?? null, output: run?.output ?? null, at: Date.now() },
        startedAt,
      );
    };
    // The task's command output may still be on its way (shell integration reports it apart).
    if (!run || run.output !== null || this.outputs.size === 0) return record();
    // Deferred: the handler's cost is what recording costs then, not the wait.
    const timer = setTimeout(() => record(performance.now()), OUTPUT_WAIT_MS);
    run.onOutput = () => {
      clearTimeout(timer);
      record(performance.now());
    };
  }

  /**
   * The process id of the run of this execution: the same execution object (or task object) as
   * at its start. Tasks of one name run in several folders (`npm: test` in each), so a name alone
   * tells them apart only within its own folder.
   */
  private runOf(execution: vscode.TaskExecution): number | undefined {
    const runs = [...this.tasks.entries()];
    const same =
      runs.find(([, r]) => r.execution === execution) ??
      runs.find(([, r]) => r.execution.task === execution.task) ??
      runs.find(([, r]) => r.name === execution.task.name && scopeKey(r.execution.task) === scopeKey(execution.task));
    return same?.[0];
  }

  private async onShellEnd(e: vscode.TerminalShellExecutionEndEvent): Promise<void> {
    const t0 = performance.now();
    const buffer = this.outputs.get(e.execution);
    this.outputs.delete(e.execution);
    const output = buffer ? outputTail(buffer.text) : null;
    // A task's own command is reported with the task, not as a terminal command of its own.
    const pid = buffer ? await buffer.pid : undefined;
    // A reused task terminal: the latest task still waiting for output, of the command's folder where told.
    const cwdFolder = e.execution.cwd ? vscode.workspace.getWorkspaceFolder(e.execution.cwd)?.uri.toString() : undefined;
    const unserved = [...this.tasks.values()].filter((r) => r.output === null);
    const inFolder = cwdFolder === undefined ? [] : unserved.filter((r) => scopeKey(r.execution.task) === cwdFolder);
    const waiting = inFolder.length > 0 ? inFolder : unserved;
    const run = pid === undefined ? undefined : (this.tasks.get(pid) ?? (this.taskShells.has(pid) ? waiting[waiting.length - 1] : undefined));
    if (run) {
      run.output = output ?? '';
      run.onOutput?.();
      return;
    }
    if (!this.recorder.active) return;
    const command = e.execution.commandLine.value.trim();
    if (!command || NAVIGATION.test(command)) return;
    const cwd = e.execution.cwd;
    // A command run outside every workspace folder belongs to none of them.
    if (cwd && !vscode.workspace.getWorkspaceFolder(cwd)) return;
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
