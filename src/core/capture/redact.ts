// Secrets never reach the store: every text field of an observation or memory passes through
// redact() before it is written (and before it is indexed or embedded).

import { createHash } from 'node:crypto';

export const REDACTED = '[REDACTED]';

// Every pattern runs in time linear in the text (captures arrive unbounded: a pasted log, a
// minified file). A backtracking engine goes quadratic when many start positions each rescan one
// long run of characters, so a pattern that scans a run starts only where the run starts (a
// lookbehind), captures the part of the run before the secret to keep it, and finds keywords
// inside a lookahead, which is never re-entered once it has matched. And 'at least n' is written
// x{n}x*, not x{n,}: V8 runs x* as a loop but x{n,} on its stack, which a run of a few MB overflows.

const KEYWORD = '(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?)';
const NAME_CHAR = '[A-Za-z0-9_.-]';
/** A whole run of name characters that contains a secret keyword, such as DB_PASSWORD or app.api-key. */
const SECRET_NAME = `(?<!${NAME_CHAR})(?=${NAME_CHAR}*?${KEYWORD})${NAME_CHAR}+`;
const JWT_CHAR = '[A-Za-z0-9_-]';

interface Rule {
  name: string;
  pattern: RegExp;
  /** Replacement; `$1` etc. keep a non-secret prefix such as the variable name. */
  replace: string;
}

const RULES: Rule[] = [
  {
    // Headers name at most a word or two (RSA, ENCRYPTED, OPENSSH PGP...); the bound on words keeps
    // the regex stack small on a header of a million words (see the unquoted rule's member chain).
    name: 'private key',
    pattern: /-----BEGIN (?:[A-Z0-9]+ ){0,16}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ ){0,16}PRIVATE KEY(?: BLOCK)?-----|$)/g,
    replace: REDACTED,
  },
  // The scheme is the whole run of scheme characters before '://' (kept, like the user name).
  { name: 'url credentials', pattern: /(?<![a-z0-9+.-])([0-9+.-]*[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+):[^\s@/]+@/gi, replace: `$1:${REDACTED}@` },
  { name: 'aws access key', pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA)[A-Z0-9]{16}\b/g, replace: REDACTED },
  { name: 'github token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30}[A-Za-z0-9]*|github_pat_[A-Za-z0-9_]{30}[A-Za-z0-9_]*)\b/g, replace: REDACTED },
  { name: 'gitlab token', pattern: /\bglpat-[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*\b/g, replace: REDACTED },
  { name: 'openai/anthropic key', pattern: /\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*\b/g, replace: REDACTED },
  { name: 'stripe key', pattern: /\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16}[A-Za-z0-9]*\b/g, replace: REDACTED },
  { name: 'slack token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10}[A-Za-z0-9-]*\b/g, replace: REDACTED },
  { name: 'google api key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g, replace: REDACTED },
  { name: 'npm token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g, replace: REDACTED },
  {
    // header.payload.signature, the header starting at 'eyJ' anywhere a word starts in its run.
    // The lookahead checks the payload and signature once per run; each candidate 'eyJ' then costs
    // a fixed 8-character look, so a run of 'eyJ-eyJ-...' is not rescanned per candidate.
    name: 'jwt',
    pattern: new RegExp(
      `(?<!${JWT_CHAR})(?=${JWT_CHAR}*\\.eyJ${JWT_CHAR}{8}${JWT_CHAR}*\\.${JWT_CHAR}{8}${JWT_CHAR}*\\b)((?:${JWT_CHAR}*?-)??)eyJ(?=${JWT_CHAR}{8})${JWT_CHAR}*\\.eyJ${JWT_CHAR}{8}${JWT_CHAR}*\\.${JWT_CHAR}{8}${JWT_CHAR}*\\b`,
      'g',
    ),
    replace: `$1${REDACTED}`,
  },
  { name: 'bearer token', pattern: /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{16}[A-Za-z0-9._~+/=-]*/g, replace: `$1 ${REDACTED}` },
  {
    // .env style and config assignments whose name says secret, quoted: KEY="value", "api_key": 'value'.
    name: 'quoted secret assignment',
    pattern: new RegExp(`(${SECRET_NAME}["']?\\s*(?:=|:)\\s*)(["'])(?!\\[REDACTED\\])([^"'\\n]{4}[^"'\\n]*)\\2`, 'gi'),
    replace: `$1$2${REDACTED}$2`,
  },
  {
    // Unquoted: KEY=value. A call or member access (token = getToken(), auth: this.auth) is code.
    // Each repetition of a group costs the regex engine stack, so the member chain is bounded: a
    // megabyte of 'a.a.a' would otherwise overflow it. Longer chains are redacted, not kept.
    name: 'secret assignment',
    pattern: new RegExp(`(${SECRET_NAME}\\s*(?:=|:)\\s*)(?!\\[REDACTED\\])(?![A-Za-z_$][\\w$]*(?:\\.[A-Za-z_$][\\w$]*){1,64}(?![\\w$.]))([^\\s"',;()[\\]{}<>]{4}[^\\s"',;()[\\]{}<>]*)(?![\\w(])`, 'gi'),
    replace: `$1${REDACTED}`,
  },
];

/**
 * Secrets this process holds whatever their shape (the loopback server's bearer token, a model
 * server's API key): never stored, even where a client pastes one into a prompt.
 */
const knownSecrets = new Set<string>();

/** Adds a secret of this process to redact (8 characters or more); returns its removal. */
export function registerSecret(secret: string): () => void {
  // Shorter than an S3-compatible server's shortest secret key would redact ordinary words.
  if (secret.length < 8) return () => undefined;
  knownSecrets.add(secret);
  return () => knownSecrets.delete(secret);
}

/** The text with every recognised secret replaced by [REDACTED]. */
export function redact(text: string): string {
  let out = text;
  for (const secret of knownSecrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  for (const rule of RULES) out = out.replace(rule.pattern, rule.replace);
  return out;
}

/**
 * `redact` over JSON text, value by value: inside JSON a quoted secret is escaped (`\"`), which
 * the rules for quoted assignments would not see in the text as a whole. Text that is not JSON is
 * redacted as it is.
 */
export function redactJson(text: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return redact(text);
  }
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? redact(v) : v));
}

/**
 * An identifier (a session id, a dedupe or topic key, a branch) with no secret in it, as it is;
 * one with a secret, as a digest of it: the secret goes, and the same identifier still names the
 * same session or key (redacting it to [REDACTED] would merge every such identifier into one).
 */
export function redactKey(value: string): string {
  return redact(value) === value ? value : `redacted-${createHash('sha256').update(value, 'utf8').digest('hex').slice(0, 24)}`;
}

export function redactKeyNullable(value: string | null | undefined): string | null {
  return value === null || value === undefined ? null : redactKey(String(value));
}

export function redactNullable(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : redact(text);
}

/** Names of the rules that would fire on `text` (for diagnostics and tests). */
export function secretKinds(text: string): string[] {
  return RULES.filter((r) => new RegExp(r.pattern.source, r.pattern.flags).test(text)).map((r) => r.name);
}

/**
 * Files whose very path marks them as secret (the default exclude globs: .env*, *.pem, *.key,
 * ssh keys, secrets folders). The extension never captures them; this also guards events that
 * arrive from elsewhere (agent hooks, the CLI).
 */
export function isSecretPath(file: string): boolean {
  const parts = file.replace(/\\/g, '/').split('/').filter(Boolean);
  const base = parts[parts.length - 1] ?? '';
  if (/^\.env(?:\..*)?$/i.test(base)) return true;
  if (/\.(?:pem|key|p12|pfx)$/i.test(base)) return true;
  if (/^id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?(?:\.pub)?$/i.test(base)) return true;
  return parts.slice(0, -1).some((p) => /^\.?secrets?$/i.test(p));
}
