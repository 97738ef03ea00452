// A project's full-text view in one process: the persistent segments the maintenance-lease
// holder wrote (lexicalSegments.ts), read term by term, plus an in-memory delta of the rows
// written since, merged into one BM25 corpus. Statistics (document count, lengths, document
// frequencies) are those of the project's live rows only: a segment document whose row is gone
// counts nowhere, a row in two segments counts once (the newer), and no other project's rows
// are ever part of them.
//
// Brought up to date when the cells table's version changes, without listing the project: every
// write (append, update, compaction) puts its rows in new fragments, whose row ids are above any
// row id the lexicon has seen, so one read of the rows above the highest one seen finds the new
// rows, whose text alone is read. The project's row count then tells whether that was all: when
// rows went (a forget, a repair) or another process's writes interleaved, the project's node ids
// are listed again (one narrow, index-backed read), which also finds segment documents whose rows
// are gone. A project without segments is read whole, once.

import type { Table } from '@lancedb/lancedb';
import type { RecordBatch } from 'apache-arrow';
import { sqlString } from '../store/filters';
import type { LexicalSegments, SegmentHead } from '../store/lexicalSegments';
import { retryVanished } from '../store/retry';
import { LexicalIndex, abbreviationCandidates } from './lexicalIndex';
import type { Corpus, PostingRun } from './lexicalIndex';
import { liveCount } from './lexicalIndex';
import { NodeIdMap } from './nodeIds';
import { PostingsCache } from './postingsCache';
import type { TermPostings } from './postingsCache';
import { nodeIdBatches, readByNodeId, readByRowId } from './rowReads';
import type { Row } from './rowReads';

/**
 * Bytes of segment postings kept per project between queries: 64 per segment document, from
 * 16 MB up to 64 MB. A query's postings grow with the project (about 2,500,000 postings, 4-6 MB,
 * for 13 terms at 1,000,000 cells), and there 64 MB instead of 16 took a first query's postings
 * read from 13 to 10 ms (p50) and a repeated query's p95 from 69-79 to 64 ms, for about 50 MB.
 */
function cacheBytesFor(segmentDocs: number): number {
  return Math.min(64 * 1024 * 1024, Math.max(16 * 1024 * 1024, segmentDocs * 64));
}

/** Times the new rows are read before a writer that keeps committing between the read and the count makes the rows be listed (see catchUp). */
const CATCH_UP_ATTEMPTS = 3;

interface LoadedSegment {
  head: SegmentHead;
  base: number;
}

export class Lexicon {
  private segmentsVersion = -1;
  private cellsVersion = -1;
  private segments: LoadedSegment[] = [];
  private segmentDocs = 0;
  /** Node id -> corpus document number, over the segments (the newest copy of a node wins). */
  private byNode = new NodeIdMap([]);
  /** Per segment document: 1 while its row is live and this is its newest copy. */
  private alive = new Uint8Array(0);
  /**
   * Per segment (in order): 1 when every one of its documents is alive, so that its postings
   * are read without looking each document up (document counts then take no walk at all).
   */
  private whole = new Uint8Array(0);
  /**
   * Where each live document's row was when last read (LanceDB row ids, exact in a double; -1
   * when not known): segment documents by document number, delta rows by node id. A write moves
   * a row to a new row id, which the next catch-up reads; see QueryCorpus.readRows.
   */
  private rowIds = new Float64Array(0);
  private deltaRowIds = new Map<string, number>();
  private liveMain = 0;
  private liveExtra = 0;
  private liveCount = 0;
  private shortByLetter = new Map<string, Set<string>>();
  private delta = new LexicalIndex();
  /** Segment postings read, by term and segment. */
  private readonly cache = new PostingsCache();
  /** Bytes of postings the cache keeps; null: sized by the project (see cacheBytesFor). Settable for tests and benchmarks. */
  cacheLimit: number | null = null;
  private segmentsEpoch = 0;
  /** Weighted lengths of the segment documents, for the last extra weight asked (see lengths). */
  private weighted: { epoch: number; extraWeight: number; lengths: Float64Array } | null = null;
  private refreshing: Promise<void> | null = null;
  /** False until the project's rows have been listed against the current segments. */
  private listed = false;
  /** Above the highest row id read (row ids are unsigned), and the project's row count then. */
  private nextRowId = 0n;
  private rowCount = 0;
  /** The project's name as UTF-8, to pick its rows out of a batch without making strings. */
  private readonly projectBytes: Uint8Array;

  constructor(
    readonly cells: Table,
    private readonly store: LexicalSegments | null,
    readonly project: string,
  ) {
    this.projectBytes = new TextEncoder().encode(project);
  }

  private get scope(): string {
    return `project = ${sqlString(this.project)}`;
  }

  /** Segments in use and rows in the delta (for maintenance, tests and benchmarks). */
  get shape(): { segments: string[]; formats: number[]; sizes: number[]; segmentDocs: number; liveDocs: number; deltaDocs: number; deadDocs: number } {
    return {
      segments: this.segments.map((s) => s.head.id),
      formats: this.segments.map((s) => s.head.format),
      sizes: this.segments.map((s) => s.head.nodeIds.length),
      segmentDocs: this.segmentDocs,
      liveDocs: this.liveCount + this.delta.liveDocs,
      deltaDocs: this.delta.liveDocs,
      deadDocs: this.segmentDocs - this.liveCount,
    };
  }

  /** The delta: rows of the project that no segment holds. */
  get deltaIndex(): LexicalIndex {
    return this.delta;
  }

  /** The node ids of segment `id`'s live documents (those that are their node's newest copy). */
  liveNodeIds(id: string): string[] {
    const s = this.segments.find((x) => x.head.id === id);
    if (!s) return [];
    const out: string[] = [];
    for (let i = 0; i < s.head.nodeIds.length; i++) if (this.alive[s.base + i]) out.push(s.head.nodeIds.get(i));
    return out;
  }

  /** Brings the view up to the latest segments and cells (one refresh at a time). */
  async refresh(): Promise<void> {
    for (;;) {
      if (this.refreshing) {
        await this.refreshing;
        continue;
      }
      const [segmentsVersion, cellsVersion] = await Promise.all([this.store ? this.store.version() : Promise.resolve(0), retryVanished(() => this.cells.version())]);
      if (segmentsVersion === this.segmentsVersion && cellsVersion === this.cellsVersion) return;
      if (this.refreshing) continue;
      this.refreshing = this.update(segmentsVersion, cellsVersion).finally(() => {
        this.refreshing = null;
      });
      await this.refreshing;
      return;
    }
  }

  private async update(segmentsVersion: number, cellsVersion: number): Promise<void> {
    if (segmentsVersion !== this.segmentsVersion) await this.loadSegments();
    if (!this.listed || !(await this.catchUp())) await this.syncRows();
    this.listed = true;
    this.segmentsVersion = segmentsVersion;
    this.cellsVersion = cellsVersion;
  }

  /**
   * Reads the rows written since the last read (those above the highest row id seen) and adds
   * the new ones to the delta. False when the project's row count says rows were deleted: then
   * the rows must be listed. A count above what was read is a writer's commit between the two
   * reads (next to a process writing 2,000 rows at 1,000,000 cells, two catch-ups of four, and a
   * listing there takes half a second): the new rows are read again instead, a few times.
   */
  private async catchUp(): Promise<boolean> {
    for (let attempt = 0; attempt < CATCH_UP_ATTEMPTS; attempt++) {
      const outcome = await this.catchUpOnce();
      if (outcome !== 'raced') return outcome === 'done';
    }
    return false;
  }

  private async catchUpOnce(): Promise<'done' | 'deleted' | 'raced'> {
    const since = this.nextRowId;
    // After a compaction every row of the project is here (moved to new row ids): a million at
    // 1,000,000 cells, so they are taken as the column's bytes (see eachRow), not as strings.
    // The read names no project: LanceDB then reads the new fragments alone, where with the
    // project's condition it also intersected the project's whole index (500 new rows at
    // 1,000,000 cells: 17-60 ms against 62-99), and eachRow skips other projects' rows.
    const docs: number[] = [];
    const docRowIds: number[] = [];
    const others = new Map<string, number>();
    let max = since - 1n;
    await retryVanished(async () => {
      docs.length = 0;
      docRowIds.length = 0;
      others.clear();
      max = since - 1n;
      for await (const batch of this.cells.query().where(`_rowid >= ${since}`).select({ node_id: 'node_id', project: 'project' }).withRowId()) {
        max = this.eachRow(
          batch,
          (doc, rowId) => {
            docs.push(doc);
            docRowIds.push(rowId);
          },
          (id, rowId) => others.set(id, rowId),
          max,
        );
      }
    });
    const count = await retryVanished(() => this.cells.countRows(this.scope));
    // A row already known moved (its vector or access count was written): its text stays.
    const added = [...others.keys()].filter((id) => !this.delta.has(id));
    if (count > this.rowCount + added.length) return 'raced';
    if (count < this.rowCount + added.length) return 'deleted';
    for (let k = 0; k < docs.length; k++) this.rowIds[docs[k]] = docRowIds[k];
    for (const [id, rowId] of others) this.deltaRowIds.set(id, rowId);
    await this.readIntoDelta(added.map((id) => others.get(id)!), added);
    this.nextRowId = max + 1n;
    this.rowCount = count;
    return 'done';
  }

  /**
   * Walks a batch of (node_id, _rowid[, project]), skipping other projects' rows:
   * `segment(doc, rowId)` for each row whose node a segment holds, `other(nodeId, rowId)` for
   * the rest. Node ids are looked up as the column's bytes, so a string is made only for the
   * rows no segment holds. Returns the highest row id seen (or `max`, when higher).
   */
  private eachRow(batch: RecordBatch, segment: (doc: number, rowId: number) => void, other: (nodeId: string, rowId: number) => void, max: bigint): bigint {
    const ids = batch.getChild('node_id')!;
    const rowIds = batch.getChild('_rowid')!;
    // With a project column, rows of other projects are skipped (compared as bytes, like node ids).
    const projects = batch.getChild('project')?.data;
    let i = 0;
    ids.data.forEach((chunk, c) => {
      const offsets = chunk.valueOffsets;
      const bytes = chunk.values as Uint8Array;
      const project = projects?.[c];
      for (let j = 0; j < chunk.length; j++, i++) {
        const rowId = BigInt(rowIds.get(i) as bigint);
        if (rowId > max) max = rowId;
        if (project && !sameBytes(project.values as Uint8Array, project.valueOffsets[j], project.valueOffsets[j + 1], this.projectBytes)) continue;
        const doc = this.byNode.getBytes(bytes, offsets[j], offsets[j + 1]);
        if (doc !== undefined) segment(doc, Number(rowId));
        else other(String(ids.get(i)), Number(rowId));
      }
    });
    return max;
  }

  /** Where the row of a live document was when last read, if known. */
  rowIdOf(nodeId: string): number | undefined {
    const doc = this.byNode.get(nodeId);
    if (doc === undefined) return this.deltaRowIds.get(nodeId);
    const rowId = this.rowIds[doc];
    return rowId >= 0 ? rowId : undefined;
  }

  /**
   * Adds the text of new rows to the delta, read where the catch-up just saw them (by row id:
   * no node-id index lookup per row); a row a writer moved meanwhile is looked up by node id.
   */
  private async readIntoDelta(rowIds: number[], nodeIds: string[]): Promise<void> {
    const missing = new Set(nodeIds);
    for (const r of await readByRowId(this.cells, rowIds, this.scope, ['node_id', 'search_text'])) {
      if (!missing.delete(String(r.node_id))) continue;
      this.delta.add(String(r.node_id), String(r.search_text ?? ''));
    }
    for await (const rows of nodeIdBatches(this.cells, [...missing], this.scope, ['node_id', 'search_text'])) {
      for (const r of rows) this.delta.add(String(r.node_id), String(r.search_text ?? ''));
    }
  }

  private async loadSegments(): Promise<void> {
    const ids = this.store ? (await this.store.manifest(this.project)).segments : [];
    if (ids.length === this.segments.length && ids.every((id, i) => this.segments[i].head.id === id)) return;
    const known = new Map(this.segments.map((s) => [s.head.id, s.head]));
    const missing = ids.filter((id) => !known.has(id));
    const fetched = missing.length > 0 && this.store ? await this.store.heads(this.project, missing) : [];
    // A manifest naming a segment that is gone (a forget between the two reads): no segments.
    const heads = fetched === null ? [] : ids.map((id) => known.get(id) ?? fetched.find((h) => h.id === id)!);
    this.segments = [];
    let base = 0;
    for (const head of heads) {
      this.segments.push({ head, base });
      base += head.nodeIds.length;
    }
    this.segmentDocs = base;
    this.byNode = new NodeIdMap(this.segments.map((s) => s.head.nodeIds));
    this.shortByLetter = new Map();
    for (const s of this.segments) {
      for (const t of s.head.shortTerms) {
        let bucket = this.shortByLetter.get(t[0]);
        if (!bucket) this.shortByLetter.set(t[0], (bucket = new Set()));
        bucket.add(t);
      }
    }
    // Each term keeps its postings in the segments that stay (see PostingsCache).
    this.cache.keepOnly(new Set(heads.map((h) => h.id)));
    this.segmentsEpoch++;
    // Rows the new segments hold leave the delta; syncRows reads the others again.
    this.delta = new LexicalIndex();
    this.listed = false;
  }

  /** Marks live segment documents, and fills the delta with the rows no segment holds. */
  private async syncRows(): Promise<void> {
    let max = -1n;
    let count = 0;
    if (this.segments.length === 0 && this.delta.size === 0) {
      // Nothing persistent: the project's text is read whole (once; later only new rows).
      const fresh = new LexicalIndex();
      const rowIds = new Map<string, number>();
      for await (const batch of this.cells.query().where(this.scope).select(['node_id', 'search_text']).withRowId()) {
        for (const r of batch.toArray() as Row[]) {
          fresh.add(String(r.node_id), String(r.search_text ?? ''));
          const rowId = BigInt(r._rowid as bigint);
          rowIds.set(String(r.node_id), Number(rowId));
          if (rowId > max) max = rowId;
          count++;
        }
      }
      this.delta = fresh;
      this.deltaRowIds = rowIds;
      this.nextRowId = max + 1n;
      this.rowCount = count;
      this.resetLive();
      return;
    }
    const alive = new Uint8Array(this.segmentDocs);
    const docRowIds = new Float64Array(this.segmentDocs).fill(-1);
    const deltaRowIds = new Map<string, number>();
    const added: string[] = [];
    for await (const batch of this.cells.query().where(this.scope).select(['node_id']).withRowId()) {
      count += batch.numRows;
      max = this.eachRow(
        batch,
        (doc, rowId) => {
          alive[doc] = 1;
          docRowIds[doc] = rowId;
        },
        (id, rowId) => {
          deltaRowIds.set(id, rowId);
          if (!this.delta.has(id)) added.push(id);
        },
        max,
      );
    }
    for (const id of this.delta.nodeIdList()) if (!deltaRowIds.has(id)) this.delta.remove(id);
    if (this.delta.deadShare > 0.5 && this.delta.size < added.length + 1000) {
      // Mostly removed slots: read the few live rows again rather than keep the dead ones.
      for (const id of this.delta.nodeIdList()) added.push(id);
      this.delta = new LexicalIndex();
    }
    await this.readIntoDelta(added.map((id) => deltaRowIds.get(id)!), added);
    this.nextRowId = max + 1n;
    this.rowCount = count;
    this.alive = alive;
    this.rowIds = docRowIds;
    this.deltaRowIds = deltaRowIds;
    this.resetLive();
  }

  private resetLive(): void {
    if (this.alive.length !== this.segmentDocs) this.alive = new Uint8Array(this.segmentDocs);
    if (this.rowIds.length !== this.segmentDocs) this.rowIds = new Float64Array(this.segmentDocs).fill(-1);
    let main = 0;
    let extra = 0;
    let count = 0;
    const whole = new Uint8Array(this.segments.length);
    this.segments.forEach((s, k) => {
      const { lenMain, lenExtra } = s.head;
      let live = 0;
      for (let i = 0; i < lenMain.length; i++) {
        if (!this.alive[s.base + i]) continue;
        main += lenMain[i];
        extra += lenExtra[i];
        live++;
      }
      whole[k] = live === lenMain.length ? 1 : 0;
      count += live;
    });
    this.whole = whole;
    this.liveMain = main;
    this.liveExtra = extra;
    this.liveCount = count;
  }

  /**
   * The segment postings of `terms` in the segments of `epoch` (term -> segment id -> postings;
   * null when no segment has the term), read where the cache does not hold them: for a term it
   * has from an earlier set of segments, only the new segments. A term another caller is reading
   * (a question beside this one) is waited for, not read twice. The caller keeps what it was
   * given: the cache may drop any of it afterwards, even the terms of a query whose postings
   * alone exceed it.
   */
  async load(terms: Iterable<string>, segments: readonly LoadedSegment[], epoch: number): Promise<Map<string, TermPostings>> {
    const out = new Map<string, TermPostings>();
    const store = this.store;
    if (!store || segments.length === 0) return out;
    const ids = segments.map((s) => s.head.id);
    // Reads of an older set of segments (a question that began before they changed) bypass the cache.
    const current = epoch === this.segmentsEpoch;
    const reads = new Map<string, { segments: string[]; terms: string[] }>();
    const waits: Promise<void>[] = [];
    const waited: string[] = [];
    for (const t of new Set(terms)) {
      if (!t) continue;
      const found = current ? this.cache.lookup(t, ids) : { missing: ids };
      if ('hit' in found) {
        out.set(t, found.hit);
        continue;
      }
      const inFlight = current ? this.cache.reading(t) : undefined;
      if (inFlight) {
        waits.push(inFlight);
        waited.push(t);
        continue;
      }
      const key = found.missing.join(' ');
      const read = reads.get(key) ?? { segments: found.missing, terms: [] as string[] };
      read.terms.push(t);
      reads.set(key, read);
    }
    // Usually one read: the terms new to this process, or those it has from earlier segments.
    await Promise.all(
      [...reads.values()].map(async (read) => {
        const heads = segments.filter((s) => read.segments.includes(s.head.id)).map((s) => s.head);
        const done = current ? this.cache.track(read.terms) : () => undefined;
        try {
          const found = await store.postings(this.project, heads, read.terms);
          if (!current) {
            for (const t of read.terms) out.set(t, found.get(t) ?? null);
            return;
          }
          // The segments changed while this read was made: read them as they were, uncached.
          if (epoch !== this.segmentsEpoch) {
            for (const [t, p] of await this.load(read.terms, segments, epoch)) out.set(t, p);
            return;
          }
          for (const t of read.terms) {
            this.cache.add(t, read.segments, found.get(t));
            const hit = this.cache.lookup(t, ids);
            out.set(t, 'hit' in hit ? hit.hit : null);
          }
        } finally {
          done();
        }
      }),
    );
    if (waits.length > 0) {
      // What they read is in the cache now (or their read failed, and it is read here).
      await Promise.all(waits);
      for (const [t, p] of await this.load(waited, segments, epoch)) out.set(t, p);
    }
    this.cache.trim(this.cacheLimit ?? cacheBytesFor(this.segmentDocs));
    return out;
  }

  /**
   * Each segment document's length with the extra section weighted, by document number: what
   * BM25 reads for every document it scores (a million of them for a query of common words at
   * 1,000,000 cells), kept for the segments of `epoch`.
   */
  lengths(segments: readonly LoadedSegment[], epoch: number, extraWeight: number): Float64Array {
    const w = this.weighted;
    if (w && w.epoch === epoch && w.extraWeight === extraWeight) return w.lengths;
    const size = segments.reduce((n, s) => n + s.head.lenMain.length, 0);
    const lengths = new Float64Array(size);
    for (const s of segments) {
      const { lenMain, lenExtra } = s.head;
      for (let i = 0; i < lenMain.length; i++) lengths[s.base + i] = lenMain[i] + extraWeight * lenExtra[i];
    }
    if (epoch === this.segmentsEpoch) this.weighted = { epoch, extraWeight, lengths };
    return lengths;
  }

  /**
   * The corpus for one query, with the extra section weighted by `extraWeight`. Loads the
   * terms' postings and those of their possible abbreviations.
   */
  async corpus(extraWeight: number, terms: string[]): Promise<QueryCorpus> {
    await this.refresh();
    const corpus = new QueryCorpus(this, extraWeight);
    // One read for the terms and every short term that could abbreviate one of them.
    await corpus.load([...terms, ...terms.flatMap((t) => abbreviationCandidates(corpus, t))]);
    return corpus;
  }

  // Internals the query corpus reads.
  get view(): LexiconView {
    return {
      segments: this.segments,
      segmentDocs: this.segmentDocs,
      byNode: this.byNode,
      alive: this.alive,
      whole: this.whole,
      liveMain: this.liveMain,
      liveExtra: this.liveExtra,
      liveCount: this.liveCount,
      delta: this.delta,
      shortByLetter: this.shortByLetter,
      segmentsEpoch: this.segmentsEpoch,
      cellsVersion: this.cellsVersion,
    };
  }
}

interface LexiconView {
  segments: LoadedSegment[];
  segmentDocs: number;
  /** Node ids of the segment documents (see NodeIdMap). */
  byNode: NodeIdMap;
  alive: Uint8Array;
  whole: Uint8Array;
  liveMain: number;
  liveExtra: number;
  liveCount: number;
  delta: LexicalIndex;
  shortByLetter: Map<string, Set<string>>;
  segmentsEpoch: number;
  /** The cells table's version the row ids were read at. */
  cellsVersion: number;
}

/** A Lexicon's state as one query sees it (segment documents first, then the delta's). */
export class QueryCorpus implements Corpus {
  private readonly v: LexiconView;
  /** Segment postings of the terms this query loaded (kept here whatever the lexicon's cache drops). */
  private readonly loaded = new Map<string, TermPostings>();
  private readonly runCache = new Map<string, readonly PostingRun[] | undefined>();
  private readonly dfs = new Map<string, number>();
  private readonly lengths: Float64Array;

  constructor(
    private readonly lexicon: Lexicon,
    readonly extraWeight: number,
  ) {
    this.v = lexicon.view;
    this.lengths = lexicon.lengths(this.v.segments, this.v.segmentsEpoch, extraWeight);
  }

  get liveDocs(): number {
    return this.v.liveCount + this.v.delta.liveDocs;
  }

  get totalLength(): number {
    const [main, extra] = this.v.delta.sectionTotals;
    return this.v.liveMain + main + this.extraWeight * (this.v.liveExtra + extra);
  }

  /** Reads more terms' postings (query expansion); call before using them. */
  async load(terms: Iterable<string>): Promise<void> {
    const wanted = [...terms].filter((t) => !this.loaded.has(t));
    for (const [term, bySegment] of await this.lexicon.load(wanted, this.v.segments, this.v.segmentsEpoch)) this.loaded.set(term, bySegment);
  }

  get docSpan(): number {
    return this.v.segmentDocs + this.v.delta.docSpan;
  }

  runs(term: string): readonly PostingRun[] | undefined {
    if (this.runCache.has(term)) return this.runCache.get(term);
    const out: PostingRun[] = [];
    const bySegment = this.loaded.get(term);
    if (bySegment) {
      this.v.segments.forEach((s, k) => {
        const p = bySegment.get(s.head.id);
        if (p) out.push({ base: s.base, data: p, alive: this.v.whole[k] ? null : this.v.alive });
      });
    }
    for (const r of this.v.delta.runs(term) ?? []) out.push({ ...r, base: this.v.segmentDocs + r.base });
    const runs = out.length > 0 ? out : undefined;
    this.runCache.set(term, runs);
    return runs;
  }

  df(term: string): number {
    let n = this.dfs.get(term);
    if (n === undefined) this.dfs.set(term, (n = liveCount(this.runs(term))));
    return n;
  }

  length(doc: number): number {
    if (doc >= this.v.segmentDocs) {
      const [main, extra] = this.v.delta.sectionLengths(doc - this.v.segmentDocs);
      return main + this.extraWeight * extra;
    }
    return this.lengths[doc];
  }

  nodeId(doc: number): string {
    if (doc >= this.v.segmentDocs) return this.v.delta.nodeId(doc - this.v.segmentDocs);
    return this.v.byNode.nodeId(doc);
  }

  shortTerms(letter: string): Iterable<string> {
    const out = new Set(this.v.shortByLetter.get(letter) ?? []);
    for (const t of this.v.delta.shortTerms(letter)) out.add(t);
    return out;
  }

  /**
   * The rows of `nodeIds` (documents of this corpus) that pass `where`, keyed by node id. Read
   * by row id, which spares the node-id index lookup: a third of a 50-row read at 100,000
   * cells. A row the read does not return either fails `where` or has moved since its row id
   * was read; only when the table changed since then can it have moved, and then those rows
   * are looked up by node id.
   */
  async readRows(nodeIds: string[], where: string, columns: string[]): Promise<Map<string, Row>> {
    const known: number[] = [];
    const unknown: string[] = [];
    for (const id of nodeIds) {
      const rowId = this.lexicon.rowIdOf(id);
      if (rowId === undefined) unknown.push(id);
      else known.push(rowId);
    }
    const out = new Map<string, Row>();
    if (known.length > 0) {
      const wanted = new Set(nodeIds);
      for (const row of await readByRowId(this.lexicon.cells, known, where, columns)) {
        if (wanted.has(String(row.node_id))) out.set(String(row.node_id), row);
      }
      if (out.size < known.length && (await this.lexicon.cells.version()) !== this.v.cellsVersion) {
        for (const id of nodeIds) if (!out.has(id) && this.lexicon.rowIdOf(id) !== undefined) unknown.push(id);
      }
    }
    for (const [id, row] of await readByNodeId(this.lexicon.cells, unknown, where, columns)) out.set(id, row);
    return out;
  }
}

const lexicons = new WeakMap<Table, Map<string, Lexicon>>();

/** The lexicon of a project over a cells table (one per table and project in a process). */
export function lexiconFor(cells: Table, store: LexicalSegments | null, project: string): Lexicon {
  let byProject = lexicons.get(cells);
  if (!byProject) {
    byProject = new Map();
    lexicons.set(cells, byProject);
  }
  let lexicon = byProject.get(project);
  if (!lexicon) {
    lexicon = new Lexicon(cells, store, project);
    byProject.set(project, lexicon);
  }
  return lexicon;
}

function sameBytes(bytes: Uint8Array, start: number, end: number, want: Uint8Array): boolean {
  if (end - start !== want.length) return false;
  for (let k = 0; k < want.length; k++) if (bytes[start + k] !== want[k]) return false;
  return true;
}
