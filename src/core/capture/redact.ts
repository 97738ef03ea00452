// Secrets never reach the store: every text field of an observation or memory passes through
// redact() before it is written (and before it is indexed or embedded).

import { createHash } from 'node:crypto';
import { BASE64_BLOCK, JWK_PRIVATE_MEMBERS, PEM_SECRET_MARK, PRIVATE_KEY, REDACTED, RULES, SECRET_NAME, isLinesOfNames, isSettingOfSecret, publicBase64Spans } from './redactRules';
import type { Rule } from './redactRules';
import { withoutEscapes } from '../model/printable';
import { foldLetters } from '../retrieve/textPrep';

export { REDACTED };

/** The rules whose matches may span lines (see Rule.spansLines), and what they cannot match without. */
const SPANNING_RULES = RULES.filter((r) => r.spansLines);
const MAYBE_SPANNING = new RegExp([...new Set(SPANNING_RULES.map((r) => r.trigger))].join('|'), 'i');

/**
 * Secrets this process holds whatever their shape (the loopback server's bearer token, a model
 * server's API key): never stored, even where a client pastes one into a prompt.
 */
const knownSecrets = new Map<string, number>();

/**
 * Adds a secret of this process to redact (8 characters or more); returns its removal. Counted:
 * a secret two holders registered (two servers with one token) stays until both removed it.
 */
export function registerSecret(secret: string): () => void {
  // Shorter than an S3-compatible server's shortest secret key would redact ordinary words.
  if (secret.length < 8) return () => undefined;
  knownSecrets.set(secret, (knownSecrets.get(secret) ?? 0) + 1);
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    const left = (knownSecrets.get(secret) ?? 1) - 1;
    if (left > 0) knownSecrets.set(secret, left);
    else knownSecrets.delete(secret);
  };
}

/** The rules tried where their own trigger is found (see Rule.ownTrigger), with it. */
const OWN_TRIGGER_RULES = new Map(RULES.filter((r) => r.ownTrigger).map((r) => [r, new RegExp(r.trigger, 'i')]));
/** Whether any other rule could match: one scan instead of one per rule, for the many texts (a diff's lines) that hold no secret. */
const MAYBE_SECRET = new RegExp([...new Set(RULES.filter((r) => !r.ownTrigger).map((r) => r.trigger))].join('|'), 'i');

function applyRule(rule: Rule, text: string): string {
  if (rule.when && !rule.when.test(text)) return text;
  return typeof rule.replace === 'string' ? text.replace(rule.pattern, rule.replace) : text.replace(rule.pattern, rule.replace);
}

/** Whether any rule could match `text`. */
function maybeSecret(text: string): boolean {
  if (MAYBE_SECRET.test(text)) return true;
  for (const trigger of OWN_TRIGGER_RULES.values()) if (trigger.test(text)) return true;
  return false;
}

function applyRules(text: string): string {
  let out = text;
  const any = MAYBE_SECRET.test(out);
  for (const rule of RULES) {
    const own = OWN_TRIGGER_RULES.get(rule);
    if (own ? own.test(out) : any) out = applyRule(rule, out);
  }
  return out;
}

/**
 * The text with every recognised secret replaced by [REDACTED]. Public base64 (a certificate, an
 * image's data: see publicBase64Spans) is kept as it is, the text around it redacted.
 */
export function redact(text: string): string {
  const out = redactAsWritten(text);
  // What readers make of the text: printable (every read of a search cell) drops escapes and
  // control characters, the index folds compatibility forms and accents (foldText: a full-width
  // ＡＫＩＡ... is indexed as akia...), and a reader sees no zero-width character. A secret written
  // so that only that text shows it is redacted in it: the text is then stored as read.
  const read = readText(out);
  if (read === out) return out;
  const again = redactAsWritten(read);
  return again === read ? out : again;
}

/** Format characters (zero-width space and joiners, the soft hyphen, the byte order mark): shown as nothing. */
const FORMAT_CHARACTERS = /\p{Cf}/gu;
/** Any character that reading may change: a control character but tab and line breaks, or one outside ASCII. */
const MAY_READ_OTHERWISE = /[^\t\n\r\x20-\x7e]/;

/**
 * `text` as it is read (see redact): without escapes, control and format characters, folded as
 * the index folds it (foldText: compatibility forms made plain, the accents of Latin, Greek and
 * Cyrillic letters dropped, a few letters spelt out), the whole text at once.
 */
function readText(text: string): string {
  if (!MAY_READ_OTHERWISE.test(text)) return text;
  const shown = withoutEscapes(text).replace(FORMAT_CHARACTERS, '');
  return foldLetters(shown.normalize('NFKD').replace(/[\u0300-\u036f]/g, '')).normalize('NFKC');
}

/** `redact` of the text as it is written. */
function redactAsWritten(text: string): string {
  let out = text;
  for (const secret of knownSecrets.keys()) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  if (!maybeSecret(out)) return out;
  const kept = publicBase64Spans(out);
  if (kept.length === 0) return applyRules(out);
  let redacted = '';
  let at = 0;
  for (const [start, end] of kept) {
    redacted += applyRules(out.slice(at, start)) + out.slice(start, end);
    at = end;
  }
  return redacted + applyRules(out.slice(at));
}

const WHOLE_SECRET_NAME = new RegExp(`^${SECRET_NAME}$`, 'i');

/** Names of credentials that hold no secret keyword: HTTP's credential headers, a bare auth (docker's config.json, .npmrc's _auth). */
const CREDENTIAL_NAME = /^(?:(?:proxy-)?authorization|(?:set-)?cookies?|_?auth)$/i;

/** Whether a name (a JSON key, a variable) says its value is a secret: db_password, apiKey, SMTP_PASS, authorization, cookie. */
export function isSecretName(name: string): boolean {
  return WHOLE_SECRET_NAME.test(name) || CREDENTIAL_NAME.test(name);
}

const CURL_USER = RULES.find((r) => r.name === 'curl user')!;

/** A line that starts with 40 base64 characters: tried on lines that are long enough, quicker than on their text. */
const BASE64_LINE_START = /^[-+]?[ \t]*[A-Za-z0-9+/]{40}/;

/**
 * What a line that a secret spanning lines took becomes while the lines are joined (the key's
 * lines after the one that now reads [REDACTED]): no line of text is only a NUL.
 */
const SWALLOWED = '\u0000';

/** A match over joined lines replaced by [REDACTED] on its first line, its other lines marked taken. */
function swallow(match: string, kept = ''): string {
  const taken = match.slice(kept.length).split('\n').length - 1;
  return `${kept}${REDACTED}${`\n${SWALLOWED}`.repeat(taken)}`;
}

/**
 * The lines of one text (a side of a diff), each redacted as a line, one out for each in: null for
 * a line that a secret spanning lines took (a private key's, after the line that now reads
 * [REDACTED]), so that a caller can tell which line each came from. Across a line break an
 * assignment would take the next line's first word as its value, so lines are redacted alone,
 * except: a private key spans lines, as does a block of a key's body lines without its BEGIN line;
 * the rules whose matches span lines (a quoted value a formatter wrapped onto the line after its
 * name, a YAML block scalar, a Secret's data, an env list's name then value) first run on the
 * lines joined, as each line alone would have lost the name that makes its value a secret; and a
 * curl command spans the lines it continues onto ('\' at the end of a line), so a -u there is
 * read as curl's. Given `only`, the spanning rules still read every line, and only the lines it
 * names are redacted each alone: the others come back as those rules left them, no line's secret
 * taken (what a caller reads of a whole file is a few lines around a change).
 */
export function redactEachLine(lines: string[], only?: ReadonlySet<number>): (string | null)[] {
  const asWritten = redactEachLineAsWritten(lines, only);
  // The lines as they are read (see redact): a private key whose BEGIN line is in full-width
  // letters, or whose body a zero-width character cuts, is a key only there. A line that a rule
  // redacts there is taken as redacted there; a line a secret took in either reading goes.
  const read = lines.map(readText);
  if (read.every((line, i) => line === lines[i])) return asWritten;
  const asRead = redactEachLineAsWritten(read, only);
  return asWritten.map((line, i) => (line === null || asRead[i] === null ? null : asRead[i] !== read[i] ? asRead[i] : line));
}

/** `redactEachLine` of the lines as they are written. */
function redactEachLineAsWritten(lines: string[], only?: ReadonlySet<number>): (string | null)[] {
  let text = lines.join('\n');
  // Lines wholly inside public base64 (a certificate's body) are kept: blanked for the rules, which
  // would take them for a key's body lines, and put back after.
  const publicLines = linesInside(lines, publicBase64Spans(text));
  if (publicLines.size > 0) {
    const out = redactEachLine(lines.map((line, i) => (publicLines.has(i) ? '' : line)), only);
    return out.map((line, i) => (publicLines.has(i) && line !== null ? lines[i] : line));
  }
  const joined = text;
  if (PEM_SECRET_MARK.test(text)) text = text.replace(PRIVATE_KEY, (m) => swallow(m));
  if (lines.some((line) => line.length >= 40 && BASE64_LINE_START.test(line))) text = text.replace(BASE64_BLOCK, (m, lead: string) => (isLinesOfNames(m) ? m : swallow(m, lead)));
  if (lines.length > 1 && MAYBE_SPANNING.test(text)) for (const rule of SPANNING_RULES) text = applyRule(rule, text);
  const split = text === joined ? lines : text.split('\n');
  // Every rule above keeps the line breaks; should one not, no line of these is kept rather than a misplaced one.
  if (split.length !== lines.length) return lines.map((_, i) => (i === 0 ? REDACTED : null));
  let inCurl = false;
  return split.map((line, i) => {
    if (line === SWALLOWED) return null;
    const continuesCurl = inCurl;
    inCurl = line.endsWith('\\') && (inCurl || /\bcurl\b/.test(line));
    // 'curl ' ahead of the line puts its -u in curl's context; the rule keeps what precedes -u. On
    // every line: a caller may redact a line it did not name alone (a hunk's header), and that
    // alone no longer knows the curl it continues.
    const asCurl = (text: string): string => (continuesCurl && text.includes('-u') ? applyRule(CURL_USER, `curl ${text}`).slice('curl '.length) : text);
    return asCurl(only && !only.has(i) ? line : redact(line));
  });
}

/** The indexes of the lines (joined by '\n') that lie wholly inside one of `spans` (sorted, apart). */
function linesInside(lines: string[], spans: [number, number][]): Set<number> {
  const inside = new Set<number>();
  let span = 0;
  let start = 0;
  for (let i = 0; i < lines.length && span < spans.length; i++) {
    const end = start + lines[i].length;
    while (span < spans.length && spans[span][1] < end) span++;
    if (span < spans.length && spans[span][0] <= start && lines[i] !== '') inside.add(i);
    start = end + 1;
  }
  return inside;
}

/** The lines redacted (see redactEachLine), without those a secret spanning lines took. */
export function redactLines(lines: string[]): string[] {
  return redactEachLine(lines).filter((line): line is string => line !== null);
}

/**
 * `redact` over JSON text, value by value: inside JSON a quoted secret is escaped (`\"`), which
 * the rules for quoted assignments would not see in the text as a whole. Apart from its key a
 * value has no assignment to show it is a secret, so every string under a key that names a secret
 * is redacted whole; and a key is text a caller chose, so it is redacted as an identifier (an
 * object cannot hold two keys named [REDACTED]). Text that is not JSON is redacted as it is.
 */
export function redactJson(text: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return redact(text);
  }
  return stringifyRedacted(value);
}

/** A value to write, and whether a key above it names a secret; or text to write as it is. */
type JsonWork = { value: unknown; secret: boolean } | string;

/**
 * JSON.stringify of `root` with every string redacted, whole under a key that names a secret
 * (authorization, cookie, db_password; not a setting about one: "token_type": "Bearer"). With a
 * stack of its own: JSON nested thousands deep, which JSON.parse takes, would overflow the call
 * stack of a recursive walk, and JSON.stringify's own.
 */
function stringifyRedacted(root: unknown): string {
  const out: string[] = [];
  const work: JsonWork[] = [{ value: root, secret: false }];
  while (work.length > 0) {
    const item = work.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    const { value, secret } = item;
    if (typeof value === 'string') out.push(JSON.stringify(secret ? REDACTED : redact(value)));
    else if (Array.isArray(value)) {
      // A list of one-line strings (an observation's facts) is redacted as lines, as observe's
      // lists are (cleanList): a private key given one line per item goes whole, BEGIN to END.
      // (A key's lines after its first are dropped, as there.)
      if (!secret && value.length > 1 && value.every((v) => typeof v === 'string' && !v.includes('\n'))) {
        out.push(JSON.stringify(redactLines(value as string[])));
        continue;
      }
      out.push('[');
      work.push(']');
      for (let i = value.length - 1; i >= 0; i--) {
        work.push({ value: value[i] as unknown, secret });
        if (i > 0) work.push(',');
      }
    } else if (value !== null && typeof value === 'object') {
      // Written as text: a key '__proto__' stays a key.
      const entries = Object.entries(value);
      // A JSON Web Key's private members (d, p, q..., a symmetric key's k) hold no secret's name.
      const jwk = typeof (value as Record<string, unknown>).kty === 'string';
      out.push('{');
      work.push('}');
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, v] = entries[i];
        const underSecret = secret || (jwk && JWK_PRIVATE_MEMBERS.has(key)) || (isSecretName(key) && !(typeof v === 'string' && isSettingOfSecret(key, v)));
        work.push({ value: v, secret: underSecret });
        work.push(`${JSON.stringify(redactKey(key))}:`);
        if (i > 0) work.push(',');
      }
    } else out.push(JSON.stringify(value) ?? 'null');
  }
  return out.join('');
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

/** Names of the rules that would fire on `text` (for diagnostics and tests): each that changes it, applied alone. */
export function secretKinds(text: string): string[] {
  return RULES.filter((r) => applyRule(r, text) !== text).map((r) => r.name);
}

/**
 * A dotenv file (the default exclude glob .env*): .env and .env.<anything> (.env.local), any name
 * that starts with .env (.envrc, direnv's; .env_local, .env-prod, .environment), and one named for
 * its environment (prod.env). Not a document about one (.envrc.md, .env-setup.txt), which the
 * glob would take too.
 */
const DOTENV_FILE = /^(?:\.env(?:\..*)?|\.env[^.][^/]*?(?<!\.(?:md|markdown|txt|rst|adoc))|[^.][^/]*\.env)$/i;
/**
 * An SSH key's file (the default exclude glob id_*): id_ and a name, without an extension or with
 * a key's (.pub) or a copy's (.bak, .old, .orig): id_rsa, id_ed25519_sk.pub, id_deploy, id_github.
 * Not source whose name starts with id_ (id_utils.ts, id_test.go).
 */
const SSH_KEY_FILE = /^id_[A-Za-z0-9_-]+(?:\.(?:pub|bak|old|orig))?$/i;

/**
 * Files whose very path marks them as secret (the default exclude globs: .env*, *.pem, *.key,
 * id_*, secrets/, read as DOTENV_FILE and SSH_KEY_FILE say; keystores: *.p12, *.pfx; password
 * vaults: *.kdbx, *.keychain; and credential stores: .netrc, .pgpass, .git-credentials, .htpasswd,
 * shadow). The extension never captures them; this
 * also guards events that arrive from elsewhere (agent hooks, the CLI, git history).
 */
export function isSecretPath(file: string): boolean {
  const parts = file.replace(/\\/g, '/').split('/').filter(Boolean);
  const base = parts[parts.length - 1] ?? '';
  if (DOTENV_FILE.test(base)) return true;
  if (/\.(?:pem|key|p12|pfx)$/i.test(base)) return true;
  if (SSH_KEY_FILE.test(base)) return true;
  // Files of credentials: machine passwords (curl, ftp, git), PostgreSQL's, git's store, a web server's password hashes,
  // a system's (shadow, gshadow and their backups, BSD's master.passwd).
  if (/^(?:[._]netrc|\.pgpass|\.git-credentials|\.htpasswd|g?shadow-?|master\.passwd)$/i.test(base)) return true;
  // Password managers' vaults: KeePass databases, macOS keychains.
  if (/\.(?:kdbx|keychain(?:-db)?)$/i.test(base)) return true;
  return parts.slice(0, -1).some((p) => /^\.?secrets?$/i.test(p));
}

/**
 * Redacted text cut to at most `max` characters, `ellipsis` included, never inside a [REDACTED]
 * marker (the cut then falls before it). The text is redacted whole first (see redactClipped): a
 * secret cut first (27 of a token's 36 characters) no longer looks like one to the rules.
 */
export function clipRedacted(text: string, max: number, ellipsis = ''): string {
  if (text.length <= max) return text;
  let cut = Math.max(0, max - ellipsis.length);
  const marker = text.lastIndexOf(REDACTED, cut - 1);
  if (marker >= 0 && marker + REDACTED.length > cut) cut = marker;
  return `${text.slice(0, cut)}${ellipsis}`;
}

/** `text` redacted whole, then cut (see clipRedacted). */
export function redactClipped(text: string, max: number, ellipsis = ''): string {
  return clipRedacted(redact(text), max, ellipsis);
}
