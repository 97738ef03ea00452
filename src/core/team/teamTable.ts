// The one table of a team store, `team_items`: what people chose to share (memories and
// session summaries), one row each, in the cells layout (so the same hybrid search runs on it)
// plus who shared it, when, and from which record of theirs. The remote store and its local read
// cache are both a TeamTable.
//
// Rows are keyed by node_id, which is derived from the sharer, the project, the sharer's
// personal store and the shared record: sharing twice, or a retry after a crash that did
// commit, inserts nothing new (insert-if-absent), and two writers' rows can never take each
// other's key. Insert-if-absent is a read then a write: two writers putting the same item at
// once both insert it, so a put removes such duplicates after its commit (dedupe).
//
// Rows are written in the remote table's schema as it is, not as this version makes it: a
// column someone dropped is left out, a nullable column this version does not know is null
// (else every put failed "Append with different schema" and the outbox stayed queued).

import { addToList } from '../lists';
import * as lancedb from '@lancedb/lancedb';
import type { Connection, Table } from '@lancedb/lancedb';
import { Field, Int64, Schema, Utf8 } from 'apache-arrow';
import type { FixedSizeList } from 'apache-arrow';
import { MAX_EPOCH_MS } from '../capture/prepare';
import { plainRow, rowsToArrow } from '../store/arrowRows';
import { sqlString, sqlStringList } from '../store/filters';
import { rewriteFragments } from '../store/forget';
import { fragmentsWithDeletions } from '../store/deletionFiles';
import { isLocalUri, localPath, refuseFile } from '../store/location';
import { projection } from '../store/projection';
import { cellsSchema } from '../store/schema';
import { retryConflicts, retryVanished, sleep } from '../store/retry';
import { ensureFtsIndex } from '../store/indexes';
import type { Row } from '../store/store';
import { purgeLeftovers } from './tableObjects';

export const TEAM_TABLE = 'team_items';

/** How many purges an unshare runs before it leaves the removal queued for the next sync. */
const PURGE_ATTEMPTS = 5;

export function teamItemsSchema(dimension: number): Schema {
  return new Schema([
    ...cellsSchema(dimension).fields,
    new Field('shared_by', new Utf8(), false),
    new Field('shared_at_epoch', new Int64(), false),
    /** The sharer's record, `<source_kind>/<id>` in their personal store. */
    new Field('origin', new Utf8(), false),
  ]);
}

/** One shared item as it travels: every column of the row, the vector as a plain array. */
export type TeamRow = Row & {
  node_id: string;
  project: string;
  title: string;
  text: string;
  shared_by: string;
  shared_at_epoch: number;
  origin: string;
  vector: number[];
};

/** What a team item can be: a memory or a session summary, never an observation (recall stays personal). */
export const TEAM_ITEM_WHERE = `source_kind IN ('memory', 'session_summary') AND layer IN ('L1', 'L2')`;

/**
 * A row read from the team store as the cache keeps it, or why it cannot be kept. Anyone who can
 * write the bucket can write any row (a null, a dropped column, a date past the year 275,760),
 * and one such row made every teammate's refresh fail: it is left out instead, the others kept.
 */
export function teamRowOf(row: Row, schema: Schema): TeamRow | string {
  const r: Row = { ...row };
  // The sharer's record is also said by the row's source: a table that lost the column still reads.
  if (typeof r.origin !== 'string' && typeof r.source_kind === 'string' && r.source_id !== null && r.source_id !== undefined) r.origin = `${r.source_kind}/${String(r.source_id)}`;
  for (const field of schema.fields) {
    const v = r[field.name];
    if (v === null || v === undefined) {
      if (!field.nullable) return `${field.name} is missing`;
      continue;
    }
    if (field.type instanceof Utf8 && typeof v !== 'string') return `${field.name} is not text`;
    if (field.type instanceof Int64 && !(typeof v === 'bigint' || (typeof v === 'number' && Number.isFinite(v)))) return `${field.name} is not a number`;
  }
  if (r.source_kind !== 'memory' && r.source_kind !== 'session_summary') return `source_kind '${String(r.source_kind)}' is not shared`;
  // A row dated outside what a Date holds broke every tool that shows its date.
  for (const name of ['created_at_epoch', 'shared_at_epoch', 'last_accessed_epoch']) {
    if (r[name] !== null && r[name] !== undefined && !(Math.abs(Number(r[name])) <= MAX_EPOCH_MS)) return `${name} is not a date`;
  }
  return r as TeamRow;
}

export class TeamTable {
  private constructor(
    readonly db: Connection,
    public table: Table,
    readonly dimension: number,
    private readonly location: string,
    private readonly storageOptions: Record<string, string> | undefined,
  ) {}

  static async open(location: string, storageOptions: Record<string, string> | undefined, dimension: number): Promise<TeamTable> {
    if (isLocalUri(location)) await refuseFile(localPath(location));
    const db = await lancedb.connect(location, { readConsistencyInterval: 0, storageOptions });
    let table: Table | null = null;
    for (let attempt = 0; !table; attempt++) {
      try {
        table = await db.createEmptyTable(TEAM_TABLE, teamItemsSchema(dimension), { mode: 'create', existOk: true });
      } catch (e) {
        // Another process created it between our list and our create: open theirs.
        if (attempt >= 5) throw e;
        await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
        table = await db.openTable(TEAM_TABLE).catch(() => null);
      }
    }
    const vector = (await table.schema()).fields.find((f) => f.name === 'vector');
    const dim = vector ? (vector.type as FixedSizeList).listSize : dimension;
    await ensureFtsIndex(table).catch(() => undefined);
    return new TeamTable(db, table, dim, location, storageOptions);
  }

  /**
   * Inserts the rows whose node_id is not stored yet; safe to repeat, safe next to other writers.
   * A row whose item is stored with other content (a record edited, then shared again) replaces
   * it, and the old content is purged as by `remove`: a secret an edit took out is not kept.
   */
  async put(shared: TeamRow[]): Promise<void> {
    // Shares queued one after the other (shared, edited, shared again while offline) go out
    // together: the last of an item is what it says now.
    const rows = [...new Map(shared.map((r) => [r.node_id, r])).values()];
    if (rows.length === 0) return;
    const schema = await this.table.schema();
    const columns = new Set(schema.fields.map((f) => f.name));
    const content = CONTENT.filter((c) => columns.has(c));
    const stored = new Map((await this.rows(`node_id IN ${sqlStringList(rows.map((r) => r.node_id))}`, [...content, 'node_id'])).map((r) => [String(r.node_id), r]));
    const changed = rows.filter((r) => {
      const old = stored.get(r.node_id);
      return old !== undefined && content.some((c) => String(old[c] ?? '') !== String(r[c] ?? ''));
    });
    if (changed.length > 0) await this.remove(`node_id IN ${sqlStringList(changed.map((r) => r.node_id))}`);
    const data = rowsToArrow(schema, rows.map((r) => this.fit(r)));
    await retryCommit(() => this.table.mergeInsert('node_id').whenNotMatchedInsertAll().execute(data), 20);
    await this.dedupe(rows);
  }

  /**
   * Leaves one row per item (project, node_id, shared_by) of these rows: two writers that put
   * the same item at once both found it absent and both inserted it. Every writer that finds
   * copies keeps the same one (the latest share, then the lowest row address) and deletes the
   * others by their address, which names a fragment that a compaction in between has replaced
   * (fragment ids are never reused): such a delete finds nothing, and the check runs again. A
   * copy that said something else (an edited share racing the old one) is purged as by `remove`.
   */
  private async dedupe(rows: TeamRow[]): Promise<void> {
    const where = `node_id IN ${sqlStringList(rows.map((r) => r.node_id))}`;
    for (let attempt = 0; attempt < 5; attempt++) {
      const columns = new Set((await this.table.schema()).fields.map((f) => f.name));
      const select = ['node_id', 'project', 'shared_by', 'shared_at_epoch', ...CONTENT].filter((c) => columns.has(c));
      const found = (await retryVanished(() => this.table.query().where(where).withRowId().select(select).toArray())) as Row[];
      const items = new Map<string, Row[]>();
      for (const r of found) {
        const key = `${String(r.project)}\0${String(r.node_id)}\0${String(r.shared_by ?? '')}`;
        addToList(items, key, r);
      }
      const doomed: bigint[] = [];
      let otherContent = false;
      for (const copies of items.values()) {
        if (copies.length < 2) continue;
        const rank = (r: Row): [number, bigint] => [Number(r.shared_at_epoch ?? 0), BigInt(r._rowid as bigint | number)];
        copies.sort((a, b) => {
          const [ea, ra] = rank(a);
          const [eb, rb] = rank(b);
          return eb - ea || (ra < rb ? -1 : ra > rb ? 1 : 0);
        });
        const [keep, ...rest] = copies;
        for (const r of rest) {
          doomed.push(BigInt(r._rowid as bigint | number));
          if (CONTENT.some((c) => columns.has(c) && String(r[c] ?? '') !== String(keep[c] ?? ''))) otherContent = true;
        }
      }
      if (doomed.length === 0) return;
      await retryCommit(() => this.table.delete(`${where} AND _rowid IN (${doomed.map(String).join(', ')})`), 20);
      if (otherContent) await this.purge();
    }
  }

  /** A vector of another dimension (a teammate on another model), or none, is stored as "not embedded". */
  private fit(row: TeamRow): Row {
    if ((row.vector as ArrayLike<number> | null | undefined)?.length === this.dimension) return row;
    return { ...row, vector: new Array(this.dimension).fill(0), embed_model: '' };
  }

  async rows(where: string | null, select?: string[]): Promise<Row[]> {
    const out = await retryVanished(() => {
      let q = this.table.query();
      if (where) q = q.where(where);
      if (select) q = q.select(projection(select));
      return q.toArray() as Promise<Row[]>;
    });
    return out.map(plainRow);
  }

  count(where?: string): Promise<number> {
    return retryVanished(() => this.table.countRows(where));
  }

  version(): Promise<number> {
    return this.table.version();
  }

  /**
   * Deletes the rows and then purges them as forget does: the fragments that held them are
   * rewritten, the FTS index rebuilt, and every older version pruned, so their text is in no
   * file (or object) of the store afterwards. Returns how many rows went.
   *
   * With `nodeIds` (the items removed, none of which may stay), the purge is checked after it ran
   * and repeated until no data object holds them (see tableObjects.ts): a teammate's commit racing
   * it can leave a row in a fragment a kept version references, or in a file no version
   * references. Throws PurgeUnfinished when they are still held after PURGE_ATTEMPTS, so the
   * caller keeps the removal to do again.
   */
  async remove(where: string, options: { purgeAnyway?: boolean; nodeIds?: string[] } = {}): Promise<number> {
    const doomed = await this.table.query().where(where).withRowId().select([]).toArray();
    // A removal after one interrupted between its delete and its purge finds no row: with
    // `purgeAnyway` it purges all the same. Either way the fragments rewritten are those that
    // hold deleted rows, told by their deletion files, whoever deleted them.
    if (doomed.length === 0 && !options.purgeAnyway) return 0;
    if (doomed.length > 0) await retryCommit(() => this.table.delete(where), 20);
    await this.purge();
    if (options.nodeIds && options.nodeIds.length > 0) await this.purgeUntilGone(where, options.nodeIds);
    return doomed.length;
  }

  /**
   * Purges again until no row of `where` is stored and no data object of the store holds
   * `nodeIds` (abandoned writes holding them are deleted). A row's node id decides what is left:
   * the bytes of an id inside a value of a row still stored (a teammate's text quoting the item,
   * another project's item under the same id) are that row's, not a leftover (tableObjects.ts).
   */
  private async purgeUntilGone(where: string, nodeIds: string[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const stored = await this.count(where);
      const left = await purgeLeftovers(this.location, this.storageOptions, TEAM_TABLE, nodeIds, () => this.valuesHolding(nodeIds));
      const referenced = left?.referenced.length ?? 0;
      if (stored === 0 && referenced === 0) return;
      if (attempt >= PURGE_ATTEMPTS) {
        throw new PurgeUnfinished(`unshared items are still in ${stored > 0 ? `${stored} row(s)` : `${referenced} data object(s)`} of the team store after ${attempt} purges (a teammate writing at the same time): kept queued to purge again`);
      }
      await sleep(100 * attempt);
      // A concurrent commit may have written the row again (rebased on a version before the delete).
      if ((await this.count(where)) > 0) await retryCommit(() => this.table.delete(where), 20);
      await this.purge();
    }
  }

  /** The text values of stored rows (any column) that contain one of `ids`. */
  private async valuesHolding(ids: string[]): Promise<string[]> {
    const columns = (await this.table.schema()).fields.filter((f) => f.type instanceof Utf8).map((f) => f.name);
    const values = new Set<string>();
    for (const row of await this.rows(null, columns)) {
      for (const c of columns) {
        const v = row[c];
        if (typeof v === 'string' && ids.some((id) => v.includes(id))) values.add(v);
      }
    }
    return [...values];
  }

  /** Rewrites the fragments that hold deleted rows, rebuilds the FTS index and prunes every older version. */
  private async purge(): Promise<void> {
    await rewriteFragments(this.table, await fragmentsWithDeletions(this.location, this.storageOptions, TEAM_TABLE));
    await ensureFtsIndex(this.table, true);
    // The delete's transaction quotes its predicate: an empty delete makes a newer version, so
    // that one is pruned with the rest.
    await retryCommit(() => this.table.delete('false'), 20);
    await retryCommit(() => this.table.optimize({ cleanupOlderThan: new Date(Date.now() + 1000) }), 20);
  }

  /** Replaces the whole content (the local cache after a download), keeping no older version: the items kept (project, node id, sharer), and why rows were left out. */
  async replaceAll(downloaded: Row[]): Promise<{ kept: Array<{ project: string; node_id: string; shared_by: string }>; skipped: string[] }> {
    const schema = teamItemsSchema(this.dimension);
    const rows: TeamRow[] = [];
    const skipped: string[] = [];
    for (const row of downloaded) {
      const kept = teamRowOf(row, schema);
      if (typeof kept === 'string') skipped.push(`${String(row.node_id ?? '?')}: ${kept}`);
      else rows.push(kept);
    }
    const data = rowsToArrow(schema, rows.map((r) => this.fit(r)));
    this.table = await this.db.createTable(TEAM_TABLE, data, { mode: 'overwrite', schema });
    await ensureFtsIndex(this.table, true);
    await this.table.optimize({ cleanupOlderThan: new Date(Date.now() + 1000) }).catch(() => undefined);
    return { kept: rows.map((r) => ({ project: r.project, node_id: r.node_id, shared_by: r.shared_by })), skipped };
  }

  close(): void {
    this.table.close();
    this.db.close();
  }
}

/**
 * An unshare whose purge did not finish: its items are still in the team store after
 * PURGE_ATTEMPTS purges (a teammate writing at the same time). The store answered: the removal
 * stays queued for the next sync, and holds back nothing else.
 */
export class PurgeUnfinished extends Error {
  override readonly name = 'PurgeUnfinished';
}

/** What a team item says: a row with other values in these is other content. */
const CONTENT = ['title', 'text', 'search_text', 'files', 'type', 'layer', 'branch'];

/**
 * A commit retried on conflicts, and on the panic LanceDB 0.31 raises when the conflict check of
 * a commit reads a version a teammate's cleanup has just pruned (conflict_resolver: "Dataset not
 * found" unwrapped): that commit did not happen, and every commit here is safe to repeat.
 */
function retryCommit<T>(fn: () => Promise<T>, attempts: number): Promise<T> {
  return retryConflicts(async () => {
    try {
      return await fn();
    } catch (e) {
      if (/Panic in async function/.test(String((e as Error)?.message ?? e))) throw new Error(`retryable commit conflict (LanceDB panicked: ${String((e as Error)?.message ?? e)})`);
      throw e;
    }
  }, attempts);
}

export function projectWhere(project: string): string {
  return `project = ${sqlString(project)}`;
}
