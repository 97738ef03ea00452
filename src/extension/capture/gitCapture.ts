import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import { isSameOrInside } from '../../core/capture/paths';
import { runGit } from '../../core/capture/gitProcess';
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

/** Where a report left HEAD's reflog: the last entry it accounted for, HEAD then, and the reflog's size. */
export interface ReflogMark {
  line: string;
  sha: string;
  size: number;
}

/** The commits HEAD's reflog shows since a report, whether anything else moved HEAD, and the mark for the next report. */
export interface ReflogSince {
  commits: ReflogCommit[];
  /** How many of `commits` (the last ones) were made after the last checkout among the entries: all of them where there is none. */
  sinceCheckout: number;
  /** A pull, reset, rebase or fast-forward among them (checkouts do not count). */
  others: boolean;
  mark: ReflogMark | undefined;
}

interface ReflogEntry {
  old: string;
  sha: string;
  message: string;
  line: string;
}

/** The last entries of a git directory's HEAD reflog, within REFLOG_TAIL_BYTES and REFLOG_MAX_ENTRIES, and its size. */
function reflogTail(gitDir: string): { entries: ReflogEntry[]; size: number } | undefined {
  let text: string;
  let size: number;
  try {
    const fd = fs.openSync(nodePath.join(gitDir, 'logs', 'HEAD'), 'r');
    try {
      size = fs.fstatSync(fd).size;
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
    return undefined;
  }
  const entries = text
    .split('\n')
    .filter(Boolean)
    .slice(-REFLOG_MAX_ENTRIES)
    .map((line) => {
      const tab = line.indexOf('\t');
      const [old, sha] = line.slice(0, tab < 0 ? line.length : tab).split(' ');
      return { old, sha, message: tab < 0 ? '' : line.slice(tab + 1).trim(), line };
    });
  return { entries, size };
}

function lastIndex(entries: ReflogEntry[], from: number, to: number, ok: (e: ReflogEntry) => boolean): number {
  for (let i = to; i >= from; i--) if (ok(entries[i])) return i;
  return -1;
}

/** The commits among entries[first..last] (oldest first), each on the branch it was made on, and whether anything else moved HEAD. */
function commitsAmong(entries: ReflogEntry[], first: number, last: number, branchAtEnd: string | null): Omit<ReflogSince, 'mark'> {
  const commits: ReflogCommit[] = [];
  let others = false;
  let sinceCheckout: number | undefined;
  // Walking back, the branch a commit was made on is the one the next checkout after it left.
  let branch = branchAtEnd;
  for (let i = last; i >= first; i--) {
    const e = entries[i];
    const checkout = CHECKOUT.exec(e.message);
    if (MADE_A_COMMIT.test(e.message)) commits.push({ sha: e.sha, from: e.old, branch });
    else if (checkout) {
      sinceCheckout ??= commits.length;
      branch = FULL_SHA.test(checkout[1]) ? null : checkout[1];
    } else others = true;
  }
  return { commits: commits.reverse(), sinceCheckout: sinceCheckout ?? commits.length, others };
}

/**
 * The commits made since the report that left `mark`, up to the last entry of HEAD's reflog that
 * reached `to` (oldest first, each on the branch it was made on), and the mark for the next
 * report. A branch left and re-entered (`git checkout -b tmp; git commit; git checkout main`)
 * between two reports adds its commits even where HEAD ends where it was. Without a mark in the
 * reflog's bounded tail (the first report, a reflog rewritten or far ahead), the entries after the
 * last one that left `from`, as commitsInReflog. Nothing where the reflog is missing.
 */
export function reflogSince(gitDir: string, mark: ReflogMark | undefined, from: string | null, to: string, branchAtEnd: string | null): ReflogSince {
  // Nothing appended and HEAD where the mark left it: nothing to read (most reports are status refreshes).
  if (mark && mark.sha === to && reflogSize(gitDir) === mark.size) return { commits: [], sinceCheckout: 0, others: false, mark };
  const tail = reflogTail(gitDir);
  if (!tail) return { commits: [], sinceCheckout: 0, others: true, mark: undefined };
  const { entries, size } = tail;
  const markAt = (i: number): ReflogMark => ({ line: entries[i].line, sha: entries[i].sha, size });
  const at = mark ? lastIndex(entries, 0, entries.length - 1, (e) => e.line === mark.line) : -1;
  if (at >= 0) {
    // A report may lag behind the reflog: entries after the last that reached `to` are left to the next one.
    const after = lastIndex(entries, at + 1, entries.length - 1, (e) => e.sha === to);
    const last = after >= 0 ? after : entries[at].sha === to ? at : -1;
    if (last >= 0) return { ...commitsAmong(entries, at + 1, last, branchAtEnd), mark: markAt(last) };
  }
  const last = lastIndex(entries, 0, entries.length - 1, (e) => e.sha === to);
  if (last < 0) return { commits: [], sinceCheckout: 0, others: true, mark: undefined };
  const first = from === null ? -1 : lastIndex(entries, 0, last, (e) => e.old === from);
  if (first < 0) return { commits: [], sinceCheckout: 0, others: true, mark: markAt(last) };
  return { ...commitsAmong(entries, first, last, branchAtEnd), mark: markAt(last) };
}

function reflogSize(gitDir: string): number {
  try {
    return fs.statSync(nodePath.join(gitDir, 'logs', 'HEAD')).size;
  } catch {
    return -1;
  }
}

/**
 * The commits made while HEAD went from `from` to `to` (oldest first), from the end of HEAD's
 * reflog: the entries after the last one that left `from`, up to the last that reached `to`.
 * Checkouts, pulls, resets and rebases in between are not commits and are skipped. Empty where
 * the reflog is missing or does not reach back to `from` within its bounds. Without a mark of the
 * previous report it cannot tell an earlier visit of `from` from the last: reflogSince can.
 */
export function commitsInReflog(gitDir: string, from: string, to: string, branchAtEnd: string | null): ReflogCommit[] {
  return reflogSince(gitDir, undefined, from, to, branchAtEnd).commits;
}

/** A fallback watch of one repository's HEAD: the folders it speaks for, how it reads HEAD, and its watcher. */
interface FallbackWatch extends vscode.Disposable {
  readonly folders: Set<string>;
  read(): Promise<HeadState | undefined>;
}

/** SHAs of commits recorded as made that are kept, to skip one a later walk of the reflog meets again. */
const MADE_REMEMBERED = REFLOG_MAX_ENTRIES * 2;

function headOfRepository(repo: GitRepository): HeadState {
  return { branch: repo.state.HEAD?.name ?? null, sha: repo.state.HEAD?.commit ?? null, repoRoot: repo.rootUri.fsPath };
}

/** Whether a HEAD state says anything: the Git extension reports none before it has read the repository. */
function isKnown(head: HeadState | undefined): head is HeadState {
  return !!head && (head.sha !== null || head.branch !== null);
}

/**
 * Branch and commit per workspace folder, from the built-in Git extension (HEAD changes,
 * commits, checkouts). A folder's repository is the one whose root is the folder or above it
 * (a package of a monorepo), never one nested inside it (a submodule, a vendored clone). Where
 * that extension is missing, disabled or has not opened a folder's repository (or closed it),
 * a watcher on that repository's HEAD and the git command line read the same facts.
 */
export class GitCapture implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly heads = new Map<string, HeadState>();
  /** Repositories the Git extension reported, as watched, with what ends their watch. */
  private readonly repositories = new Map<GitRepository, vscode.Disposable>();
  /** Fallback watches by repository root (the Git extension has no repository of their folders). */
  private readonly fallbacks = new Map<string, FallbackWatch>();
  /** Per git directory, where the last report left HEAD's reflog. */
  private readonly marks = new Map<string, ReflogMark>();
  /** Git directory per repository root, found once. */
  private readonly gitDirs = new Map<string, string>();
  /** Commits recorded as made (the latest MADE_REMEMBERED), so none is recorded twice. */
  private readonly made = new Set<string>();
  private disposed = false;
  private readonly _onDidChangeBranch = new vscode.EventEmitter<BranchChange>();
  readonly onDidChangeBranch = this._onDidChangeBranch.event;
  private readonly _onDidChangeHead = new vscode.EventEmitter<string>();
  /** Fires with the folder whose HEAD (branch or commit) changed. */
  readonly onDidChangeHead = this._onDidChangeHead.event;
  /** Resolves once the initial HEAD of every folder is known (or could not be read). */
  readonly ready: Promise<void>;
  private source: 'git-extension' | 'git-cli' | 'git-extension and git-cli' | 'none' = 'none';

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
      this.disposables.push(
        api.onDidOpenRepository((repo) => this.watchRepository(repo)),
        api.onDidCloseRepository((repo) => this.unwatchRepository(repo)),
      );
    } else {
      this.source = 'git-cli';
    }
    // Folders in a repository the Git extension has not opened (it is disabled, or asks before
    // opening a repository above the folder): their HEAD is read with git itself.
    const rest = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file' && !this.ownerOf(f.uri) && inSomeRepository(f.uri.fsPath));
    if (rest.length === 0) return;
    if (await this.startFallback(rest)) this.source = this.repositories.size > 0 ? 'git-extension and git-cli' : 'git-cli';
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
    for (const repo of this.repositories.keys()) {
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
    if (this.repositories.has(repo) || this.disposed) return;
    // Its commits and checkouts are recorded once, under the first folder: they share one project.
    this.repositories.set(
      repo,
      repo.state.onDidChange(() => this.foldersOfRepo(repo).forEach((folder, i) => this.update(folder, headOfRepository(repo), i === 0))),
    );
    this.foldersOfRepo(repo).forEach((folder, i) => {
      this.leaveFallback(folder);
      this.adopt(folder, headOfRepository(repo), i === 0);
    });
  }

  /**
   * The Git extension closed a repository (Close Repository, its folder left the workspace, its
   * .git deleted): its reports end, and so does its watch. A folder still on it is then as if the
   * Git extension had never opened it, so the fallback watches HEAD for it (nothing where the
   * repository is gone); a folder under another reported repository (one above) takes that one's.
   */
  private unwatchRepository(repo: GitRepository): void {
    const watch = this.repositories.get(repo);
    if (!watch) return;
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => this.ownerOf(f.uri) === repo);
    watch.dispose();
    this.repositories.delete(repo);
    const orphans = folders.filter((f) => {
      const owner = this.ownerOf(f.uri);
      if (owner) this.adopt(f.uri.toString(), headOfRepository(owner), false);
      return !owner;
    });
    if (orphans.length > 0) void this.fallBack(orphans);
  }

  private async fallBack(folders: vscode.WorkspaceFolder[]): Promise<void> {
    const inRepo = folders.filter((f) => f.uri.scheme === 'file' && inSomeRepository(f.uri.fsPath));
    if (inRepo.length > 0 && (await this.startFallback(inRepo).catch(() => false))) this.source = 'git-extension and git-cli';
    // A folder left on no repository (it was deleted) has no branch any more.
    for (const f of folders) {
      const folder = f.uri.toString();
      if (!this.disposed && !this.ownerOf(f.uri) && !this.isFallback(folder) && this.heads.delete(folder)) this._onDidChangeHead.fire(folder);
    }
  }

  /**
   * Takes `next` as a folder's HEAD from a new watch of its repository. After another watch of the
   * same repository (a close and re-open, the fallback and the Git extension taking over from each
   * other), a move in between is recorded as any report's; otherwise it is where the folder starts.
   */
  private adopt(folder: string, next: HeadState, record: boolean): void {
    const prev = this.heads.get(folder);
    if (prev?.repoRoot === next.repoRoot) {
      // Not read yet (a repository just opened): its first report says where HEAD is.
      if (isKnown(next)) this.update(folder, next, record);
      return;
    }
    this.heads.set(folder, next);
    if (record) this.reflogSince(undefined, next);
    this._onDidChangeHead.fire(folder);
  }

  /** Called on every HEAD report; records a checkout or commits when something moved (where `record`). */
  private update(folder: string, next: HeadState, record = true): void {
    const t0 = performance.now();
    const prev = this.heads.get(folder);
    const known = isKnown(prev) ? prev : undefined;
    // Read where this call speaks for the repository, paused or not, so the mark follows HEAD. A
    // branch left and re-entered since the last report has commits even where HEAD did not move.
    const since = record ? this.reflogSince(known, next) : undefined;
    const moved = !prev || prev.branch !== next.branch || prev.sha !== next.sha;
    if (!moved && !since?.commits.length) return;
    if (moved) {
      this.heads.set(folder, next);
      this._onDidChangeHead.fire(folder);
    }
    if (!known) return;
    const active = record && this.recorder.active;
    const at = Date.now();
    if (known.branch !== next.branch) {
      if (active) {
        // Commits made before the checkout (`git commit && git checkout -b x`), then the checkout,
        // then those made after it (`git checkout -b x && git commit`), in the same report: in the
        // order they were made, so that each goes to the session of its branch, which a commit
        // recorded after the checkout would open again (ending the new branch's session).
        const commits = since?.commits ?? [];
        const before = commits.length - (since?.sinceCheckout ?? commits.length);
        for (const c of commits.slice(0, before)) this.recordCommit(folder, c, next.repoRoot, at, t0);
        this.recorder.record({ kind: 'checkout', folder, from: known.branch, branch: next.branch, sha: next.sha, at }, t0);
        for (const c of commits.slice(before)) this.recordCommit(folder, c, next.repoRoot, at, t0);
      }
      this._onDidChangeBranch.fire({ folder, from: known.branch, to: next.branch });
    } else if (active && next.sha) {
      // Several commits in one report (`git commit` twice, a script, a branch left and re-entered):
      // each is a commit, on its branch. Anything else in between (a pull, a reset) leaves this
      // branch to one HEAD move; commits made on other branches meanwhile are still commits.
      const commits = since ? (since.others ? since.commits.filter((c) => c.branch !== next.branch) : since.commits) : [];
      for (const c of commits) this.recordCommit(folder, c, next.repoRoot, at, t0);
      if (known.sha !== next.sha && !commits.some((c) => c.sha === next.sha)) {
        this.recorder.record({ kind: 'commit', folder, sha: next.sha, branch: next.branch, repoRoot: next.repoRoot, from: known.sha, at }, t0);
      }
    }
  }

  /** A commit the reflog shows made, recorded once however many reports walk over it. */
  private recordCommit(folder: string, c: ReflogCommit, repoRoot: string, at: number, t0: number): void {
    if (this.made.has(c.sha)) return;
    this.made.add(c.sha);
    if (this.made.size > MADE_REMEMBERED) this.made.delete(this.made.values().next().value as string);
    this.recorder.record({ kind: 'commit', folder, sha: c.sha, branch: c.branch, repoRoot, from: c.from, at }, t0);
  }

  /**
   * The commits in HEAD's reflog since the repository's last report (`prev`), moving its mark to
   * `next`. Without `prev` only the mark is set: where HEAD starts is not something done.
   */
  private reflogSince(prev: HeadState | undefined, next: HeadState): ReflogSince | undefined {
    if (!next.sha) return undefined;
    const gitDir = this.gitDirs.get(next.repoRoot) ?? gitDirOf(next.repoRoot);
    if (!gitDir) return undefined;
    this.gitDirs.set(next.repoRoot, gitDir);
    const since = reflogSince(gitDir, this.marks.get(gitDir), prev?.repoRoot === next.repoRoot ? prev.sha : null, next.sha, next.branch);
    if (since.mark) this.marks.set(gitDir, since.mark);
    else this.marks.delete(gitDir);
    return prev ? since : undefined;
  }

  private isFallback(folder: string): boolean {
    return [...this.fallbacks.values()].some((w) => w.folders.has(folder));
  }

  /** The Git extension has the folder's repository now: a fallback watch left with no folder ends. */
  private leaveFallback(folder: string): void {
    for (const [root, watch] of this.fallbacks) {
      if (!watch.folders.delete(folder) || watch.folders.size > 0) continue;
      watch.dispose();
      this.fallbacks.delete(root);
    }
  }

  /**
   * Reads HEAD of each folder's repository (the folder's own, or the one above it) with
   * git when that repository's HEAD or HEAD reflog changes. Folders of one repository
   * share one watch, and its commits and checkouts are recorded under the first of them.
   * True where some folder's HEAD could be read.
   */
  private async startFallback(folders: readonly vscode.WorkspaceFolder[]): Promise<boolean> {
    const repos = new Map<string, { gitDir: string; folders: vscode.WorkspaceFolder[] }>();
    for (const f of folders) {
      try {
        const [root, gitDir] = (await runGit(f.uri.fsPath, ['rev-parse', '--show-toplevel', '--absolute-git-dir'])).trim().split(/\r?\n/);
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
      const read = this.fallbacks.get(root)?.read ?? headReader(root);
      const first = await read();
      // The Git extension may have opened the repository meanwhile.
      const onRepo = inRepo.filter((f) => !this.ownerOf(f.uri)).map((f) => f.uri.toString());
      if (!first || onRepo.length === 0 || this.disposed) continue;
      watching = true;
      const watch = this.fallbacks.get(root) ?? this.watchHead(root, gitDir, read);
      onRepo.forEach((folder, i) => {
        watch.folders.add(folder);
        this.adopt(folder, first, i === 0);
      });
    }
    return watching;
  }

  /** A watcher on a repository's HEAD and HEAD reflog, updating the folders of its fallback watch. */
  private watchHead(root: string, gitDir: string, read: () => Promise<HeadState | undefined>): FallbackWatch {
    // HEAD of a worktree or submodule is in a git directory outside it.
    const pattern =
      nodePath.relative(root, gitDir) === '.git' ? new vscode.RelativePattern(vscode.Uri.file(root), '.git/{HEAD,logs/HEAD}') : new vscode.RelativePattern(vscode.Uri.file(gitDir), '{HEAD,logs/HEAD}');
    const watcher = vscode.workspace.createFileSystemWatcher(pattern);
    const folders = new Set<string>();
    // One read at a time, so an older read never lands after a newer one.
    let reading: Promise<void> = Promise.resolve();
    const onChange = (): void => {
      reading = reading
        .then(async () => {
          const next = await read();
          if (next) [...folders].forEach((folder, i) => this.update(folder, next, i === 0));
        })
        .catch(() => undefined);
    };
    const subs = [watcher, watcher.onDidChange(onChange), watcher.onDidCreate(onChange)];
    const watch: FallbackWatch = { folders, read, dispose: () => subs.forEach((d) => d.dispose()) };
    this.fallbacks.set(root, watch);
    return watch;
  }

  dispose(): void {
    this.disposed = true;
    for (const d of this.disposables) d.dispose();
    for (const d of this.repositories.values()) d.dispose();
    for (const d of this.fallbacks.values()) d.dispose();
    this.repositories.clear();
    this.fallbacks.clear();
    this._onDidChangeBranch.dispose();
    this._onDidChangeHead.dispose();
  }
}

/** Reads HEAD (commit and branch) of the repository at `root` with git; undefined where that fails. */
function headReader(root: string): () => Promise<HeadState | undefined> {
  return async () => {
    try {
      const sha = (await runGit(root, ['rev-parse', 'HEAD']).catch(() => '')).trim() || null;
      const branch = (await runGit(root, ['symbolic-ref', '--quiet', '--short', 'HEAD']).catch(() => '')).trim() || null;
      return { branch, sha, repoRoot: root };
    } catch {
      return undefined;
    }
  };
}

/** Whether a local folder is in a git repository: its own, or one above it. A few stat calls. */
function inSomeRepository(folder: string): boolean {
  return fs.existsSync(nodePath.join(folder, '.git')) || repositoryRootAbove(folder) !== undefined;
}
