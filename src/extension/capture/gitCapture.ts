import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import { isSameOrInside } from '../../core/capture/paths';
import type { GitApi, GitExtension, GitRepository } from './gitApi';
import { repositoryRootAbove, type CaptureRecorder } from './recorder';

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

/** A commit HEAD's reflog shows was made: its SHA, HEAD before it, and the branch it was made on. */
export interface ReflogCommit {
  sha: string;
  from: string;
  branch: string | null;
}

/** Bounds on reading HEAD's reflog: the bytes read from its end, and the entries walked back. */
const REFLOG_TAIL_BYTES = 128 * 1024;
const REFLOG_MAX_ENTRIES = 200;
/** Reflog messages of entries that made a commit on top of the HEAD before them. */
const MADE_A_COMMIT = /^((commit( \([a-z-]+\))?|cherry-pick|revert):|merge [^:]*: Merge made by)/;
const CHECKOUT = /^checkout: moving from (.+) to (.+)$/;
const FULL_SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** The git directory of the working tree at `root`: its `.git` folder, or where a `.git` file (worktree, submodule) points. */
export function gitDirOf(root: string): string | undefined {
  const dotGit = nodePath.join(root, '.git');
  try {
    if (fs.statSync(dotGit).isDirectory()) return dotGit;
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(dotGit, 'utf8'));
    return m ? nodePath.resolve(root, m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The commits made while HEAD went from `from` to `to` (oldest first), from the end of HEAD's
 * reflog: the entries after the last one that left `from`, up to the last that reached `to`.
 * Checkouts, pulls, resets and rebases in between are not commits and are skipped (with
 * `onlyCommits`, any of them makes the answer empty). Empty where the reflog is missing or does
 * not reach back to `from` within its bounds.
 */
export function commitsInReflog(gitDir: string, from: string, to: string, branchAtEnd: string | null, onlyCommits = false): ReflogCommit[] {
  let text: string;
  try {
    const fd = fs.openSync(nodePath.join(gitDir, 'logs', 'HEAD'), 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const length = Math.min(size, REFLOG_TAIL_BYTES);
      const buf = Buffer.alloc(length);
      fs.readSync(fd, buf, 0, length, size - length);
      text = buf.toString('utf8');
      // A partly read first line is dropped.
      if (length < size) text = text.slice(text.indexOf('\n') + 1);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return [];
  }
  const entries = text
    .split('\n')
    .filter(Boolean)
    .slice(-REFLOG_MAX_ENTRIES)
    .map((line) => {
      const tab = line.indexOf('\t');
      const [old, sha] = line.slice(0, tab < 0 ? line.length : tab).split(' ');
      return { old, sha, message: tab < 0 ? '' : line.slice(tab + 1).trim() };
    });
  let i = entries.length - 1;
  while (i >= 0 && entries[i].sha !== to) i--;
  const found: ReflogCommit[] = [];
  // Walking back, the branch a commit was made on is the one the next checkout after it left.
  let branch = branchAtEnd;
  for (; i >= 0; i--) {
    const e = entries[i];
    if (MADE_A_COMMIT.test(e.message)) found.push({ sha: e.sha, from: e.old, branch });
    else if (onlyCommits) return [];
    const checkout = CHECKOUT.exec(e.message);
    if (checkout) branch = FULL_SHA.test(checkout[1]) ? null : checkout[1];
    if (e.old === from) return found.reverse();
  }
  return [];
}

/**
 * Branch and commit per workspace folder, from the built-in Git extension (HEAD changes,
 * commits, checkouts). A folder's repository is the one whose root is the folder or above it
 * (a package of a monorepo), never one nested inside it (a submodule, a vendored clone). Where
 * that extension is missing, disabled or has not opened a folder's repository, a watcher on
 * that repository's HEAD and simple-git read the same facts.
 */
export class GitCapture implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly heads = new Map<string, HeadState>();
  /** Repositories the Git extension reported, as watched. */
  private readonly repositories: GitRepository[] = [];
  /** Folders whose HEAD the simple-git fallback reads (the Git extension has no repository of theirs). */
  private readonly fallbackFolders = new Set<string>();
  private readonly _onDidChangeBranch = new vscode.EventEmitter<BranchChange>();
  readonly onDidChangeBranch = this._onDidChangeBranch.event;
  private readonly _onDidChangeHead = new vscode.EventEmitter<string>();
  /** Fires with the folder whose HEAD (branch or commit) changed. */
  readonly onDidChangeHead = this._onDidChangeHead.event;
  /** Resolves once the initial HEAD of every folder is known (or could not be read). */
  readonly ready: Promise<void>;
  private source: 'git-extension' | 'simple-git' | 'git-extension and simple-git' | 'none' = 'none';

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
    } else {
      this.source = 'simple-git';
    }
    // Folders in a repository the Git extension has not opened (it is disabled, or asks before
    // opening a repository above the folder): their HEAD is read by simple-git.
    const rest = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file' && !this.ownerOf(f.uri) && inSomeRepository(f.uri.fsPath));
    if (rest.length === 0) return;
    if (await this.startFallback(rest)) this.source = this.repositories.length > 0 ? 'git-extension and simple-git' : 'simple-git';
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
   * The repository a folder is on: of those the Git extension reported, the innermost whose root
   * is the folder or above it. A repository inside the folder (a submodule, a vendored clone) is
   * not the folder's: its HEAD is not the folder's branch.
   */
  private ownerOf(folder: vscode.Uri): GitRepository | undefined {
    let best: GitRepository | undefined;
    for (const repo of this.repositories) {
      if (!isSameOrInside(repo.rootUri.path, folder.path)) continue;
      if (!best || repo.rootUri.path.length > best.rootUri.path.length) best = repo;
    }
    return best;
  }

  /**
   * The workspace folders on the repository: the one it is the root of, or every folder inside
   * it (the packages of a monorepo opened one folder each). All of them are on its branch.
   */
  private foldersOfRepo(repo: GitRepository): string[] {
    return (vscode.workspace.workspaceFolders ?? []).filter((f) => this.ownerOf(f.uri) === repo).map((f) => f.uri.toString());
  }

  private watchRepository(repo: GitRepository): void {
    if (this.repositories.includes(repo)) return;
    this.repositories.push(repo);
    const read = (): HeadState => ({ branch: repo.state.HEAD?.name ?? null, sha: repo.state.HEAD?.commit ?? null, repoRoot: repo.rootUri.fsPath });
    for (const folder of this.foldersOfRepo(repo)) {
      this.fallbackFolders.delete(folder);
      this.heads.set(folder, read());
      this._onDidChangeHead.fire(folder);
    }
    // Its commits and checkouts are recorded once, under the first folder: they share one project.
    this.disposables.push(repo.state.onDidChange(() => this.foldersOfRepo(repo).forEach((folder, i) => this.update(folder, read(), i === 0))));
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
        const at = Date.now();
        this.recorder.record({ kind: 'checkout', folder, from: prev.branch, branch: next.branch, sha: next.sha, at }, t0);
        // HEAD moved too: commits made after the checkout (`git checkout -b x && git commit`) in the same report.
        if (prev.sha && next.sha && prev.sha !== next.sha) {
          const gitDir = gitDirOf(next.repoRoot);
          for (const c of gitDir ? commitsInReflog(gitDir, prev.sha, next.sha, next.branch) : []) {
            this.recorder.record({ kind: 'commit', folder, sha: c.sha, branch: c.branch, repoRoot: next.repoRoot, from: c.from, at }, t0);
          }
        }
      }
      this._onDidChangeBranch.fire({ folder, from: prev.branch, to: next.branch });
    } else if (record && next.sha && this.recorder.active) {
      const at = Date.now();
      // Several commits in one report (`git commit` twice, a script): each is a commit, not HEAD
      // moving by several. Anything else in between (a pull, a reset) is left to one HEAD move.
      const gitDir = prev.sha ? gitDirOf(next.repoRoot) : undefined;
      const made = gitDir && prev.sha ? commitsInReflog(gitDir, prev.sha, next.sha, next.branch, true) : [];
      if (made.length > 1) {
        for (const c of made) this.recorder.record({ kind: 'commit', folder, sha: c.sha, branch: next.branch, repoRoot: next.repoRoot, from: c.from, at }, t0);
      } else {
        this.recorder.record({ kind: 'commit', folder, sha: next.sha, branch: next.branch, repoRoot: next.repoRoot, from: prev.sha, at }, t0);
      }
    }
  }

  /**
   * Reads HEAD of each folder's repository (the folder's own, or the one above it) with
   * simple-git when that repository's HEAD or HEAD reflog changes. Folders of one repository
   * share one watcher, and its commits and checkouts are recorded under the first of them.
   * True where some folder's HEAD could be read.
   */
  private async startFallback(folders: readonly vscode.WorkspaceFolder[]): Promise<boolean> {
    const { simpleGit } = await import('simple-git');
    const repos = new Map<string, { gitDir: string; folders: vscode.WorkspaceFolder[] }>();
    for (const f of folders) {
      try {
        const [root, gitDir] = (await simpleGit({ baseDir: f.uri.fsPath }).raw(['rev-parse', '--show-toplevel', '--absolute-git-dir'])).trim().split(/\r?\n/);
        if (!root || !gitDir) continue;
        const repo = repos.get(root) ?? { gitDir, folders: [] };
        repo.folders.push(f);
        repos.set(root, repo);
      } catch {
        // not in a repository, or no git
      }
    }
    let watching = false;
    for (const [root, { gitDir, folders: inRepo }] of repos) {
      const git = simpleGit({ baseDir: root });
      const read = async (): Promise<HeadState | undefined> => {
        try {
          const sha = (await git.revparse(['HEAD']).catch(() => '')).trim() || null;
          const branch = (await git.raw(['symbolic-ref', '--quiet', '--short', 'HEAD']).catch(() => '')).trim() || null;
          return { branch, sha, repoRoot: root };
        } catch {
          return undefined;
        }
      };
      const first = await read();
      // The Git extension may have opened the repository meanwhile.
      const onRepo = inRepo.filter((f) => !this.ownerOf(f.uri)).map((f) => f.uri.toString());
      if (!first || onRepo.length === 0) continue;
      watching = true;
      for (const folder of onRepo) {
        this.fallbackFolders.add(folder);
        this.heads.set(folder, first);
        this._onDidChangeHead.fire(folder);
      }
      // HEAD of a worktree or submodule is in a git directory outside it.
      const pattern =
        nodePath.relative(root, gitDir) === '.git' ? new vscode.RelativePattern(vscode.Uri.file(root), '.git/{HEAD,logs/HEAD}') : new vscode.RelativePattern(vscode.Uri.file(gitDir), '{HEAD,logs/HEAD}');
      const watcher = vscode.workspace.createFileSystemWatcher(pattern);
      // One read at a time, so an older read never lands after a newer one.
      let reading: Promise<void> = Promise.resolve();
      const onChange = (): void => {
        reading = reading
          .then(async () => {
            const next = await read();
            if (next) onRepo.filter((folder) => this.fallbackFolders.has(folder)).forEach((folder, i) => this.update(folder, next, i === 0));
          })
          .catch(() => undefined);
      };
      this.disposables.push(watcher, watcher.onDidChange(onChange), watcher.onDidCreate(onChange));
    }
    return watching;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this._onDidChangeBranch.dispose();
    this._onDidChangeHead.dispose();
  }
}

/** Whether a local folder is in a git repository: its own, or one above it. A few stat calls. */
function inSomeRepository(folder: string): boolean {
  return fs.existsSync(nodePath.join(folder, '.git')) || repositoryRootAbove(folder) !== undefined;
}
