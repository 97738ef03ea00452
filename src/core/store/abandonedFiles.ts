// A write that loses its commit leaves its data file behind, referenced by no version: an update
// that conflicts with another process's (both counting a read of one record), a vector write-back
// that conflicts with an access count, a compaction preempted by an update. Such a file holds
// whole rows, and LanceDB's cleanup keeps it for seven days (it cannot tell it from a write still
// in flight). So a forgotten row may still be on disk after its forget pruned every old version.
//
// After a forget's purge, each table's data files that no manifest references and that hold a
// forgotten row are deleted. That is safe for a file of a write still in flight too: a write that
// holds a row deleted before it commits can only fail (its update conflicts with the delete), so
// its file would be abandoned. The rows are told by markers no other row shares (a node id, a
// request id, a record's creation time to the millisecond with its title), so that a write of
// other rows still in flight is never taken for one. The team store checks its purges the same
// way (team/tableObjects.ts).

import type { Row } from './store';
import { TABLES, type TableName } from './schema';
import { tableObjects } from './tableObjects';

/** The columns whose values make a row's marker, the first the most telling (at least HEAD characters). */
const MARKER_COLUMNS: Partial<Record<TableName, [string, ...string[]]>> = {
  [TABLES.cells]: ['node_id'],
  [TABLES.observations]: ['created_at', 'title'],
  [TABLES.sessionSummaries]: ['created_at', 'request'],
  [TABLES.memories]: ['text', 'title'],
  [TABLES.requestLog]: ['request_id'],
  [TABLES.sessionPrompts]: ['prompt', 'session_id'],
};

/** The characters a marker's first part is looked up by. */
const HEAD = 16;
/** How much of a value a marker keeps: a part is found as it is stored, so a prefix says as much. */
const PART = 64;
/** Up to this many markers, each is looked for with indexOf; more are looked up by a window over the text. */
const FEW = 64;
/** The most rows a table's markers keep (a forget of everything in a store of a million cells would hold them all). */
const MOST = 250_000;

/** Markers of the rows a forget deleted from one table: each a few strings all of which a file holding the row has. */
export class RowMarkers {
  private readonly byHead = new Map<string, string[][]>();
  private count = 0;

  constructor(readonly table: TableName) {}

  /** The columns a row's marker is read from; null for a table whose rows have none. */
  static columns(table: TableName): string[] | null {
    return MARKER_COLUMNS[table] ?? null;
  }

  /** Notes a deleted row (read with `columns`); a row whose first marker value is too short to tell it is left out. */
  add(row: Row): void {
    const parts = (MARKER_COLUMNS[this.table] ?? []).map((c) => (typeof row[c] === 'string' ? (row[c] as string).slice(0, PART) : ''));
    if (this.count >= MOST || parts.length === 0 || parts[0].length < HEAD || parts.some((p) => p === '')) return;
    const head = parts[0].slice(0, HEAD);
    const list = this.byHead.get(head);
    if (list) list.push(parts);
    else this.byHead.set(head, [parts]);
    this.count++;
  }

  get size(): number {
    return this.count;
  }

  /** Whether `text` (a data file read as UTF-8) holds every part of some marker. */
  heldIn(text: string): boolean {
    const holds = (at: number, parts: string[]): boolean => text.startsWith(parts[0], at) && parts.every((p) => text.includes(p));
    if (this.count <= FEW) {
      for (const list of this.byHead.values()) {
        for (const parts of list) {
          for (let at = text.indexOf(parts[0]); at >= 0; at = text.indexOf(parts[0], at + 1)) if (holds(at, parts)) return true;
        }
      }
      return false;
    }
    for (let at = 0; at + HEAD <= text.length; at++) {
      const list = this.byHead.get(text.slice(at, at + HEAD));
      if (list?.some((parts) => holds(at, parts))) return true;
    }
    return false;
  }
}

/**
 * Deletes the data files of `table` that no manifest references and that hold a row `markers`
 * name; returns their keys. Nothing where the table's objects cannot be listed (gs://, Azure
 * reached through another sign-in).
 */
export async function removeAbandoned(uri: string, storageOptions: Record<string, string> | undefined, markers: RowMarkers): Promise<string[]> {
  const objects = tableObjects(uri, storageOptions, markers.table);
  if (!objects || markers.size === 0) return [];
  const manifests = async (): Promise<string[]> => {
    const texts: string[] = [];
    for (const key of (await objects.list()).filter((k) => k.startsWith('_versions/') && k.endsWith('.manifest'))) {
      const text = await objects.read(key);
      if (text !== null) texts.push(text);
    }
    return texts;
  };
  const referenced = (key: string, texts: string[]): boolean => texts.some((m) => m.includes(key.slice('data/'.length)));
  const data = (await objects.list()).filter((k) => k.startsWith('data/'));
  let known = await manifests();
  const removed: string[] = [];
  for (const key of data.filter((k) => !referenced(k, known))) {
    const text = await objects.read(key);
    if (text === null || !markers.heldIn(text)) continue;
    // Read again before the delete: a version committed meanwhile may reference it.
    known = await manifests();
    if (referenced(key, known)) continue;
    await objects.remove(key);
    removed.push(key);
  }
  return removed;
}
