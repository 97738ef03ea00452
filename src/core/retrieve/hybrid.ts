// Hybrid retrieval over the cells table: BM25 full text on the prepared search_text and
// dot-product vector search (only rows embedded by the current model), fused by weighted
// reciprocal rank. The caller's scope arrives as an already-escaped `where` prefilter.

import type { Table } from '@lancedb/lancedb';
import type { SearchHit } from '../api';
import type { Cell, Layer, SourceKind } from '../model/records';
import { prepareQueryText } from './textPrep';

/** The part of an embedder that search needs (structurally the Embedder of src/core/embed). */
export interface QueryEmbedder {
  readonly name: string;
  readonly dimension: number;
  embed(texts: string[]): Promise<Float32Array[]>;
}

export interface HybridContext {
  cells: Table;
  embedder: QueryEmbedder | null;
  now?: number;
}

export interface HybridOptions {
  /** Weight of the full-text list in the fusion. */
  ftsWeight?: number;
  /** Weight of the vector list in the fusion. */
  vectorWeight?: number;
  /** Candidates taken from each list before fusion. */
  candidates?: number;
}

const CELL_COLUMNS = [
  'node_id', 'layer', 'source_kind', 'source_id', 'project', 'branch', 'type', 'title', 'text',
  'files', 'commit_sha', 'session_id', 'created_at_epoch', 'last_accessed_epoch', 'access_count', 'status',
];

const RRF_K = 60;

type Row = Record<string, unknown>;

function num(v: unknown): number {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number') return v;
  return 0;
}

function strOrNull(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v);
}

export function rowToCell(r: Row): Cell {
  return {
    node_id: String(r.node_id),
    layer: String(r.layer) as Layer,
    source_kind: String(r.source_kind) as SourceKind,
    source_id: num(r.source_id),
    project: String(r.project ?? ''),
    branch: strOrNull(r.branch),
    type: String(r.type ?? ''),
    title: String(r.title ?? ''),
    text: String(r.text ?? ''),
    files: strOrNull(r.files),
    commit_sha: strOrNull(r.commit_sha),
    session_id: strOrNull(r.session_id),
    created_at_epoch: num(r.created_at_epoch),
    last_accessed_epoch: r.last_accessed_epoch === null || r.last_accessed_epoch === undefined ? null : num(r.last_accessed_epoch),
    access_count: num(r.access_count),
    status: String(r.status ?? 'active'),
  };
}

export function escapeSqlString(value: string): string {
  return value.replace(/'/g, "''");
}

async function ftsSearch(cells: Table, query: string, where: string, limit: number): Promise<Row[]> {
  if (!query) return [];
  let q = cells.query().fullTextSearch(query, { columns: 'search_text' });
  if (where) q = q.where(where);
  return (await q.select(CELL_COLUMNS).limit(limit).toArray()) as Row[];
}

async function vectorSearch(ctx: HybridContext, query: string, where: string, limit: number): Promise<Row[]> {
  const embedder = ctx.embedder;
  if (!embedder || !query.trim()) return [];
  const [vector] = await embedder.embed([query]);
  if (!vector || vector.length !== embedder.dimension) return [];
  const modelFilter = `embed_model = '${escapeSqlString(embedder.name)}'`;
  const filter = where ? `(${where}) AND ${modelFilter}` : modelFilter;
  return (await ctx.cells
    .vectorSearch(Array.from(vector))
    .distanceType('dot')
    .where(filter)
    .select(CELL_COLUMNS)
    .limit(limit)
    .toArray()) as Row[];
}

export async function hybridSearch(
  ctx: HybridContext,
  query: string,
  where: string,
  limit: number,
  options: HybridOptions = {},
): Promise<SearchHit[]> {
  if (limit <= 0) return [];
  const ftsWeight = options.ftsWeight ?? 1;
  const vectorWeight = options.vectorWeight ?? 0.5;
  const candidates = Math.max(options.candidates ?? 50, limit);
  const [ftsRows, vecRows] = await Promise.all([
    ftsWeight > 0 ? ftsSearch(ctx.cells, prepareQueryText(query), where, candidates) : Promise.resolve([]),
    vectorWeight > 0 ? vectorSearch(ctx, query, where, candidates) : Promise.resolve([]),
  ]);

  const fused = new Map<string, { row: Row; score: number; distance: number | null }>();
  const add = (rows: Row[], weight: number, isVector: boolean): void => {
    rows.forEach((row, i) => {
      const id = String(row.node_id);
      const entry = fused.get(id) ?? { row, score: 0, distance: null };
      entry.score += weight / (RRF_K + i + 1);
      if (isVector) entry.distance = num(row._distance);
      fused.set(id, entry);
    });
  };
  add(ftsRows, ftsWeight, false);
  add(vecRows, vectorWeight, true);

  // Normalise so that a document ranked first in every list scores 1.
  const best = (ftsRows.length ? ftsWeight : 0) / (RRF_K + 1) + (vecRows.length ? vectorWeight : 0) / (RRF_K + 1);
  return [...fused.values()]
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((e) => {
      const score = best > 0 ? Math.min(1, e.score / best) : 0;
      return { cell: rowToCell(e.row), score, distance: e.distance ?? 1 - score };
    });
}
