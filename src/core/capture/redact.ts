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

const NAME_CHAR = '[A-Za-z0-9_.-]';
// 'pass' only as the last part of a name (SMTP_PASS, db.pass): inside a word or before another
// part it is ordinary English or code (bypass, passes, pass_through).
// A name ending in 'key' only after a word that makes it a secret (ENCRYPTION_KEY, jwtSigningKey,
// APP_KEY): most keys in code name a row, a cache entry or a map slot (primary_key, sort_key,
// cacheKey, dedupe_key), and case cannot tell signingKey from hotkey where the rules ignore it.
// Short words only where a name starts or a part does (APP_KEY, not mapKey or observerKey); not
// crypto or cipher, whose keys in code are mostly WebCrypto objects (cryptoKey = await ...).
// The qualifier is looked for behind a 'key', which is rare enough to keep the pre-scan quick.
const KEY_NAME = `key(?!${NAME_CHAR})(?<=(?:encrypt(?:ion)?|decrypt(?:ion)?|signing|jwt|hmac|master|licen[cs]e|subscription|webhook|deploy|(?<![A-Za-z0-9])(?:app|aes|ssh|auth|admin|root|server|service))[_.-]?key)`;
const KEYWORD = `(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|account[_-]?key|private[_-]?key|client[_-]?secret|credentials?|sharedaccesssignature|(?<![A-Za-z0-9])pass(?!${NAME_CHAR})|${KEY_NAME})`;
/** A whole run of name characters that contains a secret keyword, such as DB_PASSWORD or app.api-key. */
const SECRET_NAME = `(?<!${NAME_CHAR})(?=${NAME_CHAR}*?${KEYWORD})${NAME_CHAR}+`;
const JWT_CHAR = '[A-Za-z0-9_-]';
// A token's ends: '_' is a word character, so \b does not end a token that a file name or an
// identifier joins with '_' (exports/AKIA..._keys.csv, aws_AKIA...).
const START = '(?<![A-Za-z0-9])';
const END = '(?![A-Za-z0-9])';
/**
 * The type of an annotated assignment (apiKey: string = ..., API_KEY: Final[str] = ...,
 * API_TOKEN: &'static str = ..., secret: string | undefined = ...): without it the rules take
 * the type for the value. Every part is bounded, so the regex stack stays small.
 */
const TYPE = `&?(?:'[A-Za-z_]\\w*[ \\t]+)?(?:\\[\\]){0,3}[A-Za-z_$][\\w$.]*(?:<[\\w$.,[\\] <>|&?]{0,64}>|\\[[\\w$.,[\\] |]{0,64}\\])?(?:\\[\\])?\\??(?:[ \\t]*\\|[ \\t]*[A-Za-z_$][\\w$.]*(?:\\[\\])?){0,4}`;

/** Go's type after the name (var apiKey string = ...): one word, or a package's type (pkg.Type). */
const GO_TYPE = '[A-Za-z_][\\w.]{0,64}';
/** An assignment operator: =, :=, ?=, and the compound ones that assign a default (||=, ??=, &&=). */
const ASSIGN = '(?:\\|\\||\\?\\?|&&|[:?])?=';

/** One name=value pair of a cookie header; the value runs to the next ';' or ','. */
const COOKIE_PAIR = /([^\s=;,]+)=(?!\[REDACTED\])[^;,]*/g;
const COOKIE_ATTRIBUTE = /^(?:path|domain|expires|max-age|samesite|priority|partitioned|version|comment)$/i;

interface Rule {
  name: string;
  pattern: RegExp;
  /** Replacement; `$1` etc. keep a non-secret prefix such as the variable name. */
  replace: string | ((match: string, ...groups: string[]) => string);
  /** What the rule cannot match without (a regex, case aside): text with no rule's trigger is returned as it is. */
  trigger: string;
}

// Headers name at most a word or two (RSA, ENCRYPTED, OPENSSH PGP...); the bound on words keeps
// the regex stack small on a header of a million words (see the unquoted rule's member chain).
const PRIVATE_KEY = /-----BEGIN (?:[A-Z0-9]+ ){0,16}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ ){0,16}PRIVATE KEY(?: BLOCK)?-----|$)/g;

// A line that is wholly a run of 40 or more base64 characters, both cases among them: a line of a
// key's body. The run stops at the line's end, so a line costs one scan.
const BASE64_RUN = '(?=[A-Za-z0-9+/]*[A-Z])(?=[A-Za-z0-9+/]*[a-z])[A-Za-z0-9+/]{40}[A-Za-z0-9+/]*={0,2}[ \\t]*';
/**
 * A key's body without its BEGIN and END lines (a diff with one line of context that changes only
 * the body, a key given one line per list item): two or more such lines in a row, as a key is
 * wrapped, then its shorter last line. Bounded, as each repetition costs regex stack; the lines
 * after the 200th start another block.
 */
const BASE64_BLOCK = new RegExp(`((?:^|[\\n\\r])[ \\t]*)${BASE64_RUN}(?:\\r?\\n[ \\t]*${BASE64_RUN}){1,200}(?:\\r?\\n[ \\t]*[A-Za-z0-9+/]{8}[A-Za-z0-9+/]*={0,2}[ \\t]*)?(?![^\\n\\r])`, 'g');
/** What a base64 line cannot be without: a line that starts with 40 base64 characters. */
const BASE64_TRIGGER = '(?:^|[\\n\\r])[ \\t]*[A-Za-z0-9+/]{40}';

const RULES: Rule[] = [
  { name: 'private key', pattern: PRIVATE_KEY, replace: REDACTED, trigger: 'PRIVATE KEY' },
  { name: 'base64 block', pattern: BASE64_BLOCK, replace: `$1${REDACTED}`, trigger: BASE64_TRIGGER },
  {
    // One line of a key's body alone. Upper case, lower case and a digit or '+' are all required,
    // which a git sha, a long lowercase word or a path does not have, and 40 random characters of
    // base64 nearly always have.
    name: 'base64 line',
    pattern: new RegExp(`((?:^|[\\n\\r])[ \\t]*)(?=[A-Za-z0-9+/]*[0-9+])${BASE64_RUN}(?![^\\n\\r])`, 'g'),
    replace: `$1${REDACTED}`,
    trigger: BASE64_TRIGGER,
  },
  {
    // The scheme is the whole run of scheme characters before '://' (kept, like the user name,
    // which may be empty: redis://:password@host). A password may hold a '/', but then it is
    // bounded: each '://' of a long run would otherwise rescan the rest of it for an '@'. A
    // password may hold an '@' too: it runs to the last '@' before the host's path
    // (admin:p@ss@host/db). A port then a path (host:8080/@scope/pkg) is not a password.
    name: 'url credentials',
    pattern: /(?<![a-z0-9+.-])([0-9+.-]*[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*):(?!\d*\/)(?:[^\s/?#]+|[^\s@]{1,128})@/gi,
    replace: `$1:${REDACTED}@`,
    trigger: '://',
  },
  {
    // The same, URL-encoded (a URL in a query parameter: next=postgres%3A%2F%2Fadmin%3Apw%40db).
    // The password ends at the host's encoded '/'; bounded, as each repetition costs regex stack.
    // The scheme is only looked back at: a literal first is quicker to scan text for.
    name: 'url-encoded url credentials',
    pattern: /(%3A%2F%2F(?<=[a-z0-9]%3A%2F%2F)[A-Za-z0-9._~-]*%3A)(?:[^\s&%/]|%(?!2F)[0-9A-F]{2}){1,256}%40/gi,
    replace: `$1${REDACTED}%40`,
    trigger: '%3A%2F%2F',
  },
  {
    // curl -u user:password (or --user), on curl's line or a line it continues onto (a '\' at
    // the end of a line). The look back for 'curl' runs only at a '-u' and is bounded, so a long
    // line of '-u' options stays linear.
    name: 'curl user',
    pattern: /(\s(?:-u|--user)(?<=\bcurl\b(?:[^\n]|\\\r?\n){0,300})(?:\s+|=)?["']?[^\s:"']*:)[^\s"']+/g,
    replace: `$1${REDACTED}`,
    trigger: 'curl',
  },
  { name: 'slack webhook', pattern: /\b(hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9_/-]+/gi, replace: `$1${REDACTED}`, trigger: 'hooks\\.slack\\.com' },
  { name: 'aws access key', pattern: new RegExp(`${START}(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA)[A-Z0-9]{16}${END}`, 'g'), replace: REDACTED, trigger: 'AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA' },
  // A GitHub token is at most a few hundred characters: bounded, a megabyte of ghp_aaa... is no token.
  { name: 'github token', pattern: new RegExp(`${START}(?:gh[pousr]_[A-Za-z0-9]{30,255}${END}|github_pat_[A-Za-z0-9_]{30}[A-Za-z0-9_]*\\b)`, 'g'), replace: REDACTED, trigger: 'gh[pousr]_|github_pat_' },
  { name: 'gitlab token', pattern: new RegExp(`${START}glpat-[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*\\b`, 'g'), replace: REDACTED, trigger: 'glpat-' },
  { name: 'openai/anthropic key', pattern: new RegExp(`${START}sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*`, 'g'), replace: REDACTED, trigger: 'sk-' },
  { name: 'stripe key', pattern: new RegExp(`${START}(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16}[A-Za-z0-9]*${END}`, 'g'), replace: REDACTED, trigger: '_live_|_test_' },
  { name: 'stripe webhook secret', pattern: /\bwhsec_[A-Za-z0-9+/=]{16}[A-Za-z0-9+/=]*/g, replace: REDACTED, trigger: 'whsec_' },
  { name: 'slack token', pattern: new RegExp(`${START}(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10}[A-Za-z0-9-]*\\b`, 'g'), replace: REDACTED, trigger: 'xox|xapp-' },
  { name: 'google api key', pattern: new RegExp(`${START}AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])`, 'g'), replace: REDACTED, trigger: 'AIza' },
  { name: 'npm token', pattern: new RegExp(`${START}npm_[A-Za-z0-9]{36}${END}`, 'g'), replace: REDACTED, trigger: 'npm_' },
  { name: 'hugging face token', pattern: new RegExp(`${START}hf_[A-Za-z0-9]{30}[A-Za-z0-9]*${END}`, 'g'), replace: REDACTED, trigger: 'hf_' },
  { name: 'sendgrid key', pattern: /\bSG\.[A-Za-z0-9_-]{16}[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{16}[A-Za-z0-9_-]*/g, replace: REDACTED, trigger: 'SG\\.' },
  { name: 'digitalocean token', pattern: new RegExp(`${START}do[por]_v1_[a-f0-9]{64}${END}`, 'g'), replace: REDACTED, trigger: '_v1_' },
  { name: 'shopify token', pattern: new RegExp(`${START}shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}${END}`, 'g'), replace: REDACTED, trigger: 'shp' },
  {
    // A password given on a command line: mysql -pSECRET (attached: a word after '-p ' is the
    // database), sshpass -p SECRET, docker login -p SECRET. The look back for the program runs
    // only at a '-p' and is bounded.
    name: 'command-line password',
    pattern: /((?:^|\s)-p(?:(?<=\b(?:mysql|mysqldump|mariadb)\b[^\n]{0,200}-p)|(?<=\b(?:sshpass|docker login|podman login)\b[^\n]{0,200}-p)\s*))[^\s"'-][^\s"']{2}[^\s"']*/g,
    replace: `$1${REDACTED}`,
    trigger: 'mysql|mysqldump|mariadb|sshpass|docker login|podman login',
  },
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
    trigger: 'eyJ',
  },
  { name: 'bearer token', pattern: /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{16}[A-Za-z0-9._~+/=-]*/g, replace: `$1 ${REDACTED}`, trigger: 'Bearer|Basic|Token' },
  {
    // A secret given as the value of a long option: --password value, --token 'value' (with '='
    // the assignment rules see it). Not an option that only says how to get one (--password-stdin,
    // --no-password, --ask-vault-password), nor prose about the option (the --token flag).
    name: 'secret option',
    pattern: /((?<!\S)--(?!no-|ask-|with-|prompt-)(?:[A-Za-z0-9-]*-)?(?:password|passwd|passphrase|secret|token|api-?key|access-key|secret-key)[ \t]+)(?!-|\[REDACTED\]|(?:flag|option|argument|arg|parameter|param|switch|value|is|was|and|or|to|for|with|in|on|of|the|from|instead|now|also)\b)(?:"[^"\n]+"|'[^'\n]+'|[^\s"'`;|&<>()]{3}[^\s"'`;|&<>()]*)/gi,
    replace: `$1${REDACTED}`,
    trigger: KEYWORD,
  },
  {
    // A secret set by name on a command line: aws configure set aws_secret_access_key value,
    // npm config set //registry.npmjs.org/:_authToken value.
    name: 'config set secret',
    pattern: new RegExp(`(\\bconfig(?:ure)?[ \\t]+set[ \\t]+(?:\\S*?[/:])?${SECRET_NAME}[ \\t]+)(["']?)(?!\\[REDACTED\\])[^\\s"']+`, 'gi'),
    replace: `$1$2${REDACTED}`,
    trigger: KEYWORD,
  },
  {
    // A Dockerfile's ENV NAME value, the form without '=': the value is the rest of the line.
    name: 'dockerfile env',
    pattern: new RegExp(`((?:^|[\\n\\r])[ \\t]*ENV[ \\t]+${SECRET_NAME}[ \\t]+)(?!\\[REDACTED\\])[^\\s=][^\\r\\n]*`, 'gi'),
    replace: `$1${REDACTED}`,
    trigger: KEYWORD,
  },
  {
    // An XML element or attribute pair named for a secret: <password>value</password> (Maven,
    // .NET, Tomcat), <add key="ApiKey" value="value" />, <input name="password" value="value">.
    name: 'xml secret',
    pattern: new RegExp(`(<${SECRET_NAME}(?:[ \\t][^<>\\n]{0,200})?>[ \\t]*)(?!\\[REDACTED\\])[^<\\s][^<\\n]{3}[^<\\n]*(?=<\\/)`, 'gi'),
    replace: `$1${REDACTED}`,
    trigger: KEYWORD,
  },
  {
    name: 'key-value attributes',
    pattern: new RegExp(`(\\b(?:key|name)[ \\t]*=[ \\t]*(["'])${SECRET_NAME}\\2[ \\t]+value[ \\t]*=[ \\t]*)(["'])(?!\\[REDACTED\\])[^"'\\n]{4}[^"'\\n]*\\3`, 'gi'),
    replace: `$1$3${REDACTED}$3`,
    trigger: KEYWORD,
  },
  {
    // A secret given by name as a call's first argument: setItem('token', 'value'),
    // os.getenv("API_KEY", "value"), secrets.put("db_password", "value"). Not a second name
    // (a list of names: ('token', 'password'), letters only, where a secret has digits too).
    name: 'secret argument',
    pattern: new RegExp(`(\\([ \\t]*(["'])${SECRET_NAME}\\2[ \\t]*,[ \\t]*)(["'])(?!\\[REDACTED\\]|(?=[A-Za-z_.-]*?${KEYWORD})[A-Za-z_.-]+\\3)[^"'\\n]{4}[^"'\\n]*\\3`, 'gi'),
    replace: `$1$3${REDACTED}$3`,
    trigger: KEYWORD,
  },
  {
    // An Authorization header's credentials after a scheme the bearer rule does not know
    // (Authorization: token ..., as GitHub takes it; Digest, ApiKey), or with no scheme at all
    // when they hold a digit (prose after 'Authorization:' does not).
    name: 'authorization header',
    pattern: /(\bauthorization["']?[ \t]*[:=][ \t]*["']?(?:(?:bearer|basic|token|digest|apikey|api-key|key|bot|sso-key|otp)[ \t]+)?)(?!\[REDACTED\])(?=[^\s"',;]{0,200}[0-9])[^\s"',;]{8}[^\s"',;]*/gi,
    replace: `$1${REDACTED}`,
    trigger: 'authorization',
  },
  {
    // A Cookie or Set-Cookie header: a session is a credential. Each cookie's value goes; its
    // name and the attributes (Path, SameSite, HttpOnly...) stay, as what a change was about.
    name: 'cookie header',
    pattern: /((?:^|[\s"'{,(])(?:set-)?cookie["']?[ \t]*:[ \t]*["']?)(?=[^\r\n=;"']{1,200}=[^\s;"'])([^\r\n"']+)/gi,
    replace: (_match, head: string, pairs: string) => head + pairs.replace(COOKIE_PAIR, (pair, name: string) => (COOKIE_ATTRIBUTE.test(name) ? pair : `${name}=${REDACTED}`)),
    trigger: 'cookie',
  },
  {
    // Go's declaration with a type between the name and the value: var apiKey string = "value".
    name: 'typed declaration',
    pattern: new RegExp(`(\\b(?:var|const)[ \\t]+${SECRET_NAME}[ \\t]+${GO_TYPE}[ \\t]*=[ \\t]*)(["'\`])(?!\\[REDACTED\\])[^"'\`\\n]{4}[^"'\`\\n]*\\2`, 'gi'),
    replace: `$1$2${REDACTED}$2`,
    trigger: KEYWORD,
  },
  {
    // .env style and config assignments whose name says secret, quoted: KEY="value", "api_key": 'value',
    // apiKey := "value", 'password' => 'value', apiKey: string = "value", env["API_KEY"] = "value",
    // ENV['TOKEN'] ||= "value"; and with the quotes escaped, as JSON inside a log line shows them:
    // {\"db_password\": \"value\"}.
    name: 'quoted secret assignment',
    pattern: new RegExp(`(${SECRET_NAME}(?:\\\\*["'])?\\]?\\s*(?::[ \\t]*${TYPE}[ \\t]*=|${ASSIGN}|=>|:)\\s*)(\\\\*["'])(?!\\[REDACTED\\])([^"'\\n]{4}[^"'\\n]*)\\2`, 'gi'),
    replace: `$1$2${REDACTED}$2`,
    trigger: KEYWORD,
  },
  {
    // Unquoted: KEY=value. A call or member access (token = getToken(), auth: this.auth) is code.
    // Each repetition of a group costs the regex engine stack, so the member chain is bounded: a
    // megabyte of 'a.a.a' would otherwise overflow it. Longer chains are redacted, not kept.
    // A name, a type and ' =' (apiKey: string = value) is a typed assignment: the type is no value.
    // Nor is a keyword (token = await getToken(), secret: string | null = null).
    name: 'secret assignment',
    pattern: new RegExp(`(${SECRET_NAME}\\s*(?::[ \\t]*${TYPE}[ \\t]+=(?!=)|${ASSIGN}|:(?![ \\t]*${TYPE}[ \\t]+=(?!=)))\\s*)(?!\\[REDACTED\\]|(?:await|async|typeof|yield|void|true|false|null|undefined|none|nil)(?![^\\s,;)\\]}]))(?![A-Za-z_$][\\w$]*(?:\\.[A-Za-z_$][\\w$]*){1,64}(?![\\w$.]))([^\\s"',;()[\\]{}<>]{4}[^\\s"',;()[\\]{}<>]*)(?![\\w(])`, 'gi'),
    replace: `$1${REDACTED}`,
    trigger: KEYWORD,
  },
];

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

/** Whether any rule could match: one scan instead of one per rule, for the many texts (a diff's lines) that hold no secret. */
const MAYBE_SECRET = new RegExp([...new Set(RULES.map((r) => r.trigger))].join('|'), 'i');

function applyRule(rule: Rule, text: string): string {
  return typeof rule.replace === 'string' ? text.replace(rule.pattern, rule.replace) : text.replace(rule.pattern, rule.replace);
}

/** The text with every recognised secret replaced by [REDACTED]. */
export function redact(text: string): string {
  let out = text;
  for (const secret of knownSecrets.keys()) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  if (!MAYBE_SECRET.test(out)) return out;
  for (const rule of RULES) out = applyRule(rule, out);
  return out;
}

const WHOLE_SECRET_NAME = new RegExp(`^${SECRET_NAME}$`, 'i');

/** Whether a name (a JSON key, a variable) says its value is a secret: db_password, apiKey, SMTP_PASS. */
export function isSecretName(name: string): boolean {
  return WHOLE_SECRET_NAME.test(name);
}

const CURL_USER = RULES.find((r) => r.name === 'curl user')!;

/** A line that starts with 40 base64 characters: tried on lines that are long enough, quicker than on their text. */
const BASE64_LINE_START = /^[ \t]*[A-Za-z0-9+/]{40}/;

/**
 * The lines of one text (a side of a diff), each redacted as a line: across a line break an
 * assignment would take the next line's first word as its value. A private key spans lines, so
 * each key block, and each block of a key's body lines without its BEGIN line, first becomes one
 * line. A curl command spans the lines it continues onto ('\' at the end of a line), so a -u
 * there is read as curl's.
 */
export function redactLines(lines: string[]): string[] {
  const text = lines.join('\n');
  const key = text.includes('PRIVATE KEY');
  const body = lines.some((line) => line.length >= 40 && BASE64_LINE_START.test(line));
  const split = key || body ? (key ? text.replace(PRIVATE_KEY, REDACTED) : text).replace(BASE64_BLOCK, `$1${REDACTED}`).split('\n') : lines;
  let inCurl = false;
  return split.map((line) => {
    let out = redact(line);
    // 'curl ' ahead of the line puts its -u in curl's context; the rule keeps what precedes -u.
    if (inCurl && out.includes('-u')) out = applyRule(CURL_USER, `curl ${out}`).slice('curl '.length);
    inCurl = line.endsWith('\\') && (inCurl || /\bcurl\b/.test(line));
    return out;
  });
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
  return JSON.stringify(redactJsonValue(value, false));
}

function redactJsonValue(value: unknown, underSecretName: boolean): unknown {
  if (typeof value === 'string') return underSecretName ? REDACTED : redact(value);
  if (Array.isArray(value)) return value.map((v) => redactJsonValue(v, underSecretName));
  if (value === null || typeof value !== 'object') return value;
  // fromEntries, not assignment: a key '__proto__' stays a key instead of setting the prototype.
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [redactKey(key), redactJsonValue(v, underSecretName || isSecretName(key))]));
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
 * ssh keys, secrets folders; and credential stores: .netrc, .pgpass, .git-credentials). The
 * extension never captures them; this also guards events that arrive from elsewhere (agent hooks,
 * the CLI).
 */
export function isSecretPath(file: string): boolean {
  const parts = file.replace(/\\/g, '/').split('/').filter(Boolean);
  const base = parts[parts.length - 1] ?? '';
  if (/^\.env(?:\..*)?$/i.test(base)) return true;
  if (/\.(?:pem|key|p12|pfx)$/i.test(base)) return true;
  if (/^id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?(?:\.pub)?$/i.test(base)) return true;
  // Files of plain-text credentials: machine passwords (curl, ftp, git), PostgreSQL's, git's store.
  if (/^(?:[._]netrc|\.pgpass|\.git-credentials)$/i.test(base)) return true;
  return parts.slice(0, -1).some((p) => /^\.?secrets?$/i.test(p));
}
