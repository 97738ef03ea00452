import * as vscode from 'vscode';
import { describeEdit } from '../../core/capture/editDiff';
import type { EditContent } from '../../core/capture/editDiff';
import { problemsOf } from './editorCapture';
import type { CaptureEvent, EditEvent } from './events';
import type { CommitDetails } from './observationBuilder';

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

/** Subject, body, author and changed files of a commit, read with git (a child process). */
export async function commitDetails(repoRoot: string, sha: string): Promise<CommitDetails | undefined> {
  try {
    const { simpleGit } = await import('simple-git');
    const git = simpleGit({ baseDir: repoRoot });
    const raw = await git.raw(['show', '-s', '--format=%an%x00%s%x00%b', sha]);
    const [author, subject, body] = raw.split('\0');
    const files = (await git.raw(['-c', 'core.quotepath=off', 'diff-tree', '--no-commit-id', '--name-only', '-r', '--root', sha]))
      .split('\n')
      .map((f) => f.trim())
      .filter(Boolean);
    return { subject: (subject ?? '').trim(), body: (body ?? '').trim(), files, author: author?.trim() || null };
  } catch {
    return undefined;
  }
}

export interface BatchEnrichment {
  symbols: Map<string, string[]>;
  commits: Map<string, CommitDetails>;
  edits: Map<string, EditContent>;
  problems: Map<string, string[]>;
}

/** Everything a batch needs beyond the raw events; runs in the drain, never in a handler. */
export async function enrichBatch(events: readonly CaptureEvent[]): Promise<BatchEnrichment> {
  const symbols = new Map<string, string[]>();
  const commits = new Map<string, CommitDetails>();
  const edits = new Map<string, EditContent>();
  const problems = new Map<string, string[]>();
  // An edit event carries the whole change of the session: the last one per file says it all.
  const lastEdit = new Map<string, EditEvent>();
  for (const e of events) if (e.kind === 'edit') lastEdit.set(e.path, e);
  const jobs: Promise<void>[] = [];
  for (const e of lastEdit.values()) {
    const uri = vscode.Uri.parse(e.uri);
    problems.set(e.path, problemsOf(uri));
    let lines = e.lines;
    if (e.before !== null && e.after !== null) {
      const content = describeEdit(e.path, e.before, e.after);
      edits.set(e.path, content);
      // The hunks of the whole change, in today's line numbers, name the symbols.
      if (content.hunks.length > 0) lines = content.hunks.flatMap((h) => Array.from({ length: Math.max(1, h.added.length) }, (_, i) => h.line - 1 + i)).slice(0, 500);
    }
    jobs.push(symbolsTouched(uri, lines).then((s) => void symbols.set(e.path, s)));
  }
  for (const e of events) {
    if (e.kind === 'commit' && !commits.has(e.sha)) {
      commits.set(e.sha, { subject: '', body: '', files: [], author: null });
      jobs.push(commitDetails(e.repoRoot, e.sha).then((d) => void (d ? commits.set(e.sha, d) : commits.delete(e.sha))));
    }
  }
  await Promise.all(jobs);
  return { symbols, commits, edits, problems };
}
