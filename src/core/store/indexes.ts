// The store's indexes: the scalar indexes each table keeps (and builds again after a purge), the
// unused full-text index of older stores, and doctor's check of the scalar indexes against the rows.

import * as lancedb from '@lancedb/lancedb';
import type { IndexConfig, Table } from '@lancedb/lancedb';
import type { RecordBatch } from 'apache-arrow';
import { sqlString } from './filters';
import { retryConflicts } from './retry';
import type { TableName } from './schema';
import type { Row } from './store';
import { briefError, errorMessage } from '../errorText';

/**
 * Scalar indexes, so that a lookup by id and the scope prefilter of every read cost an index
 * probe rather than a scan: BTREE on keys, BITMAP on low-cardinality columns. LanceDB keeps them
 * up as rows are added (new rows are scanned until optimize merges them in).
 */
export const SCALAR_INDEXES: Partial<Record<TableName, { btree: string[]; bitmap: string[] }>> = {
  // dedupe_key, fingerprint: every write looks its batch's keys up (idempotent imports, near-duplicates).
  observations: { btree: ['id', 'memory_session_id', 'created_at_epoch', 'dedupe_key', 'fingerprint'], bitmap: ['project', 'status', 'type'] },
  session_summaries: { btree: ['id', 'memory_session_id'], bitmap: ['project', 'status'] },
  memories: { btree: ['id'], bitmap: ['project', 'status'] },
  // node_id: getNode and the hydrate read of every search. LanceDB 0.31 panics on a conditional
  // partial merge on node_id that uses this index: the embedding queue's merge passes
  // useIndex(false) (see embed/backfill.ts); unconditional merges on it are fine.
  cells: { btree: ['node_id', 'source_id'], bitmap: ['project', 'layer', 'source_kind', 'status', 'embed_model', 'type'] },
  session_prompts: { btree: ['session_id'], bitmap: ['project'] },
  request_log: { btree: ['created_at_epoch'], bitmap: ['project'] },
  entities: { btree: ['id'], bitmap: ['project'] },
  relationships: { btree: ['source', 'target'], bitmap: ['project'] },
  lexical_segments: { btree: ['term'], bitmap: ['project'] },
  // key: getMeta and setMeta's merge on it, read by every write (forget stamps) and grown by
  // forgets (about three tombstone rows per forgotten commit), and metaEntries' prefix reads.
  meta: { btree: ['key'], bitmap: [] },
};

/** Creates the scalar indexes a table lacks (or all of them again, after a purge). */
export async function ensureScalarIndexes(table: Table, name: TableName, log: (m: string) => void = () => undefined, replace = false): Promise<void> {
  const spec = SCALAR_INDEXES[name];
  if (!spec) return;
  const have = new Set((await table.listIndices()).flatMap((i) => i.columns));
  const wanted: [string, lancedb.Index][] = [
    ...spec.btree.map((c): [string, lancedb.Index] => [c, lancedb.Index.btree()]),
    ...spec.bitmap.map((c): [string, lancedb.Index] => [c, lancedb.Index.bitmap()]),
  ];
  for (const [column, config] of wanted) {
    if (have.has(column) && !replace) continue;
    try {
      await retryConflicts(() => table.createIndex(column, { config, replace: true }));
    } catch (e) {
      // An index is a speed-up: a store without one still answers, by scanning.
      log(`index on ${name}.${column} not built (will retry at the next open): ${errorMessage(e)}`);
    }
  }
}

/**
 * Stores before the full-text segments kept a LanceDB FTS index on the cells. Search never reads
 * it (see retrieve/lexicon.ts), and at 1,000,000 cells LanceDB 0.31 never finished updating it:
 * the table's optimize stalled on it for good, leaving every scalar index unmerged. Dropped once.
 */
export async function dropFtsIndex(cells: Table, log: (m: string) => void): Promise<void> {
  for (const index of await cells.listIndices()) {
    if (!/fts|inverted/i.test(index.indexType)) continue;
    try {
      await retryConflicts(() => cells.dropIndex(index.name));
    } catch (e) {
      log(`the unused full-text index ${index.name} was not dropped (will retry at the next open): ${errorMessage(e)}`);
    }
  }
}

/** A LanceDB FTS index on `search_text`: the team table's search, and the cells' `lexical=fts` experiment. */
export async function ensureFtsIndex(cells: Table, replace = false): Promise<void> {
  const indices = await cells.listIndices();
  if (!replace && indices.some((i) => i.columns.includes('search_text'))) return;
  await retryConflicts(() => cells.createIndex('search_text', { config: lancedb.Index.fts(), replace: true }));
}

/** A scalar index doctor found damaged (Store.verify): what failed, and whether it was rebuilt. */
export interface IndexCheck {
  name: string;
  column: string;
  type: string;
  /** What the check saw: a read through it failed (LanceDB's message), or it answered other than the rows. */
  damage: string;
  rebuilt?: boolean;
  rebuildError?: string;
}

/** The scalar index kinds the store builds (SCALAR_INDEXES), as listIndices names them. */
const SCALAR_INDEX_TYPES = new Set(['BTree', 'Bitmap']);
/** Values of a bitmap column whose counts are compared with the index's answers; the rest are read through it unchecked. */
const CHECKED_VALUES = 1000;

/** A SQL literal for a value read from a column, or null for a kind compared no further (floats, dates, lists). */
function literal(value: unknown): string | null {
  if (typeof value === 'string') return sqlString(value);
  if (typeof value === 'bigint' || (typeof value === 'number' && Number.isSafeInteger(value))) return String(value);
  return null;
}

/** What a whole read of the table saw in an indexed column: rows by value (a bitmap's), or the non-null rows and one value (a btree's). */
class ColumnValues {
  readonly counts = new Map<string, number>();
  nonNull = 0;
  some: string | null = null;

  constructor(
    readonly column: string,
    private readonly byValue: boolean,
  ) {}

  add(batch: RecordBatch): void {
    const vector = batch.getChild(this.column);
    if (!vector) return;
    for (let i = 0; i < batch.numRows; i++) {
      const value: unknown = vector.get(i);
      if (value === null || value === undefined) continue;
      this.nonNull++;
      if (!this.byValue) {
        this.some ??= literal(value);
        continue;
      }
      const key = literal(value);
      if (key === null) continue;
      const n = this.counts.get(key);
      if (n !== undefined) this.counts.set(key, n + 1);
      else if (this.counts.size < CHECKED_VALUES) this.counts.set(key, 1);
    }
  }
}

/**
 * The indexes among `indices` that fail: their statistics cannot be read, or a count through
 * them fails (a garbled bitmap makes LanceDB 0.31 panic: "Panic in async function") or differs
 * from the rows the whole read saw (`seen`, by index; null: only that the reads succeed). A
 * bitmap is read for each value seen; a btree over its whole range.
 */
async function checkScalarIndexes(table: Table, indices: IndexConfig[], seen: Array<ColumnValues | null>): Promise<IndexCheck[]> {
  const damaged: IndexCheck[] = [];
  for (const [k, index] of indices.entries()) {
    const column = index.columns[0];
    const values = seen[k];
    // The store's indexed columns are plain lower-case names (SCALAR_INDEXES).
    const name = column;
    const fail = (damage: string): number => damaged.push({ name: index.name, column, type: index.indexType, damage });
    try {
      await table.indexStats(index.name);
      if (index.indexType === 'Bitmap') {
        const counts = values ? values.counts : new Map((await table.query().select([column]).limit(CHECKED_VALUES).toArray()).map((r: Row) => [literal(r[column]), -1]));
        for (const [value, want] of counts) {
          if (value === null) continue;
          const got = await table.countRows(`${name} = ${value}`);
          if (want >= 0 && got !== want) {
            fail(`it finds ${got} row(s) with ${column} = ${value}, the table holds ${want}`);
            break;
          }
        }
      } else {
        const some = values ? values.some : literal((await table.query().where(`${name} IS NOT NULL`).select([column]).limit(1).toArray())[0]?.[column]);
        if (some === null) continue;
        // Both sides of one value: every non-null row, read through the whole index.
        const got = await table.countRows(`${name} >= ${some} OR ${name} < ${some}`);
        if (values && got !== values.nonNull) fail(`it finds ${got} row(s) with a ${column}, the table holds ${values.nonNull}`);
      }
    } catch (error) {
      fail(briefError(error));
    }
  }
  return damaged;
}

/**
 * Reads `table` whole, all columns, a batch at a time (`read` told each batch's rows), then checks
 * each of its scalar indexes against what the read saw (checkScalarIndexes): the damaged ones.
 */
export async function readAndCheck(table: Table, read: (rows: number) => void): Promise<IndexCheck[]> {
  const scalar = (await table.listIndices()).filter((i) => SCALAR_INDEX_TYPES.has(i.indexType) && i.columns.length === 1);
  const seen = scalar.map((i) => new ColumnValues(i.columns[0], i.indexType === 'Bitmap'));
  for await (const batch of table.query()) {
    read(batch.numRows);
    for (const values of seen) values.add(batch);
  }
  return checkScalarIndexes(table, scalar, seen);
}

/** Builds the damaged indexes again from the table's rows (`replace` writes a new index; the old files go with old versions), then checks each once more: sets `rebuilt` or `rebuildError`. */
export async function rebuildIndexes(table: Table, damaged: IndexCheck[]): Promise<void> {
  for (const index of damaged) {
    try {
      await retryConflicts(() => table.createIndex(index.column, { config: index.type === 'Bitmap' ? lancedb.Index.bitmap() : lancedb.Index.btree(), replace: true }));
      const [rebuilt] = (await table.listIndices()).filter((i) => i.columns.length === 1 && i.columns[0] === index.column && SCALAR_INDEX_TYPES.has(i.indexType));
      const still = rebuilt ? await checkScalarIndexes(table, [rebuilt], [null]) : [];
      if (still.length > 0) index.rebuildError = still[0].damage;
      else index.rebuilt = true;
    } catch (error) {
      index.rebuildError = briefError(error);
    }
  }
}
