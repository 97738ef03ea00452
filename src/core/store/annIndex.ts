// Approximate-nearest-neighbour index on cells.vector, built in the background once the
// table is big enough for exact search to cost more than an index is worth.
//
// Below the threshold, search is exact (brute-force scan): nothing to build, nothing to
// refresh, perfect recall. Measured here (2 shared cores, 512 dims, scoped query, k=10),
// exact search costs about 1 ms per 1,000 cells (about 10 ms at 10k, 20 ms at 20k) while
// HNSW_SQ answers in 4-5 ms with recall@10 of 0.99-1.0 and builds in about 2-4 s at 10-20k
// cells; from 10,000 embedded cells on, the index wins. Rows added after the build are scanned
// exactly and merged by LanceDB until the store's regular optimize() folds them into the index.
// The full numbers are in the README's Benchmarks section (bench/search.ts).
//
// HNSW_SQ is built with the L2 metric: with the dot metric LanceDB 0.31 returns wrong
// neighbours from an HNSW_SQ index (recall@10 0.02-0.12 measured), and on unit-length vectors L2
// ranks exactly like dot product. Every vector query must use the index's metric (LanceDB
// silently scans everything otherwise): build queries with `tuneVectorQuery`.
import { Index, type Table, type VectorQuery } from '@lancedb/lancedb';

/** Rows after which the index pays off on this class of machine (measured, see header). */
export const DEFAULT_ANN_THRESHOLD = 10_000;

export type AnnIndexKind = 'hnsw_sq' | 'ivf_pq';

export interface AnnIndexOptions {
  threshold?: number;
  kind?: AnnIndexKind;
  column?: string;
  /** Replace an existing vector index (e.g. after the vectors were re-created). */
  replace?: boolean;
  /**
   * Which rows count towards the threshold. Default: cells that have a vector, so that a table
   * just re-created for a new model (all vectors zero) does not get a graph of zeros.
   */
  countWhere?: string;
  logger?: (message: string) => void;
}

export type AnnIndexOutcome = 'built' | 'exists' | 'below-threshold' | 'busy';

/** Query-time settings matched to the index parameters below. Harmless without an index. */
export const ANN_QUERY = { ef: 120, nprobes: 24, refineFactor: 4 } as const;

export const DEFAULT_ANN_KIND: AnnIndexKind = 'hnsw_sq';

/** The metric an index kind is built with, and which every vector query must use (see header). */
export function annDistance(kind: AnnIndexKind = DEFAULT_ANN_KIND): 'l2' | 'dot' {
  return kind === 'hnsw_sq' ? 'l2' : 'dot';
}

// One build per table at a time: builds take minutes on large tables and run on LanceDB's
// native threads, so a second request while one runs is answered with 'busy'.
const building = new WeakMap<Table, Promise<AnnIndexOutcome>>();

export function vectorIndexName(column = 'vector'): string {
  return `${column}_idx`;
}

export async function hasVectorIndex(table: Table, column = 'vector'): Promise<boolean> {
  const indices = await table.listIndices();
  return indices.some((i) => i.columns.includes(column) && i.indexType !== 'FTS' && !/inverted|fts|btree|bitmap|label/i.test(i.indexType));
}

/**
 * Builds the vector index if the table has passed the threshold and has none yet. Never
 * throws: a failed build is logged and tried again on the next call.
 */
export function ensureAnnIndex(table: Table, options: AnnIndexOptions = {}): Promise<AnnIndexOutcome> {
  const running = building.get(table);
  if (running) return Promise.resolve('busy');
  const job = build(table, options).finally(() => building.delete(table));
  building.set(table, job);
  return job;
}

async function build(table: Table, options: AnnIndexOptions): Promise<AnnIndexOutcome> {
  const column = options.column ?? 'vector';
  const threshold = options.threshold ?? DEFAULT_ANN_THRESHOLD;
  const log = options.logger ?? (() => undefined);
  try {
    if (!options.replace && (await hasVectorIndex(table, column))) return 'exists';
    const rows = await table.countRows(options.countWhere ?? "embed_model != ''");
    if (rows < threshold) return 'below-threshold';
    const started = Date.now();
    await table.createIndex(column, { config: indexConfig(options.kind ?? DEFAULT_ANN_KIND, rows), replace: true });
    log(`vector index (${options.kind ?? DEFAULT_ANN_KIND}) built over ${rows} cells in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return 'built';
  } catch (e) {
    log(`vector index build failed (will retry later): ${String((e as Error).message ?? e)}`);
    return 'below-threshold';
  }
}

function indexConfig(kind: AnnIndexKind, rows: number): Index {
  if (kind === 'ivf_pq') {
    return Index.ivfPq({ distanceType: annDistance(kind), numPartitions: Math.max(1, Math.round(Math.sqrt(rows))) });
  }
  // One partition: a single graph fits in memory for the sizes a local memory reaches.
  return Index.hnswSq({ distanceType: annDistance(kind), numPartitions: 1 });
}

/**
 * Sets the metric, the limit and the recall settings on a vector query. Use it for every search
 * over cells.vector, with or without an index: without one it is an exact scan whose ranking on
 * unit vectors is the same for L2 and dot. The HNSW search list (ef) must hold every candidate
 * the refine step asks for (limit x refineFactor): LanceDB fails the query otherwise.
 */
export function tuneVectorQuery(query: VectorQuery, limit: number, kind: AnnIndexKind = DEFAULT_ANN_KIND): VectorQuery {
  const ef = Math.max(ANN_QUERY.ef, limit * ANN_QUERY.refineFactor);
  return query.distanceType(annDistance(kind)).limit(limit).ef(ef).nprobes(ANN_QUERY.nprobes).refineFactor(ANN_QUERY.refineFactor);
}
