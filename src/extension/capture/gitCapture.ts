import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import { isSameOrInside } from '../../core/capture/paths';
import type { GitApi, GitExtension, GitRepository } from './gitApi';
import type { CaptureRecorder } from './recorder';

export interface HeadState {
  branch: string | null;
  sha: string | null;
  repoRoot: string;
}

export interface BranchChange {
  folder: string;
  from: string | null;
  to: string | null;
}

/**
 * Branch and commit per workspace folder, from the built-in Git extension (HEAD changes,
 * commits, checkouts). Where that extension is missing or disabled, a watcher on .git/HEAD
 * and simple-git read the same facts.
 */
export class GitCapture implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly heads = new Map<string, HeadState>();
  private readonly _onDidChangeBranch = new vscode.EventEmitter<BranchChange>();
  readonly onDidChangeBranch = this._onDidChangeBranch.event;
  private readonly _onDidChangeHead = new vscode.EventEmitter<string>();
  /** Fires with the folder whose HEAD (branch or commit) changed. */
  readonly onDidChangeHead = this._onDidChangeHead.event;
  /** Resolves once the initial HEAD of every folder is known (or could not be read). */
  readonly ready: Promise<void>;
  private source: 'git-extension' | 'simple-git' | 'none' = 'none';

  constructor(private readonly recorder: CaptureRecorder) {
    this.ready = this.start().catch(() => undefined);
  }

  get via(): string {
    return this.source;
  }

  branchOf(folder: string): string | null {
    return this.heads.get(folder)?.branch ?? null;
  }

  headOf(folder: string): HeadState | undefined {
    return this.heads.get(folder);
  }

  private async start(): Promise<void> {
    const api = await this.gitExtensionApi();
    if (api) {
      this.source = 'git-extension';
      if (api.state !== 'initialized') {
        await new Promise<void>((resolve) => {
          const sub = api.onDidChangeState((s) => {
            if (s === 'initialized') {
              sub.dispose();
              resolve();
            }
          });
          // The Git extension may never initialise (no git binary): fall through after a while.
          setTimeout(resolve, 10_000).unref?.();
        });
      }
      for (const repo of api.repositories) this.watchRepository(repo);
      this.disposables.push(api.onDidOpenRepository((repo) => this.watchRepository(repo)));
      if (api.repositories.length > 0 || !(await this.anyFolderHasGit())) return;
    }
    this.source = 'simple-git';
    await this.startFallback();
  }

  private async gitExtensionApi(): Promise<GitApi | undefined> {
    const ext = vscode.extensions.getExtension<GitExtension>('vscode.git');
    if (!ext) return undefined;
    try {
      const exports = ext.isActive ? ext.exports : await ext.activate();
      return exports.enabled ? exports.getAPI(1) : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The workspace folders on the repository: the one it is in, else every folder inside it (the
   * packages of a monorepo opened one folder each). All of them are on its branch.
   */
  private foldersOfRepo(root: vscode.Uri): string[] {
    const folder = vscode.workspace.getWorkspaceFolder(root);
    if (folder) return [folder.uri.toString()];
    return (vscode.workspace.workspaceFolders ?? []).filter((f) => isSameOrInside(root.path, f.uri.path)).map((f) => f.uri.toString());
  }

  private watchRepository(repo: GitRepository): void {
    const folders = this.foldersOfRepo(repo.rootUri);
    if (folders.length === 0) return;
    const read = (): HeadState => ({ branch: repo.state.HEAD?.name ?? null, sha: repo.state.HEAD?.commit ?? null, repoRoot: repo.rootUri.fsPath });
    for (const folder of folders) {
      this.heads.set(folder, read());
      this._onDidChangeHead.fire(folder);
    }
    // Its commits and checkouts are recorded once, under the first folder: they share one project.
    this.disposables.push(repo.state.onDidChange(() => folders.forEach((folder, i) => this.update(folder, read(), i === 0))));
  }

  /** Called on every HEAD report; records a checkout or a commit when something moved (where `record`). */
  private update(folder: string, next: HeadState, record = true): void {
    const t0 = performance.now();
    const prev = this.heads.get(folder);
    if (prev && prev.branch === next.branch && prev.sha === next.sha) return;
    this.heads.set(folder, next);
    this._onDidChangeHead.fire(folder);
    if (!prev || (prev.sha === null && prev.branch === null)) return;
    if (prev.branch !== next.branch) {
      if (record && this.recorder.active) {
        this.recorder.record({ kind: 'checkout', folder, from: prev.branch, branch: next.branch, sha: next.sha, at: Date.now() }, t0);
      }
      this._onDidChangeBranch.fire({ folder, from: prev.branch, to: next.branch });
    } else if (record && next.sha && this.recorder.active) {
      this.recorder.record({ kind: 'commit', folder, sha: next.sha, branch: next.branch, repoRoot: next.repoRoot, from: prev.sha, at: Date.now() }, t0);
    }
  }

  private async anyFolderHasGit(): Promise<boolean> {
    for (const f of vscode.workspace.workspaceFolders ?? []) {
      try {
        await vscode.workspace.fs.stat(vscode.Uri.joinPath(f.uri, '.git'));
        return true;
      } catch {
        // not a repository root
      }
    }
    return false;
  }

  private async startFallback(): Promise<void> {
    const { simpleGit } = await import('simple-git');
    for (const f of vscode.workspace.workspaceFolders ?? []) {
      if (f.uri.scheme !== 'file') continue;
      const folder = f.uri.toString();
      const git = simpleGit({ baseDir: f.uri.fsPath });
      const read = async (): Promise<HeadState | undefined> => {
        try {
          const root = (await git.revparse(['--show-toplevel'])).trim();
          const sha = (await git.revparse(['HEAD']).catch(() => '')).trim() || null;
          const branch = (await git.raw(['symbolic-ref', '--quiet', '--short', 'HEAD']).catch(() => '')).trim() || null;
          return { branch, sha, repoRoot: root };
        } catch {
          return undefined;
        }
      };
      const first = await read();
      if (!first) continue;
      this.heads.set(folder, first);
      this._onDidChangeHead.fire(folder);
      const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(f, '.git/{HEAD,logs/HEAD}'));
      const onChange = async (): Promise<void> => {
        const next = await read();
        if (next) this.update(folder, next);
      };
      this.disposables.push(watcher, watcher.onDidChange(onChange), watcher.onDidCreate(onChange));
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this._onDidChangeBranch.dispose();
    this._onDidChangeHead.dispose();
  }
}
