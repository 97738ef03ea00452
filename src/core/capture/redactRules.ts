// The rules redact() applies: what a secret looks like, one named rule a shape (see redact.ts for
// how they are applied). Every rule is tested in redact.test.ts (the prose, header and public
// base64 ones in redactProse.test.ts; program options, vendor formats, JWKs, base64 DER and
// encoded secrets in redactFormats.test.ts; values a formatter wraps, OpenVPN keys and the code
// that only names a secret in redactAudit.test.ts; the AWS CLI's secret values, URL-encoded
// assignments, Square's tokens and credential pairs in prose in redactCliEncodedVendor.test.ts;
// password hashes, a connection string's password in braces and a .netrc password before its
// login in redactPasswordHashes.test.ts), on hostile input too.

import { addToList } from '../lists';
import { splitIdentifier, tokenize } from '../retrieve/textPrep';
import { wordNeighbours } from '../retrieve/wordNeighbours';

export const REDACTED = '[REDACTED]';

// Every pattern runs in time linear in the text (captures arrive unbounded: a pasted log, a
// minified file). A backtracking engine goes quadratic when many start positions each rescan one
// long run of characters, so a pattern that scans a run starts only where the run starts (a
// lookbehind), captures the part of the run before the secret to keep it, and finds keywords
// inside a lookahead, which is never re-entered once it has matched. And 'at least n' is written
// x{n}x*, not x{n,}: V8 runs x* as a loop but x{n,} on its stack, which a run of a few MB overflows.

const NAME_CHAR = '[A-Za-z0-9_.-]';
// 'pass' only as the last part of a name (SMTP_PASS, db.pass): inside a word or before another
// part it is ordinary English or code (bypass, passes, pass_through). Joined to a word before it
// only for a few that make a password's name (SSHPASS, which sshpass -e reads; PGPASS, ROOTPASS,
// storepass): compass, bypass and surpass are English.
// A name ending in 'key' only after a word that makes it a secret (ENCRYPTION_KEY, jwtSigningKey,
// APP_KEY): most keys in code name a row, a cache entry or a map slot (primary_key, sort_key,
// cacheKey, dedupe_key), and case cannot tell signingKey from hotkey where the rules ignore it.
// Short words only where a name starts or a part does (APP_KEY, not mapKey or observerKey); not
// crypto or cipher, whose keys in code are mostly WebCrypto objects (cryptoKey = await ...).
// The qualifier is looked for behind a 'key', which is rare enough to keep the pre-scan quick.
const KEY_NAME = `key(?!${NAME_CHAR})(?<=(?:encrypt(?:ion)?|decrypt(?:ion)?|signing|jwt|hmac|master|licen[cs]e|subscription|webhook|deploy|(?<![A-Za-z0-9])(?:app|aes|ssh|auth|admin|root|server|service))[_.-]?key)`;
const KEYWORD = `(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|account[_-]?key|private[_-]?key|client[_-]?secret|credentials?|sharedaccesssignature|(?<![A-Za-z0-9])(?:ssh|pg|db|smtp|imap|ftp|sftp|mail|redis|mysql|mongo|vnc|ldap|bind|admin|root|user|proxy|store|vpn|wifi)?pass(?!${NAME_CHAR})|${KEY_NAME})`;
/** A whole run of name characters that contains a secret keyword, such as DB_PASSWORD or app.api-key. */
export const SECRET_NAME = `(?<!${NAME_CHAR})(?=${NAME_CHAR}*?${KEYWORD})${NAME_CHAR}+`;
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

/**
 * A type that a declaration gives a secret's name (password: string; token: string | undefined;
 * api_key: SecretStr): a language's string types, by their exact spelling, as a secret is not.
 */
const TYPE_NAME = /^(?:string|String|number|boolean|bigint|unknown|object|bytes|integer|float|double|char|SecretStr|SecretBytes|SecretString|SecureString|Buffer|Uint8Array|ByteArray|CharArray)$/;

/** Go's type after the name (var apiKey string = ...): one word, or a package's type (pkg.Type). */
const GO_TYPE = '[A-Za-z_][\\w.]{0,64}';
/** An assignment operator: =, :=, ?=, and the compound ones that assign a default (||=, ??=, &&=). */
const ASSIGN = '(?:\\|\\||\\?\\?|&&|[:?])?=';

/**
 * One name=value pair of a cookie header; the value runs to the next ';' or ','. The name starts
 * only where a pair can (after a separator or a space): a long run without '=' is then scanned
 * once, not once from each of its characters.
 */
const COOKIE_PAIR = /(?<![^\s;,])([^\s=;,]+)=(?!\[REDACTED\])[^;,]*/g;
const COOKIE_ATTRIBUTE = /^(?:path|domain|expires|max-age|samesite|priority|partitioned|version|comment)$/i;

/** Objects code reads its settings and secrets from: config.apiKey, process.env.TOKEN, this.password. */
const RECEIVER = '(?:this|self|cls|super|config|conf|cfg|settings|process|os|env|environ|req|request|res|response|ctx|context|options|opts|props|params|args|state|app|window|globalThis|global|module|exports|secrets|vars|creds|credentials|data|input|inputs)';
/**
 * A value that is code, not a secret: a member chain of identifiers without digits (this.auth,
 * req.headers.token, settings.SECRET_KEY, os.environ.get; an optional chain too: content?.secrets),
 * or any chain on a known receiver
 * (config.db2Password). A secret with a dot has digits among its letters (hvs.CAESIZq9...,
 * Zq9pass.Word, dp.st.prd.Zq9...), which such a name has not. Each repetition of a group costs
 * the regex engine stack, so the chain is bounded: a longer one is redacted, not kept.
 */
const CODE_REFERENCE = `(?:${RECEIVER}(?:\\??\\.[A-Za-z_$][\\w$]*){1,64}|[A-Za-z_$][A-Za-z_$]*(?:\\??\\.[A-Za-z_$][A-Za-z_$]*){1,64})(?![\\w$.])`;

/**
 * One character of a quoted value whose quote is group `n` (", ', or one escaped: \" in JSON
 * inside a log line). A backslash escape (\" \\ \n) does not end the value, nor does the other
 * kind of quote; three backslashes and a quote are a quote escaped inside an escaped string
 * ({\"password\": \"a\\\"b\"}). No two alternatives match at one place, so a value without its
 * closing quote is scanned once, not once per way of reading its backslashes.
 */
const quotedChar = (n: number): string => `(?:[^"'\\x5c\\n]|\\x5c{3}["']|(?!\\x5c{3}["']|\\${n})\\x5c[^\\n]|(?!\\${n})["'])`;

/** A string literal of one line, its quote captured as group `n` of the pattern it is part of. */
const literal = (n: number): string => `(["'])(?:[^"'\\x5c\\n]|\\x5c[^\\n]|(?!\\${n})["'])*\\${n}`;
/**
 * Literals joined onto a value by '+' or '.' (PHP), by nothing but white space (Python's and C's
 * implicit concatenation: SECRET_KEY = (\n "part one"\n "part two"\n)), or after a '\' that
 * continues the line, on its line or the next ones (after a diff's mark too): a secret split
 * over literals (a long token a formatter wrapped) is redacted in each part. Not a literal that is a key (a diff's '+' line of
 * the same setting: "password": "new"), whose value is its own, nor a docstring ('''/""" after
 * an assignment: no part of its value). Its literals' quote is group 5, as the rule 'quoted
 * secret assignment' numbers its groups.
 */
const JOINED_LITERALS = `(?:\\s*(?:(?:[+.]|\\x5c(?=\\r?\\n)|(?<=\\n)-)\\s*)?(?!"""|''')${literal(5)}(?![ \\t]*(?::|=>|=(?!=))))*`;

/** What a name says about a secret rather than holding it: max_tokens, TOKEN_TTL, token_type, password_hash, SESSION_SECRET_ROTATION. */
const SETTING_PART = /(?:^|[_.-])(?:tokens|ttl|type|hash|algorithm|alg|rotation|expiry|expires|expiration|lifetime|timeout|length|size|count|limit)$/;
/** A plain setting: a word, or a number with an optional unit (Bearer, bcrypt, weekly, 4096, 3600s). A secret mixes digits into its letters. */
const PLAIN_SETTING = /^(?:[A-Za-z]+|\d+(?:\.\d+)?(?:ms|[smhdw])?)$/;

/**
 * What a name says its value is instead of the secret: where the secret is sent or read (a
 * header's name, an endpoint, a path, a variable) or what it is called: apiKeyHeader,
 * tokenEndpoint, TOKEN_URL, PASSWORD_FILE, SECRET_NAME, passwordField. Not an id (Vault's
 * secret_id is a secret).
 */
const PLACE_PART = /(?:^|[_.-])(?:header|endpoint|url|uri|path|file|env|var|name|field|param)$/;
/** A run of letters and digits long and mixed enough to be random: a token in a URL's path or query. */
function hasRandomRun(value: string): boolean {
  return value.split(/[^A-Za-z0-9]+/).some((run) => run.length >= 12 && /[0-9]/.test(run) && /[A-Za-z]/.test(run));
}

/**
 * Whether `name = value` sets something about a secret (max_tokens: 4096, token_type: Bearer),
 * not the secret; or says where it is or what it is called (apiKeyHeader = "x-api-key",
 * tokenEndpoint = "https://oauth2.googleapis.com/token", see PLACE_PART), with a value that has
 * no secret's shape (see isSecretValue) nor a random run anywhere in it (a token in a URL).
 */
export function isSettingOfSecret(name: string, value: string): boolean {
  const snake = name.replace(/([a-z0-9])(?=[A-Z])/g, '$1_').toLowerCase();
  if (PLAIN_SETTING.test(value) && SETTING_PART.test(snake)) return true;
  return PLACE_PART.test(snake) && value.length <= 2048 && !hasRandomRun(value) && !isSecretValue(value);
}

/** The name an assignment's head starts with (DB_PASSWORD in `DB_PASSWORD = `). */
function nameOf(head: string): string {
  return /^[A-Za-z0-9_.-]*/.exec(head)![0];
}

/**
 * Whether base64 text is basic credentials (Authorization: Basic, docker's and npm's auth): it
 * decodes to user:password, or it is too long and mixed to be a word.
 */
function isBasicCredentials(value: string): boolean {
  if (/^[\x20-\x7e]+:[\x20-\x7e]+$/.test(Buffer.from(value, 'base64').toString('latin1'))) return true;
  return value.length >= 16 && /[0-9+/]/.test(value) && /[a-z]/.test(value) && /[A-Z]/.test(value);
}

/**
 * An unquoted value that is code: a path (Rust's String::from(...), Config::new(), C++'s
 * std::string) or an index (tokens[i], passwords[user]), of names of letters only: a secret
 * has digits among its letters, which such a name has not.
 */
const CODE_PATH_OR_INDEX = '[A-Za-z_$][A-Za-z_$]*(?:<[^<>\\n]{0,64}>)?::[A-Za-z_<]|[A-Za-z_$][A-Za-z_$]*\\[';
/**
 * A call, its callee a name or a member chain whose parts may hold digits (base64.b16encode(...),
 * crypto2.random()): code, not a secret, which the unquoted rule would otherwise cut at a dot.
 */
const CODE_CALL = '[A-Za-z_$](?:[\\w$.?]*[\\w$])?\\(';
/** A value wholly one template's slot: Helm's and Go's {{ .Values.db.password }}, Jinja's {{ db_password }}, Actions' ${{ secrets.TOKEN }}. */
const WHOLE_TEMPLATE_SLOT = /^\$?\{\{[^{}\n]{1,200}\}\}$/;
/** A variable's name as code writes one: a constant's (DB_PASSWORD, AWS_S3_KEY) or one without digits (token, dbPassword); not $uperS3cret. */
const VARIABLE = '(?:[A-Z_][A-Z0-9_]*|[A-Za-z_][A-Za-z_]*)(?![\\w])';
/**
 * A quoted value wholly one reference to where a secret is, as REFERENCE reads them: a variable
 * ("$DB_PASSWORD", "${API_KEY}", "%TOKEN%", "{token}"), a command's output ("$(cat
 * /run/secrets/db)") or a placeholder of words ("<your-token>", "<YOUR_API_KEY>"). Text around a
 * reference ("${USER}Zq9...", a shell default "${TOKEN:-value}") makes none: it may hold the secret.
 */
const WHOLE_REFERENCE = new RegExp(`^(?:\\$${VARIABLE}|\\$\\{${VARIABLE}\\}|%${VARIABLE}%|\\{${VARIABLE}\\}|\\$\\([^()\\n]{1,200}\\)|<[A-Za-z][A-Za-z _.:-]{0,99}>)$`);

/** The parts of a name, lowercase: DB_PASSWORD, dbPassword and db.password are db and password. */
function nameParts(name: string): string[] {
  return name.replace(/([a-z0-9])(?=[A-Z])/g, '$1_').toLowerCase().split(/[_.-]+/).filter(Boolean);
}

/**
 * Whether a value of letters only repeats the last words of the name it is given (EVENT_TEST_PASS:
 * 'pass', REFRESH_TOKEN = "refresh_token", GRANT_TYPE_PASSWORD = 'password', API_KEY = "apiKey"):
 * a label (an enum's value, a field's or an event's name), which tells nothing the name does not.
 */
function isOwnName(name: string, value: string): boolean {
  if (!/^[A-Za-z][A-Za-z_.-]{0,63}$/.test(value)) return false;
  const spelled = nameParts(value).join('');
  // Only the name's last words are compared: its end is looked at, however long it is.
  const parts = nameParts(name.slice(-128));
  let tail = '';
  for (let i = parts.length - 1; i >= 0 && tail.length < spelled.length; i--) tail = parts[i] + tail;
  return tail === spelled;
}

/**
 * Whether an assignment stores a parameter in an object's field (this.apiKey = apiKey;,
 * self.token = token, this.secret = newSecret): code, whose unquoted value is a variable. Only on
 * this, self or cls, and only a name of letters (a secret has digits), or the field's own name.
 */
function isParameterStored(name: string, value: string): boolean {
  const field = /^(?:this|self|cls)\.([A-Za-z_$][\w$]*)$/.exec(name);
  return field !== null && (/^[A-Za-z_$][A-Za-z_$]*$/.test(value) || value.toLowerCase() === field[1].toLowerCase());
}

/** An identifier without a digit: a variable's, a type's or a keyword's name (a secret mixes digits into its letters). */
const IDENTIFIER = /^[A-Za-z_$][A-Za-z_$]*$/;
/**
 * What code puts after an operand: an operator of an expression or of a type (a ternary's '?',
 * '??', '|', '||', '&&', Python's or, and, if, else), or the punctuation that ends an argument,
 * an entry or a statement (',', ';', ')', ']', '}').
 */
const AFTER_OPERAND = /^[ \t]*(?:\?|\|\|?|&&|[,;)\]}]|(?:or|and|if|else)(?![\w$]))/;
/**
 * Names that start a line before an assignment's last one, as unpacking gives them (username,
 * password = ..., Go's user, token := ..., Lua's local a, secret = ...): variables' names, in
 * lower case (a sentence's first word, "First, password=...", is capitalised).
 */
const OTHER_TARGETS = /^[ \t]*(?:(?:local|var)[ \t]+)?(?:[a-z_][\w$]*[ \t]*,[ \t]*){1,16}$/;

/** The text before `at` on its line, or null past 200 characters (looked back at a bounded way, so a long line is not rescanned at each match). */
function lineBefore(text: string, at: number): string | null {
  const window = text.slice(Math.max(0, at - 200), at);
  const start = Math.max(window.lastIndexOf('\n'), window.lastIndexOf('\r'));
  return start < 0 && at > 200 ? null : window.slice(start + 1);
}

/**
 * Whether an unquoted value is an identifier that code shows is a variable or a type, not a
 * secret (an identifier has no digit, which a secret mixes into its letters): one written as code
 * names things (words in camel case: messageId, isPublicClient, PreTrainedTokenizer; the name's
 * own words: password=password, tokenizer: Tokenizer; a language's type: string) before an
 * operator or the punctuation that ends an argument or a statement (`after`, see AFTER_OPERAND);
 * or an identifier of words given to several names at once (username, password = split: a
 * sequence to unpack, `before` the name on its line). A plain word at a line's end (password =
 * letmein) is no operand: it may be a password.
 */
function isCodeOperand(name: string, value: string, after: string, before: string | null): boolean {
  if (!IDENTIFIER.test(value)) return false;
  const ownOrType = isOwnName(name, value) || TYPE_NAME.test(value);
  // Made of words (letters at random, xQzvBnmK, are no variable's name).
  if (!ownOrType && !(value.length <= 64 && splitIdentifier(value).every(isKnownWord))) return false;
  if (before !== null && OTHER_TARGETS.test(before)) return true;
  return AFTER_OPERAND.test(after) && (ownOrType || /[a-z][A-Z]/.test(value));
}

/** A whole name that ends in a secret's keyword (DB_PASSWORD, apiKey, SMTP_PASS, AuthToken). */
const ENDS_IN_KEYWORD = new RegExp(`${KEYWORD}$`, 'i');

/**
 * Whether a name is a class's or a type's: capitalised words run together that go on past the
 * secret's keyword (HTTPPasswordMgr, PasswordField, TokenProvider). It names code about a secret;
 * a setting or a variable that holds one is not written so.
 */
function isTypeName(name: string): boolean {
  return /^[A-Z]/.test(name) && /[a-z]/.test(name) && !/[^A-Za-z0-9]/.test(name) && !ENDS_IN_KEYWORD.test(name);
}

/** Whether a user name is a token: digits among letters, both cases or 32 characters or more (a hex token). */
function isTokenShaped(user: string): boolean {
  return /[0-9]/.test(user) && /[A-Za-z]/.test(user) && ((/[a-z]/.test(user) && /[A-Z]/.test(user)) || user.length >= 32) && !/^[a-z0-9]+(?:-[a-z0-9]+)+$/.test(user);
}

/**
 * The words after an unquoted secret's first that belong to it (SMTP_PASSWORD=Zq9first Zq9second):
 * those with a capital and a digit, as random text has and a command or prose after an assignment
 * (TOKEN=abc npm publish) has not. The rest is kept.
 */
const SECRET_WORDS = /^(?:[ \t]+(?=\S*[A-Z])(?=\S*[0-9])\S+)*/;

// A format's slot is bounded (%08.3f, %(name)s): its flags and its width are both digits, which unbounded would be read every way.
/** Where a variable's name ends: the value's end, a space, a path's or a sentence's punctuation ($HOME/.npmrc, $TOKEN.). */
const REFERENCE_END = `(?![^\\s/.,;:)\\]}'"\`-])`;
/**
 * What a value names rather than holds: a variable or a command's output ($DB_PASSWORD,
 * ${token}, $(vault read ...), %TOKEN%, $1), a template's or a format's slot ({{ secrets.TOKEN }},
 * {token}, {}, %s, %(name)s), a placeholder (<your-token>), a value already redacted. Only in a
 * variable's or a slot's shape: a leading '$', '%' or '{' alone makes none ($uperS3cret!,
 * %Zx81!qq, {eyJhbGci...}).
 */
const REFERENCE = new RegExp(
  `^(?:\\$(?:(?:[A-Za-z_]\\w*|\\d)${REFERENCE_END}|\\{|\\()|%[A-Za-z_]\\w*%|%(?:\\([\\w.]{1,64}\\))?[-+ #0]{0,4}\\d{0,4}(?:\\.\\d{1,4})?[sdifxXoeEgGcrv]${REFERENCE_END}|\\{\\{|\\{\\w*\\}${REFERENCE_END}|<|\\[REDACTED\\])`,
);
/** A template's slot inside a value (Credential=${accessKeyId}/..., {{ token }}): code builds the value, it holds no secret. */
const TEMPLATE_SLOT = /\$\{|\{\{/;
/** Code, not a secret: a call (getPassword()), a member chain (process.env.SECRET, this.token). */
const CODE_VALUE = new RegExp(`^(?:[A-Za-z_$][\\w$.]*\\(|${CODE_REFERENCE}$)`);
/** A name in capitals (GITHUB_TOKEN, EOF): an environment variable or a constant. A secret in capitals has digits. */
const CONSTANT_NAME = /^[A-Z][A-Z_]*$/;
/** A path or a URL (~/.npmrc, /run/secrets/db, https://vault...): where a secret is kept (a URL's own password has its rule). */
const PATH_OR_URL = /^(?:~?\.{0,2}\/|[A-Za-z]:\\|[A-Za-z][A-Za-z0-9+.-]*:\/\/)/;
/** A version, a date, a time or an address (1.2.3, v2.0, 2024-01-31, 12:30, 10.0.0.1): numbers with separators. */
const NUMBERS = /^v?\d+(?:[.:/-]\d+)+$/i;
/** The names of software that hold digits (sha256, base64, utf-8, oauth2, x509, k8s, v2): the vocabulary below is split at digits, so it cannot hold them. */
const DIGIT_TERM =
  /^(?:sha(?:1|224|256|384|512)|sha3|md[45]|crc32|base(?:32|58|64)(?:url)?|utf(?:8|16|32)|ucs2|oauth[12]|http[23]|x509|(?:ed|x)(?:25519|448)|p(?:256|384|521)|secp256[kr]1|(?:rsa|aes|hs|rs|es|ps)\d{3,4}|pbkdf2|argon2(?:id|i|d)?|s3|ec2|k8s|i18n|l10n|[23]fa|u2f|fido2|webauthn2|e2e|ipv[46]|v\d{1,2}|1password|pkcs\d{1,2}|p12|log4j|es20\d\d|es[5-9]|python[23]|node\d{1,2})$/i;

/** Words already looked up: prose repeats its few words, and a text of many (a log) would repeat the lookups. Bounded. */
const knownWords = new Map<string, boolean>();

/** Whether a word of letters is ordinary: a function word (the, too, not) or a word of software documentation (required, expired, hashed). */
function isKnownWord(word: string): boolean {
  // The tokenizer drops a term this long; no word is.
  if (word.length > 40) return false;
  const seen = knownWords.get(word);
  if (seen !== undefined) return seen;
  // Stemmed and stopped by the tokenizer the vocabulary was built with; a stop word comes back as no term.
  const terms = tokenize(word, { splitIdentifiers: false, stem: true, stopWords: true });
  const known = terms.every((term) => wordNeighbours().get(term).length > 0);
  if (knownWords.size >= 4096) knownWords.clear();
  knownWords.set(word, known);
  return known;
}

/**
 * Whether an unquoted value after a credential's name in prose is a secret: it has a secret's
 * shape (a symbol, digits among letters, a PIN's four digits or more) or is not a word of
 * software documentation (letmein). Not a reference, code, a constant's name, a path, a version,
 * an English word or an identifier of such words (required, null, string, SecretStr, read-only,
 * base64-encoded). The documentation vocabulary is the product's own (data/word-neighbours.txt,
 * 13,862 stems), so the many words prose puts after "the token is" (expired, revoked, rotated,
 * scoped, mounted...) are known without a list kept here; it fails closed: without the file
 * every word is unknown, and redacted.
 */
function isSecretValue(value: string): boolean {
  // The common case first: one word of prose.
  if (/^[a-z]+$/.test(value)) return !isKnownWord(value);
  if (REFERENCE.test(value) || CODE_VALUE.test(value) || CONSTANT_NAME.test(value) || PATH_OR_URL.test(value) || NUMBERS.test(value)) return false;
  if (/^\d+$/.test(value)) return value.length >= 4;
  // No word, nor an identifier of words, runs this long; and its words are not looked up one by one.
  if (value.length > 100) return true;
  // A symbol other than a word separator: Sup3rS3cret!, pa$$word, abc+def=.
  if (/[^A-Za-z0-9_./:-]/.test(value)) return true;
  // utf-8, SHA-256: a name's digits written apart from its letters.
  for (const chunk of value.replace(/([A-Za-z])-(?=\d)/g, '$1').split(/[_./:-]+/)) {
    if (!chunk) continue;
    if (/\d/.test(chunk)) {
      if (!DIGIT_TERM.test(chunk)) return true;
    } else if (!splitIdentifier(chunk).every(isKnownWord)) return true;
  }
  return false;
}

/** Code that reads a credential: a call (getAuth()), a member chain on a receiver code reads settings from (req.headers.authorization). */
const READ_CODE = new RegExp(`^(?:[A-Za-z_$][\\w$.]*\\(|${RECEIVER}(?:\\.[A-Za-z_$][\\w$]*){1,64}$)`);

/**
 * Whether an Authorization header's credentials without a scheme are a secret: whatever their
 * shape (abc.def.ghi), but not a word of prose (authorization: required), a reference or code.
 */
function isRawCredential(value: string): boolean {
  if (!value || REFERENCE.test(value) || READ_CODE.test(value) || PATH_OR_URL.test(value)) return false;
  return !/^[A-Za-z]+$/.test(value) || !splitIdentifier(value).every(isKnownWord);
}

/**
 * A credential's name in prose: a word (password, pass phrase, api key), or the last part of an
 * identifier (DB_PASSWORD, apiKey, client-secret), not a longer word (passwordless, tokenizer,
 * secretary, max_tokens). The identifier starts only where a run of its characters starts, so a
 * run is scanned once.
 */
const PROSE_PASSWORD = '(?:password|passwd|passphrase|pass[ \\t]phrase|passcode|pwd|pin[ \\t]code)';
const PROSE_CREDENTIAL = `(?:${PROSE_PASSWORD}|secret|token|credentials?|(?:api|access|secret|private|signing|encryption|master|licen[cs]e)[ \\t_-]?key|apikey|client[ \\t_-]?secret)`;
/** What the credential is for, before the link: "the password for the staging db is ...". A few words, bounded. */
const PROSE_WHOSE = '(?:[ \\t]+(?:for|on|in|of|to|at)(?:[ \\t]+[\\w.-]+){1,3})?';
/** How prose says what a credential is: is, was, is now, set to, changed to. */
const PROSE_GIVE = '(?:(?:(?:is|was|been|be)[ \\t]+)?(?:set|changed|reset|updated)[ \\t]+to|(?:is|was)(?:[ \\t]+(?:now|still|currently|actually))?)';
/** How prose gives a value: PROSE_GIVE, or of, to (and a ':' after: "the secret is: ..."). */
const PROSE_LINK = `(?:${PROSE_GIVE}|of|to)(?:[ \\t]*:)?`;
/** A prose head that ends in the link 'to' or 'of' alone (not 'set to', 'changed to'); looked behind only at a 'to' or an 'of'. */
const BARE_TO_OR_OF = /\b(?:to|of)(?<!(?:set|changed|reset|updated)[ \t]+(?:to|of))(?:[ \t]*:)?[ \t]+$/i;
/** A head that gives a password's value (the password for staging is, set the passphrase to): not a token's or a key's, whose prose describes them (the token is expired). */
const PASSWORD_GIVEN = new RegExp(`${PROSE_PASSWORD}${PROSE_WHOSE}[ \\t]+${PROSE_GIVE}(?:[ \\t]*:)?[ \\t]+$`, 'i');
/** Where a clause ends after a value: the text's or the line's end, punctuation, a conjunction. */
const CLAUSE_END = '[ \\t]*(?:$|[\\r\\n.,;:!?)\\]]|(?:and|but|so|or|then)\\b)';
/** Endings of words that say how a password is (required, hashed, missing, configurable, sensitive, optional, dangerous, careless, weakly): an adjective's or a participle's. */
const DESCRIBING_ENDING = /(?:ed|en|ing|able|ible|ive|al|ous|ful|less|ent|ant|ic|ure|ory|ary|ly|ish|ile|id|wn)$/;
/** Words without such an ending that say how a password is, not what it is. */
const PASSWORD_STATES = new Set(
  [
    'empty blank null none nil unset wrong right ok okay fine good bad weak strong long short new old same different unique simple complex hard easy common enough',
    'secret private public plaintext cleartext plain clear mandatory correct incorrect invalid valid insecure secure safe unsafe visible missing there here random default too case stale fresh',
    // Participles without a regular ending.
    'set reset sent kept lost read put cut left built held made found told sold stuck bound spent meant shut split spread',
    // What a password is as data.
    'string text bytes number integer hash salt field',
  ].join(' ').split(' '),
);

/**
 * Whether a password is given in prose as one ordinary word that ends its clause ("the password
 * is dragon.", "set the passphrase to swordfish"): a word of the documentation vocabulary is no
 * secret's shape, but after a password's "is" a word that is no function word and does not say
 * how the password is (required, hashed, empty, too short) is its value.
 */
function isWordGivenAsPassword(head: string, value: string): boolean {
  if (!/^[A-Za-z]{3,40}$/.test(value) || !PASSWORD_GIVEN.test(head)) return false;
  const word = value.toLowerCase();
  if (PASSWORD_STATES.has(word) || DESCRIBING_ENDING.test(word)) return false;
  // A stop word (the, not, also) leaves the tokenizer no term.
  return tokenize(word, { splitIdentifiers: false, stem: true, stopWords: true }).length > 0;
}

/** A head that names a token, a secret or a key with no link word before its value (use token ...): not a password's. */
const CREDENTIAL_ALONE = new RegExp(`(?:${PROSE_CREDENTIAL})(?<!${PROSE_PASSWORD})[ \\t]+$`, 'i');
/** A value random text would be: 16 characters or more of letters and digits both, with no word's punctuation. */
const RANDOM_SHAPE = /^(?=[^\s]*[0-9])(?=[^\s]*[A-Za-z])[A-Za-z0-9_+/=-]{16,}$/;
/**
 * Whether a value is a name made of words: a constant's or an environment variable's
 * (NPM_TOKEN_V2_PUBLISH, GOOGLE_MAPS_KEY_2024), or an identifier whose parts of three letters or
 * more are two or more words of the documentation vocabulary (OAuth2AuthorizedClientService). A
 * random token has no such parts.
 */
function isNameOfWords(value: string): boolean {
  if (/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(value)) return true;
  // Written as code writes a name: in camel case, its words most of its letters.
  if (!/[a-z][A-Z]|[A-Z][a-z]/.test(value)) return false;
  const words = splitIdentifier(value).filter((part) => /^[a-z]{3}[a-z]*$/.test(part));
  const inWords = words.reduce((n, w) => n + w.length, 0);
  return words.length >= 2 && inWords >= 0.8 * value.replace(/[^A-Za-z]/g, '').length && words.every(isKnownWord);
}

/**
 * Whether text that has a key's body's shape (lines of 40 base64 characters or more, both cases,
 * see BASE64_RUN) is lines of identifiers made of words, one a line (see isNameOfWords): a test's
 * or a function's name alone on its line (shouldReturnEmptyListWhenNoItemsExist404, an argument
 * on its own line, an observation's title), which no line of a key, random text, is. A diff's
 * mark and the indentation before a name are not part of it; a line longer than any identifier
 * is not split into words.
 */
export function isLinesOfNames(text: string): boolean {
  const lines = text.split(/[\r\n]+/).filter((line) => line.trim() !== '');
  return (
    lines.length > 0 &&
    lines.every((line) => {
      const run = line.replace(/^[-+]?[ \t]*/, '').trimEnd();
      return run.length <= 128 && isNameOfWords(run);
    })
  );
}

/** A name of lowercase words and numbers (db-creds-0123456789, release-2024-01-31): a resource's, not a secret. */
const KEBAB_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)+$/;

/** Sentence punctuation after a value (the password is hunter2.), not part of it; a '!' is often a password's. */
const TRAILING_PUNCTUATION = /[.,;:?)\]}]+$/;
/** A number that is a quantity (256 bits, 2048 bytes, 12 characters), not a PIN. */
const QUANTITY = '\\d+[ \\t]+(?:bits?|bytes?|chars?|characters?|digits?|letters?|symbols?|words?|seconds?|minutes?|hours?|days?|ms|times|[kmg]b)\\b';

/**
 * Whether a value written in prose is a secret (see isSecretValue), judged by what comes before a
 * bracket: after a word, one is markdown's or code's (Password flow](https://...), args[i]).
 */
function isSecretInProse(value: string): boolean {
  if (REFERENCE.test(value)) return false;
  // A '$' or '%' not in a variable's shape is the secret's own ($uperS3cret!, %Zx81!qq).
  if (/^[$%]/.test(value)) return true;
  const word = /^[^()[\]{}]*/.exec(value)![0];
  return isSecretValue(word === value ? value.replace(/!+$/, '') : word);
}

/** The value of a credential named in prose, redacted when it is a secret; quoted, whatever its words. */
function redactProseValue(match: string, head: string, quoted?: string, code?: string, bare?: string, clauseEnd?: string): string {
  // After a token's or a key's name alone, a parser's or a product's word (Unexpected token 'export', the token ID): only random text is a value.
  if (CREDENTIAL_ALONE.test(head)) {
    const value = (quoted ?? code)?.slice(1, -1) ?? (bare ?? '').replace(TRAILING_PUNCTUATION, '');
    if (!RANDOM_SHAPE.test(value) || KEBAB_NAME.test(value) || isNameOfWords(value)) return match;
    return `${head}${match.slice(head.length).replace(value, REDACTED)}`;
  }
  if (quoted) return REFERENCE.test(quoted.slice(1, -1)) ? match : `${head}${quoted[0]}${REDACTED}${quoted[0]}`;
  if (code) return isSecretInProse(code.slice(1, -1)) ? `${head}\`${REDACTED}\`` : match;
  let value = (bare ?? '').replace(TRAILING_PUNCTUATION, '');
  // A closing bracket after one the value opened is the value's own: Sup3r(S3cret).
  if (/[([{]/.test(value)) value = (bare ?? '').replace(/[.,;:?]+$/, '');
  // After a bare 'to' or 'of' a number is a quantity or an issue's (the max token to 4096, the token of 12345 bug), not a PIN.
  if (/^\d+$/.test(value) && BARE_TO_OR_OF.test(head)) return match;
  if (isSettingOfSecret(nameOf(head), value)) return match;
  if (!isSecretInProse(value) && !(clauseEnd !== undefined && isWordGivenAsPassword(head, value))) return match;
  return `${head}${REDACTED}${(bare ?? '').slice(value.length)}`;
}

/**
 * htpasswd -b takes the password on its command line, last: htpasswd -b[c] file user password,
 * htpasswd -nb user password (-n writes to stdout: no file).
 */
function redactHtpasswd(match: string, args: string): string {
  const tokens = args.match(/[ \t]+|[^ \t]+/g) ?? [];
  let flags = '';
  const positional: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.trim() === '') continue;
    if (token.startsWith('-')) flags += token.slice(1);
    // -C (bcrypt's cost) and -r (rounds), alone or last of a group (-bC 10), take a number, which is no positional argument.
    else if (!/^-[A-Za-z]*[Cr]$/.test(tokens[i - 2] ?? '')) positional.push(i);
  }
  const at = positional[flags.includes('n') ? 1 : 2];
  if (!flags.includes('b') || at === undefined || tokens[at] === REDACTED) return match;
  tokens[at] = REDACTED;
  return `htpasswd${tokens.join('')}`;
}

/** A Kubernetes Secret, in YAML or JSON: every value of its data and stringData is a secret, whatever its name. */
const KUBERNETES_SECRET = /(?:^|[\n\r{,])[ \t]*["']?kind["']?[ \t]*:[ \t]*["']?Secret["']?[ \t]*(?:[,}\r\n]|$)/;

/**
 * The entries of a Secret's data block with their values redacted (DATABASE_URL: [REDACTED],
 * "tls.key": "[REDACTED]",), and the lines of a block scalar's value (config.yaml: |) whole.
 */
function redactSecretData(body: string): string {
  let blockIndent = -1;
  return body.replace(/(\n([ \t]*))([^\r\n]*)/g, (line, lead: string, indent: string, content: string) => {
    if (blockIndent >= 0 && indent.length > blockIndent) return content ? `${lead}${REDACTED}` : line;
    blockIndent = -1;
    const entry = /^(["']?[^\s"':]+["']?[ \t]*:[ \t]*)(\S.*)$/.exec(content);
    if (!entry) return line;
    if (/^[|>][-+1-9]{0,2}[ \t]*$/.test(entry[2])) {
      blockIndent = indent.length;
      return line;
    }
    const [, quote, , after] = /^(["']?)(.*?)\1([ \t]*,?[ \t]*)$/.exec(entry[2])!;
    return `${lead}${entry[1]}${quote}${REDACTED}${quote}${after}`;
  });
}

/** The schemes of an Authorization header (RFC 7235 and the registry's, and vendors' own). */
const AUTH_SCHEME =
  '(?:bearer|basic|token|digest|negotiate|ntlm|hoba|mutual|dpop|gnap|oauth|apikey|api-key|key|bot|sso-key|otp|ssws|splunk|signature|hmac(?:-sha\\d+)?|aws4-hmac-sha256|aws|sharedkey(?:lite)?|vapid|scram-sha-(?:1|256)|gsslogin)';
/**
 * One parameter of a header's credentials (Digest's response="...", AWS4's Signature=...): a
 * quoted value, its quotes escaped as JSON inside a log line shows them, or a run. The quoted
 * value stops at any quote, so an unclosed one is scanned to the next quote only.
 */
const AUTH_PARAM = `[A-Za-z][\\w-]*=(?:\\\\*"(?:[^"\\\\\\r\\n]|\\\\(?!"))*\\\\*"|[^\\s",\\\\]+)`;

export interface Rule {
  name: string;
  pattern: RegExp;
  /** Replacement; `$1` etc. keep a non-secret prefix such as the variable name. */
  replace: string | ((match: string, ...groups: string[]) => string);
  /** What the rule cannot match without (a regex, case aside): text with no rule's trigger is returned as it is. */
  trigger: string;
  /** What the whole text must hold for the rule to apply at all (kind: Secret for a Secret's data). */
  when?: RegExp;
  /** A match may span lines: redactLines applies the rule to its lines joined, before each line alone. */
  spansLines?: boolean;
  /**
   * Its trigger is in most text (a run of 16 base64 characters: any long identifier): the rule is
   * tried where its own trigger is found, and that trigger does not send text through every rule.
   */
  ownTrigger?: boolean;
}

// Headers name at most a word or two (RSA, ENCRYPTED, OPENSSH PGP...); the bound on words keeps
// the regex stack small on a header of a million words (see the unquoted rule's member chain).
// OpenVPN's keys are secret too, though their header says no PRIVATE: a static key (tls-auth,
// tls-crypt, secret: 16 lines of hex, which no rule for base64 takes, as it has no capital) and
// a tls-crypt-v2 key; a .ovpn profile holds them inline (<tls-crypt>, <tls-auth>, <secret>).
const PEM_PRIVATE = '(?:(?:[A-Z0-9]+ ){0,16}PRIVATE KEY(?: BLOCK)?|OpenVPN (?:Static key V1|tls-crypt-v2 (?:client|server) key))';
/** What the BEGIN line of a secret key's PEM block cannot be without (the rule's trigger). */
export const PEM_SECRET_MARK = /PRIVATE KEY|OpenVPN (?:Static|tls-crypt-v2)/;
/** Before a key's line: a diff's mark, indentation, a string's quote. After it: an escaped line break, a quote, a concatenation. */
const KEY_LINE_LEAD = '[-+ \\t"\'`]*';
const KEY_LINE_TRAIL = '(?:\\\\[nr]|["\'`,;+) \\t])*';
/**
 * A line of a key's body: base64 (16 characters or more, or fewer with padding), a PEM header
 * (Proc-Type: 4,ENCRYPTED), or nothing (the blank line after the headers).
 */
const KEY_BODY_LINE = `${KEY_LINE_LEAD}(?:[A-Za-z0-9+/]{16}[A-Za-z0-9+/]*={0,2}|[A-Za-z0-9+/]{1,15}={1,2}|[A-Za-z][A-Za-z-]{0,39}:[^\\n]{0,200})?${KEY_LINE_TRAIL}`;
const PEM_END = `${KEY_LINE_LEAD}-----END ${PEM_PRIVATE}-----`;
/** An OpenPGP armor's checksum line (=XXXX, a CRC-24 in base64), between a key's body and its END line. */
const ARMOR_CHECKSUM = `${KEY_LINE_LEAD}=[A-Za-z0-9+/]{4}${KEY_LINE_TRAIL}`;
/**
 * A private key in PEM: its BEGIN line, then to its END line on the same line (a JSON string's
 * escaped line breaks), or the lines of its body that follow (a short last line only just before
 * its END, or before the checksum line that precedes a PGP key's END) and its END line if it has
 * one. A key cut short (a field's length) goes to where its body stops, and a BEGIN line alone (a
 * constant of code, a test's fixture) takes nothing after it.
 */
export const PRIVATE_KEY = new RegExp(
  `-----BEGIN ${PEM_PRIVATE}-----(?:[^\\n]*?-----END ${PEM_PRIVATE}-----|[^\\n]*(?:\\n${KEY_BODY_LINE}(?=\\n|$))*(?:\\n${KEY_LINE_LEAD}[A-Za-z0-9+/]{1,15}${KEY_LINE_TRAIL}(?=\\n(?:${ARMOR_CHECKSUM}\\n)?${PEM_END}))?(?:\\n${ARMOR_CHECKSUM}(?=\\n${PEM_END}))?(?:\\n${PEM_END})?)`,
  'g',
);

// A line that is wholly a run of 40 or more base64 characters, both cases among them: a line of a
// key's body. The run stops at the line's end, so a line costs one scan.
const BASE64_RUN = '(?=[A-Za-z0-9+/]*[A-Z])(?=[A-Za-z0-9+/]*[a-z])[A-Za-z0-9+/]{40}[A-Za-z0-9+/]*={0,2}[ \\t]*';
/**
 * A diff's mark before a line of a key's body: a pasted `git diff` that removes a key has '-'
 * before each of its lines (a context line's ' ' is indentation). '+' is a base64 character too,
 * so a line that starts with it reads it as the mark, and one way only: with two, a block of lines
 * that fails at its end would be retried once per way of reading each line.
 */
const DIFF_MARK = '(?:[-+]|(?!\\+))';
/**
 * A key's body without its BEGIN and END lines (a diff with one line of context that changes only
 * the body, a key given one line per list item): two or more such lines in a row, as a key is
 * wrapped, then its shorter last line. Bounded, as each repetition costs regex stack; the lines
 * after the 200th start another block.
 */
export const BASE64_BLOCK = new RegExp(
  `((?:^|[\\n\\r])${DIFF_MARK}[ \\t]*)${BASE64_RUN}(?:\\r?\\n${DIFF_MARK}[ \\t]*${BASE64_RUN}){1,200}(?:\\r?\\n${DIFF_MARK}[ \\t]*[A-Za-z0-9+/]{8}[A-Za-z0-9+/]*={0,2}[ \\t]*)?(?![^\\n\\r])`,
  'g',
);
/** What a base64 line cannot be without: a line that starts with 40 base64 characters (after a diff's mark). */
const BASE64_TRIGGER = '(?:^|[\\n\\r])[-+]?[ \\t]*[A-Za-z0-9+/]{40}';

/**
 * Tokens known by their issuer's prefix, each with the body the issuer gives it: [what the
 * pre-scan looks for, the token]. Each body has a least length, so a prefix in prose is no token.
 */
const PREFIXED_TOKENS: [trigger: string, token: string][] = [
  // PyPI (a macaroon: always pypi-AgE...).
  ['pypi-AgE', 'pypi-AgE[A-Za-z0-9_-]{16}[A-Za-z0-9_-]*'],
  // GitLab's runner, deploy, trigger, feed, incoming-mail, SCIM, CI build, OAuth and agent tokens.
  ['gl(?:rt|dt|ptt|ft|imt|soat|cbt|oas|agent)-', 'gl(?:rt|dt|ptt|ft|imt|soat|cbt|oas|agent)-[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*'],
  // Docker Hub personal and organisation access tokens.
  ['dckr_', 'dckr_(?:pat|oat)_[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*'],
  // Google: an OAuth client secret, an OAuth access token.
  ['GOCSPX-', 'GOCSPX-[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*'],
  ['ya29\\.', 'ya29\\.[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*'],
  // Atlassian API token, Postman API key, Grafana service-account and cloud tokens.
  ['ATATT', 'ATATT[A-Za-z0-9_=-]{40}[A-Za-z0-9_=-]*'],
  ['PMAK-', 'PMAK-[A-Za-z0-9]{20}[A-Za-z0-9-]*'],
  ['gl(?:sa|c)_', 'gl(?:sa|c)_[A-Za-z0-9_+/]{20}[A-Za-z0-9_+/=]*'],
  // New Relic user, admin, ingest and browser keys; Linear; Supabase; an age secret key.
  ['NR(?:AK|AA|II|JS)-', 'NR(?:AK|AA|II|JS)-[A-Za-z0-9]{20}[A-Za-z0-9]*'],
  ['lin_(?:api|oauth)_', 'lin_(?:api|oauth)_[A-Za-z0-9]{32}[A-Za-z0-9]*'],
  ['sbp_', 'sbp_[A-Za-z0-9]{32}[A-Za-z0-9]*'],
  ['AGE-SECRET-KEY-1', 'AGE-SECRET-KEY-1[A-Z0-9]{40}[A-Z0-9]*'],
  // HashiCorp Vault's service, batch and recovery tokens (with a digit: hvs.someLongMethodName is code).
  ['hv[sbr]\\.', 'hv[sbr]\\.(?=[A-Za-z0-9_-]{0,200}?[0-9])[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*'],
  // Doppler's service, CLI, service-account, SCIM, audit and personal tokens (dp.st.prd.xxx).
  ['dp\\.(?:st|ct|sa|scim|audit|pt)\\.', 'dp\\.(?:st|ct|sa|scim|audit|pt)\\.(?:[a-z0-9_-]{1,40}\\.)?[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*'],
  // Terraform Cloud / Enterprise: id.atlasv1.secret.
  ['\\.atlasv1\\.', '[A-Za-z0-9]{8}[A-Za-z0-9]*\\.atlasv1\\.[A-Za-z0-9_=-]{20}[A-Za-z0-9_=-]*'],
  // Twilio API key (SK), Databricks (dapi), Mailgun (key-): 32 characters, a digit among them.
  ['SK[A-Za-z0-9]{32}', 'SK(?=[A-Za-z0-9]{0,31}[0-9])(?=[A-Za-z0-9]{0,31}[a-z])[A-Za-z0-9]{32}'],
  ['dapi[A-Za-z0-9]{30}', 'dapi(?=[A-Za-z0-9]{0,40}[0-9])[A-Za-z0-9]{30}[A-Za-z0-9]*(?:-[0-9])?'],
  ['key-[A-Za-z0-9]{32}', 'key-(?=[A-Za-z0-9]{0,31}[0-9])[A-Za-z0-9]{32}'],
  // Square: a personal or OAuth access token (sq0atp-, or EAAA and about 60 characters, a digit
  // and a lowercase letter among them, not base64 text's '+', '/' or '=' after), an
  // application's OAuth secret (sq0csp-). Not the application's id (sq0idp-), which is public.
  ['sq0(?:atp|csp)-', 'sq0atp-[A-Za-z0-9_-]{22}[A-Za-z0-9_-]*|sq0csp-[A-Za-z0-9_-]{40}[A-Za-z0-9_-]*'],
  ['EAAA[A-Za-z0-9_-]{8}', 'EAAA(?=[A-Za-z0-9_-]{0,79}[0-9])(?=[A-Za-z0-9_-]{0,79}[a-z])[A-Za-z0-9_-]{56,80}(?![+/=])'],
];

/** A word matched in either case, letter by letter ({SSHA} and {ssha}; Spring writes {bcrypt}, LDAP {BCRYPT}). */
function anyCase(word: string): string {
  return word.replace(/[A-Za-z]/g, (c) => `[${c.toUpperCase()}${c.toLowerCase()}]`);
}

/**
 * The schemes a password's hash is given under in braces, the hash after them: LDAP's
 * userPassword ({SSHA}, {SHA}, {CRYPT}), Dovecot's ({SHA512-CRYPT}), Spring Security's ({bcrypt}).
 */
const HASH_SCHEMES = [
  'SSHA', 'SSHA256', 'SSHA384', 'SSHA512', 'SHA', 'SHA1', 'SHA-1', 'SHA256', 'SHA-256', 'SHA384', 'SHA512', 'SHA-512', 'SMD5', 'MD4', 'MD5', 'LDAP-MD5', 'PLAIN-MD5', 'NS-MTA-MD5',
  'SHA256-CRYPT', 'SHA512-CRYPT', 'MD5-CRYPT', 'BLF-CRYPT', 'DES-CRYPT', 'CRYPT', 'PBKDF2', 'PBKDF2-SHA1', 'PBKDF2-SHA256', 'PBKDF2-SHA512', 'PBKDF2_SHA256', 'ARGON2', 'ARGON2I', 'ARGON2ID',
  'BCRYPT', 'SCRYPT', 'CRAM-MD5', 'DIGEST-MD5', 'SCRAM-SHA-1', 'SCRAM-SHA-256', 'NTLM', 'LANMAN', 'LDAP',
];
/** The schemes in braces that a password is given after in clear (Spring's {noop}, Dovecot's {PLAIN}). */
const PLAIN_SCHEMES = ['NOOP', 'PLAIN', 'CLEARTEXT', 'CLEAR'];
/** Where a scheme in braces starts: not a template's slot (`${sha}`, Ruby's #{sha}, %{sha}). */
const SCHEME_START = '(?<![$#%\\w{])';
/** A character of a hash in base64 after a scheme in braces; a ',' joins Dovecot's SCRAM fields (4096,salt,...). */
const SCHEME_B64 = '(?:[A-Za-z0-9+/.=]|,(?=[A-Za-z0-9+/]))';
/** Any of those characters, to look ahead over. */
const SCHEME_RUN = '[A-Za-z0-9+/.=,]';
/** A character of crypt's base64 (the modular crypt format's salts and hashes): ./0-9A-Za-z. */
const CRYPT64 = '[./0-9A-Za-z]';
/** A character of standard base64, without padding (the PHC string format's salts and hashes). */
const B64 = '[A-Za-z0-9+/]';
/** A character of a password given in clear after its scheme ({noop}..., {PLAIN}...): see PASSWORD_HASHES. */
const HASH_VALUE_CHAR = `(?:[^\\s"'\`<>{}()[\\],;:]|,(?=[^\\s,]))`;
/**
 * Where a password hash starts: not inside a run of its characters or a word ($1$2$3 in a shell
 * line, a $1 replacement after a letter), but after a quote, a space, a ':' (htpasswd, shadow),
 * a '!' (a locked shadow entry) or a '}' (an LDAP or Spring scheme).
 */
const HASH_START = '(?<![\\w./+$-])';

/**
 * Password hashes by their format, each found anywhere (a .htpasswd or /etc/shadow line in any
 * file, a fixture, a SQL dump, a log): [what the pre-scan looks for, what is kept (the scheme
 * and its cost, which say what the hash is), the salt and the hash, redacted]. Each hash has the
 * length its algorithm gives it (bcrypt's 53 characters, SHA-512 crypt's 86), and a salt of the
 * shape its format allows, so a '$1' in shell or regex code, a '$2' replacement string or an
 * LDAP scheme named in prose ({SHA} alone) is none.
 */
const PASSWORD_HASHES: [trigger: string, kept: string, secret: string][] = [
  // bcrypt ($2a$, $2b$, $2y$, $2x$ and cost): 22 characters of salt then 31 of hash; Django's bcrypt$ and bcrypt_sha256$ before it.
  ['\\$2[abxy]?\\$\\d\\d\\$', `${HASH_START}(?:bcrypt(?:_sha256)?\\$)?\\$2[abxy]?\\$\\d\\d\\$`, `${CRYPT64}{53}${CRYPT64}*`],
  // md5crypt and Apache's apr1 (htpasswd -m): a salt of up to 8, a hash of 22; Solaris' $md5$ too.
  ['\\$(?:1|apr1|md5)[$,]', `${HASH_START}\\$(?:1|apr1|md5(?:,rounds=\\d{1,9})?)\\$`, `${CRYPT64}{0,16}\\$\\$?${CRYPT64}{22}${CRYPT64}*`],
  // SHA-256 and SHA-512 crypt ($5$, $6$, /etc/shadow's), rounds=N first or not: a salt of up to 16, a hash of 43 or 86.
  ['\\$[56]\\$', `${HASH_START}\\$[56]\\$(?:rounds=\\d{1,9}\\$)?`, `${CRYPT64}{0,16}\\$${CRYPT64}{43}${CRYPT64}*`],
  // yescrypt ($y$, today's /etc/shadow default), gost-yescrypt ($gy$), scrypt ($7$): parameters, a salt, a hash of 43.
  ['\\$(?:y|gy|7)\\$', `${HASH_START}\\$(?:y|gy|7)\\$${CRYPT64}{1,32}\\$`, `${CRYPT64}{0,128}\\$${CRYPT64}{43}${CRYPT64}*`],
  // NetBSD's sha1crypt: $sha1$rounds$salt$hash.
  ['\\$sha1\\$', `${HASH_START}\\$sha1\\$\\d{1,9}\\$`, `${CRYPT64}{1,64}\\$${CRYPT64}{28}${CRYPT64}*`],
  // The PHC string format (argon2, passlib's scrypt and bcrypt-sha256, balloon): $id$v=N$m=..,t=..$salt$hash, Django's argon2 before it.
  [
    '\\$[a-z0-9-]{1,32}\\$(?:v=\\d{1,4}\\$)?[a-z0-9-]{1,16}=',
    `${HASH_START}(?:argon2)?\\$[a-z0-9-]{1,32}\\$(?:v=\\d{1,4}\\$)?[a-z0-9-]{1,16}=[A-Za-z0-9/+.-]{1,32}(?:,[a-z0-9-]{1,16}=[A-Za-z0-9/+.-]{1,32}){0,16}\\$`,
    `${B64}{8,128}\\$${B64}{16}${B64}*={0,2}`,
  ],
  // passlib's pbkdf2 ($pbkdf2-sha256$rounds$salt$hash, its own base64).
  ['\\$pbkdf2', `${HASH_START}\\$pbkdf2(?:-sha(?:1|256|512))?\\$\\d{1,9}\\$`, `${CRYPT64}{0,128}\\$${CRYPT64}{27}${CRYPT64}*`],
  // Django: pbkdf2_sha256$iterations$salt$hash, scrypt$N$salt$r$p$hash, and the old sha1$ and md5$ (salt$hex).
  ['pbkdf2_sha', `${HASH_START}pbkdf2_sha(?:1|256)\\$\\d{1,9}\\$`, `[A-Za-z0-9]{1,128}\\$${B64}{27}${B64}*={0,2}`],
  ['scrypt\\$\\d', `${HASH_START}scrypt\\$\\d{1,9}\\$`, `[A-Za-z0-9]{1,128}\\$\\d{1,4}\\$\\d{1,4}\\$${B64}{20}${B64}*={0,2}`],
  ['(?:sha1|md5)\\$', `${HASH_START}(?:unsalted_)?(?:sha1|md5)\\$`, '[A-Za-z0-9]{0,128}\\$(?:[0-9a-f]{40}|[0-9a-f]{32})(?![0-9a-f])'],
  // Werkzeug (Flask): pbkdf2:sha256:600000$salt$hex, scrypt:32768:8:1$salt$hex.
  ['(?:pbkdf2:sha|scrypt:)\\d', `${HASH_START}(?:pbkdf2:sha(?:1|224|256|384|512)(?::\\d{1,9})?|scrypt:\\d{1,9}:\\d{1,4}:\\d{1,4})\\$`, '[A-Za-z0-9]{1,128}\\$[0-9a-f]{40}[0-9a-f]*'],
  // PostgreSQL: SCRAM-SHA-256$iterations:salt$StoredKey:ServerKey, and md5 and 32 hex digits.
  ['SCRAM-SHA-256\\$', `${HASH_START}SCRAM-SHA-256\\$\\d{1,9}:`, `${B64}{8,128}={0,2}\\$${B64}{16}${B64}*={0,2}:${B64}{16}${B64}*={0,2}`],
  ['md5[0-9a-f]{32}', `${HASH_START}md5`, '[0-9a-f]{32}(?![0-9A-Za-z])'],
  // MySQL's mysql_native_password: '*' and 40 hex digits in capitals.
  ['\\*[0-9A-F]{40}', '(?<![\\w*])\\*', '[0-9A-F]{40}(?![0-9A-Za-z])'],
  // A scheme in braces and its hash: LDAP's userPassword ({SSHA}, {SHA}, {CRYPT}...), Dovecot's
  // ({SHA512-CRYPT}, {CRAM-MD5}), Spring Security's ({bcrypt}, {pbkdf2}). Not a template's slot
  // (`${sha}`, f"{sha}.tar.gz"): the hash is hex, or base64 of both cases and digits (a crypt
  // after the scheme, {CRYPT}$6$..., is its own format's).
  [
    '\\{[A-Za-z0-9_-]{3,16}\\}',
    `${SCHEME_START}\\{(?:${HASH_SCHEMES.map(anyCase).join('|')})\\}`,
    `(?:[0-9A-Fa-f]{32}[0-9A-Fa-f]*(?![A-Za-z0-9+/=])|(?=${SCHEME_RUN}{0,128}[0-9])(?=${SCHEME_RUN}{0,128}[A-Z])(?=${SCHEME_RUN}{0,128}[a-z])${SCHEME_B64}{12}${SCHEME_B64}*)`,
  ],
  // A password given in clear after its scheme: Spring's {noop}, Dovecot's {PLAIN}, {CLEARTEXT}. Not a reference ({noop}$PASSWORD).
  [
    '\\{(?:noop|plain|clear(?:text)?)\\}',
    `${SCHEME_START}\\{(?:${PLAIN_SCHEMES.map(anyCase).join('|')})\\}`,
    // The value runs to a space, a quote, a bracket, a ';' or a ':' (a passwd-file's next field).
    `(?![$%]?\\{|\\$[A-Za-z_]|%)${HASH_VALUE_CHAR}{4}${HASH_VALUE_CHAR}*`,
  ],
  // A Windows account's LM and NT hashes as pwdump and secretsdump write them: user:rid:lm:nt:::.
  ['[0-9a-f]{32}:[0-9a-f]{32}:::', '(?<![0-9A-Za-z])', '[0-9A-Fa-f]{32}:[0-9A-Fa-f]{32}(?=:::)'],
  // A traditional DES crypt (htpasswd -d, an old shadow) as a user's whole line, user:hash (the
  // user a name or an email address): 13 characters, a capital and a digit or '.' or '/' among
  // them (a word is not).
  [
    ':[./0-9A-Za-z]{13}(?![./0-9A-Za-z])',
    '(?:^|[\\n\\r])[-+]?[ \\t]*[A-Za-z_][A-Za-z0-9_.@-]{0,63}:',
    `(?=[./0-9a-z]{0,12}[A-Z])(?=[A-Za-z]{0,12}[./0-9])${CRYPT64}{13}(?=[ \\t]*(?:[\\r\\n]|$)|:\\d*:)`,
  ],
];

/** An unquoted value's characters: it ends at a space, a quote, a separator or a bracket. */
const UNQUOTED = `[^\\s"',;()[\\]{}<>]`;

/** A default's quoted value in a Terraform variable's block (see the rule 'terraform secret default'). */
const TERRAFORM_DEFAULT = /(\bdefault[ \t]*=[ \t]*")(?!\[REDACTED\])(?:[^"\x5c\n]|\x5c[^\n])+(?=")/g;

/** "-----BEGIN" in base64, as a PEM block given whole in base64 starts (kubeconfig's client-key-data, a Helm value, a CI variable). */
export const BASE64_PEM_START = 'LS0tLS1CRUdJTi';
/**
 * "-----BEGIN" in base64 after up to 8 bytes of white space (base64 of "\n-----BEGIN ..." is
 * Ci0tLS0tQkVHSU4...): at each of the three alignments, after the characters that encode the
 * white space. Bounded, so each run of base64 characters costs a fixed look at its start.
 */
const BASE64_PEM_BEGIN = `(?:[A-Za-z0-9+/]{4}){0,2}(?:${BASE64_PEM_START}|[A-Za-z0-9+/]{2}0tLS0tQkVHSU4|[A-Za-z0-9+/]{3}tLS0tLUJFR0lO)`;

/** Base64 text decoded: its characters only (a '\n' escape as JSON writes it dropped first), at most `chars` of them. */
function decodeBase64(text: string, chars: number): Buffer {
  return Buffer.from(text.replace(/\\[rn]/g, '').replace(/[^A-Za-z0-9+/]/g, '').slice(0, chars), 'base64');
}

/**
 * Whether base64 text is a PEM private key (not a certificate, which is public): its first
 * characters decode to a BEGIN line, after white space, that names a PRIVATE KEY. Only a bounded
 * prefix is decoded.
 */
function isBase64PrivateKey(value: string): boolean {
  return /^\s*-----BEGIN (?:[A-Z0-9]+ ){0,16}PRIVATE KEY/.test(decodeBase64(value, 160).toString('latin1'));
}

/** A DER element's header at `at`: its tag, and where its content starts; null past the bytes. */
function derHeader(der: Buffer, at: number): { tag: number; content: number } | null {
  if (at + 1 >= der.length) return null;
  const len = der[at + 1];
  return { tag: der[at], content: at + 2 + (len & 0x80 ? len & 0x7f : 0) };
}

/** The OIDs of password-based encryption (PKCS#5's PBES1/PBES2, PKCS#12's PBE): an EncryptedPrivateKeyInfo's algorithm. */
const PBE_OID = [Buffer.from('2a864886f70d0105', 'hex'), Buffer.from('2a864886f70d010c', 'hex')];

/**
 * Whether the body of a PEM block labelled public (a certificate, a public key) is one: it
 * decodes to DER (a SEQUENCE, or an EC PARAMETERS' OID) that is no private key's. A private key's
 * DER opens with a one-byte INTEGER, its version (PKCS#1, PKCS#8, SEC 1), or, encrypted (PKCS#8's
 * EncryptedPrivateKeyInfo), with a password-based encryption's OID; OpenSSH's with its magic.
 * An SSH2 public key's body is no DER and holds no key's.
 */
function isPublicPemBody(label: string, body: string): boolean {
  const der = decodeBase64(body, 64);
  if (der.toString('latin1').startsWith('openssh-key-v1')) return false;
  if (label.endsWith('SSH2 PUBLIC KEY')) return true;
  if (der[0] === 0x06) return label.endsWith('PARAMETERS');
  const outer = derHeader(der, 0);
  if (!outer || outer.tag !== 0x30) return false;
  const first = derHeader(der, outer.content);
  if (!first) return false;
  if (first.tag === 0x02 && der[outer.content + 1] === 0x01) return false;
  if (first.tag !== 0x30) return true;
  const algorithm = derHeader(der, first.content);
  if (!algorithm || algorithm.tag !== 0x06) return true;
  const oid = der.subarray(algorithm.content, algorithm.content + 8);
  return !PBE_OID.some((pbe) => pbe.equals(oid));
}

/** A certificate's or a public key's PEM header: public, where a key's body lines would look the same. */
const PUBLIC_PEM_BEGIN = /-----BEGIN ((?:[A-Z0-9]+ ){0,4}(?:CERTIFICATE(?: REQUEST)?|PUBLIC KEY|X509 CRL|PKCS7|SSH2 PUBLIC KEY|(?:DH|EC) PARAMETERS))-----/g;
/** A line of a PEM body, wholly base64, after its line break (or one escaped as JSON writes it: \n). */
const PEM_BODY_LINE = /(?:\r?\n|\\r?\\n)[ \t]*[A-Za-z0-9+/]+={0,2}[ \t]*(?=\r?\n|\\r?\\n)/y;
const LINE_BREAK = /(?:\r?\n|\\r?\\n)[ \t]*/y;
/** The data of an image or a font given inline (a sound's or a video's has no signature looked for here, and is redacted). */
const MEDIA_DATA_URI = /\bdata:(?:image|font)\/[\w.+-]+(?:;[\w.+-]+=[\w.+-]+){0,8};base64,/gi;
const BASE64_REST = /[A-Za-z0-9+/]*={0,2}/y;
/** A line that continues a data URI's base64: then spaces to the line's end, or the URI's end (a quote, a bracket). */
const BASE64_NEXT_LINE = /\r?\n[ \t]*([A-Za-z0-9+/]+={0,2})(?:([ \t]*)(?=\r?\n|$)|(?=["')<;,\]}]))/y;
/**
 * How the data of an image or a font starts, in base64: PNG, JPEG, GIF, WOFF and WOFF2, SVG
 * (<svg, <?xml). Data that starts otherwise (a token, a key's base64 labelled as an image) is
 * not kept.
 */
const MEDIA_SIGNATURE = /^(?:iVBORw0KGgo|\/9j\/|R0lGOD|d09G|PHN2Zy|PD94)/;
/**
 * A data URI under a secret's name (token=data:image/png;base64,..., "password": "data:..."):
 * the name says the value is a secret, whatever it is labelled. Looked for in the few characters
 * before the URI on its line.
 */
const UNDER_SECRET_NAME = new RegExp(`${SECRET_NAME}(?:\\\\*["'\`])?\\]?[ \\t]*(?:${ASSIGN}|=>|:)[ \\t]*(?:\\\\*["'\`(])?$`, 'i');

/** What a sticky regex matches at `at`, or null. */
function sticky(re: RegExp, text: string, at: number): string | null {
  re.lastIndex = at;
  return re.exec(text)?.[0] ?? null;
}

/**
 * Whether bytes are one whole image or font, from its signature to its end: PNG's IEND chunk,
 * JPEG's end of image, GIF's trailer, a WOFF's length in its header, an SVG's closing tag. Key
 * material or any text given after (or before) the data leaves no whole file.
 */
function isWholeMedia(data: Buffer): boolean {
  const text = data.toString('latin1');
  if (text.startsWith('\x89PNG\r\n\x1a\n')) return text.endsWith('IEND\xae\x42\x60\x82');
  if (text.startsWith('\xff\xd8\xff')) return text.endsWith('\xff\xd9');
  if (text.startsWith('GIF8')) return text.endsWith(';');
  if (text.startsWith('wOFF') || text.startsWith('wOF2')) return data.length >= 12 && data.readUInt32BE(8) === data.length;
  if (text.startsWith('<svg') || text.startsWith('<?xml')) return /<\/svg>\s*$/.test(text);
  return false;
}

/**
 * Where the data of a data URI at `from` ends, or -1 when it is not kept. Its line's base64 is
 * kept when it starts with an image's or a font's signature. Lines after it continue it only as
 * an encoder wraps them, lines of one width, then a last line no longer (that the URI's end or
 * padding may close), and only when the data over all of them decodes to one whole image or
 * font (see isWholeMedia): a key's body or a secret on the lines after an image's data is no
 * part of it. When in doubt the lines are left to the rules, which redact what looks like a key.
 */
function dataUriEnd(text: string, from: number): number {
  const first = sticky(BASE64_REST, text, from)!;
  const end = from + first.length;
  const data = [first];
  let width = 0;
  let at = end;
  for (;;) {
    BASE64_NEXT_LINE.lastIndex = at;
    const line = BASE64_NEXT_LINE.exec(text);
    if (!line) break;
    const [whole, lineData, trailing] = line;
    if (width === 0) {
      if (lineData.length < 40) break;
      width = lineData.length;
    } else if (lineData.length > width) break;
    data.push(lineData);
    at += whole.length - (trailing?.length ?? 0);
    if (trailing === undefined || lineData.endsWith('=') || lineData.length < width) break;
  }
  const joined = data.join('');
  if (!MEDIA_SIGNATURE.test(joined)) return -1;
  return at > end && isWholeMedia(Buffer.from(joined, 'base64')) ? at : end;
}

/**
 * The spans of `text` that hold public base64, which the rules for a key's body lines would take
 * for a secret: a certificate or a public key in PEM, to its END line, whose body decodes to no
 * private key (see isPublicPemBody); the data of an image or a font in a data: URI (see
 * dataUriEnd), not one under a secret's name. Sorted, apart. Each scan stops at a character its
 * span cannot hold ('-' for PEM, which every header starts with), so text is scanned once.
 */
export function publicBase64Spans(text: string): [start: number, end: number][] {
  const spans: [number, number][] = [];
  if (text.includes('-----BEGIN ')) {
    for (const m of text.matchAll(PUBLIC_PEM_BEGIN)) {
      const bodyStart = m.index + m[0].length;
      let at = bodyStart;
      for (let line = sticky(PEM_BODY_LINE, text, at); line; line = sticky(PEM_BODY_LINE, text, at)) at += line.length;
      at += sticky(LINE_BREAK, text, at)?.length ?? 0;
      const end = `-----END ${m[1]}-----`;
      if (text.startsWith(end, at) && isPublicPemBody(m[1], text.slice(bodyStart, Math.min(at, bodyStart + 200)))) spans.push([m.index, at + end.length]);
    }
  }
  if (/base64,/i.test(text)) {
    for (const m of text.matchAll(MEDIA_DATA_URI)) {
      const before = text.slice(Math.max(0, m.index - 64), m.index);
      if (UNDER_SECRET_NAME.test(before.slice(before.lastIndexOf('\n') + 1))) continue;
      const end = dataUriEnd(text, m.index + m[0].length);
      if (end >= 0) spans.push([m.index, end]);
    }
  }
  // A data URI inside a certificate's span (or one after another's end) is already kept.
  spans.sort((a, b) => a[0] - b[0]);
  const apart: [number, number][] = [];
  for (const span of spans) if (apart.length === 0 || span[0] >= apart[apart.length - 1][1]) apart.push(span);
  return apart;
}

/** A DER element's tag, where its content starts and its length; null when its header runs past the bytes. */
function derElement(der: Buffer, at: number): { tag: number; content: number; length: number } | null {
  if (at + 1 >= der.length) return null;
  const first = der[at + 1];
  if (!(first & 0x80)) return { tag: der[at], content: at + 2, length: first };
  const bytes = first & 0x7f;
  if (bytes === 0 || bytes > 3 || at + 2 + bytes > der.length) return null;
  let length = 0;
  for (let i = 0; i < bytes; i++) length = length * 256 + der[at + 2 + i];
  return { tag: der[at], content: at + 2 + bytes, length };
}

/**
 * Whether bytes are the DER of a private key, whole: one SEQUENCE that spans them all, opening
 * with a one-byte INTEGER, its version (0 or 1: PKCS#1, PKCS#8, SEC 1), and then an INTEGER
 * (PKCS#1's modulus), a SEQUENCE (PKCS#8's algorithm) or an OCTET STRING (SEC 1's key); or,
 * encrypted (PKCS#8's EncryptedPrivateKeyInfo), with a password-based encryption's OID. A
 * certificate or a public key (SPKI, PKCS#1's RSAPublicKey) opens otherwise.
 */
function isDerPrivateKey(der: Buffer): boolean {
  const outer = derElement(der, 0);
  if (!outer || outer.tag !== 0x30 || outer.content + outer.length !== der.length) return false;
  const first = derElement(der, outer.content);
  if (!first) return false;
  if (first.tag === 0x02 && first.length === 1 && der[first.content] <= 1) {
    const next = derElement(der, first.content + 1);
    return next !== null && [0x02, 0x04, 0x30].includes(next.tag);
  }
  // EncryptedPrivateKeyInfo: its algorithm (a SEQUENCE) opens with the OID.
  if (first.tag !== 0x30) return false;
  const oid = derElement(der, first.content);
  return oid !== null && oid.tag === 0x06 && PBE_OID.some((pbe) => pbe.equals(der.subarray(oid.content, oid.content + 8)));
}

/** The longest base64 run decoded to find the DER of a private key (an RSA key of 16,384 bits is under 13,000 characters). */
const DER_BASE64_MAX = 16384;

/** Whether a run of base64 is the DER of a private key (see isDerPrivateKey), under whatever name it is given. */
function isBase64DerPrivateKey(value: string): boolean {
  return value.length <= DER_BASE64_MAX && value.length % 4 === 0 && isDerPrivateKey(Buffer.from(value, 'base64'));
}

/** The members of a JSON Web Key that are secret (RFC 7518): a private key's (d, p, q, dp, dq, qi, oth) and a symmetric key's (k). */
export const JWK_PRIVATE_MEMBERS = new Set(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']);

/** The longest base64 value decoded to look for a secret in its text; a longer one is left to the rules for a key's lines. */
const ENCODED_SECRET_MAX = 4096;
/** Text, the lines of a config file, as base64 of it decodes to: printable, no control character but a line's. */
const PRINTABLE_TEXT = /^[\x20-\x7e\t\r\n]+$/;
/** Decoded values already judged: a log repeats one, and a text of many would decode and redact each again. Bounded. */
const encodedSecrets = new Map<string, boolean>();
/** Set while the rules run over decoded text: base64 inside it is not decoded again (one level only). */
let decoding = false;
/** The rules but the encoded-secret rule, each with its trigger: decoded text is tried only by the rules whose trigger it holds. */
let decodedRules: { rule: Rule; trigger: RegExp }[] | undefined;

/**
 * Whether a base64 value holds a secret once decoded: it decodes to printable text (a database
 * URL, a config file, docker's config.json) that the rules would change. Decoded once, its
 * result kept; only one level deep, and only a value of a plausible length (16 to 4096
 * characters, whole base64 quanta).
 */
function isEncodedSecret(value: string): boolean {
  if (decoding || value.length > ENCODED_SECRET_MAX || value.length % 4 !== 0) return false;
  const known = encodedSecrets.get(value);
  if (known !== undefined) return known;
  const text = Buffer.from(value, 'base64').toString('latin1');
  let secret = false;
  decodedRules ??= RULES.filter((r) => r.name !== 'encoded secret').map((rule) => ({ rule, trigger: new RegExp(rule.trigger, 'i') }));
  if (text.length >= 8 && PRINTABLE_TEXT.test(text)) {
    decoding = true;
    try {
      secret = decodedRules.some(
        ({ rule, trigger }) =>
          trigger.test(text) && (!rule.when || rule.when.test(text)) && (typeof rule.replace === 'string' ? text.replace(rule.pattern, rule.replace) : text.replace(rule.pattern, rule.replace)) !== text,
      );
    } finally {
      decoding = false;
    }
  }
  if (encodedSecrets.size >= 4096) encodedSecrets.clear();
  encodedSecrets.set(value, secret);
  return secret;
}

/**
 * Programs that take a password or a key as an option's value: [the programs (as a command line
 * names them), their option, how the value follows it]. 'attached' only right after the option
 * (mysql -pSECRET: a word after '-p ' is the database), 'spaced' only after a space or '=' (an
 * option of several letters: openssl's -k is not -keyout), 'any' either way.
 */
const PASSWORD_OPTIONS: [programs: string, option: string, follows: 'attached' | 'spaced' | 'any'][] = [
  ['mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlpump|mariadb|mariadb-dump|mariadb-admin', '-p', 'attached'],
  ['sshpass|docker login|podman login|mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|twine', '-p', 'any'],
  ['redis-cli', '-a', 'any'],
  ['sqlcmd|bcp|osql', '-P', 'any'],
  // GitHub's secret value, Azure's storage account key and a service principal's secret.
  ['gh secret set', '--body|-b', 'any'],
  ['az', '--account-key', 'spaced'],
  ['az login', '-p', 'spaced'],
  // LDAP's bind password, an archive's password, a key's new and old passphrase.
  ['ldapsearch|ldapadd|ldapmodify|ldapdelete|ldapmodrdn|ldapcompare|ldapwhoami|ldappasswd|ldapexop', '-w', 'any'],
  ['zip|unzip|zipcloak|zipsplit', '-P', 'any'],
  ['7z|7za|7zr', '-p', 'attached'],
  ['ssh-keygen', '-N|-P', 'any'],
  // openssl enc -k: a password (its -pass pass:... is an assignment to 'pass', see KEYWORD).
  ['openssl', '-k', 'spaced'],
  ['keytool|jarsigner', '-storepass|-keypass|-srcstorepass|-deststorepass|-srckeypass|-destkeypass|-new', 'spaced'],
];

/** The AWS CLI's value read from a file (file://secret.json, fileb://key.bin): a path, no secret. */
const AWS_CLI_FILE = /^fileb?:\/\//;
/** A character of a command's line, or a line break that a '\' at the line's end continues. */
const CONTINUED_LINE = '(?:[^\\n]|\\\\\\r?\\n)';
/** Prose after an option's name, not its value: the --token flag, the --password option is required. */
const PROSE_AFTER_OPTION = '(?:(?:flag|option|argument|arg|parameter|param|switch|value)s?|is|was|and|or|to|for|with|in|on|of|the|from|instead|now|also)\\b';

/**
 * A value echoed into a command (echo, printf with its format, their flags), quoted (any text on
 * its line) or not: group 1 is what comes before it, group 3 its quote (group 2 the format's).
 */
const ECHOED = `((?:^|[\\s(;&|])(?:echo|printf)(?:[ \\t]+-[neE]{1,3})*[ \\t]+(?:(["']?)%s(?:\\\\n)?\\2[ \\t]+)?)(?:(["'])(?![$%]|\\[REDACTED\\])(?:(?!\\3)[^\\n]){3,}\\3|(?![$%]|\\[REDACTED\\])[^\\s"'|;&<>()]{3,})`;

/**
 * PASSWORD_OPTIONS as regex alternatives: each option once per way its value follows, with the
 * programs that take it looked back for together (one bounded look back per option on the line,
 * not one per program).
 */
function passwordOptionAlternatives(): string {
  const programsOf = new Map<string, string[]>();
  for (const [programs, options, follows] of PASSWORD_OPTIONS) {
    for (const option of options.split('|')) {
      const key = `${option} ${follows}`;
      addToList(programsOf, key, programs);
    }
  }
  const after = { attached: '', spaced: '(?:=|[ \\t]+)', any: '(?:=|[ \\t]*)' };
  return [...programsOf]
    .map(([key, programs]) => {
      const [option, follows] = key.split(' ') as [string, keyof typeof after];
      return `${option}(?<=\\b(?:${programs.join('|')})\\b[^\\n]{0,200}${option})${after[follows]}`;
    })
    .join('|');
}

/** A cookie in curl's option value; the value may hold the quote that opened it, which stays. */
const COOKIE_PAIR_IN_OPTION = /(?<![^\s;,"'])([^\s=;,"']+)=(?!\[REDACTED\])[^;,"']*/g;

/** A JWT whole from the start of a text (header.payload.signature, each part 8 characters or more). */
const JWT_AT_START = new RegExp(`^eyJ${JWT_CHAR}{8}${JWT_CHAR}*\\.eyJ${JWT_CHAR}{8}${JWT_CHAR}*\\.${JWT_CHAR}{8}${JWT_CHAR}*`);

/**
 * A run of lines from 'eyJ' (see the 'wrapped jwt' rule) with the lines a JWT wrapped over them
 * covers replaced by [REDACTED], a line it ends inside keeping what follows it; as it is where
 * its first line holds a whole JWT (the one-line rule's) or the lines joined hold none.
 */
function redactWrappedJwt(match: string): string {
  const parts = match.split(/(\r?\n)/);
  if (JWT_AT_START.test(parts[0])) return match;
  const token = JWT_AT_START.exec(parts.filter((_, i) => i % 2 === 0).join(''));
  if (!token || token[0].length <= parts[0].length) return match;
  let left = token[0].length;
  for (let i = 0; i < parts.length && left > 0; i += 2) {
    const taken = Math.min(left, parts[i].length);
    left -= taken;
    parts[i] = `${REDACTED}${parts[i].slice(taken)}`;
  }
  return parts.join('');
}

export const RULES: Rule[] = [
  { name: 'private key', pattern: PRIVATE_KEY, replace: REDACTED, trigger: PEM_SECRET_MARK.source },
  {
    // A JWT that a fixed-width log or a paste wrapped over lines (at 76 columns, say): a run from
    // 'eyJ' to its line's end, read on while the next lines go on with a token's characters. Each
    // line the token covers becomes [REDACTED] (the line breaks stay); at most 32 lines are read.
    // A line that starts with 'eyJ' starts the next token, unless the line above ended its part
    // with a dot. Before the rules for base64, which would take some of its lines alone.
    name: 'wrapped jwt',
    pattern: new RegExp(`(?<!${JWT_CHAR})eyJ[A-Za-z0-9_.-]*(?:\\r?\\n(?:(?!eyJ)|(?<=\\.\\r?\\n))[A-Za-z0-9_.-]+){1,32}`, 'g'),
    replace: (match) => redactWrappedJwt(match),
    trigger: 'eyJ',
    spansLines: true,
  },
  {
    // A PEM private key given whole in base64, under any name (client-key-data: LS0tLS1CRUdJTi...).
    // The run starts only where a run of base64 characters starts, so each run is scanned once.
    name: 'base64 private key',
    pattern: new RegExp(`(?<![A-Za-z0-9+/])${BASE64_PEM_BEGIN}[A-Za-z0-9+/]*={0,2}`, 'g'),
    replace: (match) => (isBase64PrivateKey(match) ? REDACTED : match),
    trigger: `${BASE64_PEM_START}|0tLS0tQkVHSU4|tLS0tLUJFR0lO`,
  },
  {
    // The value of a name ending in -key-data, _key_data or KeyData (kubeconfig's client-key-data,
    // a chart's tlsKeyData): a key's bytes in base64, inline. Not certificate-authority-data, which
    // is public, nor a path (client-key-data: /etc/pki/admin.key): the value ends where a path's
    // characters do not. The name starts only where a run of name characters starts (one scan per run).
    name: 'key data',
    pattern: /((?<![A-Za-z0-9_.-])(?:[A-Za-z0-9_.-]*(?:[-_](?:key|Key|KEY)[-_](?:data|Data|DATA)|KeyData)|keyData)["']?[ \t]*[:=][ \t]*["']?)(?!\[REDACTED\])[A-Za-z0-9+/_-]{16}[A-Za-z0-9+/_-]*={0,2}(?![A-Za-z0-9+/_.=~-])/g,
    replace: `$1${REDACTED}`,
    trigger: '[-_]key[-_]data|keydata',
  },
  {
    // A private key as one run of base64 DER (PKCS#8, PKCS#1, SEC 1; "key": "MIIEvQIBADANBgkq...",
    // tls_key=MHcCAQEE...), under any name: told from a certificate or a public key by decoding
    // it (see isDerPrivateKey). A DER SEQUENCE's base64 starts with 'M'; the run starts only
    // where a run of base64 characters starts, so each run is scanned once.
    name: 'base64 der private key',
    pattern: /(?<![A-Za-z0-9+/_-])M[A-Za-z0-9+/]{40}[A-Za-z0-9+/]*={0,2}(?![A-Za-z0-9+/=_-])/g,
    replace: (match) => (isBase64DerPrivateKey(match) ? REDACTED : match),
    trigger: 'MI[IG]|M[A-Za-z0-9+/]{2}CAQ',
  },
  {
    // A private JSON Web Key's secret members (see JWK_PRIVATE_MEMBERS) in a JSON object with a
    // "kty": "d", "p", "q"... but not the public "n", "e", "x", "y", "kid". The quotes may be
    // escaped, as JSON inside a log line shows them; the escapes are read from where their run
    // starts, so a run of backslashes is scanned once.
    name: 'private jwk',
    pattern: /((?<!\\)(\\*)"(?:d|p|q|dp|dq|qi|k)\2"[ \t]*:[ \t]*\2")(?!\[REDACTED\])[A-Za-z0-9_=-]{8}[A-Za-z0-9_=-]*(?=\2")/g,
    replace: `$1${REDACTED}`,
    trigger: '"(?:d|p|q|dp|dq|qi|k)\\\\*"',
    when: /"kty\\*"[ \t]*:/,
    spansLines: true,
  },
  {
    // A secret in base64 under any name (a Kubernetes Secret's DATABASE_URL: cG9zdGdyZXM6Ly9...
    // without its kind: Secret in view, a CI variable): base64 that decodes to text the rules
    // would change (see isEncodedSecret). The run starts only where a run of base64 characters
    // starts, so each run is scanned once.
    name: 'encoded secret',
    pattern: /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/]{16}[A-Za-z0-9+/]*={0,2}(?![A-Za-z0-9+/=_-])/g,
    replace: (match) => (isEncodedSecret(match) ? REDACTED : match),
    trigger: '[A-Za-z0-9+/]{16}',
    ownTrigger: true,
  },
  {
    // Not lines of identifiers made of words (see isLinesOfNames): a list of test names.
    name: 'base64 block',
    pattern: BASE64_BLOCK,
    replace: (match, lead: string) => (isLinesOfNames(match) ? match : `${lead}${REDACTED}`),
    trigger: BASE64_TRIGGER,
  },
  {
    // One line of a key's body alone. Upper case, lower case and a digit or '+' are all required,
    // which a git sha, a long lowercase word or a path does not have, and 40 random characters of
    // base64 nearly always have; an identifier made of words with a digit has them too, and is
    // kept (see isLinesOfNames).
    name: 'base64 line',
    pattern: new RegExp(`((?:^|[\\n\\r])${DIFF_MARK}[ \\t]*)(?=[A-Za-z0-9+/]*[0-9+])${BASE64_RUN}(?![^\\n\\r])`, 'g'),
    replace: (match, lead: string) => (isLinesOfNames(match) ? match : `${lead}${REDACTED}`),
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
    // A secret's assignment URL-encoded, as a form or a query inside another one carries it
    // (body=user%3Dbob%26client_secret%3Dvalue, state=...%26password%3Dvalue; encoded twice,
    // %253D, too). The name starts where a run of name characters starts, or after an encoded
    // separator (%26, %3F, %3B, %2C, %20); the value runs to an encoded '&' or the parameter's end.
    // Kept where the value decoded would be (a setting about a secret, a reference, a label).
    name: 'url-encoded secret assignment',
    pattern: new RegExp(`((?:(?<![A-Za-z0-9_.%-])|(?<=%(?:25)?(?:26|3[Ff]|3[Bb]|2[Cc]|20)))(?=${NAME_CHAR}*?${KEYWORD})(${NAME_CHAR}+)%(?:25)?3[Dd])(?!\\[REDACTED\\])((?:[^\\s&%"'<>;,]|%(?!(?:25)?26)[0-9A-Fa-f]{2})+)`, 'gi'),
    replace: (match, head: string, name: string, value: string) => {
      let decoded = value;
      try {
        decoded = decodeURIComponent(decodeURIComponent(value.replace(/\+/g, ' ')));
      } catch {
        // Not valid encoding: judged as it is.
      }
      const kept = decoded.length < 4 || isSettingOfSecret(name, decoded) || REFERENCE.test(decoded) || WHOLE_TEMPLATE_SLOT.test(decoded) || isOwnName(name, decoded);
      return kept ? match : `${head}${REDACTED}`;
    },
    trigger: '%(?:25)?3D',
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
  {
    // A Discord webhook's token, after its id (discord.com/api/webhooks/<id>/<token>; discordapp.com too).
    name: 'discord webhook',
    pattern: /\b(discord(?:app)?\.com\/api\/(?:v\d{1,2}\/)?webhooks\/\d{1,32}\/)(?!\[REDACTED\])[A-Za-z0-9_-]{16}[A-Za-z0-9_-]*/gi,
    replace: `$1${REDACTED}`,
    trigger: 'discord',
  },
  {
    // A Telegram bot token: the bot's id, ':', then 35 characters that start with 'A'
    // (7012345678:AAH...), alone or in the Bot API's URLs (api.telegram.org/bot<token>/sendMessage).
    name: 'telegram bot token',
    // Not after a ':' (an AWS ARN's account id and name: arn:aws:sns:us-east-1:123456789012:Alerts...),
    // and random: a digit, '_' or '-' among its characters, which a name of words has not.
    pattern: /(?<![0-9:])[0-9]{5,16}:A(?=[A-Za-z]{0,40}[0-9_-])[A-Za-z0-9_-]{30,40}(?![A-Za-z0-9_-])/g,
    replace: REDACTED,
    trigger: '[0-9]{5}:A',
  },
  {
    // The signature of a presigned URL (S3's X-Amz-Signature, GCS's X-Goog-Signature, CloudFront's
    // and others' Signature=): the URL grants access until it expires. The credential's id and
    // the other parameters are no secret.
    name: 'url signature',
    pattern: /([?&;](?:X-Amz-Signature|X-Goog-Signature|Signature)=)(?!\[REDACTED\])[A-Za-z0-9%+/=_~.-]{16}[A-Za-z0-9%+/=_~.-]*/gi,
    replace: `$1${REDACTED}`,
    trigger: 'Signature=',
  },
  {
    // A token as a URL's user, with no password (https://<token>@github.com/...), which git and
    // GitHub accept: only a user of a token's shape, 20 characters or more with digits among
    // letters of both cases (or 32 or more, as a hex token), not a name (git@, deploy-bot@).
    name: 'url token user',
    pattern: /(:\/\/)([A-Za-z0-9_-]{20,255})@/g,
    replace: (match, head: string, user: string) => (isTokenShaped(user) ? `${head}${REDACTED}@` : match),
    trigger: '://',
  },
  { name: 'slack webhook', pattern: /\b(hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9_/-]+/gi, replace: `$1${REDACTED}`, trigger: 'hooks\\.slack\\.com' },
  {
    // An access key id with its secret after it: AKIA...:secret, a row of AWS's credentials.csv
    // (user,,AKIA...,secret), Twilio's SID:token. The secret goes here, the id by its own rule.
    name: 'key id and secret',
    pattern: /((?<![A-Za-z0-9])(?:(?:AKIA|ASIA)[A-Z0-9]{16}|(?:AC|SK)[0-9a-f]{32})(?:["']?[ \t]*[:,;|=\t][ \t]*["']?|[ \t]+))(?!\[REDACTED\])(?=[A-Za-z0-9/+]{0,63}[0-9/+])[A-Za-z0-9/+]{16}[A-Za-z0-9/+=]*(?![A-Za-z0-9/+=])/g,
    replace: `$1${REDACTED}`,
    trigger: 'AKIA|ASIA|AC[0-9a-f]{32}|SK[0-9a-f]{32}',
  },
  { name: 'aws access key', pattern: new RegExp(`${START}(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA)[A-Z0-9]{16}${END}`, 'g'), replace: REDACTED, trigger: 'AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA' },
  // A GitHub token is at most a few hundred characters: bounded, a megabyte of ghp_aaa... is no token.
  { name: 'github token', pattern: new RegExp(`${START}(?:gh[pousr]_[A-Za-z0-9]{30,255}${END}|github_pat_[A-Za-z0-9_]{30}[A-Za-z0-9_]*\\b)`, 'g'), replace: REDACTED, trigger: 'gh[pousr]_|github_pat_' },
  { name: 'gitlab token', pattern: new RegExp(`${START}glpat-[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*\\b`, 'g'), replace: REDACTED, trigger: 'glpat-' },
  {
    // Not a CSS class or a branch named with sk- (sk-fading-circle-container,
    // sk-1234-add-login): a few short lowercase words joined by '-', where a key mixes cases or
    // runs long. Bounded, so each candidate costs a fixed look.
    name: 'openai/anthropic key',
    pattern: new RegExp(`${START}sk-(?![a-z0-9]{1,30}(?:-[a-z0-9]{1,30}){1,8}(?![A-Za-z0-9_-]))(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*`, 'g'),
    replace: REDACTED,
    trigger: 'sk-',
  },
  { name: 'stripe key', pattern: new RegExp(`${START}(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16}[A-Za-z0-9]*${END}`, 'g'), replace: REDACTED, trigger: '_live_|_test_' },
  { name: 'stripe webhook secret', pattern: /\bwhsec_[A-Za-z0-9+/=]{16}[A-Za-z0-9+/=]*/g, replace: REDACTED, trigger: 'whsec_' },
  { name: 'slack token', pattern: new RegExp(`${START}(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10}[A-Za-z0-9-]*\\b`, 'g'), replace: REDACTED, trigger: 'xox|xapp-' },
  { name: 'google api key', pattern: new RegExp(`${START}AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])`, 'g'), replace: REDACTED, trigger: 'AIza' },
  { name: 'npm token', pattern: new RegExp(`${START}npm_[A-Za-z0-9]{36}${END}`, 'g'), replace: REDACTED, trigger: 'npm_' },
  { name: 'hugging face token', pattern: new RegExp(`${START}hf_[A-Za-z0-9]{30}[A-Za-z0-9]*${END}`, 'g'), replace: REDACTED, trigger: 'hf_' },
  { name: 'sendgrid key', pattern: /\bSG\.[A-Za-z0-9_-]{16}[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{16}[A-Za-z0-9_-]*/g, replace: REDACTED, trigger: 'SG\\.' },
  { name: 'digitalocean token', pattern: new RegExp(`${START}do[por]_v1_[a-f0-9]{64}${END}`, 'g'), replace: REDACTED, trigger: '_v1_' },
  { name: 'shopify token', pattern: new RegExp(`${START}shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}${END}`, 'g'), replace: REDACTED, trigger: 'shp' },
  {
    name: 'token with a known prefix',
    pattern: new RegExp(`${START}(?:${PREFIXED_TOKENS.map(([, token]) => token).join('|')})${END}`, 'g'),
    replace: REDACTED,
    trigger: PREFIXED_TOKENS.map(([trigger]) => trigger).join('|'),
  },
  {
    // A password hash in any of its formats (see PASSWORD_HASHES), anywhere: its scheme and cost
    // stay ($2b$12$[REDACTED], {SSHA}[REDACTED], alice:[REDACTED]), its salt and hash go. Tried
    // only where one of the formats' triggers is found.
    name: 'password hash',
    pattern: new RegExp(PASSWORD_HASHES.map(([, kept, secret]) => `(${kept})${secret}`).join('|'), 'g'),
    replace: (_match, ...groups: string[]) => `${groups.slice(0, PASSWORD_HASHES.length).find((kept) => kept !== undefined) ?? ''}${REDACTED}`,
    trigger: PASSWORD_HASHES.map(([trigger]) => trigger).join('|'),
    ownTrigger: true,
  },
  {
    // A Discord bot token: the bot's id in base64, a timestamp, an HMAC. The run starts once per
    // run of token characters, and each part is bounded, so each start costs a fixed look.
    name: 'discord bot token',
    pattern: /(?<![A-Za-z0-9_-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}[A-Za-z0-9_-]*/g,
    replace: REDACTED,
    trigger: '[MNO][A-Za-z0-9_-]{23,27}\\.[A-Za-z0-9_-]{6}\\.',
  },
  {
    // A password or a key given as a program's option (see PASSWORD_OPTIONS): mysql -pSECRET,
    // sshpass -p SECRET, zip -P 'SECRET', keytool -storepass SECRET, gh secret set X --body SECRET.
    // A quoted value keeps its quotes. The look back for the program runs only at the option and
    // is bounded.
    name: 'command-line password',
    pattern: new RegExp(`((?:^|\\s)(?:${passwordOptionAlternatives()}))(?!\\[REDACTED\\])(?:(["'])(?!\\[REDACTED\\])[^"'\\n]+\\2|[^\\s"'-][^\\s"']{2}[^\\s"']*)`, 'g'),
    replace: (match, head: string, quote: string | undefined) => {
      // A variable's reference ($PASS, "$TOKEN", %KEY%) names where the secret is.
      const value = match.slice(head.length);
      if (REFERENCE.test(quote ? value.slice(1, -1) : value)) return match;
      return `${head}${quote ?? ''}${REDACTED}${quote ?? ''}`;
    },
    // Programs as words: 'az', 'zip' or 'mongo' inside a word (lazy, gzip, mongoose) is no command.
    trigger: `\\b(?:${PASSWORD_OPTIONS.map(([programs]) => programs).join('|')})\\b`,
  },
  {
    // A secret's value given to the AWS CLI: Secrets Manager's --secret-string and --secret-binary
    // (aws secretsmanager create-secret --name n --secret-string 'value', put-secret-value,
    // update-secret; a JSON value holds the other quote), and Systems Manager's --value for a
    // SecureString (aws ssm put-parameter --name n --value 'value' --type SecureString, the type
    // before or after the value). On a command continued over lines ('\' at their ends) too. A
    // String parameter's value is a setting, kept, as is a value read from a file (file://...), a
    // variable's reference, or prose about the option (the --secret-string option). The looks
    // back and ahead are bounded.
    name: 'aws cli secret value',
    pattern: new RegExp(
      `((?:^|\\s)(?:--secret-(?:string|binary)|--value(?<=\\bssm[ \\t]+put-parameter\\b${CONTINUED_LINE}{0,300}--value)(?=${CONTINUED_LINE}{0,300}?\\bSecureString\\b|(?<=\\bSecureString\\b${CONTINUED_LINE}{0,300})))(?:=|[ \\t]+))(?!\\[REDACTED\\]|-|${PROSE_AFTER_OPTION})("[^"\\n]+"|'[^'\\n]+'|[^\\s"']+)`,
      'g',
    ),
    replace: (match, head: string, value: string) => {
      const quote = /^["']/.test(value) ? value[0] : '';
      const bare = quote ? value.slice(1, -1) : value;
      return REFERENCE.test(bare) || AWS_CLI_FILE.test(bare) ? match : `${head}${quote}${REDACTED}${quote}`;
    },
    trigger: '--secret-(?:string|binary)|put-parameter',
    spansLines: true,
  },
  {
    // A password echoed into a command that reads it from its input: echo SECRET | docker login
    // -u bob --password-stdin, printf '%s' ... | helm registry login --password-stdin; or a
    // secret's value into a command that stores its input as one: gh secret set NAME, wrangler
    // secret put NAME, docker secret create NAME -. A variable's reference ("$TOKEN") names where
    // the secret is and stays.
    name: 'echoed password',
    pattern: new RegExp(`${ECHOED}(?=[ \\t]*\\|[^\\n]{0,200}(?:--password-stdin\\b|\\b(?:gh[ \\t]+secret[ \\t]+set|wrangler[ \\t]+secret[ \\t]+put|docker[ \\t]+secret[ \\t]+create)[ \\t]))`, 'g'),
    replace: (_match, head: string, _format: string, quote?: string) => `${head}${quote ?? ''}${REDACTED}${quote ?? ''}`,
    trigger: 'password-stdin|secret[ \\t]+(?:set|put|create)',
  },
  {
    // A password file made of an echo: ansible-vault view --vault-password-file <(echo SECRET).
    name: 'echoed password file',
    pattern: new RegExp(`(?<=--(?:vault-)?pass(?:word)?-file[ \\t=]+<)${ECHOED}(?=\\))`, 'g'),
    replace: (_match, head: string, _format: string, quote?: string) => `${head}${quote ?? ''}${REDACTED}${quote ?? ''}`,
    trigger: 'pass(?:word)?-file',
  },
  {
    // HashiCorp Vault's login with the token as its argument: vault login SECRET, a token's shape
    // (letters and digits: "vault login whenever it expires" is prose); an option, a method's
    // key=value pairs, '-' for the input or a reference stays.
    name: 'vault login token',
    pattern: /(\bvault[ \t]+login(?:[ \t]+-[\w-]+(?:=\S*)?)*[ \t]+)(["']?)(?![-$%]|\[REDACTED\])(?=[^\s"'=]*\d)(?=[^\s"'=]*[A-Za-z])([^\s"'=]{8,})\2(?=\s|$)/g,
    replace: `$1$2${REDACTED}$2`,
    trigger: 'vault',
  },
  {
    // Samba's user%password (smbclient //host/share -U bob%SECRET, rpcclient, net ... -U): the user stays.
    name: 'smb user password',
    pattern: /((?:^|\s)(?:-U|--user=?)(?<=\b(?:smbclient|rpcclient|smbcacls|smbget|smbmap|net)\b[^\n]{0,200}(?:-U|--user=?))[ \t]*["']?[^\s%"']{1,256}%)(?!\[REDACTED\])[^\s"']+/g,
    replace: `$1${REDACTED}`,
    trigger: '\\b(?:smbclient|rpcclient|smbcacls|smbget|smbmap|net)\\b',
  },
  {
    // curl's cookies on its command line (curl -b 'session=SECRET', --cookie "a=1; b=2"): each
    // cookie's value goes, as in a Cookie header. A value without '=' is a cookie jar's path, kept.
    name: 'curl cookie',
    pattern: /((?:^|\s)(?:-b|--cookie)(?<=\bcurl\b[^\n]{0,200}(?:-b|--cookie))[ \t]+)("[^"\n]*"|'[^'\n]*'|[^\s"']+)/g,
    replace: (match, head: string, value: string) => (value.includes('=') ? head + value.replace(COOKIE_PAIR_IN_OPTION, (pair, name: string) => (COOKIE_ATTRIBUTE.test(name) || pair.endsWith(REDACTED) ? pair : `${name}=${REDACTED}`)) : match),
    trigger: 'curl',
  },
  // The words after htpasswd, bounded: a line of a million words is not rescanned per word.
  { name: 'htpasswd password', pattern: /\bhtpasswd((?:[ \t]+[^\s;|&]+){1,12})/g, replace: redactHtpasswd, trigger: 'htpasswd' },
  {
    // Oracle's user/password@database: a JDBC thin URL, sqlplus and its kin on a command line.
    name: 'oracle credentials',
    pattern: /(\b(?:jdbc:oracle:[a-z0-9]+:@?|(?:sqlplus|sqlldr|expdp|impdp|rman)(?:[ \t]+-[A-Za-z]+)*[ \t]+(?:userid=)?)["']?[A-Za-z0-9_$#.]+\/)(?!\[REDACTED\])[^\s@/"']+/gi,
    replace: `$1${REDACTED}`,
    trigger: 'jdbc:oracle|sqlplus|sqlldr|expdp|impdp|rman',
  },
  {
    // A .netrc entry, on one line or several: machine host login user password secret, or the
    // password before the login (machine host password secret login user).
    name: 'netrc password',
    pattern: /(\b(?:machine\s+\S+|default)(?:(?:\s+(?:login|account|port)\s+\S+){1,3}\s+password\s+|\s+password\s+(?=\S+\s+(?:login|account)\s+\S)))(?!\[REDACTED\])\S+/g,
    replace: `$1${REDACTED}`,
    trigger: 'machine|default',
    spansLines: true,
  },
  {
    // A password in braces in a connection string (ODBC's and SQL Server's JDBC URL: ...;PWD={p;w};),
    // which may hold a ';' ('}}' is a '}' inside). Not a template's slot (f"...;PWD={password}").
    name: 'braced connection password',
    pattern: new RegExp(`(;[ \\t]*${SECRET_NAME}[ \\t]*=[ \\t]*)(\\{(?:[^}\\r\\n]|\\}\\})*\\})`, 'gi'),
    replace: (match, head: string, value: string) => (WHOLE_REFERENCE.test(value) || TEMPLATE_SLOT.test(value) || value === `{${REDACTED}}` ? match : `${head}{${REDACTED}}`),
    trigger: KEYWORD,
  },
  {
    // A .pgpass line, host:port:database:user:password, as the whole line ('\:' is a ':' in a field).
    // Not a time (10:30:00:12:34): the host is no number.
    name: 'pgpass line',
    pattern: /((?:^|[\n\r])[ \t]*(?!\d+:)[^\s:#][^\s:]*:(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:)(?!\[REDACTED\])(?:[^\s:\\]|\\.)+(?=[ \t]*(?:[\r\n]|$))/g,
    replace: `$1${REDACTED}`,
    trigger: ':(?:\\d{1,5}|\\*):',
  },
  // An Azure shared access signature's sig= in a URL's query.
  { name: 'sas signature', pattern: /([?&;]sig=)(?!\[REDACTED\])[A-Za-z0-9%+/=_-]{16}[A-Za-z0-9%+/=_-]*/g, replace: `$1${REDACTED}`, trigger: 'sig=' },
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
  {
    // Basic credentials too short for the bearer rule (Basic dXNlcjpwYXNz is user:pass); a word
    // after 'basic' in prose decodes to no user:password.
    name: 'basic credentials',
    pattern: /(\bBasic[ \t]+)([A-Za-z0-9+/]{4}[A-Za-z0-9+/]*={0,2})(?![A-Za-z0-9+/=._~-])/gi,
    replace: (match, head: string, value: string) => (isBasicCredentials(value) ? `${head}${REDACTED}` : match),
    trigger: 'basic',
  },
  {
    // Not one lowercase word (Basic internationalization, Token authentication): a token mixes
    // cases or holds a digit.
    name: 'bearer token',
    pattern: /\b(Bearer|Basic|Token)\s+(?![a-z]+(?![A-Za-z0-9._~+/=-]))[A-Za-z0-9._~+/=-]{16}[A-Za-z0-9._~+/=-]*/g,
    replace: `$1 ${REDACTED}`,
    trigger: 'Bearer|Basic|Token',
  },
  {
    // A secret given as the value of a long option: --password value, --token 'value' (with '='
    // the assignment rules see it). Not an option that only says how to get one (--password-stdin,
    // --no-password, --ask-vault-password), nor prose about the option or options (the --token
    // flag, the --username and --password options).
    name: 'secret option',
    pattern: /((?<!\S)--(?!no-|ask-|with-|prompt-)(?:[A-Za-z0-9-]*-)?(?:password|passwd|passphrase|secret|token|api-?key|access-key|secret-key)[ \t]+)(?!-|\[REDACTED\]|(?:(?:flag|option|argument|arg|parameter|param|switch|value)s?|is|was|and|or|to|for|with|in|on|of|the|from|instead|now|also)\b)(?:"[^"\n]+"|'[^'\n]+'|[^\s"'`;|&<>()]{3}[^\s"'`;|&<>()]*)/gi,
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
    // A secret set in git's configuration: git config --global github.token value (hub's
    // oauthtoken, sendemail.smtppass). The last part of the name says it: credential.helper store
    // names a helper, and keeps it. A value that is an option or a shell operator is no value.
    // In a file given by its path too (git config --file path/to/cfg user.password value, -f).
    name: 'git config secret',
    pattern: new RegExp(`(\\bgit[ \\t]+config(?:[ \\t]+(?:--(?:global|local|system|worktree|add|replace-all)|(?:--file|-f|--blob)(?:=|[ \\t]+)[^\\s-]\\S*))*[ \\t]+(?:[\\w.:/-]*\\.)?(?=[\\w-]*?${KEYWORD})[\\w-]+[ \\t]+)(["']?)(?![-&|;<>$]|\\[REDACTED\\])[^\\s"']+`, 'gi'),
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
    // A shell's variable set without '=': csh's setenv NAME value, Windows' setx [/M] NAME value,
    // fish's set -x (or -gx, -Ux) NAME value. A value that is a variable's reference is kept.
    name: 'shell set secret',
    pattern: new RegExp(`((?:^|[\\s;&|(])(?:setenv|setx(?:[ \\t]+/[A-Za-z])*|set(?:[ \\t]+-[A-Za-z]+)*[ \\t]+-[A-Za-wyz]*x[A-Za-z]*(?:[ \\t]+-[A-Za-z]+)*)[ \\t]+${SECRET_NAME}[ \\t]+)(?![-$%]|["']?\\[REDACTED\\])(?:"[^"\\n]+"|'[^'\\n]+'|[^\\s"'\`;|&<>()]+)`, 'gi'),
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
    // A secret named by one field and given by the next: .NET's <add key="ApiKey" value="..." />,
    // a form's <input name="password" value="...">, Kubernetes' env list (- name: DB_PASSWORD,
    // then value: ... on the next line), ECS's {"name": "DB_PASSWORD", "value": "..."}. Not a
    // value that is code (value = var.db_password).
    name: 'name and value',
    pattern: new RegExp(
      `(\\b(?:key|name)(["']?)[ \\t]*[:=][ \\t]*(["']?)${SECRET_NAME}\\3[ \\t]*,?[ \\t]*(?:\\r?\\n[ \\t]*)?(["']?)value\\4[ \\t]*[:=][ \\t]*)(?!\\[REDACTED\\]|${CODE_REFERENCE})(?:(["'])${quotedChar(5)}+\\5|[^\\s"'{}[\\],;<>|][^\\s"'{}[\\],;<>]*)`,
      'gi',
    ),
    replace: (_match, head: string, _q1: string, _q2: string, _q3: string, quote: string | undefined) => `${head}${quote ?? ''}${REDACTED}${quote ?? ''}`,
    trigger: KEYWORD,
    spansLines: true,
  },
  {
    // A secret given by name as a call's first argument: setItem('token', 'value'),
    // os.getenv("API_KEY", "value"), secrets.put("db_password", "value"). Not a second name
    // (a list of names: ('token', 'password'), letters only, where a secret has digits too), nor
    // after a class's name (MovedAttribute("HTTPPasswordMgr", "urllib2", ...), see isTypeName).
    name: 'secret argument',
    pattern: new RegExp(`(\\([ \\t]*(["'])(${SECRET_NAME})\\2[ \\t]*,[ \\t]*)(["'])(?!\\[REDACTED\\]|(?=[A-Za-z_.-]*?${KEYWORD})[A-Za-z_.-]+\\4)[^"'\\n]{4}[^"'\\n]*\\4`, 'gi'),
    replace: (match, head: string, _quote: string, name: string, quote: string) => (isTypeName(name) ? match : `${head}${quote}${REDACTED}${quote}`),
    trigger: KEYWORD,
  },
  {
    // A user and a password given together in code: requests' auth=("user", "password"),
    // HTTPBasicAuth("user", "password"), setBasicAuth('user', 'password').
    name: 'basic auth pair',
    pattern: new RegExp(`(\\b(?:auth[ \\t]*=[ \\t]*[([]|\\w*(?:basic|digest|proxy)_?auth\\w*[ \\t]*\\()[ \\t]*(["'])${quotedChar(2)}*\\2[ \\t]*,[ \\t]*)(["'])(?!\\[REDACTED\\])${quotedChar(3)}+\\3`, 'gi'),
    replace: `$1$3${REDACTED}$3`,
    trigger: 'auth',
  },
  {
    // PowerShell's password in clear: ConvertTo-SecureString "value" -AsPlainText -Force.
    name: 'secure string',
    pattern: /(\bConvertTo-SecureString(?:[ \t]+-(?:String|AsPlainText|Force)\b)*[ \t]+)(["'])(?!\[REDACTED\])(?:(?!\2)[^\r\n])+\2/gi,
    replace: `$1$2${REDACTED}$2`,
    trigger: 'ConvertTo-SecureString',
  },
  {
    // The secret a JWT is signed or verified with, given as a literal: jwt.sign(payload, "value"),
    // jwt.verify(token, 'value'), PyJWT's jwt.encode(payload, "value", algorithm=...) and
    // jwt.decode. The first argument is a name, a member chain, a string or a flat object
    // ({ sub: user.id }), bounded. Not a template that builds the secret (`${prefix}`).
    name: 'jwt secret argument',
    pattern: /(\b(?:jwt|jsonwebtoken)\.(?:sign|verify|encode|decode)[ \t]*\([ \t]*(?:\{[^{}\n]{0,500}\}|[^,(){}\n"'`]{1,200}|(["'`])[^"'`\n]{0,500}\2)[ \t]*,[ \t]*)(["'`])(?!\[REDACTED\])((?:(?!\3)[^\n\x5c]|\x5c[^\n]){1,500})\3/gi,
    replace: (match, head: string, _q1: string, quote: string, value: string) => (TEMPLATE_SLOT.test(value) || REFERENCE.test(value) ? match : `${head}${quote}${REDACTED}${quote}`),
    trigger: 'jwt|jsonwebtoken',
  },
  {
    // A secret's literal wrapped in a conversion to a string type: Rust's let token =
    // String::from("value") (also SecretString::new, Some), Python's SecretStr("value"),
    // Java's new String("value"). The code around the literal stays.
    name: 'wrapped secret literal',
    pattern: new RegExp(
      `(${SECRET_NAME}(?:[ \\t]*:[ \\t]*${TYPE})?[ \\t]*${ASSIGN}[ \\t]*(?:(?:std::string::)?(?:String|SecretString|SecretBox|Secret|Box|Arc|Rc|Cow)::(?:from|new)|Some|SecretStr|SecretBytes|new[ \\t]+String|String|str)[ \\t]*\\([ \\t]*)(["'])(?!\\[REDACTED\\])${quotedChar(2)}{4}${quotedChar(2)}*\\2`,
      'gi',
    ),
    replace: `$1$2${REDACTED}$2`,
    trigger: KEYWORD,
  },
  {
    // A default after a secret's lookup: process.env.API_KEY || "value", os.getenv("TOKEN") or
    // 'value', config.password ?? "value", Kotlin's System.getenv("TOKEN") ?: "value". Not a
    // setting about a secret, nor where it is or what it is called (config.tokenType ?? "Bearer",
    // process.env.SECRET_NAME ?? "default", see isSettingOfSecret), nor a reference or a label
    // (as the rule 'quoted secret assignment' keeps them).
    name: 'secret fallback',
    pattern: new RegExp(`((${SECRET_NAME})["'\\])\\]]{0,3}[ \\t]*(?:\\|\\||\\?\\?|\\?:|\\bor\\b)[ \\t]*)(["'])(?!\\[REDACTED\\])(${quotedChar(3)}{4}${quotedChar(3)}*)\\3`, 'gi'),
    replace: (match, head: string, name: string, quote: string, value: string) =>
      isSettingOfSecret(name, value) || WHOLE_TEMPLATE_SLOT.test(value) || WHOLE_REFERENCE.test(value) || isOwnName(name, value) ? match : `${head}${quote}${REDACTED}${quote}`,
    trigger: KEYWORD,
  },
  {
    // A shell default for a secret: ${DB_PASSWORD:-value}. The value stops at a '{' or '$' too,
    // so a line of unclosed defaults is not rescanned from each.
    name: 'shell default',
    pattern: new RegExp(`(\\$\\{${SECRET_NAME}:?[-=])(?!\\[REDACTED\\])[^{}$\\s][^{}$\\r\\n]*(?=\\})`, 'gi'),
    replace: `$1${REDACTED}`,
    trigger: KEYWORD,
  },
  {
    // An Authorization or Proxy-Authorization header's credentials, whatever their shape: after
    // a scheme (Bearer abc.def.ghi, Basic, token, Digest's and AWS4's parameters) always, unless
    // they name where the secret is (Bearer $TOKEN, Bearer ${token}, Bearer <token>); without a
    // scheme when they are a secret (see isSecretValue; not prose: authorization: required).
    // The credentials may hold a ':' (admin:hunter22, Key id:secret).
    // Also the header set in code: setRequestHeader('Authorization', 'Bearer ...'); not one code
    // builds (`AWS4-HMAC-SHA256 Credential=${accessKeyId}/...`), nor a comparison (authorization === x).
    name: 'authorization header',
    pattern: new RegExp(
      `(\\b(?:proxy-)?authorization(?:\\\\*["'\`])?[ \\t]*(?:[:=](?!=)[ \\t]*(?:\\\\*["'\`])?|,[ \\t]*\\\\*["'\`]))(?:(${AUTH_SCHEME}[ \\t]+)|(?!${AUTH_SCHEME}(?![\\w-])))(?!\\[REDACTED\\])(${AUTH_PARAM}(?:[ \\t]*,[ \\t]*${AUTH_PARAM}){0,32}|[\\w$%<{+/][^\\s"'\`,;\\\\]*)`,
      'gi',
    ),
    replace: (match, head: string, scheme: string | undefined, credentials: string) => {
      if (REFERENCE.test(credentials) || TEMPLATE_SLOT.test(credentials) || (!scheme && !isRawCredential(credentials.replace(TRAILING_PUNCTUATION, '')))) return match;
      return `${head}${scheme ?? ''}${REDACTED}`;
    },
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
    // A bare auth holding basic credentials in base64: docker's config.json ("auth": "..."),
    // .npmrc's _auth=... (not oauth, nor a word: auth: required).
    name: 'auth credentials',
    pattern: /((?<![A-Za-z0-9-])_?auth(?:\\*["'])?[ \t]*[:=][ \t]*(?:\\*["'])?)([A-Za-z0-9+/]{8}[A-Za-z0-9+/]*={0,2})(?![A-Za-z0-9+/=._~-])/gi,
    replace: (match, head: string, value: string) => (isBasicCredentials(value) ? `${head}${REDACTED}` : match),
    trigger: 'auth',
  },
  {
    // The data and stringData of a Kubernetes Secret (kind: Secret): values under any name
    // (DATABASE_URL, tls.key, .dockerconfigjson), the lines below the block's header that are
    // more indented than it. Bounded, as each line costs regex stack.
    name: 'kubernetes secret data',
    pattern: /((?:^|[\n\r])([ \t]*)["']?(?:data|stringData)["']?[ \t]*:[ \t]*\{?[ \t]*)((?:\r?\n\2[ \t][^\r\n]*|\r?\n[ \t]*(?=\r?\n\2[ \t])){1,200})/g,
    replace: (_match, head: string, _indent: string, body: string) => head + redactSecretData(body),
    trigger: 'data',
    when: KUBERNETES_SECRET,
    spansLines: true,
  },
  {
    // A YAML block scalar under a secret's name (password: |, then the value's lines, more
    // indented than the name): the lines become one [REDACTED]. Bounded, as each line costs
    // regex stack.
    name: 'yaml block secret',
    pattern: new RegExp(
      `((?:^|[\\n\\r])([ \\t]*)(?:-[ \\t]+)?["']?${SECRET_NAME}["']?[ \\t]*:[ \\t]*[|>][-+1-9]{0,2}[ \\t]*(?:#[^\\r\\n]*)?)((?:\\r?\\n\\2[ \\t][^\\r\\n]*|\\r?\\n[ \\t]*(?=\\r?\\n\\2[ \\t])){1,200})`,
      'gi',
    ),
    replace: (_match, head: string, _indent: string, body: string) => head + body.replace(/^(\r?\n[ \t]*)[\s\S]*$/, `$1${REDACTED}`),
    trigger: KEYWORD,
    spansLines: true,
  },
  {
    // A Terraform variable named for a secret with a default: variable "db_password" { default = "value" }.
    // Only a simple block: its defaults before any nested block, within 1000 characters (a quoted
    // value may hold braces; a quote a line leaves open, in a comment or half typed, is a
    // character); every one of them (a diff's two sides under one header give the old
    // default and the new).
    name: 'terraform secret default',
    pattern: new RegExp(`(\\bvariable[ \\t]+"${SECRET_NAME}"[ \\t]*\\{)((?:[^{}"]|"(?:[^"\\x5c\\n]|\\x5c[^\\n])*"|"(?=[^"\\n]*(?:\\n|$))){0,1000})`, 'gi'),
    replace: (_match, head: string, body: string) => head + body.replace(TERRAFORM_DEFAULT, `$1${REDACTED}`),
    trigger: 'variable',
    spansLines: true,
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
    // {\"db_password\": \"value\"}. The value may hold escaped quotes (see quotedChar), and may
    // be on the next line (a formatter wraps a long one: const DB_PASSWORD =\n  "value").
    // A value a formatter wrapped in parentheses is the same value (black and ruff write
    // API_KEY = (\n    "value"\n), and api_key=(\n "value"\n) in a call; a diff marks its
    // lines), its parts joined as JOINED_LITERALS says.
    // Not a setting about a secret (token_type: "Bearer", apiKeyHeader = "x-api-key", see
    // isSettingOfSecret), nor a reference to one: a template's ("{{ .Values.db.password }}",
    // "${{ secrets.TOKEN }}", see WHOLE_TEMPLATE_SLOT), a variable's ("${DB_PASSWORD}",
    // "$DB_PASSWORD") or a placeholder ("<your-token>", see WHOLE_REFERENCE); nor a label, a
    // value that repeats its name's last words (EVENT_TEST_PASS: 'pass', REFRESH_TOKEN =
    // "refresh_token", see isOwnName). A quoted name after a ternary's '?' is its first branch,
    // not a key (ok ? 'pass' : 'error').
    name: 'quoted secret assignment',
    pattern: new RegExp(`((?<!\\?[ \\t]{0,16}["'])${SECRET_NAME}(?:\\\\*["'])?\\]?\\s*(?::[ \\t]*${TYPE}[ \\t]*=|${ASSIGN}|=>|:)\\s*(?:\\(\\s*(?:(?<=\\n)[-+][ \\t]*)?)?)(\\\\*["'])(?!\\[REDACTED\\])(${quotedChar(2)}{4}${quotedChar(2)}*)\\2(${JOINED_LITERALS})`, 'gi'),
    replace: (match, head: string, quote: string, value: string, joined: string) =>
      isSettingOfSecret(nameOf(head), value) || WHOLE_TEMPLATE_SLOT.test(value) || WHOLE_REFERENCE.test(value) || isOwnName(nameOf(head), value)
        ? match
        : `${head}${quote}${REDACTED}${quote}${joined.replace(new RegExp(literal(1), 'g'), `$1${REDACTED}$1`)}`,
    trigger: KEYWORD,
    spansLines: true,
  },
  {
    // Unquoted: KEY=value. A call or member access (token = getToken(), auth: this.auth) is code
    // (see CODE_REFERENCE). A name, a type and ' =' (apiKey: string = value) is a typed
    // assignment: the type is no value. Nor is a keyword (token = await getToken(), secret:
    // string | null = null), nor a setting about a secret (max_tokens: 4096, TOKEN_TTL=3600s).
    // After ':' the value is on the name's line: on the next, the name is a YAML mapping's
    // (credentials:\n  username: bob). A value with spaces keeps its words that look random
    // (see SECRET_WORDS); words with '=' or ':' are not looked at, as they may be assignments.
    // A type after ':' is a declaration, not a value (password: string, secret: SecretStr).
    // A data: URI is one value to its end (token=data:image/png;base64,...), whatever it is labelled.
    // Nor is a path or an index (String::from(...), Config::new(), tokens[i]; see
    // CODE_PATH_OR_INDEX), nor a call (base64.b16encode(...), see CODE_CALL), nor a constructor
    // storing its parameter (this.apiKey = apiKey;, see isParameterStored), nor an identifier
    // that code shows is a variable or a type (progressToken: messageId, string | number,
    // password or "", username, password = split; see isCodeOperand).
    name: 'secret assignment',
    pattern: new RegExp(
      `(${SECRET_NAME}\\s*(?::[ \\t]*${TYPE}[ \\t]+=(?!=)\\s*|${ASSIGN}\\s*|:(?![ \\t]*${TYPE}[ \\t]+=(?!=))[ \\t]*))(?!\\[REDACTED\\]|(?:await|async|typeof|keyof|readonly|unique|yield|void|true|false|null|undefined|none|nil)(?![^\\s,;)\\]}])|${CODE_REFERENCE}|${CODE_PATH_OR_INDEX}|${CODE_CALL})(data:[^\\s,"'<>]{0,100},[^\\s"'<>]*|${UNQUOTED}{4}${UNQUOTED}*)(?![\\w(])((?:[ \\t]+[^\\s"',;()[\\]{}<>=:]+(?![^\\s,;])){0,8})`,
      'gi',
    ),
    // After the groups, String.replace passes where the match is and the whole text (typed as the groups are).
    replace: (match, head: string, value: string, more: string, ...place: string[]) => {
      const [at, text] = [Number(place[0]), place[1]];
      const name = nameOf(head);
      if (isSettingOfSecret(name, value) || (head.trimEnd().endsWith(':') && TYPE_NAME.test(value)) || isParameterStored(name, value)) return match;
      const end = at + head.length + value.length;
      if (isCodeOperand(name, value, text.slice(end, end + 16), lineBefore(text, at))) return match;
      // A `code span` in prose (token: `start`), judged by what it holds, as the prose rule judges one.
      if (/^`[^`]+`$/.test(value) && !isSecretInProse(value.slice(1, -1))) return match;
      const secretWords = SECRET_WORDS.exec(more)![0];
      return `${head}${REDACTED}${more.slice(secretWords.length)}`;
    },
    trigger: KEYWORD,
  },
  {
    // A user and a password given together in prose: "the credentials are admin / pw123", "login:
    // admin/Zq9pass", "creds for staging are deploy:s3cr3t!". The user stays. Only a password
    // that is a secret (see isSecretValue) is redacted: "the credentials are read / write",
    // "login is username/password based", "credentials are rotated / revoked" stay.
    name: 'prose credentials pair',
    pattern: /((?<![\w$./\\-])(?:credentials?|creds|login)(?:[ \t]+(?:for|on|to|of|in)(?:[ \t]+[\w.-]+){1,3})?(?:[ \t]+(?:are|is|were|was)(?:[ \t]+(?:now|still))?)?[ \t]*:?[ \t]+["'`]?[A-Za-z0-9_@+][A-Za-z0-9_.@+-]{0,63}(?:[ \t]*\/[ \t]*|:))(?!\[REDACTED\])([^\s"'`,;]+)/gi,
    replace: (match, head: string, value: string) => {
      const password = value.replace(TRAILING_PUNCTUATION, '');
      // After a ':' digits alone are a port (login: db:5432).
      if ((head.endsWith(':') && /^\d+$/.test(password)) || !isSecretValue(password)) return match;
      return `${head}${REDACTED}${value.slice(password.length)}`;
    },
    trigger: 'cred|login',
  },
  {
    // A secret given in prose: "the database password is hunter2", "the secret is: 9f8e7d6c",
    // "set the token to Zq9...", "passwd hunter2", 'use passphrase "correct horse battery staple"'.
    // Only a value that is a secret is redacted (see isSecretValue): "the password is required",
    // "the token is expired", "password is hashed with bcrypt" stay. A quoted value is a secret
    // whatever its words; a `code span` is judged by what it holds (`null`); a bare value starts
    // with a word's character, not an operator (password = getPassword(), password + salt).
    // Without a linking word a value follows a password's name ("password Sup3rS3cret!"); after a
    // token's or a key's it is a parser's or a product's word (Unexpected token 'export') unless
    // it is random text ("use token a1b2c3d4e5f6g7h8i9").
    name: 'prose secret',
    pattern: new RegExp(
      `((?<![\\w$./\\\\-])(?!-)[A-Za-z0-9_-]*?(?:${PROSE_CREDENTIAL}${PROSE_WHOSE}[ \\t]+${PROSE_LINK}|${PROSE_CREDENTIAL})(?![\\w-])[ \\t]+)(?!\\[REDACTED\\]|${QUANTITY})(?:("[^"\\r\\n]+"|'[^'\\r\\n]+'(?![A-Za-z]))|(\`[^\`\\r\\n]+\`)|([\\w$%<][^\\s"'\`]*))(?:(?=(${CLAUSE_END}))|)`,
      'gi',
    ),
    replace: redactProseValue,
    trigger: PROSE_CREDENTIAL,
  },
];
