// Search cells of one project: written with their records, updated when a record's status or
// text changes, read by node id and searched (hybrid: full text + vectors) within the project.

import type { NodeFilter, SearchHit } from '../../api';
import type { Cell, Layer, SourceKind } from '../../model/records';
import { hybridSearch } from '../../retrieve/hybrid';
import type { QueryEmbedder } from '../../retrieve/hybrid';
import { cellFilterWhere, sqlIntList, sqlString } from '../filters';
import { rowToCell } from '../mapping';
import { ProjectTable } from '../projectTable';
import { TABLES } from '../schema';
import { retryVanished } from '../store';
import type { Row, Store } from '../store';

const NODE_COLUMNS = [
  'node_id', 'layer', 'source_kind', 'source_id', 'project', 'branch', 'type', 'title', 'text', 'files',
  'commit_sha', 'session_id', 'created_at_epoch', 'last_accessed_epoch', 'access_count', 'status',
];

export interface CellSearch {
  branch?: string;
  filter?: NodeFilter;
  layers?: Layer[];
  limit: number;
}

export class CellRepository {
  readonly table: ProjectTable;

  constructor(
    private readonly store: Store,
    project: string,
    private readonly onWrite: () => void,
  ) {
    this.table = new ProjectTable(store, TABLES.cells, project);
  }

  get dimension(): number {
    return this.store.dimension;
  }

  async add(rows: Row[]): Promise<void> {
    if (rows.length === 0) return;
    await this.table.add(rows, 'node_id');
    this.onWrite();
  }

  /** Writes cells by node id: a cell already stored is replaced (text, status), a new one added. */
  async upsert(rows: Row[]): Promise<void> {
    if (rows.length === 0) return;
    await this.table.upsert('node_id', rows);
    this.onWrite();
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

  delete(kind: SourceKind, ids: number[]): Promise<number> {
    return this.table.delete(this.bySource(kind, ids));
  }

  async node(nodeId: string): Promise<Cell | null> {
    const rows = await this.table.rows(`node_id = ${sqlString(nodeId)}`, { select: NODE_COLUMNS, limit: 1 });
    return rows.length > 0 ? rowToCell(rows[0]) : null;
  }

  search(text: string, embedder: QueryEmbedder | null, options: CellSearch): Promise<SearchHit[]> {
    const where = this.table.where(cellFilterWhere(options.branch, options.filter, options.layers));
    return retryVanished(() => hybridSearch({ cells: this.store.table(TABLES.cells), embedder }, text, where, options.limit));
  }
}
