// A forget's journal: a meta row written before the first delete, naming what it will delete,
// and cleared after the purge; what any process reads to know which forgets are under way, and
// what the next open reads to finish one that a crash interrupted (forget.ts resumeForget).

import type { ForgetRequest } from '../api';
import type { Scope, SourceKind } from '../model/records';
import { FilterError, sqlInt } from './filters';
import { FORGOT_RECORD_KEY, STATEMENT_KEY, TOMBSTONE_KEY } from './forgetKeys';
import type { StatementEvidence } from './forgetKeys';
import { parseJson } from './mapping';
import { checkProject } from './projectTable';
import { processState } from './processRef';
import type { ProcessRef } from './processRef';
import { RECORD_TABLE_OF } from './schema';
import type { Store } from './store';

/** Journals are meta rows `pending_forget:<uuid>`, one per forget (two processes may forget at once); `pending_forget` alone is an older build's. */
export const JOURNAL_KEY = 'pending_forget';

export interface Journal {
  request: ForgetRequest;
  scope: Scope | null;
  /** The process doing the forget. */
  owner?: ProcessRef;
  /** A forget by id: everything it deletes, journalled before the first delete. */
  closure?: Closure;
  /**
   * A forget again (settleForgets) of records an earlier forget deleted: that forget purges what it
   * deleted, this one what it deletes itself (what a writer derived from them meanwhile).
   */
  again?: boolean;
  /**
   * Not a user's forget: documents an import stored, replaced by a newer revision's (see
   * replaceDocuments). They go from every table like forgotten ones, but leave no tombstone, and
   * the project's request log and prompts stay.
   */
  replace?: boolean;
}

/** What a forget by id deletes, decided while the records are still there. */
export interface Closure {
  doomed: Record<SourceKind, number[]>;
  /** Graph entities derived from the forgotten observations and memories. */
  entities: string[];
  /** Sources of forgotten merged observations, shown again on their own. */
  restore: number[];
  /**
   * Forgotten memory id -> its successor (superseded_by) when it was forgotten: a memory it had
   * superseded is history of that successor's chain, not current again. (Absent in a journal of
   * an older build: the successors are then read from the surviving memories' `supersedes`.)
   */
  successors?: Record<string, number | null>;
  /**
   * Meta keys (importTombstoneKey) of the forgotten observations an import would store again: a
   * commit, a document. Digests, never text. (Absent in a journal of an older build.)
   */
  tombstones?: string[];
  /**
   * Meta keys (forgottenRecordKeys) of every forgotten record, as an export made before the forget
   * holds it: an import of it skips them. Digests, never text. (Absent in a journal of an older build.)
   */
  records?: string[];
  /**
   * Promoted memories forgotten by id: statementKey -> the ids of the observations (`o`) and
   * summaries (`s`) that said their statement then (see forgottenStatements). Ids, never text.
   */
  statements?: Record<string, StatementEvidence>;
}

/**
 * What a journal becomes once its forget has deleted everything: a row that names nothing, kept
 * until the meta table is purged of the journal's older copies (which name the project, or graph
 * entities: files, symbols and words). A crash before the marker goes leaves it for the next open,
 * which purges again.
 */
export const PURGE_MARKER = JSON.stringify({ purge: 'meta' });

/** The project a journalled forget removes records of; null for everything (or a forget by id without a scope). */
export function journalProject(journal: Journal): string | null {
  return journal.request.all ? null : (journal.request.project ?? journal.scope?.project ?? null);
}

/**
 * The journals of forgets whose process runs (this one included, or one on another host, which
 * cannot be told from here). One whose process ended is finished by the next open, which also
 * deletes the project's request log and rewrites every table: what was written meanwhile goes then.
 */
export async function runningJournals(store: Store): Promise<Journal[]> {
  return (await store.metaEntries(JOURNAL_KEY))
    .filter(([key]) => key === JOURNAL_KEY || key.startsWith(`${JOURNAL_KEY}:`))
    .map(([, text]) => parseJson<Journal | null>(text, null))
    .filter((j): j is Journal => j !== null && typeof j === 'object' && 'request' in j)
    .filter((j) => !j.owner || j.owner.pid === process.pid || processState(j.owner) !== 'ended');
}

export function isValid(journal: Journal): boolean {
  try {
    validate(journal.request, journal.scope);
    return true;
  } catch {
    return false;
  }
}

const isIdList = (v: unknown): boolean => Array.isArray(v) && v.every((id) => Number.isSafeInteger(id));

/** A closure as forgetIds writes it: lists of integer ids and of entity ids. */
export function isClosure(c: unknown): boolean {
  if (!c || typeof c !== 'object') return false;
  const { doomed, entities, restore, successors, tombstones, records, statements } = c as Closure;
  return (
    (statements === undefined ||
      (!!statements &&
        typeof statements === 'object' &&
        Object.entries(statements).every(([k, e]) => k.startsWith(`${STATEMENT_KEY}:`) && !!e && isIdList(e.o) && isIdList(e.s)))) &&
    (tombstones === undefined || (Array.isArray(tombstones) && tombstones.every((k) => typeof k === 'string' && k.startsWith(`${TOMBSTONE_KEY}:`)))) &&
    (records === undefined || (Array.isArray(records) && records.every((k) => typeof k === 'string' && k.startsWith(`${FORGOT_RECORD_KEY}:`)))) &&
    (successors === undefined ||
      (!!successors && typeof successors === 'object' && Object.entries(successors).every(([k, v]) => Number.isSafeInteger(Number(k)) && (v === null || Number.isSafeInteger(v))))) &&
    !!doomed &&
    typeof doomed === 'object' &&
    Object.keys(RECORD_TABLE_OF).every((kind) => isIdList(doomed[kind as SourceKind])) &&
    Array.isArray(entities) &&
    entities.every((e) => typeof e === 'string') &&
    isIdList(restore)
  );
}

export function validate(request: ForgetRequest, scope: Scope | null): void {
  if (!request || typeof request !== 'object') throw new FilterError('forget needs ids, a project, or all: true');
  if (request.all) {
    // A caller scoped to one project never reaches the others.
    if (scope) throw new FilterError(`forgetting everything is not for a caller scoped to project '${scope.project}'`);
    return;
  }
  if (request.project !== undefined) {
    checkProject(request.project);
    if (scope && scope.project !== request.project) throw new FilterError(`cannot forget project '${request.project}' from scope '${scope.project}'`);
    return;
  }
  if (request.ids && request.ids.length > 0) {
    if (!scope) throw new FilterError('forgetting records by id needs a scope (project)');
    if (!(String(request.kind ?? 'observation') in RECORD_TABLE_OF)) throw new FilterError(`unknown kind '${String(request.kind)}'`);
    request.ids.forEach((id) => sqlInt(Number(id)));
    return;
  }
  throw new FilterError('forget needs ids, a project, or all: true');
}
