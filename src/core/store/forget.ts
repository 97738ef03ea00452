// Forget: delete records and everything that holds their text, so they leave results at once
// and, after the purge, every file on disk. Safe next to a writer in another process:
//
// - Rows are removed with transactional deletes (never by overwriting a table), so a concurrent
//   append, update or delete commits on top of ours or is retried; nothing of it is lost.
// - A LanceDB delete only marks rows; the data file keeps them until its fragment is rewritten.
//   So the surviving rows of every fragment that held a deleted row are updated in place (a
//   no-op update moves them to a new fragment, which leaves the old one empty and dropped), the
//   FTS index is rebuilt, and every old version is pruned. The project's full-text index
//   segments (lexicalSegments.ts) are deleted the same way, and their postings files with them.
// - Writers that read records and write what derives from them later take a ForgetMark before
//   they read and settle after they wrote (forgetMarks.ts; settleForgets here forgets again the
//   records gone meanwhile). Rows that must already be stored are rewritten, never upserted
//   (Store.rewrite): a rewrite never brings a row back.
// - The request is journalled in the meta table before the first delete, with what it will
//   delete (the records derived from the forgotten ones, the graph entities they support)
//   before the first row goes, and cleared after the purge: a forget interrupted by a crash is
//   finished by the next open (resumeForget), which rewrites every table whatever it still
//   finds, since the crash may have come after the deletes and before the purge. A journal whose
//   process is still running on this host is its own: another process's open leaves it alone.
// - Nothing forgotten comes back: a forget by id keeps, in the meta table and journalled with
//   its closure, digests (never text) of what an import or a promotion would store again
//   (forgetKeys.ts). A forget of the whole project deletes them. A document an import replaces
//   with its newer revision is removed the same way (replaceDocuments) without them: that is not a forget.

import { append } from '../lists';
import { randomUUID } from 'node:crypto';
import type { Table } from '@lancedb/lancedb';
import type { ForgetReport, ForgetRequest } from '../api';
import { DOCUMENT_TYPE, DOC_QUOTE_CHARS } from '../model/records';
import type { CompressedSource, Memory, Observation, Scope, SourceKind, TopicTrace } from '../model/records';
import { errorMessage } from '../errorText';
import { sqlIntList, sqlString } from './filters';
import { extractFacts, storedFact } from '../compress/facts';
import { normaliseStatement } from '../compress/session';
import { holdAgain, relinkTo } from '../compress/supersede';
import { deriveGraph } from './graph';
import { parseJson, rowToMemory, rowToObservation } from './mapping';
import type { ProjectTable } from './projectTable';
import { processState, thisProcess } from './processRef';
import { RowMarkers } from './abandonedFiles';
import type { ProjectRepositories, Repositories } from './repos/repositories';
import { RECORD_TABLE_OF, TABLES } from './schema';
import type { TableName } from './schema';
import { retryConflicts } from './retry';
import { summariesQuotingPrompts, summariesShownCommits } from './summaryQuotes';
import { ensureFtsIndex, ensureScalarIndexes } from './indexes';
import { FORGET_LOCK, FORGET_LOCK_WAIT_MS, prefixWhere } from './store';
import type { Row, Store } from './store';
import {
  FORGOT_RECORD_KEY,
  IMPORT_ALIAS_KEY,
  MAX_STATEMENT_EVIDENCE,
  RECURRING_REASON,
  forgottenRecordKeys,
  forgottenRecordPrefix,
  importAliasPrefix,
  importTombstoneKey,
  importedKey,
  projectPrefix,
  stampKey,
  statementKey,
  statementPrefix,
  tombstonePrefix,
  wholeKey,
} from './forgetKeys';
import type { StatementEvidence } from './forgetKeys';
import { JOURNAL_KEY, PURGE_MARKER, isClosure, isValid, journalProject, validate } from './forgetJournal';
import type { Closure, Journal } from './forgetJournal';
import { forgotSince, goneRecords, recordTable } from './forgetMarks';
import type { ForgetMark } from './forgetMarks';

const DATA_TABLES: TableName[] = Object.values(TABLES).filter((t) => t !== TABLES.meta);

/** Deletes rows and notes the tables it touched, for the purge. */
class Purger {
  /** 'all': every fragment of the table is rewritten (a resumed forget cannot know which held the rows). */
  private readonly tables = new Map<TableName, 'deleted' | 'all'>();
  /** The rows deleted here, by table: data files of writes that lost their commit may hold them too (abandonedFiles.ts). */
  private readonly markers = new Map<TableName, RowMarkers>();

  /** `deletedOnly`: a table is purged only when rows were deleted from it here (a forget again). */
  constructor(
    private readonly store: Store,
    private readonly deletedOnly = false,
  ) {}

  get touched(): TableName[] {
    return [...this.tables.keys()];
  }

  touchAll(tables: TableName[] = DATA_TABLES): void {
    for (const name of tables) this.tables.set(name, 'all');
  }

  /**
   * Deletes the rows and notes the table for the purge even when none are left to delete: rows
   * deleted earlier (a request log aged out, a prompt expired, an older copy of an edit) keep their
   * text in their fragments until those are rewritten, whoever deleted them.
   */
  async delete(name: TableName, where: string): Promise<number> {
    const table = this.store.table(name);
    const n = await table.countRows(where);
    if (n > 0 || !this.deletedOnly) this.willRewrite(name);
    if (n === 0) return n;
    const columns = RowMarkers.columns(name);
    if (columns) {
      const markers = this.markers.get(name) ?? new RowMarkers(name);
      this.markers.set(name, markers);
      for await (const batch of this.store.batches(name, where, columns)) for (const row of batch.toArray()) markers.add(row as Row);
    }
    await this.store.gate.mutate(name, () => retryConflicts(() => table.delete(where)));
    return n;
  }

  /** Notes a table whose rows are updated in place: their older copies stay in their fragments until purged. */
  willRewrite(name: TableName): void {
    if (!this.tables.has(name)) this.tables.set(name, 'deleted');
  }

  /**
   * Rewrites every fragment of the touched tables that holds deleted rows, told by their deletion
   * files: the forgotten rows, and the older copies updates left (an edit, a read's access count),
   * wherever a compaction moved them meanwhile. Then rebuilds the indexes and prunes every old version.
   */
  async purge(): Promise<void> {
    for (const [name, scope] of this.tables) {
      const fragments = scope === 'all' ? 'all' : await this.store.fragmentsWithDeletions(name);
      if (fragments !== 'all' && fragments.size === 0) continue;
      await this.store.gate.mutate(name, () => rewriteFragments(this.store.table(name), fragments, name === TABLES.meta ? 'key' : 'project'));
    }
    // A full-text index the lexical=fts experiment built holds the words too.
    const cells = this.store.table(TABLES.cells);
    if (this.tables.has(TABLES.cells) && (await cells.listIndices()).some((i) => i.columns.includes('search_text'))) await ensureFtsIndex(cells, true);
    // Index files hold the values they index (a forgotten project's name in a bitmap, say).
    for (const name of this.tables.keys()) await ensureScalarIndexes(this.store.table(name), name, undefined, true);
    for (const name of this.tables.keys()) {
      // A version keeps its transaction, and a delete's transaction keeps its predicate, which
      // quotes what was forgotten: an empty delete makes a newer version, so that one is pruned.
      await this.store.gate.mutate(name, () => retryConflicts(() => this.store.table(name).delete('false')));
      await this.store.compact(name, -1000, 10);
    }
    for (const markers of this.markers.values()) await this.store.removeAbandoned(markers);
  }
}

export async function rewriteFragments(table: Table, fragments: Set<bigint> | 'all', column = 'project'): Promise<void> {
  await retryConflicts(async () => {
    const rows = await table.query().withRowId().select([]).toArray();
    const ids = rows.map((r) => BigInt(r._rowid as bigint | number)).filter((id) => fragments === 'all' || fragments.has(id >> 32n));
    for (let i = 0; i < ids.length; i += 2000) {
      const chunk = ids.slice(i, i + 2000);
      // A no-op update (of the project column every data table has): the rows are written again
      // to a new fragment, and the old one, left with deleted rows only, is dropped.
      await table.update({ where: `_rowid IN (${chunk.join(', ')})`, valuesSql: { [column]: column } });
    }
  }, 10);
}

/** The keys (forgottenRecordKeys) of the doomed records still stored, and of the identities they had in files imported before (import aliases). */
async function forgottenRecordsOf(store: Store, repos: ProjectRepositories, doomed: Record<SourceKind, Set<number>>, observations: Row[]): Promise<string[]> {
  const keys = new Set<string>();
  const ids = new Set<number>();
  for (const kind of Object.keys(doomed) as SourceKind[]) {
    if (doomed[kind].size === 0) continue;
    const list = [...doomed[kind]];
    const rows: Row[] = [];
    if (kind === 'observation') append(rows, observations);
    else for (let i = 0; i < list.length; i += 1000) append(rows, await recordTable(repos, kind).rows(`id IN ${sqlIntList(list.slice(i, i + 1000))}`));
    for (const r of rows) {
      ids.add(Number(r.id));
      for (const k of forgottenRecordKeys(repos.project, kind, r)) keys.add(k);
    }
  }
  if (ids.size > 0) {
    const prefix = importAliasPrefix(repos.project);
    for (const [key, value] of await store.metaEntries(prefix)) {
      if (ids.has(Number(value))) keys.add(`${forgottenRecordPrefix(repos.project)}${key.slice(prefix.length)}`);
    }
  }
  return [...keys];
}

/**
 * Entities and edges named in `entityIds` derived again from the project's observations (after
 * those that derived them went: a forget, or an import that left forgotten ones out): those the
 * remaining observations support come back, with their weights.
 */
export async function deriveGraphAgain(repos: ProjectRepositories, entityIds: string[]): Promise<void> {
  const wanted = new Set(entityIds.filter((id) => !id.startsWith('memory:')));
  if (wanted.size === 0) return;
  const remaining = (await repos.observations.table.rows(null)).map(rowToObservation);
  const again = deriveGraph(remaining, Date.now());
  await repos.graph.entities.upsert(['project', 'id'], again.entities.filter((e) => wanted.has(String(e.id))));
  await repos.graph.relationships.upsert(
    ['project', 'source', 'target', 'type'],
    again.relationships.filter((r) => wanted.has(String(r.source)) || wanted.has(String(r.target))),
  );
}

/** The promoted memories among `ids` (forgotten by id): their statements' evidence, by statementKey. */
async function statementsOf(repos: ProjectRepositories, ids: number[]): Promise<Record<string, StatementEvidence>> {
  const out: Record<string, StatementEvidence> = {};
  if (ids.length === 0) return out;
  const promoted = (await repos.memories.table.rows(`id IN ${sqlIntList(ids)}`)).filter((r) => r.classification_reason === RECURRING_REASON);
  if (promoted.length === 0) return out;
  const summaries = (await repos.summaries.statements()).map((s) => ({ id: s.id, text: normaliseStatement(s.text) }));
  for (const r of promoted) {
    const text = String(r.text ?? '');
    const statement = normaliseStatement(text);
    if (!statement) continue;
    const o = new Set(parseJson<number[]>(r.source_ids, []).map(Number));
    // Every session's (promotion leaves out only the session being ended, and it may be ended again).
    for (const m of await repos.observations.mentioning(text, '', MAX_STATEMENT_EVIDENCE)) o.add(m.id);
    const key = statementKey(repos.project, statement);
    const e = out[key] ?? { o: [], s: [] };
    e.o = [...new Set([...e.o, ...o])];
    e.s = [...new Set([...e.s, ...summaries.filter((x) => x.text.includes(statement)).map((x) => x.id)])];
    out[key] = e;
  }
  return out;
}

/** What a writer wrote from records it had read (see settleForgets). */
export interface Written {
  /** Observations whose graph it wrote, or that it rewrote (a near-duplicate's bump, a grown edit). */
  observations?: Observation[];
  /** Memories it wrote or rewrote. */
  memories?: number[];
}

/** The memories a memory names: those it supersedes or is superseded by, its topic trace's, its conflicts'. */
function linkedMemories(m: Memory): number[] {
  return [...(m.supersedes ?? []), ...(m.superseded_by === null ? [] : [m.superseded_by]), ...(m.topic_trace ?? []).map((t) => t.id), ...(m.conflicts ?? []).map((c) => c.id)];
}

/**
 * The other half of a forget mark, for writers whose rows stay tied to the records they read: the
 * entity graph of observations, memories that supersede, quote or were promoted from others, a
 * near-duplicate folded into a stored observation. Called after the write: when a forget ran
 * since `mark` (in any process), the records the write stands on that are gone now (the
 * observations it took, the memories and observations the written memories name) are forgotten
 * again, which takes what derives from them, the write's own rows included, from every file.
 * Returns whether anything was forgotten again.
 */
export async function settleForgets(repos: Repositories, project: string, mark: ForgetMark, written: Written): Promise<boolean> {
  if (!(await forgotSince(repos.store, mark, project))) return false;
  const scoped = repos.forProject(project);
  const observations = new Set((written.observations ?? []).map((o) => o.id));
  const memories = new Set(written.memories ?? []);
  if (memories.size > 0) {
    for (const r of await scoped.memories.table.rows(`id IN ${sqlIntList([...memories])}`)) {
      for (const id of linkedMemories(rowToMemory(r))) memories.add(id);
      for (const id of parseJson<number[]>(r.source_ids, [])) observations.add(Number(id));
    }
  }
  const gone = await goneRecords(repos.store, scoped, { observation: [...observations], memory: [...memories] });
  if (gone.observation.size === 0 && gone.memory.size === 0) return false;
  // The entities derived from an observation are named after its files, concepts and commit: from
  // the observation as the writer had it, since the stored one is gone.
  const entities = deriveGraph((written.observations ?? []).filter((o) => gone.observation.has(o.id)), 0).entities.map((e) => String(e.id));
  const closure = await closureOf(repos.store, scoped, { observation: [...gone.observation], memory: [...gone.memory] }, entities);
  if (!closure) return false;
  const kind: SourceKind = gone.observation.size > 0 ? 'observation' : 'memory';
  await begin(repos, { request: { kind, ids: [...gone[kind]] }, scope: { project }, owner: thisProcess(), closure, again: true });
  return true;
}

/**
 * Session summaries written from what a forget (in any process) deleted while they were being
 * written, their session's prompts read before it: they go from every file as a forget's derived
 * records do, their session's observations stay (the sweep of sessions left open summarises it
 * again). Returns whether any was stored.
 */
export async function forgetSummariesAgain(repos: Repositories, project: string, ids: number[]): Promise<boolean> {
  const scoped = repos.forProject(project);
  const stored = ids.length === 0 ? [] : (await scoped.summaries.table.rows(`id IN ${sqlIntList(ids)}`, { select: ['id'] })).map((r) => Number(r.id));
  if (stored.length === 0) return false;
  const doomed = { observation: new Set<number>(), session_summary: new Set(stored), memory: new Set<number>() };
  const closure: Closure = {
    doomed: { observation: [], session_summary: stored, memory: [] },
    entities: [],
    restore: [],
    successors: {},
    tombstones: [],
    records: await forgottenRecordsOf(repos.store, scoped, doomed, []),
  };
  await begin(repos, { request: { kind: 'session_summary', ids: stored }, scope: { project }, owner: thisProcess(), closure, again: true });
  return true;
}

/** Deletes rows and purges them from every file and old version, as a forget does. */
export async function purgeRows(store: Store, name: TableName, where: string): Promise<number> {
  const purger = new Purger(store);
  const n = await purger.delete(name, where);
  if (n > 0) await purger.purge();
  return n;
}

/** What a forget did: its report, and for a forget by id every record it deleted (derived ones too). */
export interface Forgotten {
  report: ForgetReport;
  /** By kind; null for a forget of a whole project or of everything. */
  records: Record<SourceKind, number[]> | null;
  /** The project it forgot in (null: every project). */
  project: string | null;
  /**
   * A forget by id: the sessions (memory_session_id) of the observations it deleted. A session of
   * these still open in this process is ended by the engine: capture diffs a file against what the
   * session recorded before, which may be what was forgotten.
   */
  sessions: string[];
}

export async function forgetRecords(repos: Repositories, request: ForgetRequest, scope: Scope | null): Promise<Forgotten> {
  validate(request, scope);
  return begin(repos, { request, scope, owner: thisProcess() });
}

/**
 * Removes documents an import stored that a newer revision replaced (gone or changed): from every
 * table and file, journalled and purged like a forget, but it is not a user's forget: no tombstone
 * is left (the document may come back with a later revision), the project's request log and
 * prompts stay, and the commits that quote it keep their quotes. Ids of anything but a document
 * of the project are left alone.
 */
export async function replaceDocuments(repos: Repositories, project: string, ids: number[]): Promise<Forgotten> {
  const scope: Scope = { project };
  const request: ForgetRequest = { kind: 'observation', ids };
  validate(request, scope);
  const scoped = repos.forProject(project);
  const rows = ids.length === 0 ? [] : await scoped.observations.table.rows(`type = ${sqlString(DOCUMENT_TYPE)} AND id IN ${sqlIntList(ids.map(Number))}`);
  const empty: Record<SourceKind, number[]> = { observation: [], session_summary: [], memory: [] };
  if (rows.length === 0) return { report: { observations: 0, session_summaries: 0, memories: 0, cells: 0, pruned: false }, records: empty, project, sessions: [] };
  const documents = rows.map(rowToObservation);
  const closure: Closure = {
    doomed: { ...empty, observation: documents.map((d) => d.id) },
    entities: [...new Set(deriveGraph(documents, Date.now()).entities.map((e) => String(e.id)))],
    restore: [],
    successors: {},
    tombstones: [],
  };
  return begin(repos, { request: { kind: 'observation', ids: closure.doomed.observation }, scope, owner: thisProcess(), closure, replace: true });
}

/**
 * The journals this process is running now (every engine of it): the others that name it as
 * their owner failed part-way (a write error, a full disk) and are finished by resumeForget, which
 * this process runs again before its next forget and at its maintenance ticks.
 */
const running = new Set<string>();

const FORGET_WAITING = `forget: waiting for a maintenance job under way on this store (a compaction or an index build, in another process or window) to finish, up to ${FORGET_LOCK_WAIT_MS / 60_000} minutes`;

/** Runs a journal's work under the forget lock: no maintenance job of any process runs beside it (FORGET_LOCK). */
async function runJournal<T>(store: Store, key: string, work: () => Promise<T>): Promise<T> {
  running.add(key);
  try {
    return await store.exclusive(FORGET_LOCK, work, { waitMs: FORGET_LOCK_WAIT_MS, waiting: FORGET_WAITING });
  } finally {
    running.delete(key);
  }
}

/**
 * Forgets of this process whose journal could not be written (a full disk, any write error), by
 * store: nothing of them was done, and nothing on disk tells of them. resumeForget begins them
 * again (before the next forget, at the maintenance ticks, optimize), until the journal is written.
 * A process that ends first leaves them undone: the error said so (see begin).
 */
const unjournalled = new WeakMap<Store, Journal[]>();

/** Journals a forget, then runs it. */
async function begin(repos: Repositories, journal: Journal): Promise<Forgotten> {
  const key = `${JOURNAL_KEY}:${randomUUID()}`;
  const now = String(Date.now());
  const whole = journal.request.all || journal.request.project !== undefined;
  let journalled = false;
  try {
    return await runJournal(repos.store, key, async () => {
      await repos.store.setMeta({ [key]: JSON.stringify(journal), [stampKey(journalProject(journal))]: now, ...(whole ? { [wholeKey(journalProject(journal))]: now } : {}) });
      journalled = true;
      return finish(repos, key, journal, false);
    });
  } catch (e) {
    if (journalled) throw e;
    // Nothing was deleted (neither the forget lock nor the journal could be written): kept here,
    // the forget is begun again once writes succeed.
    const pending = unjournalled.get(repos.store) ?? [];
    pending.push(journal);
    unjournalled.set(repos.store, pending);
    throw new Error(
      `the forget was not done yet; this process tries it again at its upkeep once the store takes writes again (if it ends before, run the forget again): ${errorMessage(e)}`,
      { cause: e },
    );
  }
}

async function finish(repos: Repositories, key: string, journal: Journal, resumed: boolean): Promise<Forgotten> {
  const sessions = new Set<string>();
  const report = await forgetNow(repos, key, journal, resumed, sessions);
  await repos.store.setMeta({ [key]: PURGE_MARKER });
  await purgeMeta(repos, key);
  const { request, scope } = journal;
  const byId = !request.all && request.project === undefined;
  return {
    report,
    records: byId ? (journal.closure?.doomed ?? { observation: [], session_summary: [], memory: [] }) : null,
    project: request.all ? null : (request.project ?? scope?.project ?? null),
    sessions: [...sessions],
  };
}

/** Rewrites the meta table's files and prunes its versions, then lets the journal's marker go. */
async function purgeMeta(repos: Repositories, key: string): Promise<void> {
  const purger = new Purger(repos.store);
  purger.touchAll([TABLES.meta]);
  await purger.purge();
  await repos.store.deleteMeta(key);
}

/**
 * Finishes the forgets a crash interrupted (called at open), and those of this process that
 * failed part-way (called again before each forget and at maintenance ticks), leaving those that
 * another process still running on this host, or this one, is running now.
 */
export async function resumeForget(repos: Repositories): Promise<Forgotten[]> {
  const done: Forgotten[] = [];
  // Forgets whose journal a write error kept from the disk: begun again (one that fails to
  // journal again is kept again by begin; one that fails later is a journal, resumed below).
  const pending = unjournalled.get(repos.store) ?? [];
  unjournalled.delete(repos.store);
  for (let i = 0; i < pending.length; i++) {
    try {
      done.push(await begin(repos, pending[i]));
    } catch (e) {
      const left = unjournalled.get(repos.store) ?? [];
      unjournalled.set(repos.store, [...left, ...pending.slice(i + 1)]);
      throw e;
    }
  }
  for (const [key, text] of await repos.store.metaEntries(JOURNAL_KEY)) {
    if (key !== JOURNAL_KEY && !key.startsWith(`${JOURNAL_KEY}:`)) continue;
    if (running.has(key)) continue;
    if (text === PURGE_MARKER) {
      await runJournal(repos.store, key, () => purgeMeta(repos, key));
      continue;
    }
    const journal = parseJson<Journal | null>(text, null);
    // Only this code writes a journal, after validating it: one that does not parse or validate
    // was damaged, and is dropped.
    if (!journal || typeof journal !== 'object' || !isValid(journal)) {
      await repos.store.deleteMeta(key);
      continue;
    }
    const owner = journal.owner;
    if (owner && owner.pid !== process.pid && processState(owner) === 'running') continue;
    // A damaged closure is decided again from the records still there; the resumed forget
    // rewrites every table in any case.
    if (journal.closure !== undefined && !isClosure(journal.closure)) delete journal.closure;
    // Taken as running before anything is awaited: another engine of this process resuming at
    // the same time leaves it alone.
    done.push(
      await runJournal(repos.store, key, async () => {
        await repos.store.setMeta({ [stampKey(journalProject(journal))]: String(Date.now()) });
        return finish(repos, key, journal, true);
      }),
    );
  }
  return done;
}

async function forgetNow(repos: Repositories, key: string, journal: Journal, resumed: boolean, sessions: Set<string>): Promise<ForgetReport> {
  const { request, scope } = journal;
  const store = repos.store;
  const purger = new Purger(store, journal.again === true);
  const report: ForgetReport = { observations: 0, session_summaries: 0, memories: 0, cells: 0, pruned: false };
  if (request.all || request.project !== undefined) {
    const where = request.all ? 'true' : `project = ${sqlString(request.project as string)}`;
    report.observations = await purger.delete(TABLES.observations, where);
    report.session_summaries = await purger.delete(TABLES.sessionSummaries, where);
    report.memories = await purger.delete(TABLES.memories, where);
    report.cells = await purger.delete(TABLES.cells, where);
    for (const t of DATA_TABLES) await purger.delete(t, where);
    // The tombstones of its forgotten commits, documents, records and promoted statements go
    // too, with its import aliases: an import is a fresh start (of an export, a restore). (The
    // meta table is purged after every forget, finish/purgeMeta.)
    const project = request.all ? null : (request.project as string);
    for (const prefix of [tombstonePrefix(project), statementPrefix(project), projectPrefix(FORGOT_RECORD_KEY, project), projectPrefix(IMPORT_ALIAS_KEY, project)]) {
      if ((await store.metaEntries(prefix)).length > 0) await store.delete(TABLES.meta, prefixWhere('key', prefix));
    }
  } else {
    await forgetIds(repos, repos.forProject((scope as Scope).project), purger, key, journal, report, sessions);
  }
  // A resumed forget may find its rows gone (deleted before the crash) and their text still in
  // the files: it rewrites everything.
  if (resumed) purger.touchAll();
  if (purger.touched.length > 0) {
    await purger.purge();
    // The postings files of the segments deleted above hold the forgotten words too.
    await repos.lexicalSegments.sweepFiles();
    report.pruned = true;
  }
  repos.graphCache.clear();
  return report;
}

/**
 * Decides what a forget by id deletes while its records are still there. `again`: the records are
 * gone already (settleForgets), and these graph entities were derived from them; what still cites
 * or names them is decided all the same.
 */
async function closureOf(store: Store, repos: ProjectRepositories, seed: Partial<Record<SourceKind, number[]>>, again: string[] | null = null): Promise<Closure | null> {
  const doomed: Record<SourceKind, Set<number>> = { observation: new Set(), session_summary: new Set(), memory: new Set() };
  for (const kind of Object.keys(seed) as SourceKind[]) for (const id of seed[kind] ?? []) doomed[kind].add(id);
  // A summary is its session's observations compressed: forgotten alone, it would be written
  // again from them (when the session ends again, or by the sweep of sessions never ended), so
  // forgetting a summary forgets the session it summarises.
  if (doomed.session_summary.size > 0) for (const id of await repos.summaries.sources([...doomed.session_summary])) doomed.observation.add(id);
  if (doomed.observation.size > 0) {
    // What was derived from a forgotten observation carries its text: merged observations,
    // session summaries and memories that cite it go too.
    for (const r of await repos.observations.table.rows(`type = 'merged'`, { select: ['id', 'compressed_sources'] })) {
      const sources = parseJson<CompressedSource[]>(r.compressed_sources, []);
      if (sources.some((s) => doomed.observation.has(Number(s.source_observation_id)))) doomed.observation.add(Number(r.id));
    }
    for (const id of await repos.summaries.citing(doomed.observation)) doomed.session_summary.add(id);
    for (const id of await repos.memories.citing(doomed.observation)) doomed.memory.add(id);
  }
  if (!again && !(await anyRecord(repos, doomed))) return null;
  const rows = doomed.observation.size ? await repos.observations.table.rows(`id IN ${sqlIntList([...doomed.observation])}`) : [];
  // Summaries that quote what goes besides their sources: the project's prompts (forgetIds
  // deletes them), the forgotten commits of other sessions a summariser was shown.
  for (const id of await summariesQuotingPrompts(repos)) doomed.session_summary.add(id);
  for (const id of await summariesShownCommits(repos, rows)) doomed.session_summary.add(id);
  const observations = rows.map(rowToObservation);
  const derived = deriveGraph(observations, Date.now());
  const restore = observations
    .filter((o) => o.type === 'merged')
    .flatMap((o) => parseJson<CompressedSource[]>(o.compressed_sources, []))
    .map((s) => Number(s.source_observation_id))
    .filter((id) => !doomed.observation.has(id));
  const successors: Record<string, number | null> = {};
  if (doomed.memory.size > 0) for (const m of await repos.memories.get([...doomed.memory], { includeSuppressed: true })) successors[String(m.id)] = m.superseded_by;
  // A memory the user forgot, promoted from a statement: the evidence it had does not promote it again.
  const statements = again ? {} : await statementsOf(repos, seed.memory ?? []);
  const tombstones = rows.map((r) => importedKey(r.type, r.dedupe_key)).filter((k): k is string => k !== null).map((k) => importTombstoneKey(repos.project, k));
  const records = await forgottenRecordsOf(store, repos, doomed, rows);
  return {
    doomed: { observation: [...doomed.observation], session_summary: [...doomed.session_summary], memory: [...doomed.memory] },
    entities: [...new Set([...derived.entities.map((e) => String(e.id)), ...[...doomed.memory].map((id) => `memory:${id}`), ...(again ?? [])])],
    restore,
    successors,
    tombstones,
    records,
    statements,
  };
}

async function forgetIds(all: Repositories, repos: ProjectRepositories, purger: Purger, key: string, journal: Journal, report: ForgetReport, sessions: Set<string>): Promise<void> {
  if (!journal.closure) {
    const kind = (journal.request.kind ?? 'observation') as SourceKind;
    const closure = await closureOf(all.store, repos, { [kind]: (journal.request.ids ?? []).map(Number) });
    // None of the ids names a record of the project: nothing to delete, nothing else touched.
    if (!closure) return;
    journal.closure = closure;
    await all.store.setMeta({ [key]: JSON.stringify(journal) });
  }
  const { doomed, tombstones, records, statements } = journal.closure;
  const replacing = journal.replace === true;
  // Before the deletes (a resumed forget writes them again): the next import skips what was
  // forgotten, and a forgotten promoted memory is not promoted again from what it stood on. Only
  // while some of its records are still stored: a forget of the whole project that ran before this
  // one was resumed took them, and the project starts afresh (no key of it is written back).
  const stillStored = async (table: ProjectTable, ids: number[]): Promise<boolean> => ids.length > 0 && (await table.count(`id IN ${sqlIntList(ids.slice(0, 1000))}`)) > 0;
  if (!replacing && tombstones && tombstones.length > 0 && (await stillStored(repos.observations.table, doomed.observation))) {
    const at = String(Date.now());
    await all.store.setMeta(Object.fromEntries(tombstones.map((k) => [k, at])));
  }
  if (!replacing && records && records.length > 0) {
    let stored = false;
    for (const kind of Object.keys(doomed) as SourceKind[]) if (!stored) stored = await stillStored(recordTable(repos, kind), doomed[kind]);
    if (stored) {
      const at = String(Date.now());
      for (let i = 0; i < records.length; i += 1000) await all.store.setMeta(Object.fromEntries(records.slice(i, i + 1000).map((k) => [k, at])));
    }
  }
  if (!replacing && statements && Object.keys(statements).length > 0 && (await stillStored(repos.memories.table, doomed.memory))) {
    const stored = new Map(await all.store.metaEntries(statementPrefix(repos.project)));
    const rows: Record<string, string> = {};
    for (const [key, e] of Object.entries(statements)) {
      // Forgotten before (promoted again since, from newer evidence): both sets stay.
      const before = parseJson<Partial<StatementEvidence> | null>(stored.get(key) ?? 'null', null);
      const o = [...new Set([...(Array.isArray(before?.o) ? before.o : []), ...e.o])];
      const s = [...new Set([...(Array.isArray(before?.s) ? before.s : []), ...e.s])];
      rows[key] = JSON.stringify({ o, s });
    }
    await all.store.setMeta(rows);
  }
  // The sessions they were captured in (those still stored: a resumed forget may find them gone).
  for (let i = 0; i < doomed.observation.length; i += 1000) {
    const rows = await repos.observations.table.rows(`id IN ${sqlIntList(doomed.observation.slice(i, i + 1000))}`, { select: ['memory_session_id'] });
    for (const r of rows) if (typeof r.memory_session_id === 'string' && r.memory_session_id) sessions.add(r.memory_session_id);
  }
  // Before the documents go (a resumed forget finds those still there): commits quote them. (A
  // document replaced by its newer revision was what the project said then: the commits keep it.)
  if (!replacing) await forgetDocumentQuotes(repos, purger, doomed.observation);
  // Memories are deleted and their supersede chains relinked under the memories lock (see
  // MemoryRepository.exclusive), reading who supersedes a doomed memory again there: a remember
  // in any process since the closure was decided may have retired it, and one between the
  // deletes and the relinking would find its chain broken and supersede nothing.
  if (doomed.memory.length === 0) await deleteAndRelink(repos, purger, journal, report);
  else {
    await repos.memories.exclusive(async () => {
      const now: Memory[] = [];
      for (let i = 0; i < doomed.memory.length; i += 1000) append(now, await repos.memories.get(doomed.memory.slice(i, i + 1000), { includeSuppressed: true }));
      const successors = journal.closure!.successors ?? {};
      if (now.some((m) => successors[String(m.id)] !== m.superseded_by)) {
        for (const m of now) successors[String(m.id)] = m.superseded_by;
        journal.closure!.successors = successors;
        await all.store.setMeta({ [key]: JSON.stringify(journal) });
      }
      await deleteAndRelink(repos, purger, journal, report);
    });
  }
  await forgetGraph(repos, purger, journal.closure.entities);
  // The request log quotes what retrieve_memory returned, and prompts what was asked about it:
  // the project's log and prompts go too. (Bounding the log by the records' dates missed entries
  // quoting a record dated after them: a date is the client's or the commit's, not when it was stored.)
  // A replaced document is not a forget: nothing the user asked or was told goes with it.
  if (replacing) return;
  const p = `project = ${sqlString(repos.project)}`;
  await purger.delete(TABLES.requestLog, p);
  await purger.delete(TABLES.sessionPrompts, p);
}

/** forgetIds' deletes of the closure's records, and the relinking of the memories left. */
async function deleteAndRelink(repos: ProjectRepositories, purger: Purger, journal: Journal, report: ForgetReport): Promise<void> {
  const p = `project = ${sqlString(repos.project)}`;
  const { doomed, restore, successors } = journal.closure!;
  for (const k of Object.keys(doomed) as SourceKind[]) {
    if (doomed[k].length === 0) continue;
    const list = sqlIntList(doomed[k]);
    const n = await purger.delete(RECORD_TABLE_OF[k], `${p} AND id IN ${list}`);
    if (k === 'observation') report.observations = n;
    else if (k === 'session_summary') report.session_summaries = n;
    else report.memories = n;
    report.cells += await purger.delete(TABLES.cells, `${p} AND source_kind = ${sqlString(k)} AND source_id IN ${list}`);
  }
  // The project's full-text index segments hold the forgotten words: they all go, and the
  // project is searched from its cells until the maintenance-lease holder indexes it again.
  await purger.delete(TABLES.lexicalSegments, p);

  await restoreMergedSources(repos, restore);
  await forgetMemoryLinks(repos, purger, new Set(doomed.memory), successors ?? {});
}

/**
 * A commit imported from git is indexed with the doc comments of the symbols it touches
 * (projectDocs.ts SymbolDocs, the first DOC_QUOTE_CHARS of each): forgetting such a document
 * takes its words out of every commit that quotes it.
 */
async function forgetDocumentQuotes(repos: ProjectRepositories, purger: Purger, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  const documents = await repos.observations.table.rows(`type = ${sqlString(DOCUMENT_TYPE)} AND id IN ${sqlIntList(ids)}`, { select: ['narrative'] });
  for (const quote of documents.map((d) => String(d.narrative ?? '').slice(0, DOC_QUOTE_CHARS)).filter((q) => q.trim().length > 0)) {
    const quoting = await repos.observations.table.rows(`type = 'commit' AND strpos(search_extra, ${sqlString(quote)}) > 0`, { select: ['id', 'search_extra'] });
    if (quoting.length === 0) continue;
    purger.willRewrite(TABLES.observations);
    purger.willRewrite(TABLES.cells);
    await repos.observations.rewriteSearchExtra(new Map(quoting.map((r) => [Number(r.id), String(r.search_extra).split(quote).join('').replace(/\n{2,}/g, '\n').trim() || null])));
  }
}

/** Whether any of the doomed ids names a record of the project (before they are deleted). */
async function anyRecord(repos: ProjectRepositories, doomed: Record<SourceKind, Set<number>>): Promise<boolean> {
  for (const k of Object.keys(doomed) as SourceKind[]) {
    if (doomed[k].size === 0) continue;
    if ((await recordTable(repos, k).rows(`id IN ${sqlIntList([...doomed[k]])}`, { select: ['id'] })).length > 0) return true;
  }
  return false;
}

/** The other sources of a forgotten merged observation are shown again on their own. */
async function restoreMergedSources(repos: ProjectRepositories, sources: number[]): Promise<void> {
  if (sources.length === 0) return;
  await repos.observations.table.update(`id IN ${sqlIntList(sources)} AND status = 'merged'`, { status: `'active'` });
  await repos.cells.update('observation', sources, { status: `'active'` });
}

/**
 * Other memories refer to a forgotten memory: topic traces quote it (its segments leave them),
 * supersession links and conflicts name it (they go). Its successor stays current, less the
 * subject it took over from it (ownSubject). A memory the forgotten one had superseded holds
 * again, with the facts that closed and the conflicts that closed with it reopened, unless the
 * forgotten one had itself been superseded: in a chain A -> B -> C, forgetting B leaves A
 * history, now of C (the chain's end), since C replaced what B said.
 */
async function forgetMemoryLinks(repos: ProjectRepositories, purger: Purger, doomed: Set<number>, successors: Record<string, number | null>): Promise<void> {
  if (doomed.size === 0) return;
  const all = await repos.memories.list({ includeSuppressed: true });
  const byId = new Map(all.map((m) => [m.id, m]));
  // Each forgotten memory's successor: as journalled before the deletes (null: it was current,
  // whatever names it: a branch memory lists the project-wide one it shadows, compress/supersede.ts),
  // else (a journal of an older build) the surviving memory that lists it in `supersedes`.
  const next = new Map<number, number>();
  for (const [id, s] of Object.entries(successors)) if (s !== null) next.set(Number(id), s);
  for (const m of all) for (const id of m.supersedes ?? []) if (doomed.has(id) && !next.has(id) && !(String(id) in successors)) next.set(id, m.id);
  /** The end of the chain from `id` on: the first surviving memory superseded by nothing, or null. */
  const chainEnd = (id: number): Memory | null => {
    const seen = new Set<number>();
    for (let x: number | undefined = id; x !== undefined && !seen.has(x); ) {
      seen.add(x);
      if (doomed.has(x)) {
        x = next.get(x);
        continue;
      }
      const m = byId.get(x);
      if (!m) return null;
      if (m.superseded_by === null) return m;
      x = m.superseded_by;
    }
    return null;
  };

  const work = new Map<number, Memory>();
  const edit = (m: Memory): Memory => {
    let w = work.get(m.id);
    if (!w) {
      w = structuredClone(m);
      work.set(m.id, w);
    }
    return w;
  };
  const orphans: { id: number; successor: number }[] = [];
  for (const m of all) {
    const trace: TopicTrace[] = m.topic_trace ?? [];
    const kept = trace.filter((t) => !doomed.has(t.id));
    const supersedes = (m.supersedes ?? []).filter((id) => !doomed.has(id));
    const conflicts = (m.conflicts ?? []).filter((c) => !doomed.has(c.id));
    const orphaned = m.superseded_by !== null && doomed.has(m.superseded_by);
    if (kept.length === trace.length && supersedes.length === (m.supersedes ?? []).length && conflicts.length === (m.conflicts ?? []).length && !orphaned) continue;
    const updated = edit(m);
    Object.assign(updated, {
      topic_trace: kept.length > 0 ? kept.map((t, i) => ({ ...t, segment_index: i })) : null,
      supersedes: supersedes.length > 0 ? supersedes : null,
      conflicts: conflicts.length > 0 ? conflicts : null,
    });
    Object.assign(updated, ownSubject(updated));
    if (orphaned) orphans.push({ id: m.id, successor: m.superseded_by as number });
  }
  for (const { id, successor } of orphans) {
    const m = work.get(id) as Memory;
    const end = chainEnd(successor);
    if (end && end.id !== id) {
      // History of the chain's end: its facts stay closed, its dates stay.
      relinkTo(m, edit(end));
      continue;
    }
    // Its facts and the conflicts that closed with it open again (an other side read, then written, as a copy).
    for (const o of holdAgain(m, (x) => work.get(x) ?? byId.get(x))) edit(o);
  }
  for (const m of work.values()) {
    // The rows' old versions quote the forgotten memory (its trace segment, the subject taken).
    purger.willRewrite(TABLES.memories);
    purger.willRewrite(TABLES.cells);
    await repos.memories.rewrite(m);
  }
}

/**
 * The subject a memory took from one it was linked to goes with that one: a topic key, or the
 * subject of a fact its own words name none for ("we switched from A to B" is about the subject
 * of the fact it ends). What the memory's own title and text say stays; its facts and topic are
 * drawn from them again where they quoted the other. (A topic key given to both memories and
 * absent from this one's words goes too: nothing tells it from one taken over.)
 */
function ownSubject(m: Memory): Pick<Memory, 'topic_key' | 'temporal_facts' | 'topic_trace'> {
  const words = `${m.title}. ${m.text}`;
  const own = words.toLowerCase();
  const mine = (subject: string | null): boolean => subject !== null && own.includes(subject.toLowerCase());
  const facts = m.temporal_facts ?? [];
  if ((m.topic_key === null || mine(m.topic_key)) && facts.every((f) => mine(f.subject))) return m;
  const topic = mine(m.topic_key) ? m.topic_key : null;
  const extracted = extractFacts(words, topic);
  const kept = facts.map((f, i) => (mine(f.subject) || !extracted[i] ? f : { ...f, ...storedFact(extracted[i]) })).filter((f) => mine(f.subject));
  const key = topic ?? kept[0]?.subject ?? null;
  return {
    topic_key: key,
    temporal_facts: kept.length > 0 ? kept : null,
    topic_trace: key && m.topic_trace ? m.topic_trace.map((t) => ({ ...t, topic_key: key })) : null,
  };
}

/**
 * Entities and edges derived from forgotten observations (their files, symbols, concepts) and
 * forgotten memories go; those the remaining observations also support are derived again.
 */
async function forgetGraph(repos: ProjectRepositories, purger: Purger, entityIds: string[]): Promise<void> {
  if (entityIds.length === 0) return;
  const p = `project = ${sqlString(repos.project)}`;
  for (let i = 0; i < entityIds.length; i += 500) {
    const list = `(${entityIds.slice(i, i + 500).map(sqlString).join(', ')})`;
    await purger.delete(TABLES.entities, `${p} AND id IN ${list}`);
    // A kept memory's edge to a file (`decided`, GraphRepository.addMemory) is its own: it goes
    // with the memory, not with the observations that touched the file.
    await purger.delete(TABLES.relationships, `${p} AND (source IN ${list} OR (target IN ${list} AND type <> 'decided'))`);
  }
  // Only observations support other entities (a memory's entity is its own).
  await deriveGraphAgain(repos, entityIds);
}
