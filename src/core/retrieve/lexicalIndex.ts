// An in-memory BM25 index over the cells table's prepared search_text. The table stays the
// source of truth: this index is rebuilt from it, refreshed when the table's version changes,
// and every candidate it proposes is re-read through the caller's `where` before it is
// returned. Why not LanceDB's own FTS: in 0.31 rows written after the index was last
// optimised are searched unranked (the first `limit` matches in storage order win), which
// is exactly the state of a store that is being written to.

import type { Table } from '@lancedb/lancedb';
import { EXTRA_MARK } from './textPrep';

export interface Bm25Params {
  k1: number;
  b: number;
}

export const DEFAULT_BM25: Bm25Params = { k1: 1.2, b: 0.75 };

interface Posting {
  docs: number[];
  tfs: number[];
}

export class LexicalIndex {
  private readonly nodeIds: string[] = [];
  private readonly lengths: number[] = [];
  private readonly alive: boolean[] = [];
  private readonly docTerms: string[][] = [];
  private readonly byNode = new Map<string, number>();
  private readonly postings = new Map<string, Posting>();
  private readonly dfs = new Map<string, number>();
  private totalLength = 0;
  private liveDocs = 0;
  private deadDocs = 0;
  /** Short alphabetic terms by first letter: the candidates for abbreviations. */
  private readonly shortTerms = new Map<string, Set<string>>();
  private readonly abbrevCache = new Map<string, string[]>();

  /** @param extraWeight weight of the terms after EXTRA_MARK (a commit's diff text). */
  constructor(readonly extraWeight = 1) {}

  get size(): number {
    return this.liveDocs;
  }

  /** Share of slots held by removed documents; a rebuild is due when it grows large. */
  get deadShare(): number {
    return this.nodeIds.length === 0 ? 0 : this.deadDocs / this.nodeIds.length;
  }

  has(nodeId: string): boolean {
    return this.byNode.has(nodeId);
  }

  nodeIdList(): string[] {
    return [...this.byNode.keys()];
  }

  add(nodeId: string, searchText: string): void {
    if (this.byNode.has(nodeId)) this.remove(nodeId);
    const doc = this.nodeIds.length;
    const tf = new Map<string, number>();
    let len = 0;
    let weight = 1;
    for (const term of searchText.split(' ')) {
      if (!term) continue;
      if (term === EXTRA_MARK) {
        weight = this.extraWeight;
        continue;
      }
      tf.set(term, (tf.get(term) ?? 0) + weight);
      len += weight;
    }
    this.nodeIds.push(nodeId);
    this.lengths.push(len);
    this.alive.push(true);
    this.docTerms.push([...tf.keys()]);
    this.byNode.set(nodeId, doc);
    for (const [term, n] of tf) {
      let p = this.postings.get(term);
      if (!p) {
        p = { docs: [], tfs: [] };
        this.postings.set(term, p);
      }
      p.docs.push(doc);
      p.tfs.push(n);
      const df = (this.dfs.get(term) ?? 0) + 1;
      this.dfs.set(term, df);
      if (df === 1 && term.length >= 3 && term.length <= 5 && /^[a-z]+$/.test(term)) {
        let bucket = this.shortTerms.get(term[0]);
        if (!bucket) {
          bucket = new Set();
          this.shortTerms.set(term[0], bucket);
        }
        bucket.add(term);
      }
    }
    if (this.abbrevCache.size > 0) this.abbrevCache.clear();
    this.totalLength += len;
    this.liveDocs++;
  }

  remove(nodeId: string): void {
    const doc = this.byNode.get(nodeId);
    if (doc === undefined) return;
    this.byNode.delete(nodeId);
    this.alive[doc] = false;
    this.totalLength -= this.lengths[doc];
    this.liveDocs--;
    this.deadDocs++;
    // Document frequencies follow removals; postings keep the dead slot and skip it.
    for (const term of this.docTerms[doc]) this.dfs.set(term, (this.dfs.get(term) ?? 1) - 1);
    this.docTerms[doc] = [];
  }

  df(term: string): number {
    return this.dfs.get(term) ?? 0;
  }

  idf(term: string): number {
    const n = this.df(term);
    return Math.log(1 + (this.liveDocs - n + 0.5) / (n + 0.5));
  }

  /** Terms of the index vocabulary (for expansion from the store's own words). */
  vocabulary(): IterableIterator<string> {
    return this.dfs.keys();
  }

  /** Documents (live) that contain both terms, relative to chance: P(a | b) / P(a). */
  lift(a: string, b: string): number {
    const pa = this.postings.get(a);
    const pb = this.postings.get(b);
    const dfa = this.df(a);
    const dfb = this.df(b);
    if (!pa || !pb || dfa === 0 || dfb === 0) return 0;
    const [small, large] = pa.docs.length <= pb.docs.length ? [pa, pb] : [pb, pa];
    const inLarge = new Set(large.docs);
    let both = 0;
    for (const d of small.docs) if (this.alive[d] && inLarge.has(d)) both++;
    return both / dfb / (dfa / this.liveDocs);
  }

  /**
   * Short forms of `term` that the indexed text uses (environ -> env, packag -> pkg, command ->
   * cmd): a 3-5 letter prefix, or the first letter plus a subsequence of its consonants, that
   * co-occurs with the term at least `minLift` times more often than chance. The most used first.
   */
  abbreviationsOf(term: string, minLift: number, max: number): string[] {
    const key = `${term} ${minLift} ${max}`;
    const cached = this.abbrevCache.get(key);
    if (cached) return cached;
    const out: Array<[string, number]> = [];
    if (/^[a-z]+$/.test(term) && term.length >= 5) {
      for (const v of this.shortTerms.get(term[0]) ?? []) {
        if (v === term || this.df(v) === 0 || !isAbbreviation(v, term)) continue;
        if (this.lift(v, term) < minLift) continue;
        out.push([v, this.df(v)]);
      }
    }
    const result = out.sort((a, b) => b[1] - a[1]).slice(0, max).map((x) => x[0]);
    this.abbrevCache.set(key, result);
    return result;
  }

  /** Distinct terms of an indexed document. */
  termsOf(nodeId: string): string[] {
    const doc = this.byNode.get(nodeId);
    return doc === undefined ? [] : this.docTerms[doc];
  }

  /** How often a term occurs in a document (0 when absent), and the document's length. */
  termFrequency(nodeId: string, term: string): number {
    const doc = this.byNode.get(nodeId);
    const p = doc === undefined ? undefined : this.postings.get(term);
    if (!p || doc === undefined) return 0;
    const i = p.docs.indexOf(doc);
    return i < 0 ? 0 : p.tfs[i];
  }

  lengthOf(nodeId: string): number {
    const doc = this.byNode.get(nodeId);
    return doc === undefined ? 0 : this.lengths[doc];
  }

  /**
   * BM25 over weighted query terms. Returns node ids and scores, best first, cut at `limit`.
   * `allowed`, when given, restricts scoring to those node ids.
   */
  search(query: Map<string, number>, limit: number, params: Bm25Params = DEFAULT_BM25, allowed?: Set<string>): Array<{ nodeId: string; score: number }> {
    if (this.liveDocs === 0 || query.size === 0) return [];
    const avg = this.totalLength / this.liveDocs;
    const scores = new Map<number, number>();
    for (const [term, weight] of query) {
      const p = this.postings.get(term);
      if (!p || weight <= 0) continue;
      const idf = this.idf(term) * weight;
      for (let i = 0; i < p.docs.length; i++) {
        const doc = p.docs[i];
        if (!this.alive[doc]) continue;
        const tf = p.tfs[i];
        const norm = tf + params.k1 * (1 - params.b + (params.b * this.lengths[doc]) / avg);
        scores.set(doc, (scores.get(doc) ?? 0) + (idf * tf * (params.k1 + 1)) / norm);
      }
    }
    const out: Array<{ nodeId: string; score: number }> = [];
    for (const [doc, score] of scores) {
      const nodeId = this.nodeIds[doc];
      if (allowed && !allowed.has(nodeId)) continue;
      out.push({ nodeId, score });
    }
    out.sort((a, b) => b.score - a.score);
    return out.slice(0, limit);
  }
}

function consonantSkeleton(word: string): string {
  return word[0] + word.slice(1).replace(/[aeiou]/g, '');
}

function isSubsequence(short: string, long: string): boolean {
  let i = 0;
  for (const ch of long) if (ch === short[i]) i++;
  return i === short.length;
}

/** `short` can abbreviate `long`: a prefix, or first letter plus consonants in order (pkg, cfg). */
export function isAbbreviation(short: string, long: string): boolean {
  if (short.length < 3 || short.length > 5 || long.length < short.length + 2 || short[0] !== long[0]) return false;
  if (long.startsWith(short)) return true;
  return /^[^aeiou]+$/.test(short.slice(1)) && isSubsequence(short, consonantSkeleton(long));
}

interface IndexState {
  index: LexicalIndex;
  version: number;
  refreshing: Promise<void> | null;
  fullBuildAt: number;
  extraWeight: number;
}

// Rows rewritten in place (same node id, new text) are only picked up by a full rebuild.
const FULL_REBUILD_MS = 10 * 60_000;

const states = new WeakMap<Table, IndexState>();
const READ_BATCH = 500;

async function readSearchText(table: Table, nodeIds: string[]): Promise<Array<{ node_id: string; search_text: string }>> {
  const out: Array<{ node_id: string; search_text: string }> = [];
  for (let i = 0; i < nodeIds.length; i += READ_BATCH) {
    const ids = nodeIds.slice(i, i + READ_BATCH).map((id) => `'${id.replace(/'/g, "''")}'`);
    const rows = (await table.query().where(`node_id IN (${ids.join(',')})`).select(['node_id', 'search_text']).toArray()) as Array<Record<string, unknown>>;
    for (const r of rows) out.push({ node_id: String(r.node_id), search_text: String(r.search_text ?? '') });
  }
  return out;
}

async function refresh(state: IndexState, table: Table, version: number): Promise<void> {
  if (state.index.size === 0 || state.index.deadShare > 0.25 || state.index.extraWeight !== state.extraWeight) {
    const index = new LexicalIndex(state.extraWeight);
    const rows = (await table.query().select(['node_id', 'search_text']).toArray()) as Array<Record<string, unknown>>;
    for (const r of rows) index.add(String(r.node_id), String(r.search_text ?? ''));
    state.index = index;
    state.version = version;
    state.fullBuildAt = Date.now();
    return;
  }
  // Incremental: node ids are cheap to list; only new rows' text is read. A row whose text
  // changed in place gets a new version of itself through the engine's delete + add.
  const current = (await table.query().select(['node_id']).toArray()) as Array<Record<string, unknown>>;
  const present = new Set(current.map((r) => String(r.node_id)));
  for (const id of state.index.nodeIdList()) if (!present.has(id)) state.index.remove(id);
  const added = [...present].filter((id) => !state.index.has(id));
  for (const r of await readSearchText(table, added)) state.index.add(r.node_id, r.search_text);
  state.version = version;
  if (Date.now() - state.fullBuildAt > FULL_REBUILD_MS) {
    // In the background: the incremental index serves until the rebuilt one is ready.
    const rebuilt: IndexState = { index: new LexicalIndex(state.extraWeight), version: -1, refreshing: null, fullBuildAt: 0, extraWeight: state.extraWeight };
    state.fullBuildAt = Date.now();
    refresh(rebuilt, table, version).then(
      () => {
        if (state.version === rebuilt.version) state.index = rebuilt.index;
      },
      () => undefined,
    );
  }
}

/** The index of a cells table, brought up to the table's current version. */
export async function lexicalIndexFor(table: Table, extraWeight = 1): Promise<LexicalIndex> {
  let state = states.get(table);
  if (!state) {
    state = { index: new LexicalIndex(extraWeight), version: -1, refreshing: null, fullBuildAt: 0, extraWeight };
    states.set(table, state);
  }
  if (state.extraWeight !== extraWeight) {
    state.extraWeight = extraWeight;
    state.version = -1;
  }
  const version = await table.version();
  while (state.version < version) {
    if (!state.refreshing) {
      const s = state;
      s.refreshing = refresh(s, table, version).finally(() => {
        s.refreshing = null;
      });
    }
    await state.refreshing;
  }
  return state.index;
}
