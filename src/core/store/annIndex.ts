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
// Past IVF_PQ_FROM cells the index is IVF_PQ instead: one HNSW graph over a million vectors is
// loaded whole by the first search (over a gigabyte, more than LanceDB's index cache, so it is
// read again and again: recall@10 0.88, p50 171 ms, first query 9.2 s, a 1,188 MB process) and
// took 17.6 minutes and 5-7 GB to build here. IVF_PQ keeps 32 bytes per vector (40 MB), reads
// only the partitions it probes and re-ranks its best candidates with their full vectors: at
// 1,000,000 hashed-embedder cells, recall@10 0.90 against an exact scan, p50 78 / p95 125 ms,
// first query 0.26 s, a 208 MB process; built in 14.5 minutes at 735 MB. A store that grows past
// the line has its graph replaced once.
//
// Both kinds are built with the L2 metric: with the dot metric LanceDB 0.31 returns wrong
// neighbours from an HNSW_SQ index (recall@10 0.02-0.12 measured), and on unit-length vectors L2
// ranks exactly like dot product. Every vector query must use the index's metric (LanceDB
// silently scans everything otherwise) and its kind's search settings: build queries with
// `tuneVectorQuery`.
import { Index, type Table, type VectorQuery } from '@lancedb/lancedb';
import { errorMessage } from '../errorText';

/** Rows after which the index pays off on this class of machine (measured, see header). */
export const DEFAULT_ANN_THRESHOLD = 10_000;

/** Embedded cells from which the index is IVF_PQ rather than one HNSW graph (see header). */
export const IVF_PQ_FROM = 250_000;

/**
 * IVF partitions, whatever the size (the index records no count a query could read): about
 * 4,000 vectors each at 1,000,000 cells, LanceDB's own rule of thumb.
 */
const IVF_PARTITIONS = 256;

export type AnnIndexKind = 'hnsw_sq' | 'ivf_pq';

export interface AnnIndexOptions {
  threshold?: number;
  /** Embedded cells from which the index is IVF_PQ (default IVF_PQ_FROM). */
  ivfPqFrom?: number;
  /** This kind whatever the size (benchmarks); an existing index of any kind is then kept. */
  kind?: AnnIndexKind;
  column?: string;
  /** Replace an existing vector index (e.g. after the vectors were re-created). */
  replace?: boolean;
  /**
   * Which rows count towards the threshold. Default: cells that have a vector, so that a table
   * just re-created for a new model (all vectors zero) does not get a graph of zeros.
   */
  countWhere?: string;
  /** Builds the index (default: in this process); the store's builds a large table's in a child process. */
  build?: (kind: AnnIndexKind, rows: number) => Promise<void>;
  logger?: (message: string) => void;
}

export type AnnIndexOutcome = 'built' | 'exists' | 'below-threshold' | 'busy';

/** The metric every index is built with and every vector query must use (see header). */
export const ANN_DISTANCE = 'l2';

/**
 * Query-time settings per index kind, matched to the build parameters below. The HNSW search
 * list (ef) must also hold every candidate the refine step asks for (see tuneVectorQuery). IVF_PQ
 * probes about a third of its partitions and re-ranks 20 candidates per neighbour asked with
 * their full vectors. Recall@10 at 1,000,000 cells (README, Benchmarks): 26 probes 0.73, 52
 * probes 0.84, 80 probes 0.90, 100 probes 0.93, at p50 68-82 ms; a refine factor of 40 instead
 * of 20 added 0.01.
 */
export const ANN_QUERY = {
  hnsw_sq: { ef: 120, refineFactor: 4 },
  ivf_pq: { nprobes: 80, refineFactor: 20 },
} as const;

/** The index kind for a table of this many embedded cells. */
export function annKindFor(rows: number, ivfPqFrom = IVF_PQ_FROM): AnnIndexKind {
  return rows >= ivfPqFrom ? 'ivf_pq' : 'hnsw_sq';
}

// One build per table at a time: builds take minutes on large tables and run on LanceDB's
// native threads, so a second request while one runs is answered with 'busy'.
const building = new WeakMap<Table, Promise<AnnIndexOutcome>>();

export function vectorIndexName(column = 'vector'): string {
  return `${column}_idx`;
}

/** The kind of the table's vector index on `column`, or null when it has none. */
export async function vectorIndexKind(table: Table, column = 'vector'): Promise<AnnIndexKind | null> {
  const index = (await table.listIndices()).find((i) => i.columns.includes(column) && /^ivf/i.test(i.indexType));
  if (!index) return null;
  return /pq$/i.test(index.indexType) ? 'ivf_pq' : 'hnsw_sq';
}

export async function hasVectorIndex(table: Table, column = 'vector'): Promise<boolean> {
  return (await vectorIndexKind(table, column)) !== null;
}

/**
 * Builds the vector index if the table has passed the threshold and has none yet, and replaces
 * one HNSW graph by IVF_PQ once the table has grown past `ivfPqFrom`. Never throws: a failed
 * build is logged and tried again on the next call.
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
    const existing = options.replace ? null : await vectorIndexKind(table, column);
    // An index is never replaced by a smaller kind: a store that shrank keeps its IVF_PQ.
    if (existing && (existing === 'ivf_pq' || options.kind)) return 'exists';
    const rows = await table.countRows(options.countWhere ?? "embed_model != ''");
    if (rows < threshold) return existing ? 'exists' : 'below-threshold';
    const kind = options.kind ?? annKindFor(rows, options.ivfPqFrom);
    if (existing === kind) return 'exists';
    const started = Date.now();
    await (options.build ? options.build(kind, rows) : createVectorIndex(table, column, kind, rows));
    const replaced = existing ? ` (replacing the ${existing} index)` : '';
    log(`vector index (${kind}) built over ${rows} cells in ${((Date.now() - started) / 1000).toFixed(1)} s${replaced}`);
    forgetIndexKind(table);
    return 'built';
  } catch (e) {
    log(`vector index build failed (will retry later): ${errorMessage(e)}`);
    return 'below-threshold';
  }
}

/** Builds (or replaces) the vector index of `kind` for a table of `rows` embedded cells, here (the upkeep process calls it too). */
export function createVectorIndex(table: Table, column: string, kind: AnnIndexKind, rows: number): Promise<void> {
  return table.createIndex(column, { config: vectorIndexConfig(kind, rows), replace: true });
}

function vectorIndexConfig(kind: AnnIndexKind, rows: number): Index {
  if (kind === 'ivf_pq') {
    // 32 sub-vectors: 32 bytes per vector, whatever the dimension. Fewer partitions only for a
    // table too small to train 256 of them (at least 256 vectors each).
    return Index.ivfPq({ distanceType: ANN_DISTANCE, numPartitions: Math.min(IVF_PARTITIONS, Math.max(1, Math.floor(rows / 256))), numSubVectors: 32 });
  }
  // One partition: a single graph fits in memory below IVF_PQ_FROM.
  return Index.hnswSq({ distanceType: ANN_DISTANCE, numPartitions: 1 });
}

// The index a table's queries are tuned for, looked up again after this long (an index changes
// kind once in a store's life; until a process notices, its queries stay correct, only slower).
const KIND_TTL_MS = 30_000;
const kinds = new WeakMap<Table, { at: number; kind: Promise<AnnIndexKind | null> }>();

/** The kind of the table's vector index as last looked up (at most KIND_TTL_MS ago). */
export function currentIndexKind(table: Table): Promise<AnnIndexKind | null> {
  const known = kinds.get(table);
  if (known && Date.now() - known.at < KIND_TTL_MS) return known.kind;
  const kind = vectorIndexKind(table).catch(() => null);
  kinds.set(table, { at: Date.now(), kind });
  return kind;
}

function forgetIndexKind(table: Table): void {
  kinds.delete(table);
}

/**
 * Sets the metric, the limit and the recall settings of the index kind on a vector query (see
 * currentIndexKind). Use it for every search over cells.vector, with or without an index: without
 * one it is an exact scan whose ranking on unit vectors is the same for L2 and dot. The HNSW
 * search list (ef) must hold every candidate the refine step asks for (limit x refineFactor):
 * LanceDB fails the query otherwise.
 */
export function tuneVectorQuery(query: VectorQuery, limit: number, kind: AnnIndexKind | null): VectorQuery {
  const q = query.distanceType(ANN_DISTANCE).limit(limit);
  if (kind === null) return q;
  if (kind === 'ivf_pq') {
    const { nprobes, refineFactor } = ANN_QUERY.ivf_pq;
    return q.nprobes(nprobes).refineFactor(refineFactor);
  }
  const { ef, refineFactor } = ANN_QUERY.hnsw_sq;
  return q.ef(Math.max(ef, limit * refineFactor)).refineFactor(refineFactor);
}
