// Whether a memory still holds: a record that names files and a commit is checked against the
// repository's HEAD. The files changed since that commit (`git diff --numstat <sha>..HEAD --
// <files>`) and whether the commit is an ancestor of HEAD (on this branch, merged into it, or
// only on another branch); a file inside a submodule is compared between the submodule's two
// commits (inside a submodule of a submodule, between that one's, a few levels down). Answers are cached per state of the refs (HEAD and every branch), read for every call:
// a new commit, a checkout, a branch deleted or rebased asks again. A record that names files and no
// commit (a decision remembered, an edit) is checked for files gone from the working tree. A name
// that points outside the repository (`../x`, an absolute path elsewhere, a path through a symlink
// in it to elsewhere) is no file of it: it is never looked up there, nor handed to git, which would
// refuse the whole diff for it.

import { lstatSync, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { execGit } from './gitProcess';

export type FreshnessState = 'current' | 'changed' | 'off_branch' | 'unknown';

export interface Freshness {
  state: FreshnessState;
  /** The commit the record is about; '' for a record that names files and no commit (see GitFreshness.check). */
  commit_sha: string;
  /** Files of the record changed between that commit and HEAD (at most 20). */
  changed_files: string[];
  /** Branches that hold the commit when HEAD does not (at most 5). */
  branches: string[];
  /** A short marker for text: "still holds", "changed since abc1234: a.ts", ... */
  marker: string;
}

export type GitRunner = ((args: string[]) => Promise<{ code: number; out: string }>) & {
  /** The folders a record's file names may be relative to: the repository's top, the folder opened. */
  roots?: () => Promise<string[]>;
};

const MAX_FILES = 20;
const MAX_CACHE = 2000;
/** How many levels of submodules (a submodule inside a submodule, ...) are read; below, a moved one counts as changed. */
export const MAX_SUBMODULE_DEPTH = 4;

async function runGit(cwd: string, args: string[]): Promise<{ code: number; out: string }> {
  // A record's file names are names, never patterns ('*', ':(exclude)...'), and come back as
  // they are (not quoted).
  const r = await execGit(cwd, ['--literal-pathspecs', '-c', 'core.quotePath=false', ...args]).catch(() => null);
  return r ? { code: r.code ?? -1, out: r.out } : { code: -1, out: '' };
}

/**
 * Git run at the top of the repository that holds `folder`: records name files by their path in
 * the repository, and a folder inside it (a package of a monorepo opened alone) would read them
 * as relative to itself, match nothing, and call every record "still holds".
 */
export function gitRunner(folder: string): GitRunner {
  let top: Promise<string | null> | null = null;
  const topLevel = async (): Promise<string | null> => {
    top ??= runGit(folder, ['rev-parse', '--show-toplevel']).then((r) => (r.code === 0 && r.out.trim() ? r.out.trim() : null));
    const root = await top;
    // Not a repository (yet): asked again next time.
    if (root === null) top = null;
    return root;
  };
  const run: GitRunner = async (args) => runGit((await topLevel()) ?? folder, args);
  run.roots = async () => [...new Set([(await topLevel()) ?? folder, folder])];
  return run;
}

/** Whether `name`, read from `root`, is a path inside it (not `..`, not an absolute path elsewhere). */
function inside(root: string, name: string): boolean {
  if (name.trim() === '') return false;
  const rel = path.relative(root, path.resolve(root, name));
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

/**
 * Whether `name`, read from `root`, stays inside it once symlinks are followed: the folders on its
 * way (the deepest that exists) resolve inside the root's own real path. A link in the repository
 * that points outside would otherwise let a record ask whether a file elsewhere exists. The name's
 * last part is not followed: a link is a file of the working tree, wherever it points.
 */
function realInside(root: string, name: string): boolean {
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return false;
  }
  for (let dir = path.dirname(path.resolve(root, name)); ; dir = path.dirname(dir)) {
    try {
      const real = realpathSync(dir);
      return real === realRoot || inside(realRoot, path.relative(realRoot, real));
    } catch {
      if (path.dirname(dir) === dir) return false;
    }
  }
}

/** A check's answer as cached per HEAD, with the files HEAD's tree does not hold (the working tree is looked at per check). */
interface Computed {
  freshness: Freshness;
  absent: string[];
  /** The commit, resolved. */
  sha: string;
}

/** Every folder on the way to the named files. */
function foldersOf(files: readonly string[]): string[] {
  return [...new Set(files.flatMap((f) => f.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))))].filter(Boolean);
}

function changedMarker(sha: string, changed: readonly string[]): string {
  return `changed since ${sha.slice(0, 7)}: ${changed.slice(0, 3).join(', ')}${changed.length > 3 ? ` and ${changed.length - 3} more` : ''}`;
}

/** Ranking weight of a record by its freshness: changed or off-branch ranks a little lower, never out. */
export function freshnessWeight(state: FreshnessState | undefined): number {
  return state === 'changed' ? 0.9 : state === 'off_branch' ? 0.85 : 1;
}

export class GitFreshness {
  /** HEAD, and the state of every ref (a branch that holds a commit may be deleted or rebased while HEAD stays). */
  private head: { sha: string | null; refs: string } | null = null;
  /** Whether the tree at HEAD (by its sha) has submodules (a .gitmodules file). */
  private submodules: { head: string; has: Promise<boolean> } | null = null;
  /** The read of HEAD under way: the checks of one tool call (asked together) share it. */
  private reading: Promise<string | null> | null = null;
  private readonly cache = new Map<string, Promise<Computed>>();

  constructor(private readonly git: GitRunner) {}

  static forRepository(repoRoot: string): GitFreshness {
    return new GitFreshness(gitRunner(repoRoot));
  }

  /**
   * HEAD as it is now. Read afresh for every check, never from a time window: a commit, checkout
   * or reset made just before a tool call is seen by it. Checks asked while a read is under way
   * (the records of one tool call, checked together) share that read.
   */
  private headSha(): Promise<string | null> {
    this.reading ??= this.readHead().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  private async readHead(): Promise<string | null> {
    const r = await this.git(['rev-parse', '--verify', '--quiet', 'HEAD']);
    const sha = r.code === 0 ? r.out.trim() : null;
    const refs = (await this.git(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads', 'refs/remotes'])).out;
    if (this.head && (this.head.sha !== sha || this.head.refs !== refs)) this.cache.clear();
    this.head = { sha, refs };
    return sha;
  }

  /**
   * Freshness of a record about `files` at `sha`; null when it names no file, or no commit and
   * every file it names is still there. A record that names no commit (a decision remembered, an
   * edit) is 'changed' once a file it names is gone from the working tree: it speaks of code that
   * is not there any more. 'unknown' where the repository has no HEAD to check against (it is
   * gone, or no commit was made on its branch yet), so that a caller can tell it from a record
   * nobody checked.
   */
  async check(sha: string | null | undefined, named: readonly string[]): Promise<Freshness | null> {
    if (named.length === 0) return null;
    // The folders the names may be relative to, git's own (the repository's top) first.
    const roots = (await this.git.roots?.()) ?? [];
    if (!sha) return this.gone(roots, named);
    const files = roots.length === 0 ? [...named] : named.filter((f) => inside(roots[0]!, f));
    if (files.length === 0) return null;
    // observe takes shas of 4 hex digits and up: a short one is checked as the commit git resolves it to (compute).
    if (!/^[0-9a-f]{4,64}$/i.test(sha)) return null;
    const head = await this.headSha();
    if (!head) return { state: 'unknown', commit_sha: sha, changed_files: [], branches: [], marker: 'cannot be checked: the repository cannot be read or has no commit at HEAD' };
    const key = `${head}\u0000${sha}\u0000${[...files].sort().join('\u0000')}`;
    let found = this.cache.get(key);
    if (!found) {
      if (this.cache.size >= MAX_CACHE) this.cache.clear();
      found = this.compute(sha, files, head);
      this.cache.set(key, found);
    }
    const { freshness, absent, sha: resolved } = await found;
    // The working tree is read afresh: it changes without HEAD moving.
    const gone = this.notInWorkingTree(roots, absent);
    if (gone.length === 0) return freshness;
    const changed = [...freshness.changed_files, ...gone].slice(0, MAX_FILES);
    return { ...freshness, state: 'changed', changed_files: changed, marker: changedMarker(resolved, changed) };
  }

  /**
   * The files of a record without a commit that are in none of the folders its names may be
   * relative to (a package of a monorepo names them from itself or from the repository's top).
   * A name is looked up only in the folders it is inside of; one inside none is not checked.
   */
  private gone(roots: readonly string[], named: readonly string[]): Freshness | null {
    const gone = this.notInWorkingTree(roots, named).slice(0, MAX_FILES);
    if (gone.length === 0) return null;
    return { state: 'changed', commit_sha: '', changed_files: gone, branches: [], marker: `no longer in the working tree: ${gone.slice(0, 3).join(', ')}${gone.length > 3 ? ` and ${gone.length - 3} more` : ''}` };
  }

  /** Of `named`, those in none of the folders they may be relative to (and inside at least one of them). */
  private notInWorkingTree(roots: readonly string[], named: readonly string[]): string[] {
    return named.filter((f) => {
      const at = roots.filter((root) => inside(root, f) && realInside(root, f));
      return at.length > 0 && at.every((root) => lstatSync(path.resolve(root, f), { throwIfNoEntry: false }) === undefined);
    });
  }

  private async compute(named: string, files: readonly string[], head: string): Promise<Computed> {
    // The one commit an abbreviated sha names (it may name none of this clone, or several); a
    // whole one is asked about as it is.
    const whole = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i.test(named);
    const resolved = whole ? null : await this.git(['rev-parse', '--verify', '--quiet', `${named}^{commit}`]);
    const sha = whole ? named : resolved?.code === 0 ? resolved.out.trim() : '';
    const freshness = await this.compare(named, sha, files, head);
    if (freshness.state !== 'current' && freshness.state !== 'changed') return { freshness, absent: [], sha };
    const listed = new Set(freshness.changed_files);
    return { freshness, absent: await this.absentAtHead(files.filter((f) => !listed.has(f))), sha };
  }

  /**
   * Of `files`, those HEAD's tree does not hold (a file inside a submodule is left to
   * inSubmodules): where the working tree does not hold them either, they are gone, though the
   * diff lists nothing when the record's commit did not hold them (a file new and not yet
   * committed when the record was made, or the new name of a rename, deleted since).
   */
  private async absentAtHead(files: readonly string[]): Promise<string[]> {
    if (files.length === 0) return [];
    const r = await this.git(['ls-tree', '-z', 'HEAD', '--', ...files, ...foldersOf(files)]);
    if (r.code !== 0) return [];
    const held = new Set<string>();
    const links: string[] = [];
    for (const entry of r.out.split('\0')) {
      const m = /^\d+ (\w+) [0-9a-f]+\t(.+)$/.exec(entry);
      if (m?.[1] === 'commit') links.push(m[2]!);
      else if (m) held.add(m[2]!);
    }
    return files.filter((f) => !held.has(f) && !links.some((l) => f.startsWith(`${l}/`)));
  }

  /** The record's commit `named` (resolved to `sha`, '' for none) against HEAD: on this branch, and which of its files the diff lists. */
  private async compare(named: string, sha: string, files: readonly string[], head: string): Promise<Freshness> {
    if (!/^[0-9a-f]{40,64}$/i.test(sha)) {
      const which = named.length < 7 ? `commit ${named} is not in this clone, or names more than one of its commits` : `commit ${named.slice(0, 7)} is not in this clone`;
      return { state: 'unknown', commit_sha: named, changed_files: [], branches: [], marker: which };
    }
    const short = sha.slice(0, 7);
    const ancestor = await this.git(['merge-base', '--is-ancestor', sha, 'HEAD']);
    if (ancestor.code !== 0 && ancestor.code !== 1) return { state: 'unknown', commit_sha: named, changed_files: [], branches: [], marker: `commit ${short} is not in this clone` };
    if (ancestor.code === 1) {
      const b = await this.git(['branch', '--all', '--contains', sha, '--format=%(refname:short)']);
      const branches = b.out.split('\n').map((x) => x.trim()).filter(Boolean).slice(0, 5);
      return { state: 'off_branch', commit_sha: named, changed_files: [], branches, marker: `not on this branch${branches.length ? ` (only on ${branches.join(', ')})` : ''}` };
    }
    // No rename pairs ("src/{a.ts => b.ts}"): a record's files are listed by their own names,
    // a file renamed since as changed (gone under its name), whatever diff.renames is set to.
    const diff = await this.git(['diff', '--numstat', '--no-renames', `${sha}..HEAD`, '--', ...files]);
    // A diff git refused (a name it cannot take as a path) says nothing of the files: no "still holds".
    if (diff.code !== 0) return { state: 'unknown', commit_sha: named, changed_files: [], branches: [], marker: `cannot be checked: git could not compare ${short} with HEAD` };
    const listed = diff.out
      .split('\n')
      .map((l) => l.split('\t')[2]?.trim())
      .filter((f): f is string => !!f);
    const changed = [...new Set([...listed, ...(await this.inSubmodules(sha, files, head))])].slice(0, MAX_FILES);
    if (changed.length === 0) return { state: 'current', commit_sha: named, changed_files: [], branches: [], marker: 'still holds' };
    return { state: 'changed', commit_sha: named, changed_files: changed, branches: [], marker: changedMarker(sha, changed) };
  }

  /**
   * The record's files inside a submodule whose commit moved between `sha` and HEAD and that
   * changed in it: the superproject's diff sees a submodule as one entry (its commit), never the
   * files in it, and would call a record about them "still holds". Asked only where the tree at
   * HEAD has a .gitmodules. See submoduleChanges.
   */
  private async inSubmodules(sha: string, files: readonly string[], head: string): Promise<string[]> {
    if (this.submodules?.head !== head) {
      this.submodules = { head, has: this.git(['ls-tree', '--name-only', 'HEAD', '--', '.gitmodules']).then((r) => r.code === 0 && r.out.trim() !== '') };
    }
    if (!(await this.submodules.has)) return [];
    const top = (await this.git.roots?.())?.[0] ?? null;
    return submoduleChanges(this.git, top, sha, 'HEAD', files, 1);
  }
}

/**
 * The `files` (named from the top of the repository `git` runs in, checked out at `dir`) inside a
 * submodule whose commit differs between `from` and `to`, that changed in it; a submodule inside
 * that one is a single entry of its diff in turn, and is followed the same way, down to
 * MAX_SUBMODULE_DEPTH levels (`depth` is this one's). A submodule added or removed, not checked
 * out, without one of the two commits, or below the deepest level read counts every named file
 * in it as changed: it moved, and what it holds at either commit is not read.
 */
async function submoduleChanges(git: GitRunner, dir: string | null, from: string, to: string, files: readonly string[], depth: number): Promise<string[]> {
  // Every folder on the way to a named file: the submodules are among them.
  const dirs = foldersOf(files);
  if (dirs.length === 0) return [];
  const links = async (rev: string): Promise<Map<string, string>> => {
    const r = await git(['ls-tree', '-z', rev, '--', ...dirs]);
    const out = new Map<string, string>();
    if (r.code !== 0) return out;
    for (const entry of r.out.split('\0')) {
      const m = /^160000 commit ([0-9a-f]{40,64})\t(.+)$/.exec(entry);
      if (m) out.set(m[2]!, m[1]!);
    }
    return out;
  };
  const [was, now] = await Promise.all([links(from), links(to)]);
  const changed: string[] = [];
  for (const link of new Set([...was.keys(), ...now.keys()])) {
    const a = was.get(link);
    const b = now.get(link);
    const under = files.filter((f) => f.startsWith(`${link}/`));
    if (a === b || under.length === 0) continue;
    const inside = under.map((f) => f.slice(link.length + 1));
    const at = dir === null ? null : path.join(dir, link);
    const sub: GitRunner | null = a && b && at && depth <= MAX_SUBMODULE_DEPTH ? (args) => runGit(at, args) : null;
    const inner = sub ? await sub(['diff', '--numstat', '--no-renames', `${a}..${b}`, '--', ...inside]) : null;
    if (!sub || !inner || inner.code !== 0) {
      changed.push(...under);
      continue;
    }
    for (const l of inner.out.split('\n')) {
      const name = l.split('\t')[2]?.trim();
      if (name) changed.push(`${link}/${name}`);
    }
    for (const name of await submoduleChanges(sub, at, a!, b!, inside, depth + 1)) changed.push(`${link}/${name}`);
  }
  return changed;
}
