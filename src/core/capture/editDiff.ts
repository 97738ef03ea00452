// What an edit changed: a file against its state when the session first touched it. Gives the
// hunks (with git's kind of header: the enclosing function or section line), then the parts a
// reader and the search index want, under the same caps as a commit's diff text: changed
// identifiers, comment and doc lines, string literals. Secrets are redacted line by line here,
// each line as the whole file reads (a Secret's kind line, a Terraform variable's name, a private
// key's BEGIN line may be far above the change), and again where every observation is prepared
// (prepare.ts); files whose path marks them secret get no content at all.

import type { FileDiff } from '../retrieve/diffText';
import { COMMENT_LINE, DOC_FILE, MAX_DIFF_TEXT_CHARS, MAX_LINE_CHARS, STRING_LITERAL, diffSearchText, identifiersIn, isBase64Line, isSkippedFile } from '../retrieve/diffText';
import { REDACTED, clipRedacted, isSecretPath, redact, redactEachLine } from './redact';

export interface EditHunk {
  /** 1-based first line of the hunk in the new text. */
  line: number;
  /** The closest line above the hunk that opens a function or section (git's hunk header). */
  header: string | null;
  removed: string[];
  added: string[];
}

export interface EditContent {
  hunks: EditHunk[];
  added: number;
  removed: number;
  /** Identifiers that appear in added lines and not in removed ones, and the reverse. */
  identifiersAdded: string[];
  identifiersRemoved: string[];
  /** Comment and documentation lines added. */
  comments: string[];
  /** String literals in added lines. */
  strings: string[];
  /** Bounded, readable listing of the change (what the details panel shows). */
  narrative: string | null;
  /** Bounded text for the search index (hunk headers, prose, identifiers, code). */
  searchText: string | null;
  /**
   * What redaction took out of the changed lines (the secrets themselves, at most MAX_SECRETS), so
   * that a copy of one elsewhere (a linter's message that quotes the secret it found) can be
   * redacted too. Held in memory only: not enumerable, so that no copy, JSON or clone of the
   * content carries it (a copy then has none, and redacts nothing more).
   */
  readonly secrets?: readonly string[];
}

/** Files larger than this are not diffed; the observation then says only where it changed. */
export const MAX_EDIT_FILE_CHARS = 1_000_000;
/** Bound on the narrative shown to people and agents. */
const MAX_NARRATIVE_CHARS = 2000;
const MAX_NARRATIVE_LINES = 40;
/** The LCS table is bounded; a larger middle is reported as one replaced block. */
const MAX_LCS_CELLS = 4_000_000;
/** Unchanged lines that still join two changes into one hunk (git's default context, 3 + 3). */
const JOIN_GAP = 6;
const MAX_ITEMS = 20;

// git's default funcname rule: a line that starts with a letter, '_' or '$'. Indented
// declarations count too, so a method inside a class names the method, not the class.
const METHOD_LINE = /^\s*(?:async\s+)?(?!(?:if|for|while|switch|catch|return|else)\b)[A-Za-z_$][\w$]*\s*\([^;]*\)\s*(?::\s*[^=;{]+)?\{\s*$/;
const HEADER_LINE = /^\s*(?:export\s+|public\s+|private\s+|protected\s+|static\s+|async\s+|def\s+|fn\s+|func\s+|class\s+|function\s+|interface\s+|#+\s)|^[A-Za-z_$]/;

/** A line of the change: `newLine` its 1-based place in the new text (where a removed line was), `oldLine` in the old one (where an added line goes). */
type Op = { kind: 'same' | 'add' | 'del'; text: string; newLine: number; oldLine: number };

/** Bound on the secrets an edit's content remembers (EditContent.secrets). */
const MAX_SECRETS = 100;

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Where two line lists differ: the lines before `start` and from `endA` / `endB` on are the same in both. */
export function differingMiddle(a: readonly string[], b: readonly string[]): { start: number; endA: number; endB: number } {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  return { start, endA, endB };
}

/** Line operations turning `a` into `b`: common ends trimmed, an LCS over the middle. */
export function lineOps(a: string[], b: string[]): Op[] {
  const { start, endA, endB } = differingMiddle(a, b);
  const ops: Op[] = [];
  for (let i = 0; i < start; i++) ops.push({ kind: 'same', text: b[i], newLine: i + 1, oldLine: i + 1 });
  const n = endA - start;
  const m = endB - start;
  if (n > 0 && m > 0 && (n + 1) * (m + 1) <= MAX_LCS_CELLS) {
    // lcs[i][j]: length of the LCS of a[start+i..endA) and b[start+j..endB).
    const w = m + 1;
    const lcs = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * w + j] = a[start + i] === b[start + j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[start + i] === b[start + j]) {
        ops.push({ kind: 'same', text: b[start + j], newLine: start + j + 1, oldLine: start + i + 1 });
        i++;
        j++;
      } else if (j < m && (i >= n || lcs[i * w + j + 1] >= lcs[(i + 1) * w + j])) {
        ops.push({ kind: 'add', text: b[start + j], newLine: start + j + 1, oldLine: start + i + 1 });
        j++;
      } else {
        ops.push({ kind: 'del', text: a[start + i], newLine: start + j + 1, oldLine: start + i + 1 });
        i++;
      }
    }
  } else {
    for (let i = start; i < endA; i++) ops.push({ kind: 'del', text: a[i], newLine: start + 1, oldLine: i + 1 });
    for (let j = start; j < endB; j++) ops.push({ kind: 'add', text: b[j], newLine: j + 1, oldLine: endA + 1 });
  }
  for (let j = endB; j < b.length; j++) ops.push({ kind: 'same', text: b[j], newLine: j + 1, oldLine: endA + (j - endB) + 1 });
  return ops;
}

/** The changes from `before` to `after` as hunks, each with its enclosing header line. */
export function editHunks(before: string, after: string): EditHunk[] {
  return editChange(before, after).hunks;
}

/**
 * The hunks of the change and what redaction took out of its lines. Each side's file is read
 * whole by redactEachLine, once: a changed line is read as the file reads, with what makes it
 * secret however far above it is (kind: Secret above a Secret's data, variable "db_password" {
 * above its default, a private key's BEGIN line above its body); only the lines near a change are
 * then redacted each (the rest of the file is never stored, and its header line is redacted when
 * chosen).
 */
function editChange(before: string, after: string): { hunks: EditHunk[]; secrets: string[] } {
  const oldLines = splitLines(before);
  const newLines = splitLines(after);
  const ops = lineOps(oldLines, newLines);
  if (!ops.some((op) => op.kind !== 'same')) return { hunks: [], secrets: [] };
  const near = nearChanges(ops);
  const oldRedacted = redactEachLine(oldLines, new Set(near.filter((i) => ops[i].kind !== 'add').map((i) => ops[i].oldLine - 1)));
  const newRedacted = redactEachLine(newLines, new Set(near.filter((i) => ops[i].kind !== 'del').map((i) => ops[i].newLine - 1)));
  const { text, secrets } = redactedChanges(ops, near, oldRedacted, newRedacted);
  const hunks: EditHunk[] = [];
  let cur: EditHunk | null = null;
  let gap = 0;
  ops.forEach((op, i) => {
    if (op.kind === 'same') {
      gap++;
      return;
    }
    if (!cur || gap > JOIN_GAP) {
      cur = { line: op.newLine, header: headerAbove(newRedacted, op.newLine - 1), removed: [], added: [] };
      hunks.push(cur);
    }
    gap = 0;
    const line = text.get(i);
    if (line !== undefined) (op.kind === 'add' ? cur.added : cur.removed).push(line);
  });
  return { hunks: hunks.map((h) => ({ ...h, header: h.header && clipRedacted(redact(h.header), MAX_LINE_CHARS) })), secrets };
}

/** Unchanged lines on either side of a change that redaction reads with it. */
const REDACTION_CONTEXT = 3;

/** The places in `ops` of the changed lines and of the unchanged ones within REDACTION_CONTEXT of one, in order. */
function nearChanges(ops: Op[]): number[] {
  const near = new Set<number>();
  ops.forEach((op, i) => {
    if (op.kind !== 'same') for (let k = Math.max(0, i - REDACTION_CONTEXT); k <= Math.min(ops.length - 1, i + REDACTION_CONTEXT); k++) near.add(k);
  });
  return [...near].sort((a, b) => a - b);
}

/**
 * The changed lines, by their place in `ops`, redacted, and what redaction took out of them. Each
 * line is its side's file redacted (read whole, `near` lines each) (`oldRedacted` for a removed line, `newRedacted` for an
 * added one; null where a private key took it), then redacted again with the unchanged lines
 * around it on its side, as they read in that file: a value changed alone on its line has its name
 * on the unchanged line above (a formatter's wrap). Runs of lines far apart are redacted apart.
 * Redacted whole, where an assignment still shows what its value is (a secret cut at the line's
 * limit would no longer look like one), then cut.
 */
function redactedChanges(ops: Op[], near: number[], oldRedacted: (string | null)[], newRedacted: (string | null)[]): { text: Map<number, string>; secrets: string[] } {
  const isNear = new Set(near);
  const out = new Map<number, string>();
  const secrets = new Set<string>();
  for (const left of ['del', 'add'] as const) {
    const file = left === 'del' ? newRedacted : oldRedacted;
    const picked: number[] = [];
    const lines: string[] = [];
    for (const i of near) {
      // A blank line where the runs part (a line of the other side is no gap).
      if (i > 0 && !isNear.has(i - 1) && lines.length) {
        picked.push(-1);
        lines.push('');
      }
      if (ops[i].kind === left) continue;
      picked.push(i);
      // A line the file's redaction took (a private key's) reads as blank here.
      lines.push(file[(left === 'del' ? ops[i].newLine : ops[i].oldLine) - 1] ?? '');
    }
    redactEachLine(lines).forEach((line, k) => {
      const i = picked[k];
      if (i < 0 || ops[i].kind === 'same') return;
      const whole = file[(left === 'del' ? ops[i].newLine : ops[i].oldLine) - 1];
      // A line a private key's [REDACTED] took is left out (no entry).
      const redacted = whole === null ? null : line;
      if (secrets.size < MAX_SECRETS) for (const s of hiddenBy(ops[i].text, redacted)) secrets.add(s);
      if (redacted !== null) out.set(i, clipRedacted(redacted, MAX_LINE_CHARS));
    });
  }
  return { text: out, secrets: [...secrets].slice(0, MAX_SECRETS) };
}

/**
 * What redaction took out of `raw` to give `redacted` (null: all of it): the text in place of each
 * [REDACTED], found between the parts that were kept. Where the parts cannot be placed (no rule
 * rewrites text around what it takes, so this should not happen), the whole line.
 */
function hiddenBy(raw: string, redacted: string | null): string[] {
  if (redacted === null) return raw.trim() ? [raw.trim()] : [];
  if (redacted === raw || !redacted.includes(REDACTED)) return [];
  const kept = redacted.split(REDACTED);
  const last = kept[kept.length - 1];
  if (!raw.startsWith(kept[0]) || !raw.endsWith(last) || kept[0].length + last.length > raw.length) return [raw.trim()];
  const out: string[] = [];
  let at = kept[0].length;
  for (let k = 1; k < kept.length; k++) {
    const next = k === kept.length - 1 ? raw.length - last.length : raw.indexOf(kept[k], at + 1);
    if (next < at) return [raw.trim()];
    const hidden = raw.slice(at, next);
    if (hidden) out.push(hidden);
    at = next + kept[k].length;
  }
  return out;
}

/**
 * The header of a hunk that starts at `index`: the nearest line above that opens a function or
 * section, from the file's lines redacted as the file reads. A line a private key took (null) is
 * none, nor a line of base64 alone (a key's body line that no rule saw as one).
 */
function headerAbove(lines: (string | null)[], index: number): string | null {
  for (let i = Math.min(index, lines.length) - 1; i >= 0; i--) {
    const line = lines[i];
    if (line === null || isBase64Line(line)) continue;
    if (line.trim().length > 2 && (HEADER_LINE.test(line) || METHOD_LINE.test(line)) && !COMMENT_LINE.test(line.trim())) return line.trim();
  }
  return null;
}

function uniq(values: Iterable<string>, max = MAX_ITEMS): string[] {
  return [...new Set(values)].slice(0, max);
}

/**
 * What changed in `path` from `before` to `after`. `symbols` are the enclosing symbols the
 * editor's symbol provider named (they join the hunk headers in the search text).
 */
export function describeEdit(path: string, before: string, after: string, symbols: readonly string[] = []): EditContent {
  const empty: EditContent = { hunks: [], added: 0, removed: 0, identifiersAdded: [], identifiersRemoved: [], comments: [], strings: [], narrative: null, searchText: null };
  if (isSecretPath(path) || isSkippedFile(path) || before.length > MAX_EDIT_FILE_CHARS || after.length > MAX_EDIT_FILE_CHARS) return empty;
  // Redacted line by line (editChange), where an assignment still shows what its value is; later
  // steps take strings and identifiers out of their lines, and a secret alone no longer looks like one.
  const { hunks, secrets } = editChange(before, after);
  if (hunks.length === 0) return empty;
  const isDoc = DOC_FILE.test(path);
  const added = hunks.flatMap((h) => h.added);
  const removed = hunks.flatMap((h) => h.removed);
  const idsIn = (lines: string[]): Set<string> => new Set(isDoc ? [] : lines.filter((l) => !COMMENT_LINE.test(l.trim())).flatMap((l) => identifiersIn(l.replace(STRING_LITERAL, ' '))));
  const addedIds = idsIn(added);
  const removedIds = idsIn(removed);
  const comments = uniq(added.map((l) => l.trim()).filter((l) => l.length > 3 && (isDoc || COMMENT_LINE.test(l))).map((l) => (isDoc ? l : l.replace(/^(\/\/+|\/\*+|\*+\/?|#+|<!--|--)\s*/, '').replace(/\s*(\*\/|-->)$/, ''))).filter((l) => l.length > 3));
  const strings = uniq(added.filter((l) => !COMMENT_LINE.test(l.trim())).flatMap((l) => [...l.matchAll(STRING_LITERAL)].map((m) => m[2]).filter((x) => !x.includes('[REDACTED]'))));
  const file: FileDiff = { path, hunkContexts: uniq([...symbols, ...hunks.map((h) => h.header).filter((h): h is string => !!h)]), added, removed, context: [] };
  const content: EditContent = {
    hunks,
    added: added.length,
    removed: removed.length,
    identifiersAdded: uniq([...addedIds].filter((id) => !removedIds.has(id))),
    identifiersRemoved: uniq([...removedIds].filter((id) => !addedIds.has(id))),
    comments,
    strings,
    narrative: listing(hunks),
    searchText: diffSearchText([file], MAX_DIFF_TEXT_CHARS) || null,
  };
  Object.defineProperty(content, 'secrets', { value: secrets, enumerable: false });
  return content;
}

/** The hunks as a short unified listing: `@@ header`, then `-` and `+` lines, bounded. */
function listing(hunks: EditHunk[]): string | null {
  const out: string[] = [];
  let size = 0;
  let lines = 0;
  let cut = false;
  const push = (line: string): boolean => {
    if (lines >= MAX_NARRATIVE_LINES || size + line.length + 1 > MAX_NARRATIVE_CHARS) {
      cut = true;
      return false;
    }
    out.push(line);
    size += line.length + 1;
    lines++;
    return true;
  };
  for (const h of hunks) {
    if (!push(`@@ line ${h.line}${h.header ? ` in ${h.header}` : ''}`)) break;
    for (const l of h.removed) if (l.trim() && !push(`- ${l.trim()}`)) break;
    for (const l of h.added) if (l.trim() && !push(`+ ${l.trim()}`)) break;
    if (cut) break;
  }
  if (cut) out.push('…');
  return out.length > 0 ? out.join('\n') : null;
}
