// Imports a repository's commit history as observations: one per commit (and per merge that
// carries a pull request's title or a message body), with what its diff says indexed for
// search. Reads history with a single streaming `git log -p`, which is much faster than one
// git call per commit. Idempotent: each commit has dedupe key 'commit:<sha>'. Commit messages
// and file contents are the repository's text: they never become git arguments or decide where
// one field or commit of the output ends (see git.ts).

import { existsSync, statSync } from 'node:fs';
import * as path from 'node:path';
import type { MemoryEngineApi, ObservationInput } from '../api';
import { DOCUMENT_TYPE, MAX_FIELD_CHARS } from '../model/records';
import type { Scope } from '../model/records';
import { MAX_RECORD_PATHS } from '../model/limits';
import { PLAIN_DIFF_OPTIONS, PLAIN_LOG_CONFIG, formatSeparators, isObjectId, revisionArgs } from './git';
import { GitImportError, GitUnavailableError, gitFailure, runGit, spawnGit, unavailable } from './gitProcess';
import type { FormatSeparators } from './git';
import { clipRedacted, redact } from './redact';
import { MAX_EPOCH_MS } from './prepare';
import { diffSearchText, parseUnifiedDiff, touchedNames } from '../retrieve/diffText';
import { SymbolDocs, documentObservation, readProjectDocuments } from './projectDocs';
import type { ProjectDocument } from './projectDocs';

export interface GitImportOptions {
  scope?: Scope;
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
  /** Revision whose history is imported; HEAD by default. */
  rev?: string;
  /**
   * Import informative merges as observations of their own. By default merges are not
   * imported; a pull request's message is kept with the commits it brought in instead.
   */
  includeMerges?: boolean;
  /** Keep pull-request merge messages with the commits they merged (default true). */
  pullRequestText?: boolean;
  /** A new session starts after this much time between one author's commits. */
  sessionGapMs?: number;
  /**
   * Also keep the project's documents at `rev` (README, docs/, changelogs, doc comments) as its
   * documents layer, replacing those of an earlier import (default true).
   */
  documents?: boolean;
}

export interface GitImportResult {
  imported: number;
  skipped: number;
  sessions: number;
  /** Document sections kept (new or unchanged) and those of an earlier import removed. */
  documents?: { kept: number; removed: number };
}

export interface GitCommit {
  sha: string;
  parents: string[];
  authorName: string;
  authorEmail: string;
  /** Committer time, ms since the epoch. */
  committedAtMs: number;
  subject: string;
  body: string;
  files: string[];
  diffText: string;
  /** Names the diff's code touches, most mentioned first (see diffText.touchedNames). */
  touched: string[];
}

const DEFAULT_SESSION_GAP_MS = 2 * 60 * 60 * 1000;
const BATCH_SIZE = 200;
/** The most ids one replaceDocuments call takes (the engine's limit on ids). */
const REPLACE_BATCH = 1000;

/** `inputs` less those the user forgot (an earlier import's commit or document, forgotten since). */
async function notForgotten(engine: MemoryEngineApi, scope: Scope, inputs: ObservationInput[]): Promise<ObservationInput[]> {
  const keys = inputs.map((i) => i.dedupe_key).filter((k): k is string => typeof k === 'string');
  if (keys.length === 0) return inputs;
  const forgotten = await engine.forgottenImports(scope, keys);
  return forgotten.size === 0 ? inputs : inputs.filter((i) => !(typeof i.dedupe_key === 'string' && forgotten.has(i.dedupe_key)));
}

export { GitImportError };

async function checkRepository(repoPath: string, rev: string): Promise<boolean> {
  if (!existsSync(repoPath) || !statSync(repoPath).isDirectory()) {
    throw new GitImportError(`Repository folder not found: ${repoPath}. Pass the folder of a git clone.`);
  }
  try {
    await runGit(repoPath, ['rev-parse', '--git-dir']);
  } catch (error) {
    if (error instanceof GitUnavailableError) throw error;
    throw new GitImportError(`Not a git repository: ${repoPath}. Pass the folder of a git clone (one that contains .git).`);
  }
  try {
    await runGit(repoPath, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
    return true;
  } catch (error) {
    if (error instanceof GitUnavailableError) throw error;
    if (rev === 'HEAD') return false; // a repository without commits: nothing to import
    // A revision is named as given, up to 200 characters: one of megabytes is no revision to show whole.
    const shown = rev.length > 200 ? `${rev.slice(0, 200)}... (${rev.length.toLocaleString('en-US')} characters)` : rev;
    throw new GitImportError(`Revision not found in ${repoPath}: ${shown}. Fetch it first or pass another revision.`);
  }
}

function hasOwnMessage(subject: string, body: string): boolean {
  return body.trim().length > 0 || /^Merge pull request\b/i.test(subject);
}

/**
 * A merge is its own memory only when it says something (a pull request title or a message
 * body) and brings in more than one commit: a merge of a single commit repeats that commit.
 */
// Merges that bring in more commits than this are branch syncs, not one change.
const MAX_PULL_REQUEST_COMMITS = 50;
const MAX_PULL_REQUEST_TEXT = 1000;

/**
 * The message of each pull-request merge (or merge with a body), keyed by the commits it
 * brought in: a pull request's title often says what its commits do better than they do.
 */
export async function pullRequestTexts(repoPath: string, rev: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const sep = formatSeparators();
  const log = await runGit(repoPath, [...PLAIN_LOG_CONFIG, 'log', '--merges', `--format=${sep.record}%H${sep.field}%P${sep.field}%B`, ...revisionArgs(rev)]);
  for (const record of log.split(sep.record)) {
    const [sha, parents, message] = record.split(sep.field);
    if (!sha || parents === undefined || !message) continue;
    const ps = parents.trim().split(' ');
    const msg = redact(message.replace(/\r/g, '').trim());
    const nl = msg.indexOf('\n');
    const subject = nl < 0 ? msg : msg.slice(0, nl);
    const body = nl < 0 ? '' : msg.slice(nl + 1);
    if (ps.length !== 2 || !ps.every(isObjectId) || !hasOwnMessage(subject, body)) continue;
    const merged = (await runGit(repoPath, ['rev-list', '--no-merges', ...revisionArgs(`${ps[0]}..${ps[1]}`)])).split('\n').filter(Boolean);
    if (merged.length === 0 || merged.length > MAX_PULL_REQUEST_COMMITS) continue;
    const text = clipRedacted(msg, MAX_PULL_REQUEST_TEXT);
    for (const c of merged) if (!out.has(c)) out.set(c, text);
  }
  return out;
}

async function isInformativeMerge(repoPath: string, c: GitCommit): Promise<boolean> {
  if (!hasOwnMessage(c.subject, c.body)) return false;
  if (c.parents.length !== 2) return true;
  try {
    const n = Number((await runGit(repoPath, ['rev-list', '--count', ...revisionArgs(`${c.parents[0]}..${c.parents[1]}`)])).trim());
    return n > 1;
  } catch {
    return true;
  }
}

/**
 * Text of a message read past the cut at MAX_FIELD_CHARS, so that a secret the cut falls inside is
 * still seen whole by redaction (a private key is a few kilobytes); what lies further is never kept.
 */
const MESSAGE_READ_PAST_CUT = 64 * 1024;

/**
 * A commit's time as stored: git takes any date (a broken clock's `@300000000000`, before 1970),
 * the store times from 1970 to the end of the year 9999 (MAX_EPOCH_MS); one outside is stored at
 * the nearer end, so that one odd commit does not keep a whole history out.
 */
function storedCommitTime(ms: number): number {
  return Number.isFinite(ms) ? Math.min(MAX_EPOCH_MS, Math.max(0, Math.trunc(ms))) : 0;
}

/**
 * One record of `git log` output. `secretManifests`: the paths known to be Kubernetes Secrets,
 * kept up to date across the records of one history read oldest first (see parseUnifiedDiff).
 */
function parseRecord(record: string, sep: FormatSeparators, secretManifests?: Set<string>): GitCommit | null {
  const headerEnd = record.indexOf(sep.endOfHeader);
  if (headerEnd < 0) return null;
  const [sha, parents, authorName, authorEmail, committedAt, message] = record.slice(0, headerEnd).split(sep.field);
  const parentShas = (parents ?? '').split(' ').filter(Boolean);
  if (!isObjectId(sha) || !parentShas.every(isObjectId)) return null;
  // Redacted whole before it is cut into subject and body: a secret may span the two.
  // Cut where an import of an export would refuse it (a message of a megabyte is no message),
  // after it is redacted: a secret the cut falls inside would no longer look like one.
  const msg = clipRedacted(redact((message ?? '').replace(/\r/g, '').trim().slice(0, MAX_FIELD_CHARS + MESSAGE_READ_PAST_CUT)), MAX_FIELD_CHARS).trim();
  const nl = msg.indexOf('\n');
  const subject = (nl < 0 ? msg : msg.slice(0, nl)).trim();
  const body = nl < 0 ? '' : msg.slice(nl + 1).trim();
  const diffs = parseUnifiedDiff(record.slice(headerEnd + sep.endOfHeader.length), secretManifests);
  return {
    sha,
    parents: parentShas,
    authorName: authorName ?? '',
    authorEmail: authorEmail ?? '',
    committedAtMs: storedCommitTime(Number(committedAt) * 1000),
    subject,
    body,
    files: [...new Set(diffs.map((d) => d.path))],
    diffText: diffSearchText(diffs),
    touched: touchedNames(diffs),
  };
}

/**
 * Streams the commits reachable from `rev`, oldest first, with their diffs against the first
 * parent. Merges without information of their own are left out.
 */
export async function* readGitCommits(
  repoPath: string,
  options: { rev?: string; includeMerges?: boolean; signal?: AbortSignal } = {},
): AsyncGenerator<GitCommit> {
  const rev = options.rev ?? 'HEAD';
  // Only the commits of this history are taken from the output, whatever else it holds.
  const reachable = new Set((await runGit(repoPath, ['rev-list', ...revisionArgs(rev)])).split('\n').filter(Boolean));
  const sep = formatSeparators();
  // Merges are read only when they are imported; their diffs repeat the merged commits.
  const args = [
    ...PLAIN_LOG_CONFIG,
    'log', '--reverse', '--date-order',
    `--format=${sep.record}%H${sep.field}%P${sep.field}%an${sep.field}%ae${sep.field}%ct${sep.field}%B${sep.endOfHeader}`,
    '-p', '-U1', ...PLAIN_DIFF_OPTIONS,
    options.includeMerges ? '--diff-merges=first-parent' : '--no-merges',
    ...revisionArgs(rev),
  ];
  const child = spawnGit(repoPath, args);
  const onAbort = (): void => {
    child.kill();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('close', resolve);
    // git gone from PATH since the repository was checked: said as such, never an unhandled error.
    child.on('error', (e) => reject(unavailable(e)));
  });
  exited.catch(() => undefined);
  // Kubernetes Secrets seen so far: the output is oldest first and without renames, so a file's
  // first diff holds its kind line, and its later ones (a rotated value) are redacted as a Secret's.
  // Costs a set of paths and a look at the diff's lines that say Secret; no git call.
  const secretManifests = new Set<string>();
  const commitIn = (record: string): GitCommit | null => {
    const c = parseRecord(record, sep, secretManifests);
    return c && reachable.has(c.sha) ? c : null;
  };
  const R = sep.record;
  // The buffer holds the output from the start of the record being read; the next separator
  // is looked for only in text not searched yet, so a commit with a huge diff costs no more.
  let buffer = '';
  let searchFrom = R.length;
  try {
    for await (const chunk of child.stdout.setEncoding('utf8') as AsyncIterable<string>) {
      buffer += chunk;
      let start = 0;
      let next = buffer.indexOf(R, searchFrom);
      while (next >= 0) {
        const c = commitIn(buffer.slice(start + R.length, next));
        if (c && (await keep(repoPath, c, options.includeMerges))) yield c;
        start = next;
        next = buffer.indexOf(R, start + R.length);
      }
      buffer = buffer.slice(start);
      searchFrom = Math.max(R.length, buffer.length - R.length + 1);
    }
    if (options.signal?.aborted) return;
    if (buffer.startsWith(R)) {
      const c = commitIn(buffer.slice(R.length));
      if (c && (await keep(repoPath, c, options.includeMerges))) yield c;
    }
    const code = await exited;
    if (code !== 0) throw gitFailure(stderr, `git log exited with ${code}`);
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    if (child.exitCode === null) child.kill();
  }
}

async function keep(repoPath: string, c: GitCommit, includeMerges: boolean | undefined): Promise<boolean> {
  if (c.parents.length < 2) return true;
  return includeMerges === true && (await isInformativeMerge(repoPath, c));
}

/** Name of the branch checked out in the repository, or null on a detached HEAD. */
async function currentBranch(repoPath: string): Promise<string | null> {
  try {
    const name = (await runGit(repoPath, ['symbolic-ref', '--quiet', '--short', 'HEAD'])).trim();
    return name || null;
  } catch {
    return null;
  }
}

function projectFor(repoPath: string): string {
  return path.basename(path.resolve(repoPath)).replace(/\.git$/, '');
}

/**
 * The observation recorded for one commit. `symbolDocs` gives the doc comments of the symbols
 * its code touches, indexed with its diff so that the words of their documentation find it.
 */
export function commitObservation(c: GitCommit, branch: string | null, sessionId: string, pullRequest?: string, symbolDocs?: SymbolDocs): ObservationInput {
  const date = new Date(c.committedAtMs).toISOString();
  let narrative = c.body;
  if (pullRequest && c.parents.length < 2) {
    // The pull request's own words, unless they only repeat the commit's subject.
    const prText = pullRequest.replace(/^Merge pull request #?\d+ from \S+\s*/i, '').trim();
    if (prText && prText !== c.subject.trim()) narrative = narrative ? `${narrative}\n\nMerged in: ${pullRequest}` : `Merged in: ${pullRequest}`;
  }
  const input: ObservationInput = {
    type: 'commit',
    title: c.subject || `Commit ${c.sha.slice(0, 7)}`,
    subtitle: `${c.sha.slice(0, 7)} by ${c.authorName} on ${date.slice(0, 10)}`,
    narrative,
    files_modified: c.files,
    commit_sha: c.sha,
    memory_session_id: sessionId,
    created_at_epoch: c.committedAtMs,
    search_extra: symbolDocs ? [c.diffText, symbolDocs.textFor(c.touched)].filter(Boolean).join('\n') : c.diffText,
    dedupe_key: `commit:${c.sha}`,
  };
  // The store lists the first MAX_RECORD_PATHS files (cleanPaths): a larger commit says how many it changed.
  if (c.files.length > MAX_RECORD_PATHS) input.facts = [`${c.files.length.toLocaleString('en-US')} files changed; the first ${MAX_RECORD_PATHS} are listed`];
  if (branch) input.branch = branch;
  return input;
}

/** What an earlier import left: the commits it stored, and its document sections' ids. */
async function earlierImport(engine: MemoryEngineApi, scope: Scope): Promise<{ commits: Set<string>; documents: Set<number> }> {
  const commits = new Set<string>();
  const documents = new Set<number>();
  for (const o of await engine.listObservations(scope, { limit: Number.MAX_SAFE_INTEGER })) {
    if (o.type === 'commit' && o.commit_sha) commits.add(o.commit_sha);
    else if (o.type === DOCUMENT_TYPE) documents.add(o.id);
  }
  return { commits, documents };
}

export async function importGitHistory(
  engine: MemoryEngineApi,
  repoPath: string,
  options: GitImportOptions = {},
): Promise<GitImportResult> {
  const rev = options.rev ?? 'HEAD';
  if (!(await checkRepository(repoPath, rev))) return { imported: 0, skipped: 0, sessions: 0 };
  const total = Number((await runGit(repoPath, ['rev-list', '--count', ...revisionArgs(rev)])).trim()) || 0;
  const branch = options.scope?.branch ?? (await currentBranch(repoPath));
  const scope: Scope = options.scope ?? { project: projectFor(repoPath) };
  const earlier = await earlierImport(engine, scope);
  const known = earlier.commits;
  const gap = options.sessionGapMs ?? DEFAULT_SESSION_GAP_MS;
  const pullRequests = options.includeMerges || options.pullRequestText === false ? new Map<string, string>() : await pullRequestTexts(repoPath, rev);

  // The documents are read first: their doc comments are indexed with the commits that touch their symbols.
  const documents = options.documents === false ? null : await readProjectDocuments(repoPath, rev);
  const symbolDocs = documents ? new SymbolDocs(documents) : undefined;
  let imported = 0;
  let skipped = 0;
  let done = 0;
  const sessionIds = new Set<string>();
  let batch: ObservationInput[] = [];
  let session = { id: '', author: '', lastMs: -Infinity };

  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    // A commit the user forgot is not stored again.
    const wanted = await notForgotten(engine, scope, batch);
    skipped += batch.length - wanted.length;
    batch = [];
    if (wanted.length === 0) return;
    for (const input of wanted) if (input.memory_session_id) sessionIds.add(input.memory_session_id);
    const stored = await engine.observe(wanted, scope);
    imported += stored.length;
    skipped += wanted.length - stored.length;
  };

  for await (const c of readGitCommits(repoPath, { rev, includeMerges: options.includeMerges, signal: options.signal })) {
    if (options.signal?.aborted) break;
    done++;
    if (c.authorEmail !== session.author || c.committedAtMs - session.lastMs > gap) {
      session = { id: `git-${c.sha.slice(0, 12)}`, author: c.authorEmail, lastMs: c.committedAtMs };
    }
    session.lastMs = Math.max(session.lastMs, c.committedAtMs);
    if (known.has(c.sha)) {
      skipped++;
    } else {
      known.add(c.sha);
      batch.push(commitObservation(c, branch, session.id, pullRequests.get(c.sha), symbolDocs));
      if (batch.length >= BATCH_SIZE) {
        await flush();
        options.onProgress?.(Math.min(done, total), total);
      }
    }
  }
  if (options.signal?.aborted) throw new GitImportError('Git import cancelled.');
  await flush();
  const kept = documents ? await importProjectDocuments(engine, repoPath, rev, scope, branch, documents, earlier.documents) : undefined;
  options.onProgress?.(total, total);
  return { imported, skipped, sessions: sessionIds.size, documents: kept };
}

/**
 * Stores the project's documents at `rev` as observations of type 'document' (one session per
 * revision) and removes those of `earlier` (an earlier import's) that are gone or changed (replaced,
 * not forgotten). Documents the user forgot are not stored again.
 */
async function importProjectDocuments(
  engine: MemoryEngineApi,
  repoPath: string,
  rev: string,
  scope: Scope,
  branch: string | null,
  documents: ProjectDocument[],
  earlier: Set<number>,
): Promise<{ kept: number; removed: number }> {
  const sha = (await runGit(repoPath, ['rev-parse', '--verify', '--end-of-options', `${rev}^{commit}`])).trim();
  const when = Number((await runGit(repoPath, [...PLAIN_LOG_CONFIG, 'log', '-1', '--format=%ct', ...revisionArgs(sha)])).trim()) * 1000 || Date.now();
  const sessionId = `docs-${sha.slice(0, 12)}`;
  // A document the user forgot is not stored again (a newer revision of it is a new document).
  const inputs = await notForgotten(
    engine,
    scope,
    documents.map((d) => {
      const input = documentObservation(d, sessionId, when);
      if (branch) input.branch = branch;
      return input;
    }),
  );
  const kept = new Set<number>();
  for (let i = 0; i < inputs.length; i += BATCH_SIZE) {
    for (const o of await engine.observe(inputs.slice(i, i + BATCH_SIZE), scope)) kept.add(o.id);
  }
  const stale = [...earlier].filter((id) => !kept.has(id));
  // Replaced, not forgotten: no tombstone (see forget.ts replaceDocuments), and the project's
  // request log and prompts stay.
  for (let i = 0; i < stale.length; i += REPLACE_BATCH) await engine.replaceDocuments(scope, stale.slice(i, i + REPLACE_BATCH));
  return { kept: kept.size, removed: stale.length };
}
