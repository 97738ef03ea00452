// An in-memory BM25 index over the cells table's prepared search_text. The table stays the
// source of truth: this index is rebuilt from it, refreshed when the table's version changes,
// and every candidate it proposes is re-read through the caller's `where` before it is
// returned. Why not LanceDB's own FTS: in 0.31 rows written after the index was last
// optimised are searched unranked (the first `limit` matches in storage order win), which
// is exactly the state of a store that is being written to.

import type { Table } from '@lancedb/lancedb';

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
    for (const term of searchText.split(' ')) {
      if (!term) continue;
      tf.set(term, (tf.get(term) ?? 0) + 1);
      len++;
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
      this.dfs.set(term, (this.dfs.get(term) ?? 0) + 1);
    }
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

interface IndexState {
  index: LexicalIndex;
  version: number;
  refreshing: Promise<void> | null;
  fullBuildAt: number;
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
  if (state.index.size === 0 || state.index.deadShare > 0.25) {
    const index = new LexicalIndex();
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
    const rebuilt: IndexState = { index: new LexicalIndex(), version: -1, refreshing: null, fullBuildAt: 0 };
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
export async function lexicalIndexFor(table: Table): Promise<LexicalIndex> {
  let state = states.get(table);
  if (!state) {
    state = { index: new LexicalIndex(), version: -1, refreshing: null, fullBuildAt: 0 };
    states.set(table, state);
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
