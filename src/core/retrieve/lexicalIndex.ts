// BM25 over the cells' prepared search_text. Scoring, document frequencies and the store's own
// abbreviations are computed over a `Corpus`: the live documents of one project, whatever holds
// them. Two corpora exist: LexicalIndex below, an in-memory index (the delta of rows written
// since the last index segment, or a whole project while it has no segment yet), and the
// Lexicon (lexicon.ts), which merges a project's persistent segments with its delta.
//
// Term counts are kept per section (the message, and the extra section after EXTRA_MARK, e.g.
// what a commit's diff says), so that the extra section's weight is chosen at query time and
// a segment written once serves every weight.

import { PostingCursor, encodePostings, lowerBound, skipBlocks } from './postings';
import { EXTRA_MARK } from './textPrep';

export interface Bm25Params {
  k1: number;
  b: number;
}

export const DEFAULT_BM25: Bm25Params = { k1: 1.2, b: 0.75 };

/**
 * Part of a term's postings, encoded (postings.ts) and read in place: its documents are corpus
 * documents from `base` on, of which only those `alive` marks (by corpus document number) are
 * live; all of them when it is null.
 */
export interface PostingRun {
  base: number;
  data: Uint8Array;
  alive: Uint8Array | null;
}

/** The live documents of one project, as BM25 sees them (extra section weight applied). */
export interface Corpus {
  readonly liveDocs: number;
  /** Upper bound of the corpus's document numbers (live or not): the size of a per-document array. */
  readonly docSpan: number;
  /** Sum of the live documents' weighted lengths. */
  readonly totalLength: number;
  /** Weight of a term's count in the extra section (a document's is main + extraWeight * extra). */
  readonly extraWeight: number;
  /** The term's postings, in runs; undefined when no document has it. */
  runs(term: string): readonly PostingRun[] | undefined;
  /** Live documents with the term. */
  df(term: string): number;
  length(doc: number): number;
  nodeId(doc: number): string;
  /** Short alphabetic terms (see isShortTerm) starting with `letter`: abbreviation candidates. */
  shortTerms(letter: string): Iterable<string>;
}

/** 3-5 letter alphabetic terms: the only ones that can abbreviate a query word. */
export function isShortTerm(term: string): boolean {
  return term.length >= 3 && term.length <= 5 && /^[a-z]+$/.test(term);
}

/** Counts of a prepared search_text per section: term -> [message count, extra count]. */
export function sectionCounts(searchText: string): { terms: Map<string, [number, number]>; main: number; extra: number } {
  const terms = new Map<string, [number, number]>();
  let main = 0;
  let extra = 0;
  let inExtra = false;
  for (const term of searchText.split(' ')) {
    if (!term) continue;
    if (term === EXTRA_MARK) {
      inExtra = true;
      continue;
    }
    let c = terms.get(term);
    if (!c) {
      c = [0, 0];
      terms.set(term, c);
    }
    if (inExtra) {
      c[1]++;
      extra++;
    } else {
      c[0]++;
      main++;
    }
  }
  return { terms, main, extra };
}

export function df(corpus: Corpus, term: string): number {
  return corpus.df(term);
}

/** Live documents among a term's runs. */
export function liveCount(runs: readonly PostingRun[] | undefined): number {
  let n = 0;
  for (const { base, data, alive } of runs ?? []) {
    const c = new PostingCursor(data, base);
    if (!alive) n += c.remaining;
    else while (c.next()) n += alive[c.doc];
  }
  return n;
}

/** Calls `fn` with each live document of a term's runs. */
function forEachLive(runs: readonly PostingRun[] | undefined, fn: (doc: number) => void): void {
  for (const { base, data, alive } of runs ?? []) {
    const c = new PostingCursor(data, base);
    while (c.next()) if (!alive || alive[c.doc]) fn(c.doc);
  }
}

export function idf(corpus: Corpus, term: string): number {
  const n = df(corpus, term);
  return Math.log(1 + (corpus.liveDocs - n + 0.5) / (n + 0.5));
}

/**
 * bm25Search's working arrays, one per process and reused: a search is synchronous, so two never
 * share them at once. Fresh arrays over the whole corpus for every query (2 MB at 100,000 cells)
 * kept the garbage collector busy for longer than the scoring itself; each search clears only
 * the entries it touched.
 */
let scratch = { scores: new Float64Array(0), norms: new Float64Array(0), touched: new Uint32Array(0) };

function scratchFor(span: number): typeof scratch {
  if (scratch.scores.length < span) {
    const n = Math.max(span, Math.ceil(scratch.scores.length * 1.5));
    scratch = { scores: new Float64Array(n), norms: new Float64Array(n), touched: new Uint32Array(n) };
  }
  return scratch;
}

/** Searches whose last terms only updated documents already scored (MaxScore; see bm25Search). */
export const bm25Counters = { pruned: 0 };

interface QueryTerm {
  w: number;
  runs: readonly PostingRun[];
  /** Upper bound of what the term adds to a document's score: w x (k1 + 1). */
  ub: number;
}

/**
 * BM25 over weighted query terms. Returns node ids and scores, best first, cut at `limit`.
 * `allowed`, when given, restricts the result to those node ids.
 *
 * Scores accumulate in one array over the corpus's documents (a query's frequent terms touch
 * most of a large project), each document's length norm is computed once, and only the best
 * `limit` are kept and sorted. Equal scores keep the order in which the documents were first
 * scored, terms taken by their upper bound, highest first.
 *
 * MaxScore: once what the remaining terms could add at most is below the score of the current
 * `limit`-th document, no document they alone would bring can enter the result. Those terms
 * (the frequent ones, whose weight is small: a project's `src` at 1,000,000 cells is a million
 * postings) then only update the documents already scored that can still enter, jumping to them
 * through skip blocks instead of walking every posting. The result is exactly the full walk's.
 */
export function bm25Search(corpus: Corpus, query: Map<string, number>, limit: number, params: Bm25Params = DEFAULT_BM25, allowed?: Set<string>): Array<{ nodeId: string; score: number }> {
  if (corpus.liveDocs === 0 || query.size === 0 || limit <= 0) return [];
  const avg = corpus.totalLength / corpus.liveDocs;
  // A document's length norm is 0 until it is first scored (a norm of 0 is kept as the least
  // positive number, which adds nothing to a count).
  const { scores, norms, touched } = scratchFor(corpus.docSpan);
  const ew = corpus.extraWeight;
  const gain = params.k1 + 1;
  const terms: QueryTerm[] = [];
  for (const [term, weight] of query) {
    if (weight <= 0) continue;
    const runs = corpus.runs(term);
    if (!runs) continue;
    const w = idf(corpus, term) * weight;
    terms.push({ w, runs, ub: w * gain });
  }
  terms.sort((a, b) => b.ub - a.ub);
  // What terms i.. could add at most, with a margin for rounding (a term adds strictly less).
  const rest = new Float64Array(terms.length + 1);
  for (let i = terms.length - 1; i >= 0; i--) rest[i] = rest[i + 1] + terms[i].ub;
  for (let i = 0; i < rest.length; i++) rest[i] *= 1 + 1e-9;
  let count = 0;
  let best = 0;
  try {
    let i = 0;
    let threshold = 0;
    for (; i < terms.length; i++) {
      if (!allowed && count >= limit && rest[i] < best) {
        threshold = kthBest(scores, touched, count, limit);
        if (rest[i] < threshold) break;
      }
      const { w, runs } = terms[i];
      // Read in place: the encoded postings are scored as they are walked, never copied.
      for (const { base, data, alive } of runs) {
        const c = new PostingCursor(data, base);
        while (c.next()) {
          const doc = c.doc;
          if (alive !== null && alive[doc] === 0) continue;
          const tf = c.main + ew * c.extra;
          let norm = norms[doc];
          if (norm === 0) {
            touched[count++] = doc;
            norm = norms[doc] = params.k1 * (1 - params.b + (params.b * corpus.length(doc)) / avg) || Number.MIN_VALUE;
          }
          const score = (scores[doc] += (w * tf * gain) / (tf + norm));
          if (score > best) best = score;
        }
      }
    }
    if (i < terms.length) {
      bm25Counters.pruned++;
      updateOnly(terms.slice(i), rest[i], threshold, limit, scores, norms, touched, count, ew, gain);
    }
    const top = new TopK(limit, scores);
    for (let pos = 0; pos < count; pos++) {
      const doc = touched[pos];
      if (!top.wants(doc, pos)) continue;
      if (allowed && !allowed.has(corpus.nodeId(doc))) continue;
      top.push(doc, pos);
    }
    return top.sorted().map((doc) => ({ nodeId: corpus.nodeId(doc), score: scores[doc] }));
  } finally {
    for (let pos = 0; pos < count; pos++) {
      scores[touched[pos]] = 0;
      norms[touched[pos]] = 0;
    }
  }
}

/**
 * MaxScore's second phase: adds the remaining terms (highest bound first) to the scored
 * documents that could still reach the `limit`-th score with all of them (`bound` at most), and
 * to no new one. After each term the bound shrinks, the threshold rises and fewer documents
 * remain. A term whose postings are few next to the documents left is walked instead of sought.
 */
function updateOnly(terms: QueryTerm[], bound: number, threshold: number, limit: number, scores: Float64Array, norms: Float64Array, touched: Uint32Array, count: number, ew: number, gain: number): void {
  // Into a typed array: pushing 100,000 documents onto a plain array took 8-31 ms at 1,000,000 cells, this 2-7.
  const kept = new Int32Array(count);
  let n = 0;
  for (let pos = 0; pos < count; pos++) {
    const doc = touched[pos];
    if (scores[doc] + bound >= threshold) kept[n++] = doc;
  }
  let docs = kept.subarray(0, n).sort();
  for (let t = 0; t < terms.length; t++) {
    const { w, runs, ub } = terms[t];
    for (const { base, data, alive } of runs) {
      const c = new PostingCursor(data, base);
      if (docs.length * SEEK_COST >= c.remaining) {
        // Walking is cheaper: every scored document is updated (one that cannot enter the
        // result stays below the threshold whatever it gains), none is added.
        while (c.next()) {
          const doc = c.doc;
          const norm = norms[doc];
          if (norm === 0 || (alive !== null && alive[doc] === 0)) continue;
          const tf = c.main + ew * c.extra;
          scores[doc] += (w * tf * gain) / (tf + norm);
        }
        continue;
      }
      const sought = new PostingCursor(data, base, skipBlocks(data));
      for (let k = lowerBound(docs, base); k < docs.length; k++) {
        const doc = docs[k];
        if (!sought.seek(doc)) break;
        if (sought.doc !== doc || (alive !== null && alive[doc] === 0)) continue;
        const tf = sought.main + ew * sought.extra;
        scores[doc] += (w * tf * gain) / (tf + norms[doc]);
      }
    }
    if (t === terms.length - 1) break;
    bound -= ub * (1 + 1e-9);
    threshold = Math.max(threshold, kthBest(scores, docs, docs.length, limit));
    docs = docs.filter((doc) => scores[doc] + bound >= threshold);
  }
}

/** Postings a seek costs about as much as walking (half a skip block, and the block search). */
const SEEK_COST = 48;

/** The `k`-th best score among the first `count` of `docs` (0 when they are fewer). */
function kthBest(scores: Float64Array, docs: ArrayLike<number>, count: number, k: number): number {
  if (count < k) return 0;
  const top = new TopK(k, scores);
  for (let pos = 0; pos < count; pos++) if (top.wants(docs[pos], pos)) top.push(docs[pos], pos);
  return top.worstScore();
}

/** The `k` best documents by score (ties: the earlier position wins), in a min-heap. */
class TopK {
  private readonly docs: number[] = [];
  private readonly pos: number[] = [];

  constructor(
    private readonly k: number,
    private readonly scores: Float64Array,
  ) {}

  /** a ranks below b. */
  private below(ia: number, ib: number): boolean {
    const sa = this.scores[this.docs[ia]];
    const sb = this.scores[this.docs[ib]];
    return sa < sb || (sa === sb && this.pos[ia] > this.pos[ib]);
  }

  /** Whether a document would enter (cheap: checked before its node id is looked up). */
  wants(doc: number, pos: number): boolean {
    if (this.docs.length < this.k) return true;
    const s = this.scores[doc];
    const worst = this.scores[this.docs[0]];
    return s > worst || (s === worst && pos < this.pos[0]);
  }

  /** The score a document must beat to enter (the k-th best so far; 0 while fewer are kept). */
  worstScore(): number {
    return this.docs.length < this.k ? 0 : this.scores[this.docs[0]];
  }

  push(doc: number, pos: number): void {
    if (this.docs.length < this.k) {
      this.docs.push(doc);
      this.pos.push(pos);
      this.up(this.docs.length - 1);
      return;
    }
    this.docs[0] = doc;
    this.pos[0] = pos;
    this.down(0);
  }

  private swap(i: number, j: number): void {
    const doc = this.docs[i];
    this.docs[i] = this.docs[j];
    this.docs[j] = doc;
    const pos = this.pos[i];
    this.pos[i] = this.pos[j];
    this.pos[j] = pos;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.below(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < this.docs.length && this.below(l, least)) least = l;
      if (r < this.docs.length && this.below(r, least)) least = r;
      if (least === i) return;
      this.swap(i, least);
      i = least;
    }
  }

  /** Best first. */
  sorted(): number[] {
    const order = this.docs.map((_, i) => i);
    order.sort((a, b) => (this.below(a, b) ? 1 : this.below(b, a) ? -1 : 0));
    return order.map((i) => this.docs[i]);
  }
}

/** Live documents that contain both terms, relative to chance: P(a | b) / P(a). */
export function lift(corpus: Corpus, a: string, b: string): number {
  const na = corpus.df(a);
  const nb = corpus.df(b);
  if (na === 0 || nb === 0) return 0;
  const [small, large] = na <= nb ? [a, b] : [b, a];
  const inLarge = new Uint8Array(corpus.docSpan);
  forEachLive(corpus.runs(large), (doc) => (inLarge[doc] = 1));
  let both = 0;
  forEachLive(corpus.runs(small), (doc) => (both += inLarge[doc]));
  return both / nb / (na / corpus.liveDocs);
}

/** Short terms of the corpus that could abbreviate `term` (before the co-occurrence check). */
export function abbreviationCandidates(corpus: Corpus, term: string): string[] {
  if (!/^[a-z]+$/.test(term) || term.length < 5) return [];
  const out: string[] = [];
  for (const v of corpus.shortTerms(term[0])) if (v !== term && isAbbreviation(v, term)) out.push(v);
  return out;
}

/**
 * Short forms of `term` that the indexed text uses (environ -> env, packag -> pkg, command ->
 * cmd): a 3-5 letter prefix, or the first letter plus a subsequence of its consonants, that
 * co-occurs with the term at least `minLift` times more often than chance. The most used first.
 */
export function abbreviationsOf(corpus: Corpus, term: string, minLift: number, max: number): string[] {
  const out: Array<[string, number]> = [];
  for (const v of abbreviationCandidates(corpus, term)) {
    const n = df(corpus, v);
    if (n === 0 || lift(corpus, v, term) < minLift) continue;
    out.push([v, n]);
  }
  return out.sort((a, b) => b[1] - a[1]).slice(0, max).map((x) => x[0]);
}

export interface Posting {
  docs: number[];
  main: number[];
  extra: number[];
}

/** A document of an index as a segment stores it: node id, section lengths, term counts. */
export interface IndexedDoc {
  nodeId: string;
  main: number;
  extra: number;
}

/** An in-memory, mutable index: the delta over the segments, and the tests' index. */
export class LexicalIndex implements Corpus {
  private readonly nodeIds: string[] = [];
  private readonly lenMain: number[] = [];
  private readonly lenExtra: number[] = [];
  private readonly alive: boolean[] = [];
  private readonly docTerms: string[][] = [];
  private readonly byNode = new Map<string, number>();
  private readonly postingLists = new Map<string, Posting>();
  private readonly live = new Map<string, PostingRun[]>();
  private readonly dfs = new Map<string, number>();
  private totalMain = 0;
  private totalExtra = 0;
  private docCount = 0;
  private deadDocs = 0;
  private readonly short = new Map<string, Set<string>>();

  /** @param extraWeight weight of the terms after EXTRA_MARK (a commit's diff text). */
  constructor(readonly extraWeight = 1) {}

  get size(): number {
    return this.docCount;
  }

  get liveDocs(): number {
    return this.docCount;
  }

  get docSpan(): number {
    return this.nodeIds.length;
  }

  get totalLength(): number {
    return this.totalMain + this.extraWeight * this.totalExtra;
  }

  /** Total lengths of the live documents' message and extra sections. */
  get sectionTotals(): [number, number] {
    return [this.totalMain, this.totalExtra];
  }

  /** Share of slots held by removed documents. */
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
    const counts = sectionCounts(searchText);
    this.nodeIds.push(nodeId);
    this.lenMain.push(counts.main);
    this.lenExtra.push(counts.extra);
    this.alive.push(true);
    this.docTerms.push([...counts.terms.keys()]);
    this.byNode.set(nodeId, doc);
    for (const [term, [main, extra]] of counts.terms) {
      let p = this.postingLists.get(term);
      if (!p) {
        p = { docs: [], main: [], extra: [] };
        this.postingLists.set(term, p);
      }
      p.docs.push(doc);
      p.main.push(main);
      p.extra.push(extra);
      this.dfs.set(term, (this.dfs.get(term) ?? 0) + 1);
      if (isShortTerm(term)) {
        let bucket = this.short.get(term[0]);
        if (!bucket) {
          bucket = new Set();
          this.short.set(term[0], bucket);
        }
        bucket.add(term);
      }
    }
    this.live.clear();
    this.totalMain += counts.main;
    this.totalExtra += counts.extra;
    this.docCount++;
  }

  remove(nodeId: string): void {
    const doc = this.byNode.get(nodeId);
    if (doc === undefined) return;
    this.byNode.delete(nodeId);
    this.alive[doc] = false;
    this.totalMain -= this.lenMain[doc];
    this.totalExtra -= this.lenExtra[doc];
    this.docCount--;
    this.deadDocs++;
    for (const term of this.docTerms[doc]) this.dfs.set(term, (this.dfs.get(term) ?? 1) - 1);
    this.docTerms[doc] = [];
    this.live.clear();
  }

  df(term: string): number {
    return this.dfs.get(term) ?? 0;
  }

  idf(term: string): number {
    return idf(this, term);
  }

  /** The term's live postings as one run, encoded as a segment's are (cached until the next change). */
  runs(term: string): readonly PostingRun[] | undefined {
    const cached = this.live.get(term);
    if (cached) return cached;
    const p = this.sectionPostingsOf(term);
    if (!p || p.docs.length === 0) return undefined;
    const run: PostingRun[] = [{ base: 0, data: encodePostings(p.docs, p.main, p.extra), alive: null }];
    this.live.set(term, run);
    return run;
  }

  length(doc: number): number {
    return this.lenMain[doc] + this.extraWeight * this.lenExtra[doc];
  }

  sectionLengths(doc: number): [number, number] {
    return [this.lenMain[doc], this.lenExtra[doc]];
  }

  nodeId(doc: number): string {
    return this.nodeIds[doc];
  }

  shortTerms(letter: string): Iterable<string> {
    return [...(this.short.get(letter) ?? [])].filter((t) => this.df(t) > 0);
  }

  /** Terms of the index vocabulary with live documents. */
  *vocabulary(): IterableIterator<string> {
    for (const [term, n] of this.dfs) if (n > 0) yield term;
  }

  lift(a: string, b: string): number {
    return lift(this, a, b);
  }

  abbreviationsOf(term: string, minLift: number, max: number): string[] {
    return abbreviationsOf(this, term, minLift, max);
  }

  search(query: Map<string, number>, limit: number, params: Bm25Params = DEFAULT_BM25, allowed?: Set<string>): Array<{ nodeId: string; score: number }> {
    return bm25Search(this, query, limit, params, allowed);
  }

  /** Live documents in insertion order, with their section lengths (what a segment stores). */
  liveDocList(): Array<IndexedDoc & { doc: number }> {
    const out: Array<IndexedDoc & { doc: number }> = [];
    for (let doc = 0; doc < this.nodeIds.length; doc++) {
      if (this.alive[doc]) out.push({ doc, nodeId: this.nodeIds[doc], main: this.lenMain[doc], extra: this.lenExtra[doc] });
    }
    return out;
  }

  /** Each live term's postings by section, over the index's own document numbers. */
  *sectionPostings(): IterableIterator<[string, Posting]> {
    for (const term of this.postingLists.keys()) {
      const p = this.sectionPostingsOf(term);
      if (p) yield [term, p];
    }
  }

  /** Section postings of one term (live documents only). */
  sectionPostingsOf(term: string): Posting | undefined {
    const p = this.postingLists.get(term);
    if (!p || !this.dfs.get(term)) return undefined;
    const out: Posting = { docs: [], main: [], extra: [] };
    for (let i = 0; i < p.docs.length; i++) {
      if (!this.alive[p.docs[i]]) continue;
      out.docs.push(p.docs[i]);
      out.main.push(p.main[i]);
      out.extra.push(p.extra[i]);
    }
    return out;
  }

  /** Distinct terms of an indexed document. */
  termsOf(nodeId: string): string[] {
    const doc = this.byNode.get(nodeId);
    return doc === undefined ? [] : this.docTerms[doc];
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
