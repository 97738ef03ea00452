// Hybrid retrieval over the cells table: BM25 on the prepared search_text (the project's
// persistent index segments plus an in-memory delta, see lexicon.ts) and dot-product vector
// search over rows embedded by the current model, fused by weighted scores. The caller's scope
// arrives as an already-escaped `where` prefilter, and every returned row is read back from
// the table through it.

import { largest, smallest } from '../lists';
import type { Table } from '@lancedb/lancedb';
import type { RankedHit, SearchHit } from '../api';
import type { LexicalSegments } from '../store/lexicalSegments';
import { abbreviationCandidates, abbreviationsOf, bm25Search, idf, sectionCounts } from './lexicalIndex';
import { lexiconFor } from './lexicon';
import { wordNeighbours } from './wordNeighbours';
import { wordVectors } from './wordVectors';
import { ensureFtsIndex } from '../store/indexes';
import type { QueryCorpus } from './lexicon';
import { retrievalSettings } from './settings';
import type { RetrievalSettings } from './settings';
import { currentIndexKind, tuneVectorQuery } from '../store/annIndex';
import { joinedTerms, prepareQueryText } from './textPrep';
import { and, readByNodeId } from './rowReads';
import type { Row } from './rowReads';
import { CELL_COLUMNS, rowToCell } from '../store/mapping';
import { unrelatedSimilarity } from '../embed/hashed';

/** The part of an embedder that search needs (structurally the Embedder of src/core/embed). */
export interface QueryEmbedder {
  readonly name: string;
  readonly dimension: number;
  embed(texts: string[]): Promise<Float32Array[]>;
}

export interface HybridContext {
  cells: Table;
  /** The project searched: its index segments and statistics are the only ones used. */
  project: string;
  /** The store's index segments; null searches the project's cells from memory alone. */
  segments: LexicalSegments | null;
  embedder: QueryEmbedder | null;
  now?: number;
}

export interface HybridOptions {
  /** Overrides of the retrieval settings for this call. */
  settings?: Partial<RetrievalSettings>;
  /** Candidates taken from each list before fusion. */
  candidates?: number;
  /**
   * Prefilter of the project's documents: the best of them for the query lend their
   * distinctive terms to it (document expansion), so a question in everyday words also
   * matches the project's own terms for the same thing.
   */
  expandFrom?: string;
}

const RRF_K = 60;
/** Word matches needed before their scores are standardised (calibrated fusion). */
const Z_MIN_CANDIDATES = 10;

function num(v: unknown): number {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number') return v;
  return 0;
}

export function escapeSqlString(value: string): string {
  return value.replace(/'/g, "''");
}

interface Ranked {
  rows: Row[];
  scores: number[];
  /**
   * Where some of the query's terms are none of its own words (neighbours from software
   * documentation, see queryTerms), the others: a row holding none of these shares no word with
   * the query.
   */
  ownTerms?: ReadonlySet<string>;
  /** No row passes the filter at all: the nearest neighbours need not be looked for either. */
  noneAllowed?: boolean;
}

/**
 * Rows per batch of a scan of the whole project for the node ids that pass the prefilter: the
 * filter's regular expressions (a files filter's, see filters.sqlContainsAny) are compiled once
 * per batch, which at LanceDB's default size cost more than reading the rows (100 paths at 100,000
 * cells: 150 ms in batches of the default size, 32 ms in these). Only node ids and the filter's
 * columns are read.
 */
const SCAN_BATCH_ROWS = 65_536;

/**
 * BM25 candidates that pass the prefilter, best first. The index spans the whole table, so
 * when the filter is selective the allowed node ids are listed and scoring is confined to them.
 */
async function bm25Ranked(
  cells: Table,
  index: QueryCorpus,
  query: Map<string, number>,
  where: string,
  want: number,
  s: RetrievalSettings,
  allowedIds: { value: Set<string> | null },
  columns: string[],
): Promise<Ranked> {
  const params = { k1: s.k1, b: s.b };
  const ranked = (scored: Array<{ nodeId: string; score: number }>, rows: Map<string, Row>): Ranked => {
    const kept = scored.filter((x) => rows.has(x.nodeId)).slice(0, want);
    return { rows: kept.map((x) => rows.get(x.nodeId)!), scores: kept.map((x) => x.score) };
  };
  if (!allowedIds.value) {
    // The best `want` first: usually all of them pass the filter and one search and one read are
    // enough (a search for fewer is cheaper: see MaxScore in bm25Search). Else three times as many.
    let scored = bm25Search(index, query, want, params);
    const rows = await index.readRows(scored.map((x) => x.nodeId), where, columns);
    if (rows.size < want && scored.length === want) {
      scored = bm25Search(index, query, want * 3, params);
      for (const [id, row] of await index.readRows(scored.slice(want).map((x) => x.nodeId), where, columns)) rows.set(id, row);
    }
    // Enough survived the filter, or every matching document was already looked at.
    if (rows.size >= want || scored.length < want * 3) return ranked(scored, rows);
    let all = cells.query().select(['node_id']);
    if (where) all = all.where(where);
    const ids = (await all.toArray({ maxBatchLength: SCAN_BATCH_ROWS })) as Row[];
    allowedIds.value = new Set(ids.map((r) => String(r.node_id)));
  }
  // Nothing passes the filter (a search of the project's documents where it has none).
  if (allowedIds.value.size === 0) return { rows: [], scores: [], noneAllowed: true };
  const scored = bm25Search(index, query, want, params, allowedIds.value);
  return ranked(scored, await index.readRows(scored.map((x) => x.nodeId), where, columns));
}

/**
 * Query terms, plus at lower weights the store's own abbreviations of them, and for the words
 * the project rarely or never uses, their neighbours in software documentation that it does use
 * (wordNeighbours.ts): the question's everyday word reaches the project's own term.
 */
async function queryTerms(corpus: QueryCorpus, query: string, terms: string[], s: RetrievalSettings, borrowed: Set<string>): Promise<Map<string, number>> {
  const q = new Map(terms.map((t) => [t, 1] as [string, number]));
  if (s.joinedWeight > 0) {
    const joined = joinedTerms(query).filter((t) => !q.has(t));
    await corpus.load(joined);
    for (const t of joined) if (corpus.df(t) > 0) q.set(t, s.joinedWeight);
  }
  if (s.abbrevWeight > 0) {
    await corpus.load(terms.flatMap((t) => abbreviationCandidates(corpus, t)));
    for (const t of terms) {
      for (const a of abbreviationsOf(corpus, t, s.abbrevLift, s.abbrevMax)) if (!q.has(a)) q.set(a, s.abbrevWeight);
    }
  }
  if (s.relatedWeight > 0) {
    const table = wordNeighbours();
    const rare = terms.filter((t) => corpus.df(t) <= s.relatedDf * corpus.liveDocs);
    const near = rare.map((t) => table.get(t).filter(([, sim]) => sim >= s.relatedMin));
    await corpus.load(near.flatMap((list) => list.map(([w]) => w)));
    for (const list of near) {
      for (const [w, sim] of list.filter(([w]) => corpus.df(w) > 0).slice(0, s.relatedMax)) {
        if (q.has(w)) continue;
        q.set(w, s.relatedWeight * sim);
        borrowed.add(w);
      }
    }
  }
  return q;
}

interface Feedback {
  docs: number;
  terms: number;
  weight: number;
}

/** Pseudo-relevance feedback: the most distinctive terms of the top documents, weighted down. */
async function expandQuery(corpus: QueryCorpus, query: Map<string, number>, top: Row[], f: Feedback, s: RetrievalSettings): Promise<Map<string, number>> {
  const docs = top.slice(0, f.docs).map((row) => sectionCounts(String(row.search_text ?? '')));
  await corpus.load(docs.flatMap((d) => [...d.terms.keys()]));
  const weights = new Map<string, number>();
  for (const d of docs) {
    const len = Math.max(1, d.main + s.extraWeight * d.extra);
    for (const [term, [main, extra]] of d.terms) {
      if (query.has(term)) continue;
      const w = ((main + s.extraWeight * extra) / len) * idf(corpus, term);
      weights.set(term, (weights.get(term) ?? 0) + w);
    }
  }
  const best = [...weights].sort((a, b) => b[1] - a[1]).slice(0, f.terms);
  const max = best.length ? best[0][1] : 1;
  const out = new Map(query);
  for (const [term, w] of best) out.set(term, (f.weight * w) / max);
  return out;
}

async function lexicalSearch(ctx: HybridContext, query: string, where: string, want: number, s: RetrievalSettings, columns: string[], expansion: Row[]): Promise<Ranked> {
  const terms = prepareQueryText(query);
  if (!terms) return { rows: [], scores: [] };
  const cells = ctx.cells;
  if (s.lexical === 'fts') {
    // An experiment setting: the index is built on first use (the store keeps none, see store.ts).
    await ensureFtsIndex(cells);
    let q = cells.query().fullTextSearch(terms, { columns: 'search_text' });
    if (where) q = q.where(where);
    const rows = (await q.select(columns).limit(want).toArray()) as Row[];
    return { rows, scores: rows.map((r) => num(r._score)) };
  }
  const corpus = await lexiconFor(cells, ctx.segments, ctx.project).corpus(s.extraWeight, terms.split(' '));
  const borrowed = new Set<string>();
  let q = await queryTerms(corpus, query, terms.split(' '), s, borrowed);
  if (expansion.length > 0) q = await expandQuery(corpus, q, expansion, { docs: s.docExpansionDocs, terms: s.docExpansionTerms, weight: s.docExpansionWeight }, s);
  const allowed = { value: null as Set<string> | null };
  const cols = s.prfDocs > 0 || borrowed.size > 0 ? [...new Set([...columns, 'search_text'])] : columns;
  const first = await bm25Ranked(cells, corpus, q, where, want, s, allowed, cols);
  const ownTerms = borrowed.size > 0 ? new Set([...q.keys()].filter((t) => !borrowed.has(t))) : undefined;
  if (s.prfDocs <= 0 || first.rows.length === 0) return { ...first, ownTerms };
  const second = await bm25Ranked(cells, corpus, await expandQuery(corpus, q, first.rows, { docs: s.prfDocs, terms: s.prfTerms, weight: s.prfWeight }, s), where, want, s, allowed, cols);
  return { ...second, ownTerms };
}

/** The project's documents that best match the query, with their index text (see HybridOptions.expandFrom). */
async function expansionDocuments(ctx: HybridContext, query: string, options: HybridOptions, s: RetrievalSettings): Promise<Row[]> {
  if (!options.expandFrom || s.docExpansionDocs <= 0 || s.docExpansionWeight <= 0) return [];
  const hits = await hybridSearch(ctx, query, options.expandFrom, s.docExpansionDocs, {
    settings: { ...options.settings, docExpansionDocs: 0, prfDocs: 0, lexicalWeight: s.docExpansionLexical },
  });
  if (hits.length === 0) return [];
  if (s.docExpansionField === 'title') return hits.map((h) => ({ search_text: prepareQueryText(h.cell.title) }));
  const rows = await readByNodeId(ctx.cells, hits.map((h) => h.cell.node_id), options.expandFrom, ['node_id', 'search_text']);
  return hits.map((h) => rows.get(h.cell.node_id)).filter((r): r is Row => r !== undefined);
}

async function embedQuery(ctx: HybridContext, query: string): Promise<Float32Array | null> {
  const embedder = ctx.embedder;
  if (!embedder || !query.trim()) return null;
  const [vector] = await embedder.embed([query]);
  return vector && vector.length === embedder.dimension ? vector : null;
}

/**
 * Everyday sentences about nothing a project holds. A sentence encoder puts any two texts some
 * way apart (USE-lite: 0.1 to 0.35 between a query of nonsense, "kumquat" or a weather question
 * and a commit), which no fixed cut tells from a paraphrase that shares no word with the record
 * it means (0.25 to 0.65). What does tell them apart is the query's own nearness to these: on
 * USE-lite every unrelated query tried was nearer one of them than any record, and every
 * paraphrase nearer its record than any of them. So a neighbour that shares no word with the
 * query counts only where it is nearer than the nearest of these (unrelatedFloor).
 */
const UNRELATED = [
  'The weather is nice today.',
  'I had a sandwich for lunch.',
  'The train leaves at noon.',
  'She plays the violin.',
  'Mountains are covered in snow.',
  'Prices rose last quarter.',
  'The cat sleeps on the sofa.',
  'A new museum opened downtown.',
  'hello',
  'thanks',
  'ok',
  'asdf qwer zxcv',
];
const unrelatedVectors = new Map<string, { vectors: Promise<Float32Array[]>; until: number }>();
/** An embedder that could not embed UNRELATED is asked again after this long (a query waits for it once, not each time). */
const UNRELATED_RETRY_MS = 5 * 60_000;

/**
 * The similarity a neighbour that shares no word with the query must pass: the query's to the
 * nearest of UNRELATED (0 when they cannot be embedded), and at least what unrelated texts reach
 * with the model's vectors whatever the query (unrelatedSimilarity): for a sentence encoder, three
 * standard deviations of the dot product of random unit vectors (3 / sqrt(dimension): 0.13 at
 * 512), where its unrelated texts lie well above it anyway; for the hashed fallback, the nearness
 * that shared spellings give (0.3), which a store of many texts reaches for any question.
 */
async function unrelatedFloor(embedder: QueryEmbedder, vector: Float32Array): Promise<number> {
  const key = `${embedder.name}\u0000${embedder.dimension}`;
  let entry = unrelatedVectors.get(key);
  if (!entry || entry.until < Date.now()) {
    const vectors = embedder.embed(UNRELATED).catch((): Float32Array[] => {
      unrelatedVectors.set(key, { vectors, until: Date.now() + UNRELATED_RETRY_MS });
      return [];
    });
    entry = { vectors, until: Infinity };
    unrelatedVectors.set(key, entry);
  }
  const list = await entry.vectors;
  const chance = unrelatedSimilarity(embedder.name, vector.length);
  return list.filter((v) => v.length === vector.length).reduce((best, v) => Math.max(best, dot(vector, v)), chance);
}

async function vectorSearch(ctx: HybridContext, vector: Float32Array, where: string, limit: number, columns: string[]): Promise<Row[]> {
  // The metric must match the ANN index's once one exists, or LanceDB silently scans everything.
  // `where` is a prefilter (LanceDB's default): a small project in a big store still gets its k.
  return (await tuneVectorQuery(ctx.cells.vectorSearch(Array.from(vector)), limit, await currentIndexKind(ctx.cells))
    .where(and(where, `embed_model = '${escapeSqlString(ctx.embedder!.name)}'`))
    .select([...columns, '_distance'])
    .toArray()) as Row[];
}

function dot(a: Float32Array, b: ArrayLike<number>): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += a[i] * (b[i] ?? 0);
  return d;
}

/** Dot similarity of a row to the query, or null when the row has no vector of this model. */
function similarity(row: Row, vector: Float32Array, model: string): number | null {
  if (row.embed_model !== model || !row.vector) return null;
  const v = row.vector as ArrayLike<number> & { toArray?: () => ArrayLike<number> };
  return dot(vector, typeof v.toArray === 'function' ? v.toArray() : v);
}

function meanStd(xs: number[]): { mean: number; std: number } {
  const mean = xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
  const v = xs.length ? xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length : 0;
  return { mean, std: Math.sqrt(v) || 1 };
}

/**
 * How near each candidate's words are, as a whole, to the question's (wordVectors.ts): the
 * cosine of the mean vector of the question's words and that of the candidate's index text
 * (each word by the square root of its count, the diff text's counting `extraWeight`).
 * Candidates without a known word are left out.
 */
function wordVectorSimilarities(fused: Map<string, { row: Row }>, query: string, s: RetrievalSettings): Map<string, number> {
  const out = new Map<string, number>();
  const table = s.wordVectorWeight > 0 ? wordVectors() : null;
  const question = table?.mean(prepareQueryText(query).split(' ').map((t) => [t, 1] as const));
  if (!table || !question) return out;
  for (const [id, e] of fused) {
    const weights = new Map<string, number>();
    for (const [term, [main, extra]] of sectionCounts(String(e.row.search_text ?? '')).terms) {
      if (table.has(term)) weights.set(term, Math.sqrt(main + s.extraWeight * extra));
    }
    const v = table.mean(weights);
    if (v) out.set(id, dot(question, v));
  }
  return out;
}

/**
 * Calibrated fusion: each list's scores become standard scores over its own candidates, so a
 * word match, a sentence vector and the words' vectors count in the same units whatever the
 * query's length or the model's similarity range. A candidate one list did not score gets that
 * list's lowest. Fills `fused` with logistic scores in (0, 1) and returns the best possible one.
 */
function zFusion(fused: Map<string, { row: Row; score: number }>, lex: Ranked, vecRows: Row[], vector: Float32Array | null, model: string, query: string, s: RetrievalSettings): number {
  const bm25 = new Map<string, number>();
  lex.rows.forEach((row, i) => {
    const id = String(row.node_id);
    fused.set(id, { row, score: 0 });
    bm25.set(id, lex.scores[i]);
  });
  for (const row of vecRows) {
    const id = String(row.node_id);
    if (!fused.has(id)) fused.set(id, { row, score: 0 });
  }
  const sims = new Map<string, number>();
  if (vector) {
    for (const [id, e] of fused) {
      const sim = similarity(e.row, vector, model);
      if (sim !== null) sims.set(id, sim);
    }
  }
  const lists = [
    { weight: s.lexicalWeight, scores: bm25 },
    { weight: s.vectorWeight, scores: sims },
    { weight: s.wordVectorWeight, scores: wordVectorSimilarities(fused, query, s) },
  ]
    .filter((l) => l.weight > 0 && l.scores.size > 0)
    .map((l) => ({ ...l, ...meanStd([...l.scores.values()]), low: smallest(l.scores.values()) }));
  for (const [id, e] of fused) {
    const z = lists.reduce((sum, l) => sum + (l.weight * ((l.scores.get(id) ?? l.low) - l.mean)) / l.std, 0);
    e.score = 1 / (1 + Math.exp(-z));
  }
  return 1;
}

/** Node ids of the lexical rows that hold none of the query's own terms (see Ranked.ownTerms). */
function sharingNoWord(lex: Ranked): Set<string> {
  const out = new Set<string>();
  const own = lex.ownTerms;
  if (!own) return out;
  for (const row of lex.rows) {
    if (typeof row.search_text === 'string' && !row.search_text.split(' ').some((t) => own.has(t))) out.add(String(row.node_id));
  }
  return out;
}

interface RankedRow extends RankedHit {
  row: Row;
}

/** The hybrid ranking alone: the `limit` best nodes that pass `where`, without their cells. */
export async function rankNodes(ctx: HybridContext, query: string, where: string, limit: number, options: HybridOptions = {}): Promise<RankedHit[]> {
  return (await rankRows(ctx, query, where, limit, options, [])).map(({ node_id, score, distance }) => ({ node_id, score, distance }));
}

/** The hybrid ranking's `limit` best cells that pass `where`. */
export async function hybridSearch(ctx: HybridContext, query: string, where: string, limit: number, options: HybridOptions = {}): Promise<SearchHit[]> {
  return (await rankRows(ctx, query, where, limit, options, CELL_COLUMNS)).map(({ row, score, distance }) => ({ cell: rowToCell(row), score, distance }));
}

/**
 * The fusion. Candidates are read with the columns the ranking needs (their vectors) and
 * `columns`: a candidate's columns cost about as much to read as the ranking's own, so only
 * what the caller uses is read (a cell's 16 columns took a third of a search at 100,000 cells).
 */
async function rankRows(
  ctx: HybridContext,
  query: string,
  where: string,
  limit: number,
  options: HybridOptions,
  columns: string[],
): Promise<RankedRow[]> {
  if (limit <= 0) return [];
  const pool = options.candidates ?? 50;
  const first = await rankPool(ctx, query, where, pool, options, columns, false);
  // Under half the pool, the words found fewer than that and the neighbours were joined, and found
  // fewer than they were asked for: every cell the filter lets through is there, a wider pool finds no more.
  if (limit <= first.length || first.length < pool / 2) return first.slice(0, limit);
  // More asked than that ranking holds (more than its pool, or the words found few): it is
  // followed by the rest of a ranking of the largest pool, with the nearest neighbours joined,
  // so that asking for more never reorders (or renumbers) the first answers.
  const wider = await rankPool(ctx, query, where, MAX_POOL, options, columns, true);
  const seen = new Set(first.map((r) => r.node_id));
  const floor = first.at(-1)?.distance ?? 0;
  const rest = wider.filter((r) => !seen.has(r.node_id)).map((r) => (r.distance >= floor ? r : { ...r, distance: floor, score: 1 - floor }));
  return [...first, ...rest].slice(0, limit);
}

/** The largest ranking asked for (a search's 200 hits). */
const MAX_POOL = 200;

/**
 * The fusion over `candidates` candidates of each list, ranked whole: the same for every number
 * of results asked up to it, so that asking for 5 gives the first 5 of asking for 50.
 * `neighbours`: the nearest neighbours are joined whatever the words found.
 */
async function rankPool(ctx: HybridContext, query: string, where: string, candidates: number, options: HybridOptions, columns: string[], neighbours: boolean): Promise<RankedRow[]> {
  const s: RetrievalSettings = { ...retrievalSettings(), ...options.settings };
  const useVectors = s.vectorWeight > 0 && ctx.embedder !== null;
  // Score fusion needs the vectors of lexical candidates too.
  const lexColumns = [
    ...new Set([
      'node_id',
      ...columns,
      ...(useVectors && s.fusion !== 'rrf' ? ['embed_model', 'vector'] : []),
      ...(s.fusion === 'z' && s.wordVectorWeight > 0 ? ['search_text'] : []),
    ]),
  ];
  const expansion = s.lexicalWeight > 0 ? await expansionDocuments(ctx, query, options, s) : [];
  const [found, vector] = await Promise.all([
    s.lexicalWeight > 0 ? lexicalSearch(ctx, query, where, candidates, s, lexColumns, expansion) : Promise.resolve<Ranked>({ rows: [], scores: [] }),
    useVectors ? embedQuery(ctx, query) : Promise.resolve(null),
  ]);
  let lex = found;
  // The lexical candidates carry their stored vectors; the nearest-neighbour list adds the
  // candidates the words did not find (vectorList), or joins when the words found too little.
  // RRF always fuses both lists.
  const needVectorList = vector !== null && !lex.noneAllowed && (neighbours || s.fusion === 'rrf' || s.vectorList || lex.rows.length < candidates / 2);
  // Similarities are computed here from the vectors, whatever metric the ANN index uses.
  const vecRows = needVectorList ? await vectorSearch(ctx, vector, where, candidates, lexColumns) : [];

  // Neighbours the words did not find count only where they are nearer than unrelated text is.
  const lexical = new Set(lex.rows.map((r) => String(r.node_id)));
  const floor = vector && vecRows.some((r) => !lexical.has(String(r.node_id))) ? await unrelatedFloor(ctx.embedder!, vector) : 0;
  const fused = new Map<string, { row: Row; score: number }>();
  let best: number;
  // Standard scores only say how a candidate compares with the others: over a handful of word
  // matches they blow small differences up, and with none they would crown the least bad
  // neighbour, so the plain score rule decides then.
  if (s.fusion === 'z' && (vector || s.wordVectorWeight > 0) && lex.rows.length >= Z_MIN_CANDIDATES) {
    best = zFusion(fused, lex, vecRows, vector, ctx.embedder?.name ?? '', query, s);
  } else if (s.fusion === 'score' || s.fusion === 'z') {
    // Over a handful of matches, one found only through a neighbour of a query word (nine ~
    // divided) would be crowned: it shares no word with the query, so it is a neighbour like
    // those of the vectors, and counts only where it is as near as they must be.
    const model = ctx.embedder?.name ?? '';
    const unshared = vector ? sharingNoWord(lex) : new Set<string>();
    if (vector && unshared.size > 0) {
      const gate = await unrelatedFloor(ctx.embedder!, vector);
      const kept = lex.rows.map((row, i) => ({ row, score: lex.scores[i] })).filter(({ row }) => !unshared.has(String(row.node_id)) || (similarity(row, vector, model) ?? 0) > gate);
      lex = { ...lex, rows: kept.map((k) => k.row), scores: kept.map((k) => k.score) };
      for (const id of unshared) lexical.delete(id);
    }
    const top = lex.scores.length ? largest(lex.scores) : 0;
    const sims = new Map<string, number | null>();
    lex.rows.forEach((row, i) => {
      fused.set(String(row.node_id), { row, score: top > 0 ? (s.lexicalWeight * lex.scores[i]) / top : 0 });
      if (vector) sims.set(String(row.node_id), similarity(row, vector, model));
    });
    for (const row of vecRows) {
      const id = String(row.node_id);
      if (!fused.has(id)) fused.set(id, { row, score: 0 });
      sims.set(id, similarity(row, vector!, model));
    }
    // A row not embedded yet gets the mean similarity: neither helped nor hurt by the wait.
    const known = [...sims.values()].filter((x): x is number => x !== null);
    const mean = known.length ? known.reduce((a, b) => a + b, 0) / known.length : 0;
    for (const [id, e] of fused) {
      if (!vector) continue;
      const sim = sims.get(id) ?? mean;
      e.score += s.vectorWeight * (lexical.has(id) || sim > floor ? Math.max(0, sim) : 0);
    }
    best = s.lexicalWeight * (top > 0 ? 1 : 0) + (vector ? s.vectorWeight : 0);
  } else {
    const add = (rows: Row[], weight: number): void => {
      rows.forEach((row, i) => {
        const id = String(row.node_id);
        const entry = fused.get(id) ?? { row, score: 0 };
        entry.score += weight / (RRF_K + i + 1);
        fused.set(id, entry);
      });
    };
    add(lex.rows, s.lexicalWeight);
    add(vecRows, s.vectorWeight);
    best = ((lex.rows.length ? s.lexicalWeight : 0) + (vecRows.length ? s.vectorWeight : 0)) / (RRF_K + 1);
  }

  return [...fused.values()]
    .sort((a, b) => b.score - a.score)
    .slice(0, candidates)
    .map((e) => {
      const score = best > 0 ? Math.min(1, e.score / best) : 0;
      // Callers order by distance, so it follows the fused ranking rather than the vector alone.
      return { node_id: String(e.row.node_id), row: e.row, score, distance: 1 - score };
    });
}
