// What a forget leaves in the meta table so that nothing forgotten comes back, and how the
// writers that would bring it back look it up. Digests, never text nor a project's name:
// - when a forget of a project (or of everything) last began (`forgot_at`), and a forget of the
//   whole project (`forgot_whole`): writers tell from them whether a forget ran since they read
//   (forgetMarks.ts);
// - tombstones of forgotten commits and documents, which an import skips (forgottenImports);
// - every record forgotten by id as an export holds it (its project, kind and time, with its id or
//   its content: forgottenRecordKeys), which an import of an export made before the forget skips,
//   and the ids an import gave a file's records (import aliases);
// - the statements of promoted memories forgotten by id, with the ids of what said them then,
//   which do not promote them again (forgottenStatements).
// A forget of the whole project deletes them.

import { createHash } from 'node:crypto';
import { redact, redactJson, redactKey } from '../capture/redact';
import type { ForgottenStatement } from '../compress/session';
import { DOCUMENT_TYPE } from '../model/records';
import type { SourceKind } from '../model/records';
import { parseJson } from './mapping';
import type { Row, Store } from './store';

/**
 * Meta rows `forgot_at:<digest of a project>` (`forgot_at:*`: everything) hold when a forget of
 * that project last began, written with its journal, so that a writer can tell a forget of its
 * own project from one of another project after both journal and forget are gone. A digest: the
 * meta table keeps no forgotten project's name.
 */
export const STAMP_KEY = 'forgot_at';
/** Clocks of two hosts on one store (object storage) may differ by this much; a stamp this much older than a mark still counts. */
export const CLOCK_SKEW_MS = 5_000;

export function stampKey(project: string | null): string {
  return projectKey(STAMP_KEY, project);
}

/** `<prefix>:<digest of the project>`, `<prefix>:*` for everything. */
function projectKey(prefix: string, project: string | null): string {
  return `${prefix}:${project === null ? '*' : digest(project)}`;
}

/**
 * Meta rows `forgot_whole:<digest of a project>` (`*`: everything) hold when a forget of the whole
 * project (or of everything) last began: what was captured before it is not stored after it
 * (MemoryEngine.capture). A forget by id does not move it.
 */
export const WHOLE_KEY = 'forgot_whole';

export function wholeKey(project: string | null): string {
  return projectKey(WHOLE_KEY, project);
}

/**
 * Meta rows `forgot_import:<digest of the project>:<digest of the project and a dedupe key>` are
 * tombstones of forgotten commits and documents (dedupe keys `commit:<sha>`, `doc:<hash>`): an
 * import of the repository skips them (forgottenImports), so a forgotten commit is not stored
 * again by the next import-git. Digests: the meta table keeps neither text nor a project's name.
 * A forget of the whole project (or of everything) deletes them: an import then starts afresh.
 */
export const TOMBSTONE_KEY = 'forgot_import';

export function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function tombstonePrefix(project: string | null): string {
  return project === null ? `${TOMBSTONE_KEY}:` : `${TOMBSTONE_KEY}:${digest(project)}:`;
}

export function importTombstoneKey(project: string, dedupeKey: string): string {
  return `${tombstonePrefix(project)}${digest(`${project}\u0000${dedupeKey}`)}`;
}

/**
 * Meta rows `forgot_statement:<digest of the project>:<digest of the project and a statement>`
 * hold, for a memory promoted from a recurring statement (compress/session.ts promoteRecurring)
 * that the user forgot, the ids of what said it then (StatementEvidence): that evidence does not
 * promote the statement again, what says it later does. Deleted with the whole project.
 */
export const STATEMENT_KEY = 'forgot_statement';
/** The classification_reason of a memory promoted from a recurring statement (compress/promote.ts). */
export const RECURRING_REASON = 'recurred across sessions';
/** The most observations a statement's evidence lists (promotion looks at 50 at a time). */
export const MAX_STATEMENT_EVIDENCE = 2000;

export function statementPrefix(project: string | null): string {
  return project === null ? `${STATEMENT_KEY}:` : `${STATEMENT_KEY}:${digest(project)}:`;
}

export function statementKey(project: string, normalised: string): string {
  return `${statementPrefix(project)}${digest(`${project}\u0000${normalised}`)}`;
}

/**
 * What tells a record of an export stored before under another id: its project, time and these
 * fields (portability.ts place).
 */
export const CONTENT_FIELDS: Record<SourceKind, string[]> = {
  observation: ['memory_session_id', 'type', 'title', 'narrative'],
  session_summary: ['memory_session_id'],
  memory: ['memory_type', 'title', 'text'],
};

export function contentKey(kind: SourceKind, r: Row): string {
  return createHash('sha256').update(JSON.stringify(CONTENT_FIELDS[kind].map((f) => r[f] ?? null))).digest('base64');
}

/**
 * Meta rows `forgot_record:<digest of the project>:<identity digest>` (value: when it was forgotten,
 * ms) stand for a record forgotten by id: an import of an export made before the forget skips a
 * record with one of these identities (portability.ts). Digests, never text. A forget of the whole
 * project (or of everything) deletes them: the import is then a restore.
 */
export const FORGOT_RECORD_KEY = 'forgot_record';
/**
 * Meta rows `import_alias:<digest of the project>:<identity digest of the record in the file>`
 * (value: its id in the store) stand for a record an import stored under another id than the file's
 * (renumbered): an import of the same file again finds it by them, whatever was edited since.
 */
export const IMPORT_ALIAS_KEY = 'import_alias';

export function projectPrefix(prefix: string, project: string | null): string {
  return project === null ? `${prefix}:` : `${prefix}:${digest(project)}:`;
}

export function forgottenRecordPrefix(project: string): string {
  return projectPrefix(FORGOT_RECORD_KEY, project);
}

export function importAliasPrefix(project: string): string {
  return projectPrefix(IMPORT_ALIAS_KEY, project);
}

/** The digest of a record's id in an export (with its project, kind and time). */
function idIdentity(project: string, kind: SourceKind, epoch: number, id: number): string {
  return digest(`${project}\u0000${kind}\u0000${epoch}\u0000id\u0000${id}`);
}

function contentIdentity(project: string, kind: SourceKind, epoch: number, key: string): string {
  return digest(`${project}\u0000${kind}\u0000${epoch}\u0000content\u0000${key}`);
}

/** The meta keys of a record of `kind` with this id, time and content keys (contentKey), had it been forgotten. */
export function recordForgetKeys(project: string, kind: SourceKind, epoch: number, id: number, contentKeys: string[]): string[] {
  const prefix = forgottenRecordPrefix(project);
  return [...new Set([idIdentity(project, kind, epoch, id), ...contentKeys.map((k) => contentIdentity(project, kind, epoch, k))])].map((k) => `${prefix}${k}`);
}

/** The content fields of a stored row as an import reads them (portability.ts redactRecord): redacted. */
function redactedContent(kind: SourceKind, r: Row): Row {
  const out: Row = { ...r };
  for (const f of CONTENT_FIELDS[kind]) {
    const v = r[f];
    if (typeof v !== 'string') continue;
    out[f] = f === 'memory_session_id' ? redactKey(v) : /^\s*[[{]/.test(v) ? redactJson(v) : redact(v);
  }
  return out;
}

/**
 * The meta keys a forgotten record is known by to an import of an export made before the forget
 * (its project, kind and time, with its id or its content: an export holds the record as stored);
 * those of a record read from an export (recordForgetKeys) are looked up among them. A stored
 * row's content is digested as stored and as redacted (as an import reads it: a row an older
 * build stored raw).
 */
export function forgottenRecordKeys(project: string, kind: SourceKind, r: Row): string[] {
  return recordForgetKeys(project, kind, Number(r.created_at_epoch), Number(r.id), [contentKey(kind, r), contentKey(kind, redactedContent(kind, r))]);
}

/** The meta key under which an import notes the store's id of a record of the file it renumbered. */
export function importAliasKey(project: string, kind: SourceKind, epoch: number, fileId: number): string {
  return `${importAliasPrefix(project)}${idIdentity(project, kind, epoch, fileId)}`;
}

/** A project's forgotten records (key -> when forgotten, ms) and import aliases (key -> id in the store). */
export async function importMemo(store: Store, project: string): Promise<{ forgotten: Map<string, number>; aliases: Map<string, number> }> {
  const [forgotten, aliases] = await Promise.all([store.metaEntries(forgottenRecordPrefix(project)), store.metaEntries(importAliasPrefix(project))]);
  return { forgotten: new Map(forgotten.map(([k, v]) => [k, Number(v) || 0])), aliases: new Map(aliases.map(([k, v]) => [k, Number(v)])) };
}

/** Of the statements (normalised) a session would promote, those whose memory was forgotten, with the evidence it was forgotten with. */
export async function forgottenStatements(store: Store, project: string, statements: string[]): Promise<Map<string, ForgottenStatement>> {
  const out = new Map<string, ForgottenStatement>();
  if (statements.length === 0) return out;
  const entries = new Map(await store.metaEntries(statementPrefix(project)));
  if (entries.size === 0) return out;
  for (const statement of statements) {
    const text = entries.get(statementKey(project, statement));
    if (text === undefined) continue;
    const e = parseJson<Partial<StatementEvidence> | null>(text, null);
    // A damaged row still says the statement was forgotten: nothing stored before counts then.
    out.set(statement, {
      observations: new Set((Array.isArray(e?.o) ? e.o : []).map(Number)),
      summaries: new Set((Array.isArray(e?.s) ? e.s : []).map(Number)),
    });
  }
  return out;
}

/** Whether a forgotten observation would come back with an import (a commit, a document) and gets a tombstone. */
export function importedKey(type: unknown, dedupeKey: unknown): string | null {
  if (typeof dedupeKey !== 'string') return null;
  if (type === 'commit' && dedupeKey.startsWith('commit:')) return dedupeKey;
  if (type === DOCUMENT_TYPE && dedupeKey.startsWith('doc:')) return dedupeKey;
  return null;
}

/** Of the dedupe keys an import is about to store, those of commits and documents forgotten in the project. */
export async function forgottenImports(store: Store, project: string, dedupeKeys: string[]): Promise<Set<string>> {
  const out = new Set<string>();
  if (dedupeKeys.length === 0) return out;
  const stones = new Set((await store.metaEntries(tombstonePrefix(project))).map(([key]) => key));
  if (stones.size === 0) return out;
  for (const key of dedupeKeys) if (stones.has(importTombstoneKey(project, key))) out.add(key);
  return out;
}

/** What a forgotten promoted memory's statement stood on: observation and summary ids. */
export interface StatementEvidence {
  o: number[];
  s: number[];
}
