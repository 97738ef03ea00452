// Secrets never reach the store: every text field of an observation or memory passes through
// redact() before it is written (and before it is indexed or embedded).

export const REDACTED = '[REDACTED]';

const SECRET_NAME =
  '\\b[A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?)[A-Za-z0-9_.-]*';

interface Rule {
  name: string;
  pattern: RegExp;
  /** Replacement; `$1` etc. keep a non-secret prefix such as the variable name. */
  replace: string;
}

const RULES: Rule[] = [
  {
    name: 'private key',
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
    replace: REDACTED,
  },
  { name: 'url credentials', pattern: /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+):[^\s@/]+@/gi, replace: `$1:${REDACTED}@` },
  { name: 'aws access key', pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA)[A-Z0-9]{16}\b/g, replace: REDACTED },
  { name: 'github token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})\b/g, replace: REDACTED },
  { name: 'gitlab token', pattern: /\bglpat-[A-Za-z0-9_-]{20,}\b/g, replace: REDACTED },
  { name: 'openai/anthropic key', pattern: /\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20,}\b/g, replace: REDACTED },
  { name: 'stripe key', pattern: /\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g, replace: REDACTED },
  { name: 'slack token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g, replace: REDACTED },
  { name: 'google api key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g, replace: REDACTED },
  { name: 'npm token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g, replace: REDACTED },
  { name: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b/g, replace: REDACTED },
  { name: 'bearer token', pattern: /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{16,}/g, replace: `$1 ${REDACTED}` },
  {
    // .env style and config assignments whose name says secret, quoted: KEY="value", "api_key": 'value'.
    name: 'quoted secret assignment',
    pattern: new RegExp(`(${SECRET_NAME}["']?\\s*(?:=|:)\\s*)(["'])(?!\\[REDACTED\\])([^"'\\n]{4,})\\2`, 'gi'),
    replace: `$1$2${REDACTED}$2`,
  },
  {
    // Unquoted: KEY=value. A call or member access (token = getToken(), auth: this.auth) is code.
    name: 'secret assignment',
    pattern: new RegExp(`(${SECRET_NAME}\\s*(?:=|:)\\s*)(?!\\[REDACTED\\])(?![A-Za-z_$][\\w$]*(?:\\.[A-Za-z_$][\\w$]*)+(?![\\w$.]))([^\\s"',;()[\\]{}<>]{4,})(?![\\w(])`, 'gi'),
    replace: `$1${REDACTED}`,
  },
];

/** The text with every recognised secret replaced by [REDACTED]. */
export function redact(text: string): string {
  let out = text;
  for (const rule of RULES) out = out.replace(rule.pattern, rule.replace);
  return out;
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
