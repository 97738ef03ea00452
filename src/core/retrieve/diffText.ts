// What a commit's diff says, as bounded plain text for the search index: hunk headers (the
// enclosing function or section), documentation, comment and test-title lines, the changed
// identifiers, then the remaining changed lines. Lock files, minified and binary files are skipped,
// and so are files whose path marks them as secret (.env, keys). Every line is redacted whole
// before it is cut or split into words: a secret alone, or a piece of one, looks like any word.

import { REDACTED, clipRedacted, isSecretPath, redactEachLine } from '../capture/redact';

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
 * A line that cannot be a section's header, as a hunk's header (the nearest line above that starts
 * with a letter) may be: one of base64 characters only, no space (a private key's or a
 * certificate's body line, its short last line): 16 or more of them, or fewer with padding ('=')
 * or with digits and both cases (Zq9Tail7==). Code's one-word lines (else, end, BEGIN) are not.
 */
export function isBase64Line(line: string): boolean {
  const t = line.trim();
  // Sixteen letters alone are a word (Internationalization, Acknowledgements): base64 of that length has a digit, '+', '/' or '='.
  return /^(?=[A-Za-z]*[0-9+/=])[A-Za-z0-9+/]{16,}={0,2}$/.test(t) || /^[A-Za-z0-9+/]{2,}={1,2}$/.test(t) || /^(?=[^\d]*\d)(?=[^a-z]*[a-z])(?=[^A-Z]*[A-Z])[A-Za-z0-9+/]{8,}$/.test(t);
}

/** A Kubernetes manifest's kind line for a Secret (kind: Secret, "kind": "Secret",). */
const SECRET_KIND = /^[ \t]*[-{]?[ \t]*["']?kind["']?[ \t]*:[ \t]*["']?Secret["']?[ \t]*(?:[,}#]|$)/;

/**
 * Parses `git log -p` / `git diff` output (unified format) into per-file changes, every line
 * redacted and then cut. A file with a secret path keeps its path and none of its lines.
 *
 * `secretManifests`, where given, holds the paths of the files known to be Kubernetes Secrets
 * (kind: Secret) and is kept up to date: a file whose diff shows that line is added to it. A
 * Secret's data is redacted only in text that says the manifest is one, and a diff of a rotated
 * value with git's context shows its data lines alone: a caller that reads a history oldest first
 * (as git import does, and without renames, so a file's first diff is all of it) passes the same
 * set for every commit, and a later change of a Secret's data is redacted as the Secret's.
 */
export function parseUnifiedDiff(diff: string, secretManifests?: Set<string>): FileDiff[] {
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
      // The header (the nearest line above the hunk that starts with a letter) is redacted with
      // the hunk's lines below it (redactedSides).
      order.get(cur)!.push({ kind: '@', text: /^@@[^@]*@@\s?(.*)$/.exec(line)?.[1]?.trim() ?? '' });
      continue;
    }
    const kind = line[0];
    if (secretManifests && (kind === '+' || kind === '-' || kind === ' ') && line.includes('Secret') && SECRET_KIND.test(line.slice(1))) secretManifests.add(cur.path);
    if (lines >= MAX_LINES_PER_FILE) continue;
    if (kind === '+' || kind === '-' || kind === ' ') {
      lines++;
      order.get(cur)!.push({ kind, text: line.slice(1) });
    }
  }
  return files.filter((f) => f.path !== '').map((f) => ({ ...f, ...redactedSides(order.get(f)!, secretManifests?.has(f.path) ?? false) }));
}

interface DiffLine {
  /** '+' added, '-' removed, ' ' unchanged, '@' the start of a hunk (its header as text, or ''). */
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
 *
 * Each hunk's header (a line of the file above the hunk) is read just above the hunk's lines: it
 * is often what makes them secret (variable "db_password" { above a changed default, data: above
 * a Secret's values), and it may itself be a line of a secret (a private key's last body line,
 * the nearest line above that starts with a letter), which is then no header. A header is kept
 * only where both sides redact it alike, and never a line of base64 alone. A file known to be a
 * Kubernetes Secret (`secretManifest`) is read with its kind line above its lines, which is what
 * the rule for a Secret's data looks for.
 */
function redactedSides(lines: DiffLine[], secretManifest: boolean): Pick<FileDiff, 'added' | 'removed' | 'context' | 'hunkContexts'> {
  const side = (left: DiffLine['kind']): { kept: DiffLine[]; redacted: (string | null)[] } => {
    const kept = lines.filter((l) => l.kind !== left);
    const texts: string[] = secretManifest ? ['kind: Secret'] : [];
    const at: number[] = [];
    for (const l of kept) {
      // A blank line where a hunk starts, then its header.
      if (l.kind === '@') texts.push('');
      at.push(texts.length);
      texts.push(l.text);
    }
    const all = redactEachLine(texts);
    return { kept, redacted: at.map((k) => all[k]) };
  };
  const after = side('-');
  const before = side('+');
  const cut = (text: string | null): string | null => (text === null ? null : clipRedacted(text, MAX_LINE_CHARS));
  const of = (s: { kept: DiffLine[]; redacted: (string | null)[] }, kind: DiffLine['kind']): string[] =>
    // A line a private key's [REDACTED] took is left out.
    s.kept.flatMap((l, i) => (l.kind === kind && s.redacted[i] !== null ? [cut(s.redacted[i])!] : []));
  const headers = (s: { kept: DiffLine[]; redacted: (string | null)[] }): (string | null)[] => s.kept.flatMap((l, i) => (l.kind === '@' ? [s.redacted[i]] : []));
  const afterHeaders = headers(after);
  const hunkContexts = headers(before).flatMap((h, i) => (h && h === afterHeaders[i] && !isBase64Line(h) ? [cut(h.trim())!] : []));
  return { added: of(after, '+'), context: of(after, ' '), removed: of(before, '-'), hunkContexts };
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
