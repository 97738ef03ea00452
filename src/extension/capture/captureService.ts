import * as vscode from 'vscode';
import { isSecretPath } from '../../core/capture/redact';
import type { Observation } from '../../core/model/records';
import type { EngineHost } from '../engineHost';
import type { ScopeService } from '../scopes';
import { affectsConfig, readConfig } from '../config';
import { CaptureQueue } from './captureQueue';
import type { CapturedLog } from './capturedLog';
import { EditorCapture } from './editorCapture';
import { enrichBatch, gitIgnoredEvents } from './enrich';
import type { CaptureEvent } from './events';
import { ExcludeMatcher } from './excludes';
import { FileCapture } from './fileCapture';
import { GitCapture } from './gitCapture';
import { buildObservations } from './observationBuilder';
import type { CaptureRecorder, Located } from './recorder';
import { relativePathIn } from './recorder';
import { TaskCapture } from './taskCapture';

export type CaptureState = 'capturing' | 'paused' | 'disabled' | 'untrusted';

const PAUSED_KEY = 'codeMemory.capturePaused';

export interface CapturedBatch {
  folder: string;
  project: string;
  observations: Observation[];
}

/**
 * Capture: the sources (editors, files, git, tasks/terminal) push raw events through this
 * recorder into one queue; the queue's drain enriches them, builds observations and stores
 * them in one write per project and batch.
 */
export class CaptureService implements CaptureRecorder, vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  readonly queue: CaptureQueue;
  readonly editors: EditorCapture;
  readonly git: GitCapture;
  private excludes: ExcludeMatcher;
  private _active = false;
  private _state: CaptureState = 'capturing';
  private readonly _onDidChangeState = new vscode.EventEmitter<CaptureState>();
  readonly onDidChangeState = this._onDidChangeState.event;
  private readonly _onDidCapture = new vscode.EventEmitter<CapturedBatch[]>();
  readonly onDidCapture = this._onDidCapture.event;
  /** Folders with captured events since their session last ended. */
  readonly activeFolders = new Set<string>();
  lastActivityAt = Date.now();

  constructor(
    private readonly engines: EngineHost,
    private readonly scopes: ScopeService,
    private readonly log: CapturedLog,
    private readonly memento: vscode.Memento,
  ) {
    this.excludes = new ExcludeMatcher(readConfig().exclude);
    this.queue = new CaptureQueue((events) => this.write(events));
    this.updateState();
    this.editors = new EditorCapture(this);
    this.git = new GitCapture(this);
    this.disposables.push(
      this.queue,
      this.editors,
      this.git,
      new FileCapture(this),
      new TaskCapture(this),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.updateState()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (affectsConfig(e, 'capture')) {
          this.excludes = new ExcludeMatcher(readConfig().exclude);
          this.updateState();
        }
      }),
    );
  }

  get active(): boolean {
    return this._active;
  }

  get state(): CaptureState {
    return this._state;
  }

  get paused(): boolean {
    return this.memento.get<boolean>(PAUSED_KEY, false);
  }

  async setPaused(paused: boolean): Promise<void> {
    if (paused) this.editors.checkpoint();
    await this.memento.update(PAUSED_KEY, paused);
    this.updateState();
    this.log.note(paused ? 'Capture paused.' : 'Capture resumed.');
  }

  private updateState(): void {
    const state: CaptureState = !vscode.workspace.isTrusted
      ? 'untrusted'
      : !readConfig().captureEnabled
        ? 'disabled'
        : this.paused
          ? 'paused'
          : 'capturing';
    const changed = state !== this._state;
    const wasActive = this._active;
    this._state = state;
    this._active = state === 'capturing';
    if (!this._active && state !== 'paused') this.queue.clear();
    // Nothing done while capture is inactive may reach the store: baselines and the focus
    // timer from before are dropped, and work resumes from the editors as they are now.
    if (wasActive && !this._active) this.editors?.suspend();
    else if (!wasActive && this._active) this.editors?.resume();
    void vscode.commands.executeCommand('setContext', 'codeMemory.capturePaused', state === 'paused');
    if (changed) this._onDidChangeState.fire(state);
  }

  folderFor(uri: vscode.Uri | undefined): string | undefined {
    const folder = (uri && vscode.workspace.getWorkspaceFolder(uri)) || vscode.workspace.workspaceFolders?.[0];
    return folder?.uri.toString();
  }

  locate(uri: vscode.Uri): Located | undefined {
    if (uri.scheme !== 'file' && uri.scheme !== 'vscode-remote') return undefined;
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    if (!folder) return undefined;
    const path = relativePathIn(folder, uri);
    // Secret files (by any spelling) are never captured, not even their names.
    if (!path || this.excludes.isExcluded(path) || isSecretPath(path)) return undefined;
    return { folder: folder.uri.toString(), path };
  }

  record(event: CaptureEvent, startedAt: number): void {
    if (!this._active) return;
    // The branch when it happened, not when the batch is written (a checkout may come between).
    if (event.branch === undefined && this.git) event.branch = this.git.branchOf(event.folder);
    this.lastActivityAt = Date.now();
    this.activeFolders.add(event.folder);
    this.queue.push(event, startedAt);
  }

  account(startedAt: number): void {
    this.queue.account(startedAt);
  }

  /** Records the current focus period and unsaved edits, then writes everything pending. */
  async checkpoint(): Promise<void> {
    this.editors.checkpoint();
    await this.queue.flush();
  }

  /**
   * For closing the window: records the current focus period and unsaved edits, then writes
   * everything pending for at most `timeoutMs`. Capture takes no more events after.
   */
  async close(timeoutMs: number): Promise<void> {
    this.editors.checkpoint();
    await this.queue.drainAndDispose(timeoutMs);
  }

  private async write(events: CaptureEvent[]): Promise<number> {
    const engine = await this.engines.get();
    // Build output and other files git ignores are not the user's work.
    const ignored = await gitIgnoredEvents(events);
    if (ignored.size > 0) events = events.filter((e) => !ignored.has(e));
    const enrichment = await enrichBatch(events);
    for (const details of enrichment.commits.values()) details.files = details.files.filter((f) => !this.excludes.isExcluded(f) && !isSecretPath(f));
    const groups = buildObservations(events, { ...enrichment, branchOf: (f) => this.git.branchOf(f) });
    const batches: CapturedBatch[] = [];
    let written = 0;
    for (const [folder, inputs] of groups) {
      const { project } = await this.scopes.scopeFor(folder);
      // Grouped by branch: the engine keeps one session per project and branch, and a new
      // branch ends the previous session (compressing it) on its own.
      const byBranch = new Map<string | undefined, typeof inputs>();
      for (const input of inputs) byBranch.set(input.branch, [...(byBranch.get(input.branch) ?? []), input]);
      const observations: Observation[] = [];
      for (const [branch, list] of byBranch) observations.push(...(await engine.observe(list, branch ? { project, branch } : { project })));
      const scope = { project };
      written += observations.length;
      this.log.add(observations, scope);
      batches.push({ folder, project: scope.project, observations });
    }
    if (batches.length > 0) this._onDidCapture.fire(batches);
    return written;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this._onDidChangeState.dispose();
    this._onDidCapture.dispose();
  }
}
