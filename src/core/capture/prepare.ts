// An observation as the caller sent it, made ready to store: type and lists checked, its text
// made printable and secrets redacted, secret files dropped, token count and near-duplicate
// fingerprint computed.

import { createHash } from 'node:crypto';
import type { ObservationInput } from '../api';
import { MAX_FIELD_CHARS } from '../model/records';
import type { Observation } from '../model/records';
import { MAX_RECORD_PATHS } from '../model/limits';
import { FilterError, LONE_SURROGATE, SHA_PATTERN, sqlInt, validType } from '../store/filters';
import { jsonList } from '../store/mapping';
import type { PreparedObservation } from '../store/repos/observations';
import { printable } from '../model/printable';
import { countTokens } from '../tokens';
import { storedPath } from './paths';
import { isSecretPath, redact, redactKey, redactKeyNullable, redactLines } from './redact';

/**
 * Times callers give (observation times, recall's since/until, imported records): milliseconds
 * since 1970 that a Date can hold and print. A safe integer is not enough: past 8.64e15 ms no Date
 * exists, and a write or a read would fail half-way. The bound is the end of the year 9999, so that
 * a time given in microseconds by mistake is refused instead of stored as the year 55,000.
 */
export const MAX_EPOCH_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
export const EPOCH_RULE = `must be milliseconds since 1970, a whole number from 0 to ${MAX_EPOCH_MS} (the end of the year 9999)`;

function normaliseTitle(title: string): string {
  return title
    .toLowerCase()
    .replace(/\b[0-9a-f]{7,40}\b/g, '#')
    .replace(/[^a-z0-9#]+/g, ' ')
    .trim();
}

/**
 * What an identifier or a file path may not hold: NUL, which no SQL literal can carry (sqlString
 * refuses it), and a lone surrogate (half of a UTF-16 pair), which the store writes as U+FFFD: a
 * stored value holding either could never be named by a filter again, and two keys differing only
 * there would be one. The tool schemas check the same rule up front.
 */
export const IDENTIFIER_TEXT = {
  test: (value: string): boolean => !value.includes('\u0000') && !LONE_SURROGATE.test(value),
  message: 'may not contain NUL characters or lone surrogates (text that is not valid Unicode)',
};

/**
 * Text as stored (a title, a narrative, a fact, a summary's field): without terminal escape
 * sequences and control characters but the line feed and the tab (model/printable.ts: a colour
 * code or a title change an agent copied from a terminal would otherwise reach every reader of
 * the record raw), then redacted. Escapes go first: one inside a secret would hide it from redaction.
 */
export function storedText(text: string): string {
  return redact(printable(text));
}

export function storedTextNullable(text: string | null): string | null {
  return text === null ? null : storedText(text);
}

/** A list of texts as stored (see storedText); `paths` keeps each item as given but for redaction (a file's name is its own). */
export function cleanList(values: unknown, name: string, paths = false): string[] {
  if (values === undefined || values === null) return [];
  if (!Array.isArray(values)) throw new FilterError(`${name} must be a list of strings`);
  // Items of one line each are redacted as lines: a private key given one line per item is then
  // redacted whole, from its BEGIN item to its END item.
  const items = values.map((v) => (paths ? String(v) : printable(String(v))));
  const redacted = items.some((v) => v.includes('\n')) ? items.map(redact) : redactLines(items);
  return [...new Set(redacted.map((v) => v.trim()).filter(Boolean))];
}

/**
 * File lists as stored: forward slashes on every OS (see paths.ts), secret files dropped, NUL
 * refused, and the first MAX_RECORD_PATHS kept, fewer where their list would be longer than a field
 * holds (MAX_FIELD_CHARS): a git import's commit of 10,000 files would otherwise be stored whole,
 * and an export of it never imported back.
 */
export function cleanPaths(values: unknown, name: string): string[] {
  if (Array.isArray(values) && values.some((v) => !IDENTIFIER_TEXT.test(String(v)))) throw new FilterError(`${name} ${IDENTIFIER_TEXT.message}`);
  const all = [...new Set(cleanList(values, name, true).map(storedPath))].filter((f) => !isSecretPath(f));
  const kept: string[] = [];
  // The list's JSON: brackets, and each path quoted with a comma.
  let chars = 2;
  for (const f of all) {
    if (kept.length >= MAX_RECORD_PATHS) break;
    const more = JSON.stringify(f).length + (kept.length > 0 ? 1 : 0);
    if (chars + more > MAX_FIELD_CHARS) break;
    kept.push(f);
    chars += more;
  }
  return kept;
}

export function checkEpoch(value: unknown, name: string): number {
  const n = Number(sqlInt(Number(value)));
  if (n < 0 || n > MAX_EPOCH_MS) throw new FilterError(`${name} ${EPOCH_RULE}`);
  return n;
}

function fingerprint(type: string, title: string | null, files: string[]): string | null {
  if (!title && files.length === 0) return null;
  const key = `${type}\u0000${[...files].sort().join('\u0000')}\u0000${normaliseTitle(title ?? '')}`;
  return createHash('sha1').update(key).digest('hex').slice(0, 24);
}

/**
 * An identifier as stored (a branch, a session id, a dedupe key): with a secret digested away
 * (redactKey), and refused when it holds NUL, which no filter on it could ever name again.
 */
export function storedKey(value: string | null | undefined, name: string): string | null {
  if (typeof value === 'string' && !IDENTIFIER_TEXT.test(value)) throw new FilterError(`${name} ${IDENTIFIER_TEXT.message}`);
  return redactKeyNullable(value);
}

/** Longest session id kept as given; a longer one is keyed by its digest (sessionKey). */
const MAX_SESSION_ID_CHARS = 256;

/**
 * A client's session id as the store keys it (retrieve_memory serves any text as one: the
 * contract sets no limit): as given when it is short, holds no secret, NUL or half a surrogate
 * pair; otherwise a digest of its UTF-16 code units, so each id still names one session and the
 * same id the same one (a digest of UTF-8 would take two half pairs for one U+FFFD).
 */
export function sessionKey(id: string): string {
  const asGiven = id.length <= MAX_SESSION_ID_CHARS && IDENTIFIER_TEXT.test(id) && redactKey(id) === id;
  return asGiven ? id : `sha256-${createHash('sha256').update(id, 'utf16le').digest('hex').slice(0, 32)}`;
}

/** The stored key of a growing observation: its key within its session (and so its project). */
function growKey(input: ObservationInput, session: string): string | null {
  if (input.grow_key === undefined || input.grow_key === null) return null;
  if (typeof input.grow_key !== 'string' || input.grow_key.length === 0 || input.grow_key.length > 1000) throw new FilterError('grow_key must be a string of 1 to 1000 characters');
  if (input.dedupe_key !== undefined && input.dedupe_key !== null) throw new FilterError('an observation has a dedupe_key or a grow_key, not both');
  return `grow:${session}:${redactKey(input.grow_key)}`;
}

/** A commit SHA as stored: hex (a prefix of at least 4 digits), lower case; anything else is refused. */
function commitSha(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !SHA_PATTERN.test(value)) throw new FilterError('commit_sha must be 4 to 64 hex digits');
  return value.toLowerCase();
}

/**
 * `sessionFor` gives the current session of the project and branch at a time, for inputs that
 * name none. Throws FilterError on input it cannot store.
 */
export function prepareObservation(
  input: ObservationInput,
  project: string,
  scopeBranch: string | undefined,
  now: number,
  sessionFor: (branch: string | null, at: number) => string,
): PreparedObservation {
  if (!input || typeof input !== 'object') throw new FilterError('an observation must be an object');
  const type = validType(String(input.type ?? ''));
  const created = input.created_at_epoch !== undefined ? checkEpoch(input.created_at_epoch, 'created_at_epoch') : now;
  const branch = storedKey(input.branch ?? scopeBranch ?? null, 'branch');
  const session = input.memory_session_id !== undefined && input.memory_session_id !== null ? storedKey(input.memory_session_id, 'memory_session_id')! : sessionFor(branch, created);
  const filesRead = cleanPaths(input.files_read, 'files_read');
  const filesModified = cleanPaths(input.files_modified, 'files_modified');
  const facts = cleanList(input.facts, 'facts');
  const concepts = cleanList(input.concepts, 'concepts');
  const title = storedTextNullable(input.title ? printable(input.title).trim() || null : null);
  const narrative = storedTextNullable(input.narrative ?? null);
  const grow = growKey(input, session);
  const obs: Omit<Observation, 'id'> = {
    memory_session_id: session,
    content_session_id: storedKey(input.content_session_id, 'content_session_id'),
    project,
    type,
    title,
    subtitle: storedTextNullable(input.subtitle ?? null),
    narrative,
    facts: jsonList(facts),
    concepts: jsonList(concepts),
    files_read: jsonList(filesRead),
    files_modified: jsonList(filesModified),
    commit_sha: commitSha(input.commit_sha),
    branch,
    status: 'active',
    created_at: new Date(created).toISOString(),
    created_at_epoch: created,
    last_accessed_epoch: null,
    discovery_tokens: countTokens([title, narrative, ...facts].filter(Boolean).join('\n')),
    compressed_sources: null,
  };
  return {
    obs,
    extra: storedTextNullable(input.search_extra ?? null),
    dedupe: grow ?? storedKey(input.dedupe_key, 'dedupe_key'),
    grows: grow !== null,
    fp: input.dedupe_key || grow ? null : fingerprint(type, title, [...filesModified, ...filesRead]),
  };
}
