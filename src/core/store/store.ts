// The LanceDB store: opens (and creates, and upgrades) the tables of one store URI, and gives
// the engine typed, batched, conflict-retrying access to them.

import type { TableCheck } from '../api';
import * as lancedb from '@lancedb/lancedb';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Connection, MergeResult, Table } from '@lancedb/lancedb';
import type { RecordBatch, Schema } from 'apache-arrow';
import type { FixedSizeList } from 'apache-arrow';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { createVectorIndex } from './annIndex';
import type { AnnIndexKind } from './annIndex';
import { plainRow, rowsToArrow } from './arrowRows';
import { FilterError, sqlString } from './filters';
import { LocalBlockAllocator, RandomBlockAllocator } from './ids';
import { removeAbandoned } from './abandonedFiles';
import type { RowMarkers } from './abandonedFiles';
import { dropFtsIndex, ensureScalarIndexes, readAndCheck, rebuildIndexes } from './indexes';
import type { IndexCheck } from './indexes';
import { LockFile } from './lockFile';
import type { IdAllocator } from './ids';
import { isLocalUri, localPath, storeFolder } from './location';
import { objectLock } from './objectLock';
import { fragmentsWithDeletions } from './deletionFiles';
import { canonicalObjectUri, displayUri, openObjectStorage, requestTimeoutMs } from './objectStorage';
import type { ObjectStoreSettings } from './objectStorage';
import { StoreVersionError, TOPICS_RETIRED_KEY, TOPICS_RETIRED_VERSION, migrate, retireSameTopics } from './migrations';
import { projection } from './projection';
import { retryConflicts, retryVanished, sleep } from './retry';
import { RewriteGate } from './rewriteGate';
import { UNANSWERED_HOLD, UnansweredLatch, underLatch } from './unanswered';
import { UpkeepProcess } from './upkeepProcess';
import type { UpkeepJob } from './upkeepProcess';
import { RECORD_TABLES, SCHEMA_VERSION, TABLES, cellsSchema, currentSchemas } from './schema';
import type { TableName } from './schema';
import { briefError, errorMessage, looksDamaged } from '../errorText';

export type Row = Record<string, unknown>;

export interface RowsOptions {
  select?: string[];
  limit?: number;
  /** Adds `_rowid`: names one stored copy of a row, for deleting it and not its twin. */
  withRowId?: boolean;
}

export interface StoreOpenOptions {
  uri: string;
  /**
   * Vector dimension for a new store; an existing store keeps its own until resized. A function
   * is only called when the cells table has to be created, so an embedder that is still loading
   * (the only one who knows it) delays the open of a new store only.
   */
  dimension: number | (() => Promise<number>);
  storageOptions?: Record<string, string>;
  /** Object storage: the endpoint setting; credentials come from the environment (see objectStorage.ts). */
  objectStore?: ObjectStoreSettings;
  env?: NodeJS.ProcessEnv;
  logger?: (message: string) => void;
  /** Rows from which a table is compacted (and its vector index built) in a child process (default UPKEEP_IN_CHILD_FROM). */
  upkeepInChildFrom?: number;
  /**
   * Opens a store whose meta table was lost, making it anew (see refuseLostMeta): for `doctor
   * --rebuild-meta` only, once the user accepted what it held is gone.
   */
  rebuildMeta?: boolean;
}

/**
 * Rows from which a table's optimize() and vector index build run in a child process (see
 * upkeepProcess.ts): at 1,000,000 cells optimize() held 0.9 GB, which the process that ran it
 * kept. Starting the child costs about 0.3 s.
 */
export const UPKEEP_IN_CHILD_FROM = 100_000;

/** How long old versions are kept for readers still on them before optimize() prunes them. */
export const VERSIONS_KEPT_MS = 5 * 60_000;

/**
 * LanceDB's caches, bounded. Its defaults (6 GB of index cache, 1 GB of file metadata) let a
 * long-running server grow by the metadata of every version and fragment it ever read; a 100k
 * store's indexes (vectors, scalar, full text) fit in far less. (At 100k cells these bounds
 * measured no different from the defaults in RSS or latency: they are a ceiling, not a saving.)
 */
const INDEX_CACHE_BYTES = 256 * 1024 * 1024;
const METADATA_CACHE_BYTES = 64 * 1024 * 1024;

function cacheSession(): lancedb.Session {
  return new lancedb.Session(BigInt(INDEX_CACHE_BYTES), BigInt(METADATA_CACHE_BYTES));
}

/** Told the versions a recordCommits call's commits made (see Store.recordCommits). */
export interface CommitNotes {
  note(table: string, version: number): void;
}

/**
 * The lock (Store.exclusive) a forget holds while it runs, and every maintenance job (compaction,
 * index merges, full-text segments) while it runs, in whichever process. A job that read a row
 * before a forget deleted it loses its commit to the forget, or to the indexes the forget
 * rebuilds, and leaves its output where no version references it: LanceDB's cleanup keeps such a
 * file for seven days, and the forgotten rows, or a bitmap index's keys (a forgotten project's
 * name), are in it.
 */
export const FORGET_LOCK = 'forget';

/** How long a forget waits for a maintenance job another process runs (a compaction of a million cells takes a minute). */
export const FORGET_LOCK_WAIT_MS = 600_000;

export class Store {
  /** Holds this process's updates and deletes of a table while it compacts that table. */
  readonly gate = new RewriteGate((table, result) => this.noteCommit(table, result));
  /** The commit notes of the recordCommits calls the running work is part of. */
  private readonly commitNotes = new AsyncLocalStorage<readonly CommitNotes[]>();
  private readonly queues = new Map<string, Promise<void>>();
  private readonly projectIds = new Map<string, IdAllocator>();
  /** Store-wide ids, for an import that keeps its records' ids (every project's). */
  readonly ids: IdAllocator;

  private constructor(
    readonly uri: string,
    readonly db: Connection,
    private readonly tables: Map<TableName, Table>,
    readonly schemaVersion: number,
    public dimension: number,
    private readonly newIds: () => IdAllocator,
    readonly local: boolean,
    private readonly log: (m: string) => void,
    private readonly upkeep: { connect: UpkeepJob['connect']; inChildFrom: number; children: UpkeepProcess },
    /** The tables this open created, not found in the store (all of them for a new store). */
    readonly createdAtOpen: ReadonlySet<TableName> = new Set(),
  ) {
    this.ids = newIds();
  }

  /**
   * Where a project's new records take their ids: blocks of the store's one counter (or random
   * blocks, on object storage) that the project has to itself in this process, so that the ids
   * handed to one project do not count another's writes (an engine serving two projects, such as
   * a window of two folders). Ids stay unique in the store; a project's ids jump where its block
   * ran out.
   */
  idsFor(project: string): IdAllocator {
    let ids = this.projectIds.get(project);
    if (!ids) this.projectIds.set(project, (ids = this.newIds()));
    return ids;
  }

  static async open(options: StoreOpenOptions): Promise<Store> {
    const log = options.logger ?? (() => undefined);
    // An empty location would be the current folder: a store written wherever the process runs.
    if (typeof options.uri !== 'string' || options.uri.trim() === '') throw new Error('A store location is needed: a folder, a file:// URI or an s3:// URI, not an empty string.');
    // One spelling per store on object storage (s3://b//p is s3://b/p), as our own requests name it.
    options = { ...options, uri: canonicalObjectUri(options.uri) };
    const local = isLocalUri(options.uri);
    if (local) {
      // The store holds what a person worked on: only its owner may read it.
      await storeFolder(localPath(options.uri));
    }
    // Object storage is probed first: an endpoint that would lose concurrent commits is refused.
    const storageOptions = local ? options.storageOptions : await openObjectStorage(options.uri, options.storageOptions, options.env, options.objectStore);
    const connect = { uri: local ? localPath(options.uri) : options.uri, storageOptions };
    const connected = await lancedb.connect(connect.uri, {
      readConsistencyInterval: 0,
      storageOptions,
      session: cacheSession(),
    });
    // On object storage, a request that got no answer fails the calls right after it at once.
    const bound = local ? null : requestTimeoutMs(storageOptions ?? {});
    const db = bound === null ? connected : underLatch(connected, new UnansweredLatch(UNANSWERED_HOLD * bound));

    if (local) await refuseTablesWithoutVersions(localPath(options.uri));
    let names = new Set(await db.tableNames());
    const meta = names.has(TABLES.meta) ? await db.openTable(TABLES.meta).catch(() => null) : null;
    // Without a meta table the store is of the first layout, or new, and maybe being created by
    // another process right now, whose table folders show before their first version: those are
    // not tables yet (taken for the first layout, they were migrated, and the open failed).
    if (!meta && names.size > 0) names = await tablesWithVersions(db, options.uri);
    // Every store's open made its meta table before any other (see refuseLostMeta).
    const metaLost = !meta && [...names].some((n) => n !== TABLES.meta);
    if (metaLost && !options.rebuildMeta) refuseLostMeta(options.uri);
    let version = SCHEMA_VERSION;
    let storedVersion: number | null = null;
    let topicsRetired: string | null = null;
    if (meta) {
      // The meta entries every open reads: the version, and whether the topics were replayed.
      const read = await meta.query().where(`key IN ('schema_version', ${sqlString(TOPICS_RETIRED_KEY)})`).toArray();
      const replayed = read.find((r) => r.key === TOPICS_RETIRED_KEY);
      topicsRetired = replayed ? String(replayed.value) : null;
      const rows = read.filter((r) => r.key === 'schema_version');
      const stored = rows.length > 0 ? Number(rows[0].value) : 1;
      // Not a version (garbled by hand or by a damaged disk): taken for one, NaN skipped every
      // migration and was written back as the store's version, 0 or 2.5 failed on a missing step.
      if (!Number.isSafeInteger(stored) || stored < 1) refuseBadVersion(options.uri, String(rows[0].value));
      if (stored > SCHEMA_VERSION) throw new StoreVersionError(stored, SCHEMA_VERSION, options.uri);
      version = stored;
      if (rows.length > 0) storedVersion = stored;
    } else if (metaLost) {
      version = 1; // a lost meta table made anew: every migration step is idempotent
    }
    if (storedVersion !== null || metaLost) await refuseMissingRecordTables(db, names, options.uri, local);
    if (version < SCHEMA_VERSION) {
      log(`upgrading store ${options.uri} from schema v${version} to v${SCHEMA_VERSION}`);
      version = await migrate(db, version, log);
    }

    // The cells table decides the dimension once it exists.
    let dimension: number | null = null;
    if (names.has(TABLES.cells)) {
      const cells = await db.openTable(TABLES.cells).catch((e: unknown) => Promise.reject(damagedTable(TABLES.cells, options.uri, e) ?? e));
      const schema = await cells.schema();
      const vector = schema.fields.find((f) => f.name === 'vector');
      if (vector) dimension = (vector.type as FixedSizeList).listSize;
    }
    dimension ??= typeof options.dimension === 'number' ? options.dimension : await options.dimension();

    const tables = new Map<TableName, Table>();
    const schemas = currentSchemas(dimension);
    const existing = new Set(await db.tableNames());
    const created = new Set<TableName>();
    for (const name of Object.values(TABLES)) {
      if (!existing.has(name)) created.add(name);
      tables.set(name, await openOrCreate(db, name, schemas[name], options.uri));
    }
    await dropFtsIndex(tables.get(TABLES.cells) as Table, log);
    for (const [name, table] of tables) await ensureScalarIndexes(table, name, log);

    const store: { current: Store | null } = { current: null };
    const rangeUsed = async (lo: number, hi: number): Promise<boolean> => (store.current ? store.current.idRangeUsed(lo, hi) : false);
    const newIds = (): IdAllocator =>
      local ? new LocalBlockAllocator(localPath(options.uri), async () => (store.current ? (await store.current.maxId()) + 1 : 1), undefined, { rangeUsed }) : new RandomBlockAllocator(rangeUsed);
    const upkeep = { connect, inChildFrom: options.upkeepInChildFrom ?? UPKEEP_IN_CHILD_FROM, children: new UpkeepProcess() };
    const opened = new Store(options.uri, db, tables, version, dimension, newIds, local, log, upkeep, created);
    store.current = opened;
    // Memories of one topic_key that a build or an import left current together (see
    // retireSameTopics) are retired once per store, before the version is written (an upgrade
    // killed before then is done again). Not done (a damaged table), it is tried at the next open.
    let retired = topicsRetired === TOPICS_RETIRED_VERSION;
    if (!retired) retired = await opened.retireSameTopics().then(() => true, (e: unknown) => (log(`retiring memories of one topic_key: ${errorMessage(e)}`), false));
    // Every write is a new table version: an open writes only what changed.
    const entries = {
      ...(storedVersion !== version ? { schema_version: String(version), ...(metaLost ? { meta_rebuilt_at: new Date().toISOString() } : {}) } : {}),
      ...(retired && topicsRetired !== TOPICS_RETIRED_VERSION ? { [TOPICS_RETIRED_KEY]: TOPICS_RETIRED_VERSION } : {}),
    };
    if (Object.keys(entries).length > 0) await opened.setMeta(entries);
    if (metaLost) log(`store ${displayUri(options.uri)}: its lost meta table was made anew`);
    return opened;
  }

  /**
   * Runs `fn` alone among this store's writers of `name`: after this process's earlier calls, and,
   * in a store on disk, under a lock file that other processes take too (lockFile.ts: a dead holder's
   * lock is broken), on S3 and Azure Blob under a lock of exclusive creates (objectLock.ts). For a
   * read-then-write that must not interleave with another's, such as the check for records already
   * stored before adding them. On gs://, and on az:// reached without a key or SAS, only this
   * process's calls are ordered. `waitMs`: how long to wait for another process's hold (30 s);
   * `waiting`: a line logged once when the lock is found held by another process or engine.
   */
  async exclusive<T>(name: string, fn: () => Promise<T>, options: { waitMs?: number; waiting?: string } = {}): Promise<T> {
    const before = this.queues.get(name) ?? Promise.resolve();
    const { waitMs, waiting } = options;
    let told = false;
    const onWait =
      waiting === undefined
        ? undefined
        : () => {
            if (told) return;
            told = true;
            this.log(waiting);
          };
    const held = { waitMs, onWait };
    const lock = this.local
      ? new LockFile(path.join(localPath(this.uri), `${name}.lock`), held)
      : objectLock(this.uri, this.upkeep.connect.storageOptions ?? {}, name, held);
    const run = before.then(() => (lock ? lock.withLock(fn) : fn()));
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(name, settled);
    void settled.then(() => {
      if (this.queues.get(name) === settled) this.queues.delete(name);
    });
    return run;
  }

  /**
   * Runs `work`, telling `notes` the version of each commit it makes, in its own calls and what
   * they start (not another caller's work meanwhile, nor another process's): an append, merge,
   * update or delete. A commit whose version LanceDB does not return (an index build, a
   * compaction) is not told.
   */
  recordCommits<T>(notes: CommitNotes, work: () => Promise<T>): Promise<T> {
    return this.commitNotes.run([...(this.commitNotes.getStore() ?? []), notes], work);
  }

  private noteCommit(table: string, result: unknown): void {
    const version = (result as { version?: unknown } | null | undefined)?.version;
    if (typeof version === 'number') for (const notes of this.commitNotes.getStore() ?? []) notes.note(table, version);
  }

  table(name: TableName): Table {
    const t = this.tables.get(name);
    if (!t) throw new Error(`table ${name} is not open`);
    return t;
  }

  schemaOf(name: TableName): Schema {
    return currentSchemas(this.dimension)[name];
  }

  /** One Arrow-batched append; retried on commit conflicts (appends never lose rows). */
  async add(name: TableName, rows: Row[], key?: string): Promise<void> {
    if (rows.length === 0) return;
    const data = rowsToArrow(this.schemaOf(name), rows);
    let failedOnce = false;
    const result = await retryConflicts(() => {
      // After a failed attempt we cannot know whether it committed: retry as an insert of the
      // rows whose key is not stored yet, so a retry never duplicates.
      if (failedOnce && key) return this.table(name).mergeInsert(key).whenNotMatchedInsertAll().execute(data);
      failedOnce = true;
      return this.table(name).add(data);
    });
    this.noteCommit(name, result);
  }

  /**
   * Writes rows, replacing those with the same `on` key; returns how many keys were new. Not for
   * rows that must already be stored (see rewrite): it would insert one a forget deleted.
   */
  async upsert(name: TableName, on: string | string[], rows: Row[]): Promise<number> {
    if (rows.length === 0) return 0;
    const columns = typeof on === 'string' ? [on] : on;
    // A key given twice (an export of copies) is written once: the last row given.
    const unique = [...new Map(rows.map((r) => [keyOf(r, columns), r])).values()];
    const merged = await this.merge(name, on, unique);
    // More rows matched than given: a key stored more than once (two processes inserted it at
    // once; the merge does not see the other's insert). The merge made its copies alike: one stays.
    if (merged.numInsertedRows + merged.numUpdatedRows > unique.length) await this.dropCopies(name, columns, unique);
    return merged.numInsertedRows;
  }

  /**
   * Deletes all but one row of each key (`on`) of these rows stored more than once, by row address:
   * the lowest stays. An address names a fragment that a compaction in between replaced (fragment
   * ids are never reused): such a delete finds nothing, and the check runs again.
   */
  private async dropCopies(name: TableName, on: string[], rows: Row[]): Promise<void> {
    const literal = (v: unknown): string => (typeof v === 'number' || typeof v === 'bigint' ? String(v) : sqlString(String(v)));
    for (let start = 0; start < rows.length; start += 200) {
      const where = rows.slice(start, start + 200).map((r) => `(${on.map((c) => (r[c] === null || r[c] === undefined ? `${c} IS NULL` : `${c} = ${literal(r[c])}`)).join(' AND ')})`).join(' OR ');
      for (let attempt = 0; attempt < 5; attempt++) {
        const found = await this.rows(name, where, { select: on, withRowId: true });
        found.sort((a, b) => (BigInt(a._rowid as bigint) < BigInt(b._rowid as bigint) ? -1 : 1));
        const seen = new Set<string>();
        const doomed: string[] = [];
        for (const r of found) {
          const key = keyOf(r, on);
          if (seen.has(key)) doomed.push(String(r._rowid));
          else seen.add(key);
        }
        if (doomed.length === 0) break;
        const gone = `(${where}) AND _rowid IN (${doomed.join(', ')})`;
        await this.gate.mutate(name, () => retryConflicts(() => this.table(name).delete(gone)));
      }
    }
  }

  /** upsert's merge of (some) rows; numUpdatedRows counts every stored copy of a key. */
  private async merge(name: TableName, on: string | string[], rows: Row[]): Promise<MergeResult> {
    const data = rowsToArrow(this.schemaOf(name), rows);
    return this.gate.mutate(name, () => retryConflicts(() => this.table(name).mergeInsert(on).whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(data)));
  }

  /**
   * Replaces stored rows of `project` by their `on` key, and only stored ones: a row that a forget
   * (in any process) deleted since the caller read it is not written back. Returns how many rows
   * were replaced. (A row of another project is refused, as ProjectTable refuses it.)
   */
  async rewrite(name: TableName, on: string, project: string, rows: Row[]): Promise<number> {
    if (rows.length === 0) return 0;
    const stamped = rows.map((r) => {
      if (r.project !== undefined && r.project !== null && r.project !== project) throw new FilterError(`a row of project '${String(r.project)}' cannot be written to project '${project}'`);
      return { ...r, project };
    });
    const data = rowsToArrow(this.schemaOf(name), stamped);
    const result = await this.gate.mutate(name, () => retryConflicts(() => this.table(name).mergeInsert(on).whenMatchedUpdateAll().execute(data)));
    return result.numUpdatedRows;
  }

  async rows(name: TableName, where: string | null, options: RowsOptions = {}): Promise<Row[]> {
    const out = await retryVanished(() => {
      let q = this.table(name).query();
      if (where) q = q.where(where);
      if (options.withRowId) q = q.withRowId();
      if (options.select) q = q.select(projection(options.select));
      if (options.limit !== undefined) q = q.limit(options.limit);
      return q.toArray() as Promise<Row[]>;
    });
    return out.map(plainRow);
  }

  /**
   * The rows passing `where`, a record batch at a time (`select` columns only): for reads of a
   * whole project, which would otherwise hold a JS object per row (1,000,000 observations took
   * 6 s and over a gigabyte that way). Not retried: a caller sees each batch once.
   */
  batches(name: TableName, where: string | null, select: string[]): AsyncIterable<RecordBatch> {
    let q = this.table(name).query().select(projection(select));
    if (where) q = q.where(where);
    return q;
  }

  /**
   * The distinct non-empty values of a column with a scalar index (the project columns): one
   * indexed read per value, each for any row holding none of the values found so far, instead
   * of a read of every row's value (4 ms instead of 4 s over 1,000,000 cells).
   */
  async distinct(name: TableName, column: string): Promise<string[]> {
    const found: string[] = [];
    for (;;) {
      const seen = ['', ...found];
      const rows = await this.rows(name, `${column} NOT IN (${seen.map(sqlString).join(', ')})`, { select: [column], limit: 1 });
      if (rows.length === 0 || rows[0][column] === null || rows[0][column] === undefined) return found.sort();
      found.push(String(rows[0][column]));
    }
  }

  /**
   * Reads every row of every table, all columns, a batch at a time: a damaged data file fails
   * here, named by its table (a count or an indexed read can pass over it). Then checks each
   * scalar index of a table read whole (see checkScalarIndexes): one that fails a read, or
   * answers other than the rows, is damaged, and is rebuilt from the rows (an index holds
   * nothing the rows do not, and a damaged one fails every read filtered on its column, and
   * the table's optimize), then checked again; the check names it either way.
   */
  async verify(): Promise<StoreTableCheck[]> {
    const out: StoreTableCheck[] = [];
    for (const name of Object.values(TABLES)) {
      let rows = 0;
      // One version throughout, so that another process's writes meanwhile are no mismatch.
      let table: Table | null = null;
      try {
        table = await this.db.openTable(name);
        await table.checkout(await table.version());
        const damaged = await readAndCheck(table, (n) => (rows += n));
        if (damaged.length > 0) await this.rebuildScalarIndexes(name, damaged);
        out.push(damaged.length > 0 ? { table: name, rows, indexes: damaged } : { table: name, rows });
      } catch (error) {
        out.push({ table: name, rows, error: briefError(error) });
      } finally {
        table?.close();
      }
    }
    return out;
  }

  /** Builds the damaged indexes again from the table's rows, then checks each once more (rebuildIndexes). */
  private async rebuildScalarIndexes(name: TableName, damaged: IndexCheck[]): Promise<void> {
    await rebuildIndexes(this.table(name), damaged);
    for (const index of damaged) {
      this.log(`index ${index.name} of table ${name} was damaged (${index.damage}); ${index.rebuilt ? 'rebuilt it from the rows' : `rebuilding it failed: ${index.rebuildError}`}`);
    }
  }

  async count(name: TableName, where?: string): Promise<number> {
    return retryVanished(() => this.table(name).countRows(where));
  }

  async delete(name: TableName, where: string): Promise<number> {
    const before = await this.count(name, where);
    if (before === 0) return 0;
    await this.gate.mutate(name, () => retryConflicts(() => this.table(name).delete(where)));
    return before;
  }

  async update(name: TableName, where: string, values: Record<string, string>): Promise<void> {
    await this.gate.mutate(name, () => retryConflicts(() => this.table(name).update({ where, valuesSql: values })));
  }

  async getMeta(key: string): Promise<string | null> {
    const rows = await this.rows(TABLES.meta, `key = ${sqlString(key)}`);
    return metaValues(rows).get(key) ?? null;
  }

  /** The meta rows whose key starts with `prefix`, as [key, value], one per key. */
  async metaEntries(prefix: string): Promise<Array<[string, string]>> {
    const rows = await this.rows(TABLES.meta, prefixWhere('key', prefix));
    return [...metaValues(rows)];
  }

  async deleteMeta(key: string): Promise<void> {
    await this.delete(TABLES.meta, `key = ${sqlString(key)}`);
  }

  /**
   * Sets meta keys, under the store's `meta` lock (see exclusive): LanceDB's merge does not see
   * another process's insert of the same key committed meanwhile, so two processes setting a key
   * not stored yet at once both stored a row. A key the merge found stored more than once (left
   * so by an earlier version, or where there is no lock: gs://) is left with one row (upsert).
   */
  async setMeta(entries: Record<string, string>): Promise<void> {
    const rows = Object.entries(entries).map(([key, value]) => ({ key, value }));
    if (rows.length === 0) return;
    await this.exclusive(TABLES.meta, () => this.upsert(TABLES.meta, 'key', rows));
  }

  /**
   * The value of `key`: the one stored if `keep` accepts it, or else `value`, stored now. Under the
   * meta lock, so that processes claiming one key at once all get the value stored first (a
   * read then setMeta let each go on with its own, the last one kept).
   */
  async claimMeta(key: string, value: string, keep: (stored: string) => boolean = () => true): Promise<string> {
    return this.exclusive(TABLES.meta, async () => {
      const stored = await this.getMeta(key);
      if (stored !== null && keep(stored)) return stored;
      await this.upsert(TABLES.meta, 'key', [{ key, value }]);
      return value;
    });
  }

  /** Largest id in any table with int64 ids (0 when empty). */
  async maxId(): Promise<number> {
    let max = 0;
    for (const name of RECORD_TABLES) {
      for (const r of await this.rows(name, null, { select: ['id'] })) max = Math.max(max, Number(r.id));
    }
    return max;
  }

  async idRangeUsed(lo: number, hi: number): Promise<boolean> {
    const where = `id >= ${lo} AND id < ${hi}`;
    for (const name of RECORD_TABLES) {
      if ((await this.count(name, where)) > 0) return true;
    }
    return false;
  }

  /**
   * Compact small fragments, merge new rows into the indices and drop versions older than
   * `olderThanMs`, table by table (see compact). A failure is logged, never thrown into a writer.
   */
  async optimize(olderThanMs = VERSIONS_KEPT_MS, names: TableName[] = Object.values(TABLES)): Promise<void> {
    for (const name of names) {
      try {
        await this.compact(name, olderThanMs);
      } catch (e) {
        this.log(`optimize ${name} failed (will retry later): ${errorMessage(e)}`);
      }
    }
  }

  /**
   * One table's optimize(): compaction, index merges, and the pruning of versions older than
   * `olderThanMs` (negative: all but the latest). Racing writers make it fail with a commit
   * conflict: it is retried `attempts` times. This process's own updates of the table wait
   * meanwhile (see RewriteGate). A large table is compacted in a child process (see upkeepProcess.ts).
   */
  async compact(name: TableName, olderThanMs: number, attempts = 6): Promise<void> {
    await this.gate.rewrite(name, async () => {
      if (!(await this.inChild(name))) {
        await retryConflicts(() => this.table(name).optimize({ cleanupOlderThan: new Date(Date.now() - olderThanMs) }), attempts);
        return;
      }
      const done = await this.upkeep.children.run({ connect: this.upkeep.connect, table: name, op: 'optimize', olderThanMs, attempts });
      this.log(`compacted ${name} in a process of its own (${done.fragmentsBefore} fragments to ${done.fragmentsAfter})`);
    });
  }

  /** Deletes the data files no version references that hold rows `markers` name (abandonedFiles.ts). */
  async removeAbandoned(markers: RowMarkers): Promise<void> {
    const removed = await removeAbandoned(this.uri, this.upkeep.connect.storageOptions, markers);
    if (removed.length > 0) this.log(`deleted ${removed.length} data file(s) of ${markers.table} that writes which lost their commit left, holding forgotten rows`);
  }

  /** The fragments of a table that hold deleted rows (deletionFiles.ts). */
  fragmentsWithDeletions(name: TableName): Promise<Set<bigint> | 'all'> {
    return fragmentsWithDeletions(this.uri, this.upkeep.connect.storageOptions, name);
  }

  /** Builds the cells' vector index of `kind` over `rows` embedded cells (see annIndex.ts), in a child process for a large table. */
  async buildVectorIndex(kind: AnnIndexKind, rows: number, column = 'vector'): Promise<void> {
    if (!(await this.inChild(TABLES.cells))) {
      await createVectorIndex(this.table(TABLES.cells), column, kind, rows);
      return;
    }
    await this.upkeep.children.run({ connect: this.upkeep.connect, table: TABLES.cells, op: 'vector-index', column, kind, rows });
    this.log(`built the ${kind} vector index in a process of its own`);
  }

  /** Whether the cells are large enough for their heavy upkeep to run in a child process. */
  cellsUpkeepInChild(): Promise<boolean> {
    return this.inChild(TABLES.cells);
  }

  /** Indexes `projects` again (lexiconIndexer.ts) in a child process; returns how many got new segments. */
  async fullTextInChild(projects: string[], minDelta: number): Promise<number> {
    const done = await this.upkeep.children.run({ connect: this.upkeep.connect, table: TABLES.cells, op: 'full-text', projects, minDelta, dimension: this.dimension });
    return done.written ?? 0;
  }

  private async inChild(name: TableName): Promise<boolean> {
    return this.upkeep.children.entry !== null && (await this.large(name));
  }

  /** Whether a table is large enough for its compaction to be heavy work (done in a child process where one can run). */
  async large(name: TableName): Promise<boolean> {
    return (await this.count(name)) >= this.upkeep.inChildFrom;
  }

  /** Rebuild the cells table with vectors of another dimension (a model switch); text is kept. */
  async resizeVectors(dimension: number): Promise<void> {
    if (dimension === this.dimension) return;
    const rows = await this.rows(TABLES.cells, null);
    const schema = cellsSchema(dimension);
    const zero = new Float32Array(dimension);
    const data = rowsToArrow(schema, rows.map((r) => ({ ...r, vector: zero, embed_model: '' })));
    const table = await this.db.createTable(TABLES.cells, data, { mode: 'overwrite', schema });
    this.tables.set(TABLES.cells, table);
    this.dimension = dimension;
    this.log(`cells re-created for ${dimension}-dimension vectors; ${rows.length} cells wait for embedding`);
  }

  /**
   * Retires all but the newest current memory of each topic_key, per project and scope (of
   * `projects`, or every project): see retireSameTopics. Returns how many it retired. Under the
   * memories lock (MemoryRepository.exclusive): it writes back whole rows it read, which a
   * remember meanwhile would lose.
   */
  retireSameTopics(projects?: readonly string[]): Promise<number> {
    const tables = { memories: this.table(TABLES.memories), cells: this.table(TABLES.cells), mutate: <T>(name: string, work: () => Promise<T>) => this.gate.mutate(name, work) };
    return this.exclusive(TABLES.memories, () => retireSameTopics(tables, this.log, projects));
  }

  close(): void {
    this.upkeep.children.stop();
    for (const t of this.tables.values()) t.close();
    this.db.close();
  }
}

/**
 * A table folder with data files and no version left (its _versions folder lost) is not listed
 * by LanceDB, and would be created anew, empty, over its data: the open stops instead, before
 * anything is written (the repair of search cells would then delete the only readable copy of
 * the lost records). A table another process is creating has no data file yet.
 */
async function refuseTablesWithoutVersions(dir: string): Promise<void> {
  // A folder that is not there has nothing; one that cannot be read (rights) says so, not "corrupt".
  const entries = async (p: string): Promise<string[]> => fsp.readdir(p).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' || e.code === 'ENOTDIR' ? [] : Promise.reject(e)));
  for (const name of Object.values(TABLES)) {
    const folder = path.join(dir, `${name}.lance`);
    if ((await entries(path.join(folder, 'data'))).length === 0) continue;
    if ((await entries(path.join(folder, '_versions'))).some((f) => f.endsWith('.manifest'))) continue;
    throw new Error(`the store is corrupt: table ${name} has data files and no version manifest (${path.join(folder, '_versions')} is gone or empty); nothing was changed`);
  }
}

/**
 * An open writes the schema version to the meta table only after it created every table, the
 * records tables first (TABLES' order). So a store whose meta holds a version, and which has any
 * table besides the meta and the records tables, had every records table: one that is not listed
 * now was lost (its folder deleted, or not restored with the rest), and would be created anew,
 * empty, whereupon the repair of search cells deleted the only copy of its records' text as a
 * race's leftovers. The open stops instead, before anything is written. (The cells table is not
 * required: its cells are rebuilt from the records, by the same repair. Tables that later versions
 * added, such as lexical_segments, are created by the open where missing.) Listed once more before
 * refusing: `names` may have been read while another process was still creating the store.
 */
async function refuseMissingRecordTables(db: Connection, names: Set<string>, uri: string, local: boolean): Promise<void> {
  const others = (listed: Set<string>): boolean => [...listed].some((n) => n !== TABLES.meta && !(RECORD_TABLES as readonly string[]).includes(n));
  if (!others(names)) return;
  // On object storage a table whose versions were lost is still listed (its data objects are
  // there): it must open too (on a local disk it is not listed, and refuseTablesWithoutVersions
  // found it already).
  if (RECORD_TABLES.every((n) => names.has(n))) {
    if (local) return;
    const lost = [];
    for (const name of RECORD_TABLES) if (!(await opens(db, name, uri))) lost.push(name);
    if (lost.length > 0) {
      throw new Error(`the store is corrupt: table ${lost.join(', ')} has data and no version manifest (the _versions of ${lost.map((n) => `${n}.lance`).join(', ')} in ${displayUri(uri)} are gone); nothing was changed. Restore them from a backup (or the bucket's object versions), or move the store aside and rebuild it`);
    }
    return;
  }
  const listed = new Set(await db.tableNames());
  const missing = RECORD_TABLES.filter((n) => !listed.has(n));
  if (missing.length === 0 || !others(listed)) return;
  const folders = missing.map((n) => `${n}.lance`).join(', ');
  const one = missing.length === 1;
  throw new Error(
    `the store is corrupt: its ${one ? 'table' : 'tables'} ${missing.join(', ')} ${one ? 'is' : 'are'} missing (no ${folders} in ${displayUri(uri)}), ` +
      `which every store has; nothing was changed (the search cells may hold the only copy left of ${one ? 'its' : 'their'} records' text). ` +
      `Restore the store folder (with ${folders}) from a backup, or move it aside and rebuild the store; it is not opened with ${one ? 'an empty table' : 'empty tables'} in ${one ? 'its' : 'their'} place.`,
  );
}

/**
 * Every store's open has made its meta table before any other (the first in TABLES' order, since
 * the first layout), so tables with versions and no meta table mean it was lost: its folder
 * deleted, or not restored with the rest. Made anew, empty, it would silently drop the digests
 * that keep forgotten commits and documents from being imported again and the journals of forgets
 * under way. The open stops instead, before anything is written; `doctor --rebuild-meta` makes
 * it anew where the user accepts that loss.
 */
function refuseLostMeta(uri: string): never {
  throw new Error(
    `the store is corrupt: its table meta is missing (no meta.lance in ${displayUri(uri)}), which every store has; nothing was changed. ` +
      'It held the store\'s schema version, the digests that keep forgotten commits and documents from being imported again, and the journals of forgets under way. ' +
      'Restore the store folder (with meta.lance) from a backup; or, to go on without what it held, run `code-memory doctor --rebuild-meta` with the same --store ' +
      '(every record is kept, but a commit or document forgotten before may come back with a later import: forget it again).',
  );
}

/** A meta table whose schema_version is not a version number: which migrations the store needs is not known. */
function refuseBadVersion(uri: string, value: string): never {
  const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  throw new Error(
    `the store is corrupt: its meta table's schema_version is ${JSON.stringify(shown)}, not a version number, in ${displayUri(uri)}; nothing was changed. ` +
      'Restore the store folder (with meta.lance) from a backup.',
  );
}

/** Whether a listed table opens: false where it has no version (not found); any other failure (a network) is thrown. */
async function opens(db: Connection, name: string, uri: string): Promise<boolean> {
  try {
    (await db.openTable(name)).close();
    return true;
  } catch (e) {
    if (isNotFound(e)) return false;
    throw damagedTable(name, uri, e) ?? e;
  }
}

/** A table that is not there (yet): not listed, or listed without a version. */
function isNotFound(e: unknown): boolean {
  return /not found|does not exist|no such|NotFound/i.test(errorMessage(e));
}

/**
 * Where an error opening a table that has versions says its files are damaged (a manifest that is
 * not one), the error the open stops with, naming the table, before anything is written; null for
 * any other failure (the network, rights).
 */
function damagedTable(name: string, uri: string, cause: unknown): Error | null {
  return looksDamaged(errorMessage(cause)) ? new Error(`the store is damaged: table ${name} cannot be opened (${errorMessage(cause)}) at ${uri}; nothing was changed`) : null;
}

/**
 * The listed tables that open: a folder another process is creating has no version yet. One that
 * has a version and does not open is damage (a manifest that is not one), not a store of the
 * first layout to migrate: the open stops, naming it, before anything is written.
 */
async function tablesWithVersions(db: Connection, uri: string): Promise<Set<string>> {
  const out = new Set<string>();
  for (const name of await db.tableNames()) if (await opens(db, name, uri)) out.add(name);
  return out;
}

/** How long a table another process is creating may take to show its first version. */
const CREATE_WAIT_MS = 10_000;

async function openOrCreate(db: Connection, name: TableName, schema: Schema, uri: string): Promise<Table> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.createEmptyTable(name, schema, { mode: 'create', existOk: true });
    } catch (e) {
      // Another process is creating it: its folder is there before its first version, longer on
      // a busy machine (two writers opening a new store at once). Open theirs once it shows. One
      // whose version does not open is damaged, and never will.
      if (Date.now() - started > CREATE_WAIT_MS) throw e;
      await sleep(Math.min(200, 20 * (attempt + 1)));
      try {
        return await db.openTable(name);
      } catch (open) {
        const damage = isNotFound(open) ? null : damagedTable(name, uri, open);
        if (damage) throw damage;
      }
    }
  }
}

/**
 * A filter for the rows whose `column` starts with `prefix`: the range of values from the prefix
 * up to the prefix with its last character the next one (text compares by code point, as UTF-8
 * bytes do), which a BTREE index on the column answers exactly. LanceDB 0.31 reads `starts_with`
 * through such an index as a LIKE that takes `_` and `%` in the prefix for wildcards and `\` for
 * an escape: `forgot_record:` also found `forgotXrecord:`, and `a\` found nothing.
 */
export function prefixWhere(column: string, prefix: string): string {
  const chars = [...prefix];
  while (chars.length > 0) {
    const last = (chars.pop() as string).codePointAt(0) as number;
    // Past the surrogates (not characters); the last code point has no next one: shorten the prefix.
    const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
    if (next <= 0x10ffff) return `${column} >= ${sqlString(prefix)} AND ${column} < ${sqlString(chars.join('') + String.fromCodePoint(next))}`;
  }
  return `${column} >= ${sqlString(prefix)}`;
}

/** The key (`on` columns) of a row, as one string. */
function keyOf(row: Row, on: string[]): string {
  return on.map((c) => (row[c] === null || row[c] === undefined ? '\u0001' : String(row[c]))).join('\u0000');
}

/**
 * One row per key (`on` columns) of these rows, in the order the keys first come. A key two
 * processes inserted at once can be stored more than once (LanceDB's merge does not see the
 * other's insert) until a write of it leaves one row (upsert): of its copies the one `first`
 * prefers is read, the same in every process whatever order they are read in (which a
 * compaction changes).
 */
export function onePerKey(rows: Row[], on: string[], first: (a: Row, b: Row) => boolean): Row[] {
  const out = new Map<string, Row>();
  for (const r of rows) {
    const key = keyOf(r, on);
    const kept = out.get(key);
    if (!kept || first(r, kept)) out.set(key, r);
  }
  return [...out.values()];
}

/** The value of each key of these meta rows (onePerKey: a key stored twice reads as its greatest value). */
function metaValues(rows: Row[]): Map<string, string> {
  return new Map(onePerKey(rows, ['key'], (a, b) => String(a.value) > String(b.value)).map((r) => [String(r.key), String(r.value)]));
}

/** A table's check with the scalar indexes found damaged in it. */
export interface StoreTableCheck extends TableCheck {
  indexes?: IndexCheck[];
}
