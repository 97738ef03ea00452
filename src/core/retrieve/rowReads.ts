// Reads of the cells table by node id or row id, through the caller's filter: how search turns
// its candidates into rows.

import { append } from '../lists';
import type { Table } from '@lancedb/lancedb';
import { sqlString } from '../store/filters';
import { projection } from '../store/projection';

export type Row = Record<string, unknown>;

/** Ids per read: keeps each IN list (and its SQL) bounded. */
const ID_BATCH = 400;

export function and(where: string, clause: string): string {
  return where ? `(${where}) AND ${clause}` : clause;
}

async function* readBatches<T>(ids: T[], cells: Table, where: string, columns: string[], clause: (batch: T[]) => string, withRowId = false): AsyncIterable<Row[]> {
  for (let i = 0; i < ids.length; i += ID_BATCH) {
    let q = cells.query().where(and(where, clause(ids.slice(i, i + ID_BATCH)))).select(projection(columns));
    if (withRowId) q = q.withRowId();
    yield (await q.toArray()) as Row[];
  }
}

async function readBatched<T>(ids: T[], cells: Table, where: string, columns: string[], clause: (batch: T[]) => string, withRowId = false): Promise<Row[]> {
  const out: Row[] = [];
  for await (const rows of readBatches(ids, cells, where, columns, clause, withRowId)) append(out, rows);
  return out;
}

const byNodeIds = (batch: string[]): string => `node_id IN (${batch.map(sqlString).join(',')})`;

/** The rows among `nodeIds` that pass `where`, a read at a time (for many ids: bounded memory). */
export function nodeIdBatches(cells: Table, nodeIds: string[], where: string, columns: string[]): AsyncIterable<Row[]> {
  return readBatches(nodeIds, cells, where, columns, byNodeIds);
}

/** The rows among `nodeIds` that pass `where`, keyed by node id. */
export async function readByNodeId(cells: Table, nodeIds: string[], where: string, columns: string[]): Promise<Map<string, Row>> {
  const rows = await readBatched(nodeIds, cells, where, columns, byNodeIds);
  return new Map(rows.map((r) => [String(r.node_id), r]));
}

/**
 * The rows at `rowIds` (LanceDB row ids) that pass `where`. A row id whose row moved or went
 * reads nothing. (LanceDB plans a filter on `_rowid` beside other conditions only when the row
 * id is selected too.)
 */
export function readByRowId(cells: Table, rowIds: number[], where: string, columns: string[]): Promise<Row[]> {
  return readBatched(rowIds, cells, where, columns, (batch) => `_rowid IN (${batch.join(',')})`, true);
}
