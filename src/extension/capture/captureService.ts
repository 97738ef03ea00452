import { addToList } from '../../core/lists';
import * as vscode from 'vscode';
import { slashPath, workspaceRelativePath } from '../../core/capture/paths';
import { isSecretPath } from '../../core/capture/redact';
import type { Observation, Scope } from '../../core/model/records';
import type { EngineHost } from '../engineHost';
import type { ScopeService } from '../scopes';
import { affectsConfig, readConfig } from '../config';
import { CaptureQueue } from './captureQueue';
import type { CapturedLog } from './capturedLog';
import { EditorCapture } from './editorCapture';
import { enrichBatch, gitIgnoredEvents } from './enrich';
import type { CaptureEvent, EditEvent, FileEvent } from './events';
import { ExcludeMatcher } from './excludes';
import { FileCapture } from './fileCapture';
import { FolderLeases, LEASED_KINDS } from './folderLeases';
import { GitCapture } from './gitCapture';
import { SaveJournal } from './saveJournal';
import type { ObservationInput } from '../../core/api';
import { buildObservations, editGrowKey, editKey } from './observationBuilder';
import type { CaptureRecorder, Located } from './recorder';
import { linkTarget, relativePathIn, repositoryRootAbove } from './recorder';
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
  private readonly leases: FolderLeases;
  private readonly journal: SaveJournal;
  /** Per folder, the repository root above it (null: the folder is the root, or in none). */
  private readonly roots = new Map<string, string | null>();
  /** Per local folder, its real path (symbolic links resolved). */
  private readonly realFolders = new Map<string, string>();
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
    this.leases = new FolderLeases(() => this.engines.storeUri);
    this.journal = new SaveJournal(() => this.engines.storeUri);
    this.queue = new CaptureQueue((events) => this.write(events));
    this.updateState();
    this.editors = new EditorCapture(this, this.journal);
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
    if (wasActive && !this._active) {
      this.editors?.suspend();
      // Another window on the same folders records their file and checkout events meanwhile.
      void this.leases?.release();
    } else if (!wasActive && this._active) this.editors?.resume();
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
    const inFolder = relativePathIn(folder, uri);
    // Secret files (by any spelling) are never captured, not even their names.
    if (!inFolder || this.excludes.isExcluded(inFolder) || isSecretPath(inFolder)) return undefined;
    const root = this.rootOf(folder);
    const path = (root !== undefined && workspaceRelativePath(root, uri.path)) || inFolder;
    if (path !== inFolder && (this.excludes.isExcluded(path) || isSecretPath(path))) return undefined;
    if (folder.uri.scheme === 'file' && this.isExcludedTarget(folder, uri.fsPath)) return undefined;
    return { folder: folder.uri.toString(), path };
  }

  /**
   * A file reached through a symbolic link is judged by where it really is too: a link `app.cfg`
   * to `.env`, or a folder `conf` linked to `secrets/`, is that secret file. The target is taken
   * relative to the folder's real path when it is inside it, else whole.
   */
  private isExcludedTarget(folder: vscode.WorkspaceFolder, file: string): boolean {
    const target = linkTarget(file);
    if (target === undefined) return false;
    const key = folder.uri.toString();
    if (!this.realFolders.has(key)) this.realFolders.set(key, linkTarget(folder.uri.fsPath) ?? folder.uri.fsPath);
    const rel = workspaceRelativePath(this.realFolders.get(key) as string, target) ?? slashPath(target);
    return this.excludes.isExcluded(rel) || isSecretPath(rel);
  }

  /** The folder event paths are relative to: the repository root above the folder, else the folder. */
  baseOf(folder: string): string | undefined {
    const f = vscode.workspace.workspaceFolders?.find((w) => w.uri.toString() === folder);
    return f ? this.rootOf(f) : undefined;
  }

  private rootOf(folder: vscode.WorkspaceFolder): string | undefined {
    if (folder.uri.scheme !== 'file') return undefined;
    const key = folder.uri.toString();
    if (!this.roots.has(key)) this.roots.set(key, repositoryRootAbove(folder.uri.fsPath) ?? null);
    return this.roots.get(key) ?? undefined;
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
    // This window's saves are noted for the other windows by the time what it did is written.
    await this.journal.settled();
    await this.queue.flush();
  }

  /**
   * For closing the window: records the current focus period and unsaved edits, then writes
   * everything pending for at most `timeoutMs`. Capture takes no more events after.
   */
  async close(timeoutMs: number): Promise<void> {
    this.editors.checkpoint();
    await this.queue.drainAndDispose(timeoutMs);
    await this.leases.release();
  }

  private async write(events: CaptureEvent[]): Promise<number> {
    const engine = await this.engines.get();
    // What the exclude settings cover now stays out, though it was recorded before they changed.
    events = events.filter((e) => !this.excludedNow(e));
    // Build output and other files git ignores are not the user's work.
    const ignored = await gitIgnoredEvents(events, (folder) => this.baseOf(folder));
    if (ignored.size > 0) events = events.filter((e) => !ignored.has(e));
    events = await this.leasedOnly(events);
    events = await this.withoutWindowSaves(events);
    await this.rebaseEndedSessions(events, engine);
    const enrichment = await enrichBatch(events, (folder) => this.baseOf(folder));
    for (const details of enrichment.commits.values()) details.files = details.files.filter((f) => !this.excludes.isExcluded(f) && !isSecretPath(f));
    const groups = buildObservations(events, { ...enrichment, branchOf: (f) => this.git.branchOf(f) });
    const batches: CapturedBatch[] = [];
    /** The session each edit observation went to, by folder and grow key. */
    const sessionOf = new Map<string, string>();
    /** Edit observations not stored (captured before a forget, or refused), by folder and grow key. */
    const notStored = new Set<string>();
    let written = 0;
    for (const [folder, inputs] of groups) {
      // The folder's scope names the repository's default branch, if it knows it (records there hold project-wide).
      const folderScope = await this.scopes.scopeFor(folder);
      const { project } = folderScope;
      // Grouped by branch: the engine keeps one session per project and branch, and a new
      // branch ends the previous session (compressing it) on its own.
      const byBranch = new Map<string | undefined, typeof inputs>();
      for (const input of inputs) addToList(byBranch, input.branch, input);
      const observations: Observation[] = [];
      for (const [branch, list] of byBranch) {
        const stored = await this.observeEach(engine, list, branch ? { ...folderScope, branch } : folderScope);
        list.forEach((input, i) => {
          if (!input.grow_key) return;
          if (stored[i]) sessionOf.set(`${folder}\0${input.grow_key}`, stored[i]!.memory_session_id);
          else notStored.add(`${folder}\0${input.grow_key}`);
        });
        for (const o of stored) if (o) observations.push(o);
      }
      const scope = { project };
      written += observations.length;
      this.log.add(observations, scope);
      batches.push({ folder, project: scope.project, observations });
    }
    const restart = new Set<number>();
    for (const e of events) {
      if (e.kind !== 'edit' || e.work === undefined) continue;
      const key = `${e.folder}\0${editGrowKey(editKey(e))}`;
      const session = sessionOf.get(key);
      if (session) this.editors.noteSession(e.work, session);
      else if (notStored.has(key)) restart.add(e.work);
    }
    this.editors.restart(restart);
    if (batches.length > 0) this._onDidCapture.fire(batches);
    return written;
  }

  /** Whether an event names a file the exclude settings cover now (relative to its repository or to its folder). */
  private excludedNow(e: CaptureEvent): boolean {
    const paths = e.kind === 'rename' ? [e.from, e.path] : 'path' in e ? [e.path] : [];
    if (paths.length === 0) return false;
    const f = vscode.workspace.workspaceFolders?.find((w) => w.uri.toString() === e.folder);
    const base = f ? this.rootOf(f) : undefined;
    return paths.some((p) => {
      if (this.excludes.isExcluded(p)) return true;
      const inFolder = f && base !== undefined ? workspaceRelativePath(f.uri.path, `${slashPath(base)}/${p}`) : undefined;
      return inFolder !== undefined && this.excludes.isExcluded(inFolder);
    });
  }

  /**
   * Writes `inputs` in one call; where the engine refuses it (it refuses a whole call for one input
   * it cannot store), writes them one by one, so that one bad observation does not lose the batch:
   * what is refused is left out (null at its index) and counted as an error of the queue. Where
   * none of them can be written, the store is failing rather than an input: that error is thrown,
   * and the queue retries the batch.
   */
  private async observeEach(engine: Awaited<ReturnType<EngineHost['get']>>, inputs: ObservationInput[], scope: Scope): Promise<(Observation | null)[]> {
    try {
      return await engine.capture(inputs, scope);
    } catch (err) {
      if (inputs.length < 2) throw err;
      const out: (Observation | null)[] = [];
      const refused: string[] = [];
      for (const input of inputs) {
        try {
          out.push((await engine.capture([input], scope))[0] ?? null);
        } catch (e) {
          out.push(null);
          refused.push(`${input.type}: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
      if (refused.length === inputs.length) throw err;
      const stats = this.queue.stats;
      stats.errors += refused.length;
      stats.lastError = `observation refused: ${refused[refused.length - 1]}`;
      for (const r of refused) this.log.note(`Capture could not store an observation (${r}); the rest of its batch was stored.`);
      return out;
    }
  }

  /**
   * A repository's checkouts are recorded by the window ranked first on it, and a file event by
   * the first window that watches the file (see folderLeases.ts).
   */
  private async leasedOnly(events: CaptureEvent[]): Promise<CaptureEvent[]> {
    const keys = new Map<string, string>();
    for (const e of events) if (LEASED_KINDS.has(e.kind) && !keys.has(e.folder)) keys.set(e.folder, this.leaseKeyOf(e.folder));
    const ahead = new Map<string, (readonly string[] | null)[]>();
    for (const key of new Set(keys.values())) ahead.set(key, await this.leases.ranksBefore(key, this.foldersIn(key)));
    return events.filter((e) => {
      if (!LEASED_KINDS.has(e.kind)) return true;
      const before = ahead.get(keys.get(e.folder) as string) ?? [];
      if (before.length === 0) return true;
      return e.kind !== 'checkout' && !before.some((folders) => FolderLeases.watches(folders, (e as FileEvent).path));
    });
  }

  /**
   * A change on disk that is a save made in another window of this product (which stores it as
   * its edit; saveJournal.ts) is left out: this window's watcher cannot tell it from a write by
   * another process, which is kept. The file is compared as it is now, when the batch is written.
   */
  private async withoutWindowSaves(events: CaptureEvent[]): Promise<CaptureEvent[]> {
    const changes: { event: CaptureEvent; file: string; at: number }[] = [];
    for (const e of events) {
      const file = e.kind === 'disk_change' ? this.fileOf(e.folder, e.path) : undefined;
      if (file !== undefined) changes.push({ event: e, file, at: e.at });
    }
    if (changes.length === 0) return events;
    const saved = await this.journal.savedByAnotherWindow(changes);
    const out = new Set(changes.filter((_, i) => saved[i]).map((c) => c.event));
    return out.size === 0 ? events : events.filter((e) => !out.has(e));
  }

  /** The local file of an event's path (relative to the folder's repository root, else the folder). */
  private fileOf(folder: string, path: string): string | undefined {
    const f = vscode.workspace.workspaceFolders?.find((w) => w.uri.toString() === folder);
    if (!f || f.uri.scheme !== 'file') return undefined;
    return vscode.Uri.joinPath(vscode.Uri.file(this.rootOf(f) ?? f.uri.fsPath), path).fsPath;
  }

  /** The repository a folder's leased events belong to: its root above the folder, else the folder. */
  private leaseKeyOf(folder: string): string {
    const base = this.baseOf(folder);
    return base !== undefined ? vscode.Uri.file(base).toString() : folder;
  }

  /** The workspace folders of this window in the repository `key`, as paths in it ('' for its root). */
  private foldersIn(key: string): string[] {
    const out: string[] = [];
    for (const f of vscode.workspace.workspaceFolders ?? []) {
      const folder = f.uri.toString();
      if (this.leaseKeyOf(folder) !== key) continue;
      const base = this.baseOf(folder);
      out.push(base !== undefined ? (workspaceRelativePath(base, f.uri.path) ?? '') : '');
    }
    return out.length > 0 ? out : [''];
  }

  /**
   * Edits of a file whose earlier edits went to a session that has ended since, without this
   * window ending it (the engine ends a session after idle time): the new session gets only
   * what changed after the ended one last stored the file, not the ended session's change again.
   */
  private async rebaseEndedSessions(events: CaptureEvent[], engine: Awaited<ReturnType<EngineHost['get']>>): Promise<void> {
    const edits = events.filter((e): e is EditEvent => e.kind === 'edit' && e.session !== undefined && e.work !== undefined && e.recorded !== undefined);
    if (edits.length === 0) return;
    const current = new Map<string, string>();
    for (const folder of new Set(edits.map((e) => e.folder))) {
      const { project } = await this.scopes.scopeFor(folder);
      current.set(folder, await engine.currentSessionId({ project }));
    }
    // The first stale event of a work holds the text the ended session last stored.
    const rebased = new Map<number, string | null>();
    for (const e of edits) {
      if (e.session === current.get(e.folder)) continue;
      if (!rebased.has(e.work!)) rebased.set(e.work!, this.editors.rebase(e.work!, e.session!, e.recorded!));
      e.before = rebased.get(e.work!) ?? null;
      e.session = undefined;
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    void this.leases.release();
    this._onDidChangeState.dispose();
    this._onDidCapture.dispose();
  }
}
