// What a commit's diff says, as bounded plain text for the search index: hunk headers (the
// enclosing function or section), documentation, comment and test-title lines, the changed
// identifiers, then the remaining changed lines. Lock files, minified and binary files are skipped,
// and so are files whose path marks them as secret (.env, keys). Every line is redacted whole
// before it is cut or split into words: a secret alone, or a piece of one, looks like any word.

import { REDACTED, isSecretPath, redact, redactEachLine } from '../capture/redact';

export interface FileDiff {
  path: string;
  /** Text after the second @@ of each hunk header (the enclosing function or heading). */
  hunkContexts: string[];
  added: string[];
  removed: string[];
  /** Unchanged lines shown around the changes. */
  context: string[];
}

/** Bound on the text kept per commit. */
export const MAX_DIFF_TEXT_CHARS = 6000;
/** Lines read per file; a generated file can hold hundreds of thousands. */
const MAX_LINES_PER_FILE = 400;
export const MAX_LINE_CHARS = 200;

const SKIPPED_FILE = /(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|npm-shrinkwrap\.json|Cargo\.lock|go\.sum|poetry\.lock|composer\.lock|Gemfile\.lock)$|\.min\.(js|css)$|\.(map|png|jpe?g|gif|ico|svg|woff2?|ttf|eot|pdf|zip|gz|tgz|jar|exe|dll|so|dylib|snap)$/i;

export const DOC_FILE = /\.(md|markdown|rst|txt|adoc)$/i;
const TEST_FILE = /(^|\/)(test|tests|spec|__tests__)\/|[._-](test|spec)\.[a-z]+$/i;
/** A quoted string on one line. */
export const STRING_LITERAL = /(["'`])((?:\\.|(?!\1)[^\\\n]){3,200})\1/g;
export const COMMENT_LINE = /^(\/\/|\/\*|\*|#(?!!)|<!--|--\s)/;
const TEST_TITLE = /\b(it|describe|test|context|suite)(\.only|\.skip)?\s*\(\s*['"`]/;

const KEYWORDS = new Set(
  ('var let const function return if else for while do switch case break continue new this typeof instanceof ' +
    'delete void in of true false null undefined try catch finally throw class extends super import export ' +
    'from default async await yield static get set public private protected readonly interface type enum ' +
    'require module exports use strict self def elif pass none lambda fn pub impl struct mut').split(' '),
);

export function isSkippedFile(path: string): boolean {
  return SKIPPED_FILE.test(path);
}

/**
 * Parses `git log -p` / `git diff` output (unified format) into per-file changes, every line
 * redacted and then cut. A file with a secret path keeps its path and none of its lines.
 */
export function parseUnifiedDiff(diff: string): FileDiff[] {
  const files: FileDiff[] = [];
  // Each file's lines in the diff's order, a hunk's start as '@', for redactedSides.
  const order = new Map<FileDiff, DiffLine[]>();
  let cur: FileDiff | null = null;
  let lines = 0;
  for (const line of diff.split('\n')) {
    if (line.startsWith('diff --git ')) {
      cur = { path: diffGitPath(line.slice('diff --git '.length)), hunkContexts: [], added: [], removed: [], context: [] };
      files.push(cur);
      order.set(cur, []);
      lines = 0;
      continue;
    }
    if (!cur) continue;
    if (line.startsWith('+++ ')) {
      const p = unquote(line.slice(4));
      if (p.startsWith('b/')) cur.path = p.slice(2);
      continue;
    }
    if (line.startsWith('--- ')) continue;
    if (line.startsWith('rename to ')) {
      cur.path = unquote(line.slice('rename to '.length));
      continue;
    }
    if (isSecretPath(cur.path)) continue;
    if (line.startsWith('@@')) {
      const ctx = /^@@[^@]*@@\s?(.*)$/.exec(line)?.[1]?.trim();
      if (ctx) cur.hunkContexts.push(redact(ctx).slice(0, MAX_LINE_CHARS));
      order.get(cur)!.push({ kind: '@', text: '' });
      continue;
    }
    if (lines >= MAX_LINES_PER_FILE) continue;
    const kind = line[0];
    if (kind === '+' || kind === '-' || kind === ' ') {
      lines++;
      order.get(cur)!.push({ kind, text: line.slice(1) });
    }
  }
  return files.filter((f) => f.path !== '').map((f) => ({ ...f, ...redactedSides(order.get(f)!) }));
}

interface DiffLine {
  /** '+' added, '-' removed, ' ' unchanged, '@' the start of a hunk. */
  kind: '+' | '-' | ' ' | '@';
  text: string;
}

/**
 * A file's changed and unchanged lines, each side redacted as the file reads, then cut: the
 * lines after the change with the unchanged ones around them, and the lines before it likewise.
 * A value changed alone on its line (a rotated password a formatter wrapped) has its name on the
 * unchanged line above, which redaction of the changed lines alone never saw. Hunks stay apart (a
 * blank line between them), and a line is redacted whole before it is cut (a secret cut at the
 * line's limit would no longer look like one).
 */
function redactedSides(lines: DiffLine[]): Pick<FileDiff, 'added' | 'removed' | 'context'> {
  const side = (left: DiffLine['kind']): DiffLine[] => {
    const kept = lines.filter((l) => l.kind !== left);
    const redacted = redactEachLine(kept.map((l) => l.text));
    // A line a private key's [REDACTED] took is left out.
    return kept.flatMap((l, i) => (redacted[i] === null ? [] : [{ kind: l.kind, text: redacted[i].slice(0, MAX_LINE_CHARS) }]));
  };
  const of = (ls: DiffLine[], kind: DiffLine['kind']): string[] => ls.filter((l) => l.kind === kind).map((l) => l.text);
  const after = side('-');
  return { added: of(after, '+'), context: of(after, ' '), removed: of(side('+'), '-') };
}

const C_ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/**
 * Reads the C-quoted string at the start of `s`, as git writes a path holding a quote, a
 * backslash, a control character or (with core.quotePath) a non-ASCII byte in octal.
 */
function readQuoted(s: string): { value: string; end: number } {
  const bytes: number[] = [];
  let i = 1;
  while (i < s.length && s[i] !== '"') {
    if (s[i] !== '\\') {
      const ch = String.fromCodePoint(s.codePointAt(i)!);
      bytes.push(...Buffer.from(ch, 'utf8'));
      i += ch.length;
      continue;
    }
    const octal = /^[0-7]{3}/.exec(s.slice(i + 1, i + 4));
    if (octal) {
      bytes.push(parseInt(octal[0], 8));
      i += 4;
    } else {
      bytes.push(C_ESCAPES[s[i + 1]] ?? s.charCodeAt(i + 1));
      i += 2;
    }
  }
  return { value: Buffer.from(bytes).toString('utf8'), end: i + 1 };
}

/** A path as git prints it after `+++ ` or `rename to `: C-quoted, or bare with a tab after it when it holds a space. */
function unquote(p: string): string {
  if (p.startsWith('"')) return readQuoted(p).value;
  return p.endsWith('\t') ? p.slice(0, -1) : p.trimEnd();
}

/**
 * The new path of a `diff --git a/<old> b/<new>` header. Either name is C-quoted when it needs
 * to be; bare names may hold " b/", and without renames both are the same, which says where
 * the second starts.
 */
function diffGitPath(names: string): string {
  if (names.startsWith('"')) {
    const rest = names.slice(readQuoted(names).end + 1);
    const b = unquote(rest);
    return b.startsWith('b/') ? b.slice(2) : '';
  }
  const same = names.slice(2, (names.length - 1) / 2);
  if (names === `a/${same} b/${same}`) return same;
  const m = / ("?b\/.*)$/.exec(names);
  const b = m ? unquote(m[1]) : '';
  return b.startsWith('b/') ? b.slice(2) : '';
}

function meaningful(line: string): string | null {
  const t = line.trim();
  if (t.length < 3 || !/[A-Za-z]{2}/.test(t)) return null;
  return t;
}

/**
 * Identifiers in code: names of three or more characters that are not language keywords. The
 * marker of a redacted secret is not one.
 */
export function identifiersIn(line: string): string[] {
  const out: string[] = [];
  for (const m of line.replaceAll(REDACTED, ' ').matchAll(/[A-Za-z_$][A-Za-z0-9_$]{2,}/g)) {
    const id = m[0];
    if (!KEYWORDS.has(id)) out.push(id);
  }
  return out;
}

const PY_FILE = /\.pyi?$/i;

/**
 * Which of a Python file's changed lines (added or removed, in order) are inside a docstring
 * or another triple-quoted string: documentation a reader looks for, like a comment.
 */
export function docstringLines(path: string, lines: string[]): boolean[] {
  const out = lines.map(() => false);
  if (!PY_FILE.test(path)) return out;
  let open: string | null = null;
  lines.forEach((line, i) => {
    const quotes = line.match(/"""|'''/g) ?? [];
    if (open !== null || quotes.length > 0) out[i] = true;
    for (const q of quotes) {
      if (open === null) open = q;
      else if (open === q) open = null;
    }
  });
  return out;
}

/**
 * Names the diff's code touches, most mentioned first: identifiers on changed code lines and
 * the definitions named by hunk headers (`def name`, `function name`, `class Name`).
 */
export function touchedNames(files: FileDiff[]): string[] {
  const counts = new Map<string, number>();
  const add = (id: string, n = 1): void => void counts.set(id, (counts.get(id) ?? 0) + n);
  for (const f of files) {
    if (isSkippedFile(f.path) || isSecretPath(f.path) || DOC_FILE.test(f.path) || TEST_FILE.test(f.path)) continue;
    for (const c of f.hunkContexts) {
      const def = /\b(?:def|class|function|fn|func)\s+([A-Za-z_$][\w$]*)/.exec(c);
      if (def) add(def[1], 2);
    }
    const changed = [...f.added, ...f.removed];
    const docs = [...docstringLines(f.path, f.added), ...docstringLines(f.path, f.removed)];
    changed.forEach((raw, i) => {
      const line = meaningful(raw);
      if (!line || docs[i] || COMMENT_LINE.test(line)) return;
      for (const id of identifiersIn(line.replace(STRING_LITERAL, ' '))) add(id);
    });
  }
  return [...counts].sort((a, b) => b[1] - a[1]).map(([id]) => id);
}

/** Bounded text of what the diff says, in order of how much each part tells a reader. */
export function diffSearchText(files: FileDiff[], maxChars = MAX_DIFF_TEXT_CHARS, withContext = false): string {
  const kept = files.filter((f) => !isSkippedFile(f.path) && !isSecretPath(f.path));
  const seen = new Set<string>();
  const prose: string[] = [];
  const code: string[] = [];
  const contexts: string[] = [];
  const identifiers = new Set<string>();
  for (const f of kept) {
    const isDoc = DOC_FILE.test(f.path);
    const isTest = TEST_FILE.test(f.path);
    for (const c of f.hunkContexts) {
      if (!seen.has(c)) {
        seen.add(c);
        contexts.push(c);
      }
    }
    const changed = [...f.added, ...f.removed];
    const docs = [...docstringLines(f.path, f.added), ...docstringLines(f.path, f.removed)];
    for (const [i, raw] of changed.entries()) {
      const line = meaningful(raw);
      if (!line || seen.has(line)) continue;
      seen.add(line);
      if (isDoc || docs[i] || COMMENT_LINE.test(line) || (isTest && TEST_TITLE.test(line))) {
        prose.push(line);
      } else {
        code.push(line);
        // Not from inside strings: a quoted secret stays inside its line, where redaction sees
        // its assignment, instead of standing alone in the identifier list.
        if (!isDoc) for (const id of identifiersIn(line.replace(STRING_LITERAL, ' '))) identifiers.add(id);
      }
    }
  }
  const parts: string[] = [];
  let size = 0;
  const push = (s: string): void => {
    if (!s || size + s.length + 1 > maxChars) return;
    parts.push(s);
    size += s.length + 1;
  };
  for (const c of contexts) push(c);
  for (const p of prose) push(p);
  push([...identifiers].join(' ').slice(0, Math.max(0, maxChars - size - 1)));
  for (const c of code) push(c);
  if (withContext) {
    for (const f of kept) {
      for (const raw of f.context) {
        const line = meaningful(raw);
        if (line && !seen.has(line)) {
          seen.add(line);
          push(line);
        }
      }
    }
  }
  return parts.join('\n');
}
