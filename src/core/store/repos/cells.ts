// Search cells of one project: written with their records, updated when a record's status or
// text changes, read by node id and searched (hybrid: full text + vectors) within the project.
// A record has exactly one cell, named by cellNodeId; removeStray drops any other.

import { append } from '../../lists';
import type { NodeFilter, RankedHit, SearchHit } from '../../api';
import type { Cell, Layer, SourceKind } from '../../model/records';
import { DOCUMENT_TYPE } from '../../model/records';
import { hybridSearch, rankNodes } from '../../retrieve/hybrid';
import { lexiconFor } from '../../retrieve/lexicon';
import type { QueryEmbedder } from '../../retrieve/hybrid';
import type { LexicalSegments } from '../lexicalSegments';
import { cellNodeId } from '../cells';
import { pendingForgets } from '../forgetMarks';
import { cellFilterWhere, sqlIntList, sqlString } from '../filters';
import { CELL_COLUMNS, rowToCell } from '../mapping';
import { ProjectTable } from '../projectTable';
import { RECORD_TABLE_OF, TABLES } from '../schema';
import { retryVanished } from '../retry';
import type { Row, Store } from '../store';

export interface CellSearch {
  branch?: string;
  /** The repository's default branch, where known: its records hold on every branch (Scope). */
  defaultBranch?: string | null;
  filter?: NodeFilter;
  layers?: Layer[];
  limit: number;
  includeSuperseded?: boolean;
}

/** Cells without a record that races alone can leave, at most (see removeStray). */
const ORPHANS_FROM_RACES = 20;

/** Whether this many cells without a record, of `cells`, say records were lost rather than raced. */
export function orphansLookLost(orphans: number, cells: number): boolean {
  return orphans > Math.max(ORPHANS_FROM_RACES, cells / 10);
}

export class CellRepository {
  readonly table: ProjectTable;

  constructor(
    private readonly store: Store,
    project: string,
    private readonly onWrite: () => void,
    private readonly segments: LexicalSegments,
  ) {
    this.table = new ProjectTable(store, TABLES.cells, project);
  }

  get dimension(): number {
    return this.store.dimension;
  }

  /** Writes cells built by the cell builders (see cells.ts), each named after its record. */
  async add(rows: Row[]): Promise<void> {
    if (rows.length === 0) return;
    const named = rows.map((r) => ({ ...r, node_id: cellNodeId(this.table.project, r.source_kind as SourceKind, Number(r.source_id)) }));
    await this.table.add(named, 'node_id');
    this.onWrite();
  }

  /** Replaces stored cells by node id (text, status); a cell no longer stored (its record forgotten meanwhile) is not written back. */
  async rewrite(rows: Row[]): Promise<void> {
    if (rows.length === 0) return;
    await this.store.rewrite(TABLES.cells, 'node_id', this.table.project, rows);
    this.onWrite();
  }

  /**
   * Removes the cells of `kind` that are not the one cell of a stored record: a second copy (a
   * writer slower than the repair's grace wrote the node the repair had written) or a cell whose
   * record is gone (a forget deleted the record between a writer's two commits, or a forget still
   * under way, or killed, deleted it: PendingForgets). Returns how many.
   * The cells are read before the records: a writer commits a record before its cell, so every
   * cell read here whose record is stored has that record in the list read after it.
   */
  async removeStray(kind: SourceKind, recordIds: () => Promise<Set<number>>, onSuspect?: (orphans: number) => void): Promise<number> {
    const cells = await this.table.rows(`source_kind = ${sqlString(kind)}`, { select: ['source_id', 'embed_model'], withRowId: true });
    if (cells.length === 0) return 0;
    const records = await recordIds();
    const pending = await pendingForgets(this.store);
    // Of two copies, the one that has its vector already stays.
    cells.sort((a, b) => Number(Boolean(b.embed_model)) - Number(Boolean(a.embed_model)));
    const kept = new Set<number>();
    const stray: string[] = [];
    const orphans: string[] = [];
    for (const c of cells) {
      const id = Number(c.source_id);
      if (records.has(id) && !kept.has(id)) kept.add(id);
      // A cell a forget (killed, or still running) is deleting: no lost record's copy.
      else if (records.has(id) || pending.covers(this.table.project, kind, id)) stray.push(String(c._rowid));
      else orphans.push(String(c._rowid));
    }
    // A race leaves a few cells without a record; many means the records table lost rows (a
    // version gone with a crashed disk, a folder restored in part): those cells may be the only
    // copy of the text left, so they stay, and `doctor` says so.
    // And a records table this open created, in a store whose cells it found, is one that was
    // lost (refuseMissingRecordTables in store.ts stops such an open): its cells are kept too.
    if (orphans.length > 0 && (orphansLookLost(orphans.length, cells.length) || this.recordsTableNew(kind))) onSuspect?.(orphans.length);
    else append(stray, orphans);
    // A row id names one stored copy; one a compaction has moved since names nothing (the next
    // repair looks again).
    for (let i = 0; i < stray.length; i += 1000) await this.table.delete(`_rowid IN (${stray.slice(i, i + 1000).join(', ')})`);
    return stray.length;
  }

  /** Whether this open created the records table of `kind` while the cells were already stored. */
  private recordsTableNew(kind: SourceKind): boolean {
    const created = this.store.createdAtOpen;
    return created.has(RECORD_TABLE_OF[kind]) && !created.has(TABLES.cells);
  }

  private bySource(kind: SourceKind, ids: number[]): string {
    return `source_kind = ${sqlString(kind)} AND source_id IN ${sqlIntList(ids)}`;
  }

  update(kind: SourceKind, ids: number[], values: Record<string, string>): Promise<void> {
    return this.table.update(this.bySource(kind, ids), values);
  }

  count(kind: SourceKind, ids: number[]): Promise<number> {
    return this.table.count(this.bySource(kind, ids));
  }

  async delete(kind: SourceKind, ids: number[]): Promise<number> {
    return this.table.delete(this.bySource(kind, ids));
  }

  /** A cell by node id; none of a record under a forget (see PendingForgets). */
  async node(nodeId: string): Promise<Cell | null> {
    const rows = await this.table.rows(`node_id = ${sqlString(nodeId)}`, { select: CELL_COLUMNS, limit: 1 });
    const cell = rows.length > 0 ? rowToCell(rows[0]) : null;
    return cell && !(await pendingForgets(this.store)).covers(this.table.project, cell.source_kind, cell.source_id) ? cell : null;
  }

  /** Brings the project's full-text view up to date (a search does the same first). */
  warm(): Promise<void> {
    return retryVanished(() => lexiconFor(this.store.table(TABLES.cells), this.segments, this.table.project).refresh());
  }

  /**
   * The project's cells that best match `text`. None of records under a forget, whichever process
   * runs it or was killed running it (see PendingForgets): left out of the search, and out of its
   * hits when a forget began while it ran.
   */
  search(text: string, embedder: QueryEmbedder | null, options: CellSearch): Promise<SearchHit[]> {
    return retryVanished(async () => {
      const args = await this.searchArgs(text, embedder, options);
      const hits = args ? await hybridSearch(...args) : [];
      const pending = await pendingForgets(this.store);
      return hits.filter((h) => !pending.covers(this.table.project, h.cell.source_kind, h.cell.source_id));
    });
  }

  /** The search's ranking alone: node ids and scores, no cell read. */
  rank(text: string, embedder: QueryEmbedder | null, options: CellSearch): Promise<RankedHit[]> {
    return retryVanished(async () => {
      const args = await this.searchArgs(text, embedder, options);
      const hits = args ? await rankNodes(...args) : [];
      const pending = await pendingForgets(this.store);
      return hits.filter((h) => !pending.coversNode(this.table.project, h.node_id));
    });
  }

  /** The search's arguments; null when the whole project is under a forget. */
  private async searchArgs(text: string, embedder: QueryEmbedder | null, options: CellSearch): Promise<Parameters<typeof rankNodes> | null> {
    const filter = cellFilterWhere(options, options.filter, options.layers, { includeSuperseded: options.includeSuperseded });
    const forgetting = (await pendingForgets(this.store)).cellsWhere(this.table.project);
    if (forgetting === 'false') return null;
    const where = (base: string): string => this.table.where(forgetting ? `(${base}) AND ${forgetting}` : base);
    const ctx = { cells: this.store.table(TABLES.cells), project: this.table.project, segments: this.segments, embedder };
    const expandFrom = where(cellFilterWhere(options, { type: DOCUMENT_TYPE }));
    return [ctx, text, where(filter), options.limit, { expandFrom }];
  }
}
