import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import * as vscode from 'vscode';
import { describeEdit } from '../../core/capture/editDiff';
import { execGit, hashFiles, runGit } from '../../core/capture/gitProcess';
import type { EditContent } from '../../core/capture/editDiff';
import { problemsOf } from './editorCapture';
import type { CaptureEvent, EditEvent } from './events';
import type { CommitDetails } from './observationBuilder';
import { editKey, fileKey } from './observationBuilder';

const MAX_SYMBOLS = 20;
const CONTAINERS = new Set([
  vscode.SymbolKind.Class,
  vscode.SymbolKind.Interface,
  vscode.SymbolKind.Module,
  vscode.SymbolKind.Namespace,
  vscode.SymbolKind.Package,
  vscode.SymbolKind.Struct,
  vscode.SymbolKind.Enum,
  vscode.SymbolKind.Object,
]);

/** Symbols whose range covers a touched line, innermost first, named like `Class.method`. */
export async function symbolsTouched(uri: vscode.Uri, lines: readonly number[]): Promise<string[]> {
  if (lines.length === 0) return [];
  let result: (vscode.DocumentSymbol | vscode.SymbolInformation)[] | undefined;
  try {
    result = await vscode.commands.executeCommand<(vscode.DocumentSymbol | vscode.SymbolInformation)[]>(
      'vscode.executeDocumentSymbolProvider',
      uri,
    );
  } catch {
    return [];
  }
  if (!result || result.length === 0) return [];
  const touched = new Set(lines);
  const names: string[] = [];
  const covers = (range: vscode.Range): boolean => {
    for (const l of touched) if (l >= range.start.line && l <= range.end.line) return true;
    return false;
  };
  const visit = (symbols: vscode.DocumentSymbol[], prefix: string): void => {
    for (const s of symbols) {
      if (!covers(s.range)) continue;
      const name = prefix ? `${prefix}.${s.name}` : s.name;
      const before = names.length;
      // Members of containers are named (Class.method); a function's locals (its loop variable) are not.
      if (CONTAINERS.has(s.kind)) visit(s.children ?? [], name);
      // Keep the innermost symbol; a class is only named when no member of it was touched.
      if (names.length === before && names.length < MAX_SYMBOLS) names.push(name);
    }
  };
  if ('children' in result[0]) {
    visit(result as vscode.DocumentSymbol[], '');
  } else {
    for (const s of result as vscode.SymbolInformation[]) {
      if (names.length >= MAX_SYMBOLS) break;
      if (covers(s.location.range)) names.push(s.containerName ? `${s.containerName}.${s.name}` : s.name);
    }
  }
  return names;
}

/**
 * Subject, body, author and changed files of a commit, read with git (a child process). With
 * `from` (HEAD before), also whether `sha` is a true child of it, and if not how HEAD moved.
 */
export async function commitDetails(repoRoot: string, sha: string, from?: string | null): Promise<CommitDetails | undefined> {
  try {
    const raw = await runGit(repoRoot, ['show', '-s', '--format=%an%x00%P%x00%s%x00%b', sha]);
    const [author, parentList, subject, body] = raw.split('\0');
    const parents = (parentList ?? '').trim().split(/\s+/).filter(Boolean);
    // NUL-separated (-z): names are as they are, never C-quoted (a quote, a tab, a newline in one).
    // A merge is listed against its first parent: what it brought into the branch (diff-tree
    // prints nothing for a commit of several parents).
    const range = parents.length > 1 ? [parents[0], sha] : ['--root', sha];
    const files = (await runGit(repoRoot, ['diff-tree', '--no-commit-id', '--name-only', '-r', '-z', ...range])).split('\0').filter(Boolean);
    const details: CommitDetails = { subject: (subject ?? '').trim(), body: (body ?? '').trim(), files, author: author?.trim() || null };
    if (from && parents[0] !== from) {
      // Not a commit made on top of the old HEAD: a pull, merge, reset or rebase moved HEAD.
      const count = async (range: string): Promise<number | null> => {
        const n = Number.parseInt((await runGit(repoRoot, ['rev-list', '--count', range]).catch(() => '')).trim(), 10);
        return Number.isFinite(n) ? n : null;
      };
      const behind = await count(`${sha}..${from}`);
      // The commits HEAD left (a reset, a rebase), newest first: what the session made and undid.
      const left = behind ? (await runGit(repoRoot, ['rev-list', `--max-count=${MAX_LEFT}`, `${sha}..${from}`]).catch(() => '')).split('\n').filter((l) => /^[0-9a-f]{40,64}$/.test(l.trim())).map((l) => l.trim()) : [];
      details.moved = { from, ahead: await count(`${from}..${sha}`), behind, ...(left.length ? { left } : {}) };
    }
    return details;
  } catch {
    return undefined;
  }
}

/** The commits a move of HEAD left that its observation names (what a session makes is a few). */
const MAX_LEFT = 20;

/** Paths handed to one `git check-ignore` (bounded cost per batch and folder). */
const MAX_IGNORE_CHECK = 2000;

/** The paths (relative to `dir`) that git ignores there; empty where git cannot say. */
export async function gitIgnored(dir: string, paths: readonly string[]): Promise<Set<string>> {
  const r = await execGit(dir, ['check-ignore', '--stdin', '-z'], { input: paths.map((p) => `${p}\0`).join(''), timeoutMs: 5000 }).catch(() => null);
  // 0: some ignored, 1: none, anything else (not a repository, stopped): unknown.
  return r?.code === 0 ? new Set(r.out.split('\0').filter(Boolean)) : new Set();
}

/**
 * The directory (relative to `dir`, '' for `dir` itself) of the innermost repository that holds
 * `path`: a submodule or a clone nested in the folder has a `.git` of its own. `known` caches
 * what each directory is.
 */
function repositoryOf(dir: string, path: string, known: Map<string, boolean>): string {
  const parts = path.split('/').slice(0, -1);
  for (let n = parts.length; n > 0; n--) {
    const sub = parts.slice(0, n).join('/');
    let isRepo = known.get(sub);
    if (isRepo === undefined) {
      isRepo = fs.existsSync(nodePath.join(dir, sub, '.git'));
      known.set(sub, isRepo);
    }
    if (isRepo) return sub;
  }
  return '';
}

/**
 * The paths (relative to `dir`) that git ignores, each asked of the repository that holds it:
 * git refuses (exit 128) a whole check-ignore call that names a path inside a submodule, so the
 * paths of a nested repository are asked of that repository, by their paths in it.
 */
export async function gitIgnoredByRepository(dir: string, paths: readonly string[]): Promise<Set<string>> {
  const known = new Map<string, boolean>();
  const byRepo = new Map<string, string[]>();
  for (const p of paths) {
    const repo = repositoryOf(dir, p, known);
    const list = byRepo.get(repo) ?? [];
    list.push(p);
    byRepo.set(repo, list);
  }
  const ignored = new Set<string>();
  await Promise.all(
    [...byRepo].map(async ([repo, list]) => {
      const prefix = repo ? `${repo}/` : '';
      const hits = await gitIgnored(repo ? nodePath.join(dir, repo) : dir, list.map((p) => p.slice(prefix.length)));
      for (const h of hits) ignored.add(prefix + h);
    }),
  );
  return ignored;
}

/**
 * File events (created, deleted, changed on disk) for paths git ignores, e.g. build output.
 * `baseOf`: the folder the events' paths are relative to, where it is not their workspace folder.
 */
export async function gitIgnoredEvents(events: readonly CaptureEvent[], baseOf: (folder: string) => string | undefined = () => undefined): Promise<Set<CaptureEvent>> {
  const byFolder = new Map<string, CaptureEvent[]>();
  for (const e of events) {
    if (e.kind !== 'create' && e.kind !== 'delete' && e.kind !== 'disk_change') continue;
    const list = byFolder.get(e.folder) ?? [];
    if (list.length < MAX_IGNORE_CHECK) list.push(e);
    byFolder.set(e.folder, list);
  }
  const ignored = new Set<CaptureEvent>();
  await Promise.all(
    [...byFolder].map(async ([folder, list]) => {
      const uri = vscode.Uri.parse(folder);
      if (uri.scheme !== 'file') return;
      const paths = [...new Set(list.map((e) => (e as { path: string }).path))];
      const hits = await gitIgnoredByRepository(baseOf(folder) ?? uri.fsPath, paths);
      for (const e of list) if (hits.has((e as { path: string }).path)) ignored.add(e);
    }),
  );
  return ignored;
}

/** Delete and create pairs of one batch and folder looked at as a possible rename (bounded cost). */
const MAX_RENAME_CANDIDATES = 200;

/** Base name of a path relative to the folder. */
function baseName(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/**
 * Git's blob ids of the files a batch deleted and created under the same base name in one folder,
 * keyed by fileKey(folder, path): for a deleted file, what the index (else HEAD) holds of it; for a
 * created one, what it holds now. Equal ids say a delete and a create are one file moved (git mv,
 * mv); a name alone does not. Where git cannot say, nothing is known and nothing is paired.
 */
export async function renameContent(events: readonly CaptureEvent[], baseOf: (folder: string) => string | undefined = () => undefined): Promise<Map<string, string>> {
  const byFolder = new Map<string, { deleted: Set<string>; created: Set<string> }>();
  for (const e of events) {
    if (e.kind !== 'create' && e.kind !== 'delete') continue;
    const f = byFolder.get(e.folder) ?? { deleted: new Set<string>(), created: new Set<string>() };
    (e.kind === 'delete' ? f.deleted : f.created).add(e.path);
    byFolder.set(e.folder, f);
  }
  const ids = new Map<string, string>();
  await Promise.all(
    [...byFolder].map(async ([folder, { deleted, created }]) => {
      const names = new Set([...deleted].map(baseName));
      const made = [...created].filter((p) => !deleted.has(p) && names.has(baseName(p))).slice(0, MAX_RENAME_CANDIDATES);
      if (made.length === 0) return;
      const madeNames = new Set(made.map(baseName));
      const gone = [...deleted].filter((p) => !created.has(p) && madeNames.has(baseName(p))).slice(0, MAX_RENAME_CANDIDATES);
      const uri = vscode.Uri.parse(folder);
      if (uri.scheme !== 'file') return;
      const dir = baseOf(folder) ?? uri.fsPath;
      try {
        // Pathspecs taken literally: a name with `*` or `[` is that name, not a pattern.
        const listed = async (args: string[], paths: string[]): Promise<Map<string, string>> => {
          const out = new Map<string, string>();
          if (paths.length === 0) return out;
          const raw = await runGit(dir, ['--literal-pathspecs', ...args, '--', ...paths]).catch(() => '');
          for (const entry of raw.split('\0')) {
            const tab = entry.indexOf('\t');
            if (tab < 0) continue;
            // ls-files -s: <mode> <blob> <stage>; ls-tree: <mode> <type> <blob>.
            const blob = entry.slice(0, tab).split(' ').find((w) => /^[0-9a-f]{40,64}$/.test(w));
            if (blob) out.set(entry.slice(tab + 1), blob);
          }
          return out;
        };
        // HEAD is asked only of what the index no longer holds (a `git rm`, a `git mv`).
        const index = await listed(['ls-files', '-s', '-z'], gone);
        const head = await listed(['ls-tree', '-r', '-z', 'HEAD'], gone.filter((p) => !index.has(p)));
        for (const p of gone) {
          const blob = index.get(p) ?? head.get(p);
          if (blob) ids.set(fileKey(folder, p), blob);
        }
        const present = made.filter((p) => {
          try {
            return fs.statSync(nodePath.join(dir, p)).isFile();
          } catch {
            return false;
          }
        });
        if (present.length === 0) return;
        const hashes = await hashFiles(dir, present);
        hashes?.forEach((id, i) => ids.set(fileKey(folder, present[i]), id));
      } catch {
        // Not a repository, no git: no pairing.
      }
    }),
  );
  return ids;
}

export interface BatchEnrichment {
  symbols: Map<string, string[]>;
  /** Blob ids of files deleted and created in the batch, where a rename is possible (renameContent). */
  contentIds: Map<string, string>;
  commits: Map<string, CommitDetails>;
  edits: Map<string, EditContent>;
  diskEdits: Map<string, EditContent>;
  problems: Map<string, string[]>;
}

/** Everything a batch needs beyond the raw events; runs in the drain, never in a handler. */
export async function enrichBatch(events: readonly CaptureEvent[], baseOf: (folder: string) => string | undefined = () => undefined): Promise<BatchEnrichment> {
  const symbols = new Map<string, string[]>();
  const commits = new Map<string, CommitDetails>();
  const edits = new Map<string, EditContent>();
  const diskEdits = new Map<string, EditContent>();
  const problems = new Map<string, string[]>();
  // An edit event carries the whole change of the session: the last one per file says it all.
  const lastEdit = new Map<string, EditEvent>();
  for (const e of events) {
    if (e.kind === 'edit') lastEdit.set(fileKey(e.folder, editKey(e)), e);
    if (e.kind === 'disk_change' && e.reloaded && e.before != null && e.after != null) diskEdits.set(fileKey(e.folder, e.path), describeEdit(e.path, e.before, e.after));
  }
  const jobs: Promise<void>[] = [];
  for (const [key, e] of lastEdit) {
    const uri = vscode.Uri.parse(e.uri);
    problems.set(fileKey(e.folder, e.path), problemsOf(uri));
    let lines = e.lines;
    if (e.before !== null && e.after !== null) {
      const content = describeEdit(e.path, e.before, e.after);
      edits.set(key, content);
      // The hunks of the whole change, in today's line numbers, name the symbols.
      if (content.hunks.length > 0) lines = content.hunks.flatMap((h) => Array.from({ length: Math.max(1, h.added.length) }, (_, i) => h.line - 1 + i)).slice(0, 500);
    }
    jobs.push(symbolsTouched(uri, lines).then((s) => void symbols.set(key, s)));
  }
  for (const e of events) {
    // Keyed by folder too: two clones in one window may both reach a SHA, one by a commit, one by a pull.
    const key = e.kind === 'commit' ? fileKey(e.folder, e.sha) : '';
    if (e.kind === 'commit' && !commits.has(key)) {
      commits.set(key, { subject: '', body: '', files: [], author: null });
      jobs.push(commitDetails(e.repoRoot, e.sha, e.from).then((d) => void (d ? commits.set(key, d) : commits.delete(key))));
    }
  }
  let contentIds = new Map<string, string>();
  jobs.push(renameContent(events, baseOf).then((ids) => void (contentIds = ids)));
  await Promise.all(jobs);
  return { symbols, contentIds, commits, edits, diskEdits, problems };
}
