// Hybrid retrieval over the cells table: BM25 on the prepared search_text (an in-process
// index kept in step with the table, see lexicalIndex.ts) and dot-product vector search over
// rows embedded by the current model, fused by weighted reciprocal rank. The caller's scope
// arrives as an already-escaped `where` prefilter, and every returned row is read back from
// the table through it.

import type { Table } from '@lancedb/lancedb';
import type { SearchHit } from '../api';
import type { Cell, Layer, SourceKind } from '../model/records';
import { lexicalIndexFor } from './lexicalIndex';
import type { LexicalIndex } from './lexicalIndex';
import { retrievalSettings } from './settings';
import type { RetrievalSettings } from './settings';
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
  /** Overrides of the retrieval settings for this call. */
  settings?: Partial<RetrievalSettings>;
  /** Candidates taken from each list before fusion. */
  candidates?: number;
}

const CELL_COLUMNS = [
  'node_id', 'layer', 'source_kind', 'source_id', 'project', 'branch', 'type', 'title', 'text',
  'files', 'commit_sha', 'session_id', 'created_at_epoch', 'last_accessed_epoch', 'access_count', 'status',
];

const RRF_K = 60;
const ID_BATCH = 400;

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

function and(where: string, clause: string): string {
  return where ? `(${where}) AND ${clause}` : clause;
}

/** The rows among `nodeIds` that pass `where`, keyed by node id. */
async function readAllowed(cells: Table, nodeIds: string[], where: string): Promise<Map<string, Row>> {
  const out = new Map<string, Row>();
  for (let i = 0; i < nodeIds.length; i += ID_BATCH) {
    const ids = nodeIds.slice(i, i + ID_BATCH).map((id) => `'${escapeSqlString(id)}'`);
    const rows = (await cells.query().where(and(where, `node_id IN (${ids.join(',')})`)).select(CELL_COLUMNS).toArray()) as Row[];
    for (const r of rows) out.set(String(r.node_id), r);
  }
  return out;
}

interface Ranked {
  rows: Row[];
}

/**
 * BM25 candidates that pass the prefilter, best first. The index spans the whole table, so
 * when the filter is selective the allowed node ids are listed and scoring is confined to them.
 */
async function bm25Ranked(
  cells: Table,
  index: LexicalIndex,
  query: Map<string, number>,
  where: string,
  want: number,
  s: RetrievalSettings,
  allowedIds: { value: Set<string> | null },
): Promise<Ranked> {
  const params = { k1: s.k1, b: s.b };
  if (!allowedIds.value) {
    const scored = index.search(query, want * 3, params);
    const rows = await readAllowed(cells, scored.map((x) => x.nodeId), where);
    const kept = scored.filter((x) => rows.has(x.nodeId));
    // Enough survived the filter, or every matching document was already looked at.
    if (kept.length >= want || scored.length < want * 3) return { rows: kept.slice(0, want).map((x) => rows.get(x.nodeId)!) };
    let all = cells.query().select(['node_id']);
    if (where) all = all.where(where);
    const ids = (await all.toArray()) as Row[];
    allowedIds.value = new Set(ids.map((r) => String(r.node_id)));
  }
  const scored = index.search(query, want, params, allowedIds.value);
  const rows = await readAllowed(cells, scored.map((x) => x.nodeId), where);
  return { rows: scored.filter((x) => rows.has(x.nodeId)).map((x) => rows.get(x.nodeId)!) };
}

/** Pseudo-relevance feedback: the most distinctive terms of the top documents, weighted down. */
function expandQuery(index: LexicalIndex, query: Map<string, number>, top: Row[], s: RetrievalSettings): Map<string, number> {
  const weights = new Map<string, number>();
  for (const row of top.slice(0, s.prfDocs)) {
    const id = String(row.node_id);
    const len = Math.max(1, index.lengthOf(id));
    for (const term of index.termsOf(id)) {
      if (query.has(term)) continue;
      const w = (index.termFrequency(id, term) / len) * index.idf(term);
      weights.set(term, (weights.get(term) ?? 0) + w);
    }
  }
  const best = [...weights].sort((a, b) => b[1] - a[1]).slice(0, s.prfTerms);
  const max = best.length ? best[0][1] : 1;
  const out = new Map(query);
  for (const [term, w] of best) out.set(term, (s.prfWeight * w) / max);
  return out;
}

async function lexicalSearch(cells: Table, query: string, where: string, want: number, s: RetrievalSettings): Promise<Row[]> {
  const terms = prepareQueryText(query);
  if (!terms) return [];
  if (s.lexical === 'fts') {
    let q = cells.query().fullTextSearch(terms, { columns: 'search_text' });
    if (where) q = q.where(where);
    return (await q.select(CELL_COLUMNS).limit(want).toArray()) as Row[];
  }
  const index = await lexicalIndexFor(cells);
  const q = new Map(terms.split(' ').map((t) => [t, 1] as [string, number]));
  const allowed = { value: null as Set<string> | null };
  const first = await bm25Ranked(cells, index, q, where, want, s, allowed);
  if (s.prfDocs <= 0 || first.rows.length === 0) return first.rows;
  return (await bm25Ranked(cells, index, expandQuery(index, q, first.rows, s), where, want, s, allowed)).rows;
}

async function vectorSearch(ctx: HybridContext, query: string, where: string, limit: number): Promise<Row[]> {
  const embedder = ctx.embedder;
  if (!embedder || !query.trim()) return [];
  const [vector] = await embedder.embed([query]);
  if (!vector || vector.length !== embedder.dimension) return [];
  return (await ctx.cells
    .vectorSearch(Array.from(vector))
    .distanceType('dot')
    .where(and(where, `embed_model = '${escapeSqlString(embedder.name)}'`))
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
  const s: RetrievalSettings = { ...retrievalSettings(), ...options.settings };
  const candidates = Math.max(options.candidates ?? 50, limit);
  const [lexRows, vecRows] = await Promise.all([
    s.lexicalWeight > 0 ? lexicalSearch(ctx.cells, query, where, candidates, s) : Promise.resolve([]),
    s.vectorWeight > 0 ? vectorSearch(ctx, query, where, candidates) : Promise.resolve([]),
  ]);

  const fused = new Map<string, { row: Row; score: number }>();
  const add = (rows: Row[], weight: number): void => {
    rows.forEach((row, i) => {
      const id = String(row.node_id);
      const entry = fused.get(id) ?? { row, score: 0 };
      entry.score += weight / (RRF_K + i + 1);
      fused.set(id, entry);
    });
  };
  add(lexRows, s.lexicalWeight);
  add(vecRows, s.vectorWeight);

  // Normalised so that a document ranked first in every list scores 1.
  const best = ((lexRows.length ? s.lexicalWeight : 0) + (vecRows.length ? s.vectorWeight : 0)) / (RRF_K + 1);
  return [...fused.values()]
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((e) => {
      const score = best > 0 ? Math.min(1, e.score / best) : 0;
      // Callers order by distance, so it follows the fused ranking rather than the vector alone.
      return { cell: rowToCell(e.row), score, distance: 1 - score };
    });
}
