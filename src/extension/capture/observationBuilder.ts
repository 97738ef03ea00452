// Pure: turns a batch of raw capture events into observation inputs. Merges what belongs
// together (several focus periods on one file, many files changed by one checkout) so that
// the store holds one observation per meaningful thing, not one per keystroke or watcher event.

import { append } from '../../core/lists';
import { createHash } from 'node:crypto';
import type { ObservationInput } from '../../core/api';
import type { EditContent } from '../../core/capture/editDiff';
import { REDACTED, redact } from '../../core/capture/redact';
import { firstFailingTest } from '../../core/capture/testOutput';
import { clipRedacted } from '../../core/capture/redact';
import type { CaptureEvent, EditEvent, FileEvent } from './events';
import { AMENDS, COMMITS_LEFT } from '../../core/compress/summariser';

export interface CommitDetails {
  subject: string;
  body: string;
  files: string[];
  author: string | null;
  /** Set where the new HEAD is not a child of the old one: HEAD moved (pull, merge, reset, rebase) without a commit being made. */
  moved?: { from: string; ahead: number | null; behind: number | null; left?: string[] };
}

/**
 * Every map of an Enrichment is keyed by folder and path (fileKey): two workspace folders (two
 * repositories in one window) may each hold a src/index.ts, and nothing of one may reach the other's observation.
 */
export interface Enrichment {
  /** Symbols touched by an edit, keyed by fileKey(folder, editKey()). */
  symbols: Map<string, string[]>;
  /** What an edit changed against the file's state when the session first touched it, keyed by fileKey(folder, editKey()). */
  edits?: Map<string, EditContent>;
  /** What a file reloaded in an editor changed on disk, keyed by fileKey(folder, path). */
  diskEdits?: Map<string, EditContent>;
  /** Problems (errors, warnings) on an edited file after the edit, keyed by fileKey(folder, path). */
  problems?: Map<string, string[]>;
  /** Git blob ids of files deleted and created in the batch, keyed by fileKey(folder, path): equal ids make a rename. */
  contentIds?: Map<string, string>;
  /** Message and files of a commit, keyed by fileKey(folder, SHA). */
  commits: Map<string, CommitDetails>;
  /** Branch of the folder at the time of the batch. */
  branchOf: (folder: string) => string | null;
}

/** HEAD moved to `sha` without a commit on top of the old HEAD: what happened, not a commit. */
function headMoved(sha: string, branch: string | null, d: CommitDetails): ObservationInput {
  const { from, ahead, behind } = d.moved!;
  const short = sha.slice(0, 8);
  const plural = (n: number): string => `${n} commit${n === 1 ? '' : 's'}`;
  const what =
    ahead && !behind
      ? `pulled/merged ${plural(ahead)}`
      : behind && !ahead
        ? `reset to ${short}${d.subject ? ` (${d.subject})` : ''}`
        : ahead && behind
          ? `rewritten to ${short} (${plural(ahead)} in, ${plural(behind)} out)`
          : `moved to ${short}`;
  return {
    type: 'checkout',
    title: `HEAD moved on ${branch ?? 'detached HEAD'}: ${what}`,
    subtitle: `${from.slice(0, 8)} → ${short}`,
    branch: branch ?? undefined,
    commit_sha: sha,
    facts: [
      `HEAD moved from ${from.slice(0, 8)} to ${short}${ahead ? `, ${plural(ahead)} added` : ''}${behind ? `, ${plural(behind)} left` : ''}; no commit was made`,
      // The session's summary tells a commit made and then left behind (a reset, a rebase) from one that stands.
      ...(d.moved?.left?.length ? [`${COMMITS_LEFT} ${d.moved.left.map((c) => c.slice(0, 12)).join(' ')}`] : []),
    ],
    dedupe_key: `head:${from}:${sha}`,
  };
}

/** An edit observation's key within the batch: its path, and which part of the session's work on it. */
export function editKey(e: EditEvent): string {
  return e.part ? `${e.path}#${e.part}` : e.path;
}

/** The longest grow_key the engine takes (prepare.ts). */
const MAX_GROW_KEY_CHARS = 1000;

/**
 * The grow_key of an edit observation, from its editKey(): `edit:<path>`, or for a path too long for
 * the engine's limit `edit:sha256:<hex>` of it (the same path, the same key; never refused).
 */
export function editGrowKey(key: string): string {
  const plain = `edit:${key}`;
  return plain.length <= MAX_GROW_KEY_CHARS ? plain : `edit:sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/** The key of a file's enrichment in a batch: its workspace folder and its path (or editKey()). */
export function fileKey(folder: string, path: string): string {
  return `${folder}\0${path}`;
}

/** Above this many file events of one kind in a batch, they become one grouped observation. */
const GROUP_ABOVE = 5;
/** Bound on a terminal command kept as the narrative, and on its first line as the title. */
const MAX_COMMAND_CHARS = 300;
const MAX_TITLE_COMMAND_CHARS = 80;
/** Text read past a cut, so that a secret the cut falls inside is seen whole (a private key is a few kilobytes). */
const READ_PAST_CUT = 64 * 1024;

/**
 * A commit's subject and body as git import keeps them: the message redacted whole, then split at
 * its first line. Redacted apart, a private key opened in the subject would leave its body lines
 * (the key's) in the body, which alone no rule takes for a key's.
 */
function redactedMessage(d: CommitDetails | undefined): CommitDetails | undefined {
  if (!d || (!d.subject && !d.body)) return d;
  const msg = redact(d.body ? `${d.subject}\n\n${d.body}` : d.subject);
  const nl = msg.indexOf('\n');
  return { ...d, subject: (nl < 0 ? msg : msg.slice(0, nl)).trim(), body: nl < 0 ? '' : msg.slice(nl + 1).trim() };
}

export function buildObservations(events: readonly CaptureEvent[], enrich: Enrichment): Map<string, ObservationInput[]> {
  const byFolder = new Map<string, CaptureEvent[]>();
  for (const e of events) {
    const list = byFolder.get(e.folder);
    if (list) list.push(e);
    else byFolder.set(e.folder, [e]);
  }
  const out = new Map<string, ObservationInput[]>();
  for (const [folder, list] of byFolder) {
    // Events carry the branch they were recorded on; those without it get the folder's branch now.
    const byBranch = new Map<string | null, CaptureEvent[]>();
    const now = enrich.branchOf(folder);
    for (const e of list) {
      const branch = e.branch === undefined ? now : e.branch;
      const group = byBranch.get(branch);
      if (group) group.push(e);
      else byBranch.set(branch, [e]);
    }
    const inputs: ObservationInput[] = [];
    for (const [branch, group] of byBranch) {
      const built = buildForFolder(folder, group, enrich);
      for (const input of built) if (input.branch === undefined && branch) input.branch = branch;
      append(inputs, built);
    }
    if (inputs.length > 0) out.set(folder, inputs);
  }
  return out;
}

function buildForFolder(folder: string, events: CaptureEvent[], enrich: Enrichment): ObservationInput[] {
  const inputs: ObservationInput[] = [];
  const reads = new Map<string, { ms: number; at: number; focused: boolean }>();
  const edits = new Map<string, EditEvent[]>();
  const reloads = new Map<string, FileEvent>();
  const renames: { from: string; to: string }[] = [];
  const files: Record<'create' | 'delete' | 'disk_change', { path: string; at: number }[]> = {
    create: [],
    delete: [],
    disk_change: [],
  };

  for (const e of events) {
    switch (e.kind) {
      case 'read': {
        const r = reads.get(e.path) ?? { ms: 0, at: e.at, focused: false };
        r.ms += e.ms;
        r.focused ||= e.ms > 0;
        reads.set(e.path, r);
        break;
      }
      case 'edit': {
        const key = editKey(e);
        const list = edits.get(key) ?? [];
        list.push(e);
        edits.set(key, list);
        break;
      }
      case 'disk_change':
        // A reload in an editor is no echo of an editor's save: it is kept apart, with its diff.
        if (e.reloaded) reloads.set(e.path, e);
        else files.disk_change.push({ path: e.path, at: e.at });
        break;
      case 'create':
      case 'delete':
        files[e.kind].push({ path: e.path, at: e.at });
        break;
      case 'rename':
        renames.push({ from: e.from, to: e.path });
        inputs.push({
          type: 'rename',
          title: `Renamed ${e.from} to ${e.path}`,
          files_modified: [e.from, e.path],
          facts: [`${e.from} was renamed to ${e.path}`],
          created_at_epoch: e.at,
        });
        break;
      case 'commit': {
        const d = redactedMessage(enrich.commits.get(fileKey(e.folder, e.sha)));
        // `commit --amend` replaces HEAD by one commit on the same parent: still a commit made.
        const amended = d?.moved?.ahead === 1 && d.moved.behind === 1;
        if (d?.moved && !amended) {
          inputs.push({ ...headMoved(e.sha, e.branch, d), created_at_epoch: e.at });
          break;
        }
        inputs.push({
          type: 'commit',
          title: d?.subject || `Commit ${e.sha.slice(0, 8)}`,
          subtitle: `${e.sha.slice(0, 8)} on ${e.branch ?? 'detached HEAD'}${d?.author ? ` by ${d.author}` : ''}${amended && d?.moved ? `, amending ${d.moved.from.slice(0, 8)}` : ''}`,
          narrative: d?.body || undefined,
          files_modified: d?.files.slice(0, 100),
          commit_sha: e.sha,
          branch: e.branch ?? undefined,
          facts: d ? [`${d.files.length} file(s) changed in ${e.sha.slice(0, 8)}`, ...(amended && d.moved ? [`${AMENDS} ${d.moved.from.slice(0, 12)}`] : [])] : undefined,
          dedupe_key: `commit:${e.sha}`,
          created_at_epoch: e.at,
        });
        break;
      }
      case 'checkout':
        inputs.push({
          type: 'checkout',
          title: `Switched to ${e.branch ?? `detached HEAD ${e.sha?.slice(0, 8) ?? ''}`.trim()}`,
          subtitle: e.from ? `from ${e.from}` : undefined,
          branch: e.branch ?? undefined,
          commit_sha: e.sha ?? undefined,
          facts: [`HEAD moved from ${e.from ?? 'unknown'} to ${e.branch ?? e.sha ?? 'unknown'}`],
          created_at_epoch: e.at,
        });
        break;
      case 'task': {
        const outcome = e.exitCode === null ? 'ended' : e.exitCode === 0 ? 'succeeded' : `failed (exit ${e.exitCode})`;
        const isTest = e.group === 'test' || looksLikeTest(e.name);
        const what = isTest ? 'Test task' : 'Task';
        const failure = e.exitCode ? firstFailingTest(e.output) : null;
        inputs.push({
          type: 'task',
          title: `${what} '${e.name}' ${outcome}`,
          subtitle: failure ? `first failing test: ${failure.name}` : e.source,
          narrative: failure ? failureText(failure) : undefined,
          concepts: isTest ? ['test'] : e.group ? [e.group] : undefined,
          facts: [`${what.toLowerCase()} ${e.name} ${outcome}`, ...(failure ? [failureFact(failure)] : [])],
          created_at_epoch: e.at,
        });
        break;
      }
      case 'terminal': {
        const outcome = e.exitCode === null ? 'ran' : e.exitCode === 0 ? 'succeeded' : `failed (exit ${e.exitCode})`;
        // Redacted whole, then cut (here and for the title): a token the cut fell inside would no
        // longer look like one. A private key that takes the command's lines leaves its first.
        // Redaction reads a bounded way past the cut: what lies further is never kept.
        const redacted = redact(e.command.slice(0, MAX_COMMAND_CHARS + READ_PAST_CUT));
        const command = clipRedacted(redacted, MAX_COMMAND_CHARS + 1, '…');
        const isTest = looksLikeTest(command);
        const failure = e.exitCode ? firstFailingTest(e.output) : null;
        inputs.push({
          type: 'terminal',
          title: `\`${firstLine(redacted)}\` ${outcome}`,
          subtitle: failure ? `first failing test: ${failure.name}` : (e.cwd ?? undefined),
          narrative: failure ? `${command}\n${failureText(failure)}` : command,
          concepts: isTest ? ['test'] : undefined,
          facts: [`${isTest ? 'tests' : 'command'} \`${firstLine(redacted)}\` ${outcome}`, ...(failure ? [failureFact(failure)] : [])],
          created_at_epoch: e.at,
        });
        break;
      }
      case 'debug': {
        const title = e.ended ? `Debug session '${e.name}' ended after ${formatMs(e.ms ?? 0)}` : `Debug session '${e.name}' started`;
        inputs.push({ type: 'debug', title, subtitle: e.type, facts: [title.toLowerCase()], created_at_epoch: e.at });
        break;
      }
    }
  }

  for (const [key, list] of edits) inputs.push(editObservation(list[0].path, list, enrich, key));
  for (const [path, e] of reloads) inputs.push(reloadObservation(path, e, enrich.diskEdits?.get(fileKey(e.folder, path))));
  // An edit in the editor already covers the watcher's echo of the same save.
  const editedPaths = new Set([...edits.values()].map((list) => list[0].path));
  files.disk_change = files.disk_change.filter((f) => !editedPaths.has(f.path));

  for (const [path, r] of reads) {
    if (editedPaths.has(path)) continue;
    inputs.push({
      type: 'read',
      title: `Read ${path}${r.focused ? ` (${formatMs(r.ms)})` : ''}`,
      subtitle: r.focused ? undefined : 'visible in an editor',
      files_read: [path],
      created_at_epoch: r.at,
    });
  }

  // The watcher reports an editor rename as delete + create: the rename already says it.
  const renamed = new Set(renames.flatMap((r) => [r.from, r.to]));
  files.create = files.create.filter((f) => !renamed.has(f.path));
  files.delete = files.delete.filter((f) => !renamed.has(f.path));
  // Another process's rename (git mv, mv) is a delete and a create of the same file name and the
  // same content (what git holds of the deleted file is what the created one holds): a name
  // alone (two index.ts) is no rename.
  const idOf = (path: string): string | undefined => enrich.contentIds?.get(fileKey(folder, path));
  for (const d of [...files.delete]) {
    const name = d.path.slice(d.path.lastIndexOf('/') + 1);
    const id = idOf(d.path);
    if (!id) continue;
    const c = files.create.find((f) => f.path !== d.path && f.path.slice(f.path.lastIndexOf('/') + 1) === name && idOf(f.path) === id);
    if (!c) continue;
    files.delete.splice(files.delete.indexOf(d), 1);
    files.create.splice(files.create.indexOf(c), 1);
    inputs.push({
      type: 'rename',
      title: `Renamed ${d.path} to ${c.path}`,
      files_modified: [d.path, c.path],
      facts: [`${d.path} was renamed to ${c.path}`],
      created_at_epoch: c.at,
    });
  }

  pushFileGroup(inputs, files.create, 'create', 'Created', 'created');
  pushFileGroup(inputs, files.delete, 'delete', 'Deleted', 'deleted');
  pushFileGroup(inputs, files.disk_change, 'edit', 'Changed on disk:', 'changed on disk');
  return inputs;
}

/**
 * One edit observation per file and session: the last event carries the whole change since the
 * session first touched the file, so it replaces what earlier saves stored (grow_key).
 */
export function editObservation(path: string, list: EditEvent[], enrich: Enrichment, key = path): ObservationInput {
  const last = list[list.length - 1];
  const symbols = enrich.symbols.get(fileKey(last.folder, key)) ?? [];
  const content = enrich.edits?.get(fileKey(last.folder, key));
  const hunks = content?.hunks.length ?? 0;
  const lines = new Set<number>();
  for (const e of list) for (const l of e.lines) lines.add(l);
  const range = lineRanges([...lines]);
  const where = symbols.length ? ` (${symbols.slice(0, 3).join(', ')}${symbols.length > 3 ? ', …' : ''})` : '';
  const counts = [
    last.saves > 0 ? `${last.saves} save${last.saves === 1 ? '' : 's'}` : 'not saved',
    content ? `${hunks} hunk${hunks === 1 ? '' : 's'}, +${content.added} −${content.removed} lines` : range ? `lines ${range}` : '',
  ].filter(Boolean);
  const facts: string[] = [];
  if (symbols.length) facts.push(`changed ${symbols.slice(0, 10).join(', ')} in ${path}`);
  if (content?.identifiersAdded.length) facts.push(`added in ${path}: ${content.identifiersAdded.slice(0, 12).join(', ')}`);
  if (content?.identifiersRemoved.length) facts.push(`removed from ${path}: ${content.identifiersRemoved.slice(0, 12).join(', ')}`);
  for (const c of content?.comments.slice(0, 5) ?? []) facts.push(`comment in ${path}: ${c}`);
  if (content?.strings.length) facts.push(`strings in ${path}: ${content.strings.slice(0, 5).map((x) => `"${x}"`).join(', ')}`);
  const after = enrich.problems?.get(fileKey(last.folder, path));
  if (after) {
    const before = new Set(last.problemsBefore);
    const now = new Set(after);
    const secrets = content?.secrets ?? [];
    for (const p of after.filter((x) => !before.has(x)).slice(0, 5)) facts.push(`problem introduced in ${path}: ${redactProblem(p, secrets)}`);
    for (const p of last.problemsBefore.filter((x) => !now.has(x)).slice(0, 5)) facts.push(`problem cleared in ${path}: ${redactProblem(p, secrets)}`);
  }
  const saved = last.saved || (last.saves > 0 && list.some((e) => e.saved));
  const searchExtra = [symbols.join(' '), content?.searchText].filter(Boolean).join('\n') || undefined;
  // Unsaved work told of before, now undone: the observation it grew keeps what was tried, and
  // says that no file was modified (a session's summary then tells of no change there, nor of
  // work left to save).
  if (last.reverted) {
    const title = last.saves > 0 ? `Reverted edits in ${path}${where}` : `Reverted unsaved edits in ${path}${where}`;
    return { type: 'edit', title, subtitle: [last.saves > 0 ? `${last.saves} saves, changed back` : 'not saved, reverted', ...counts.slice(1)].join(' · '), narrative: content?.narrative ?? undefined, search_extra: searchExtra, grow_key: editGrowKey(key), created_at_epoch: last.at };
  }
  return {
    type: 'edit',
    title: `${saved ? 'Edited' : 'Unsaved edits in'} ${path}${where}`,
    subtitle: counts.join(' · '),
    narrative: content?.narrative ?? undefined,
    files_modified: [path],
    concepts: symbols.length || content?.identifiersAdded.length ? [...symbols, ...(content?.identifiersAdded ?? [])].slice(0, 20) : undefined,
    facts,
    search_extra: searchExtra,
    grow_key: editGrowKey(key),
    created_at_epoch: last.at,
  };
}

/** The least length of a piece of a secret that a problem's message loses (a message cut at its limit ends in one). */
const MIN_SECRET_PIECE = 8;

/**
 * A linter's words for having found a secret (eslint-plugin-no-secrets: Found a string with
 * entropy 4.9 : "..."; a hard-coded password, a possible API key): what such a message quotes is
 * the secret, whether or not the edit's lines showed it as one.
 */
const SECRET_FINDING = /\bentropy\b|\b(?:hard-?coded|possible|potential|detected|found|exposed|leaked)\b[^"'`]{0,40}?\b(?:secrets?|passwords?|credentials?|api[ _-]?keys?|tokens?|private keys?)\b/i;

/**
 * A problem's message (an edit's fact) with the edit's secrets taken out. A linter that finds a
 * secret quotes it, and the quote alone has nothing that tells a rule it is one; the edited lines
 * do: `secrets` is what redaction took out of them (EditContent.secrets). Each of them in the
 * message, and each run of MIN_SECRET_PIECE or more characters of one (a message cut inside it),
 * becomes [REDACTED]; so does a quote of MIN_SECRET_PIECE or more characters in a message that says
 * it found a secret (SECRET_FINDING). The message is redacted by the rules too (prepare.ts).
 */
export function redactProblem(message: string, secrets: readonly string[]): string {
  const spans: [number, number][] = [];
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_PIECE) {
      // A short secret only as a word of its own: four characters may be part of any word.
      if (secret.trim().length < 4) continue;
      const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      for (const m of message.matchAll(new RegExp(`(?<![A-Za-z0-9_])${escaped}(?![A-Za-z0-9_])`, 'g'))) spans.push([m.index, m.index + secret.length]);
      continue;
    }
    for (let i = 0; i + MIN_SECRET_PIECE <= message.length; i++) {
      if (!secret.includes(message.slice(i, i + MIN_SECRET_PIECE))) continue;
      let end = i + MIN_SECRET_PIECE;
      while (end < message.length && secret.includes(message.slice(i, end + 1))) end++;
      spans.push([i, end]);
      i = end - 1;
    }
  }
  if (SECRET_FINDING.test(message)) {
    for (const m of message.matchAll(/(["'`])([^"'`\n]{8,}?)\1/g)) spans.push([m.index + 1, m.index + 1 + m[2].length]);
  }
  if (spans.length === 0) return message;
  spans.sort((a, b) => a[0] - b[0]);
  let out = '';
  let at = 0;
  for (const [start, end] of spans) {
    if (end <= at) continue;
    out += `${message.slice(at, Math.max(at, start))}${start >= at ? REDACTED : ''}`;
    at = end;
  }
  return out + message.slice(at);
}

/** A file open in an editor changed on disk (a formatter, a checkout): what changed, where the text before is known. */
function reloadObservation(path: string, e: FileEvent, content: EditContent | undefined): ObservationInput {
  const hunks = content?.hunks.length ?? 0;
  const facts = [`${path} changed on disk`];
  if (content?.identifiersAdded.length) facts.push(`added in ${path}: ${content.identifiersAdded.slice(0, 12).join(', ')}`);
  if (content?.identifiersRemoved.length) facts.push(`removed from ${path}: ${content.identifiersRemoved.slice(0, 12).join(', ')}`);
  return {
    type: 'edit',
    title: `Changed on disk: ${path}`,
    subtitle: hunks > 0 ? `while open in an editor · ${hunks} hunk${hunks === 1 ? '' : 's'}, +${content!.added} −${content!.removed} lines` : 'while open in an editor',
    narrative: content?.narrative ?? undefined,
    files_modified: [path],
    facts,
    search_extra: content?.searchText ?? undefined,
    created_at_epoch: e.at,
  };
}

function failureText(f: { name: string; message: string | null }): string {
  return `First failing test: ${f.name}${f.message ? `\n${f.message}` : ''}`;
}

function failureFact(f: { name: string; message: string | null }): string {
  return `test failed: ${f.name}${f.message ? ` (${f.message})` : ''}`;
}

function pushFileGroup(inputs: ObservationInput[], list: { path: string; at: number }[], type: string, verb: string, fact: string): void {
  if (list.length === 0) return;
  const paths = [...new Set(list.map((f) => f.path))];
  const modified = type === 'delete' || type === 'create' || type === 'edit';
  if (paths.length <= GROUP_ABOVE) {
    for (const path of paths) {
      inputs.push({
        type,
        title: `${verb} ${path}`,
        files_modified: modified ? [path] : undefined,
        facts: [`${path} ${fact}`],
        created_at_epoch: list[list.length - 1].at,
      });
    }
    return;
  }
  inputs.push({
    type,
    title: `${verb} ${paths.length} files`,
    subtitle: commonFolder(paths),
    files_modified: paths.slice(0, 100),
    facts: [`${paths.length} files ${fact}`],
    created_at_epoch: list[list.length - 1].at,
  });
}

export function lineRanges(lines: number[]): string {
  if (lines.length === 0) return '';
  const sorted = [...new Set(lines)].sort((a, b) => a - b);
  const parts: string[] = [];
  let start = sorted[0];
  let prev = start;
  for (const l of sorted.slice(1)) {
    if (l === prev + 1) {
      prev = l;
      continue;
    }
    parts.push(start === prev ? `${start + 1}` : `${start + 1}-${prev + 1}`);
    start = prev = l;
  }
  parts.push(start === prev ? `${start + 1}` : `${start + 1}-${prev + 1}`);
  return parts.length > 6 ? `${parts.slice(0, 6).join(', ')}, …` : parts.join(', ');
}

export function formatMs(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return s % 60 ? `${m}m ${s % 60}s` : `${m}m`;
}

function commonFolder(paths: string[]): string | undefined {
  const parts = paths.map((p) => p.split('/').slice(0, -1));
  const first = parts[0];
  let n = first.length;
  for (const p of parts) {
    let i = 0;
    while (i < n && p[i] === first[i]) i++;
    n = i;
  }
  return n > 0 ? `in ${first.slice(0, n).join('/')}/` : undefined;
}

/** The first line of text already redacted, cut (never inside a [REDACTED] marker). */
function firstLine(s: string): string {
  return clipRedacted(s.split('\n')[0], MAX_TITLE_COMMAND_CHARS + 1, '…');
}

function looksLikeTest(command: string): boolean {
  return /\b(test|tests|mocha|jest|vitest|pytest|go test|cargo test|npm t)\b/.test(command);
}
