// Persistent full-text index segments, kept in the store's `lexical_segments` table so that a
// process that searches reads only the postings of the query's terms instead of every cell's
// text. A segment is immutable and belongs to one project: a head row (its documents' node ids
// and section lengths, and its short terms for abbreviations) and one postings row per term.
// A project's manifest row lists its live segments; a segment becomes visible only when a
// manifest naming it is committed, so readers never see half a segment.
//
// Only the maintenance-lease holder writes segments (Maintenance.indexLexicon). Segments no
// manifest names (replaced ones, or a crashed writer's) are deleted once they are older than
// GRACE_MS, so that a reader that read the previous manifest can still finish its query.
// Forget deletes a project's rows here like any other table's (forget.ts), and the project is
// then searched from its cells until the lease holder writes new segments. In a store on disk,
// the live segments' postings are also copied to files that reads prefer (segmentFiles.ts);
// deleting segments deletes their files.

import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Table } from '@lancedb/lancedb';
import type { LexicalIndex } from '../retrieve/lexicalIndex';
import { isShortTerm } from '../retrieve/lexicalIndex';
import { NodeIdList } from '../retrieve/nodeIds';
import { PostingsWriter, clampCount, encodePostings, writeAscending } from '../retrieve/postings';
import { sqlString } from './filters';
import { localPath } from './location';
import { projection } from './projection';
import { SegmentFiles } from './segmentFiles';
import { TABLES } from './schema';
import { retryConflicts, retryVanished } from './retry';
import type { Row, Store } from './store';

/**
 * Documents per segment written by a full build. A query reads one postings row per term and
 * segment, so fewer segments are fewer rows: at 1,000,000 cells, 41 segments of 25,000 made a
 * query's postings read 40-55 ms.
 */
export const SEGMENT_DOCS = 200_000;
/** Documents indexed in memory at a time while a full build writes a segment (bounds its memory: about 70 MB). */
export const BUILD_CHUNK_DOCS = 25_000;
const GRACE_MS = 10 * 60_000;
const TERM_BATCH = 200;

export interface Manifest {
  segments: string[];
  publishedAt: number;
}

export interface SegmentHead {
  id: string;
  /** How its postings are encoded (see encodePostings); segments of format 1 predate compression. */
  format: number;
  nodeIds: NodeIdList;
  lenMain: Uint16Array;
  lenExtra: Uint16Array;
  totalMain: number;
  totalExtra: number;
  shortTerms: string[];
}

/** A term's postings in one segment, encoded (postings.ts), over segment-local document numbers. */
export type SegmentPostings = Uint8Array;

/** Segment ids sort by creation time, which the collection of old segments relies on. */
function newSegmentId(now = Date.now()): string {
  return `${now.toString(36).padStart(10, '0')}-${randomUUID().slice(0, 8)}`;
}

function segmentTime(id: string): number {
  return parseInt(id.slice(0, 10), 36);
}

/** The postings encoding segments are written in (older segments are read, and indexed again by the lease holder). */
export const SEGMENT_FORMAT = 2;

/**
 * A segment being put together from in-memory indexes, one after the other, their postings kept
 * encoded (about two bytes each): a full segment of SEGMENT_DOCS documents is built from chunks
 * of BUILD_CHUNK_DOCS without ever holding its postings decoded.
 */
export class SegmentBuilder {
  private readonly nodeIds: string[] = [];
  private readonly lenMain: number[] = [];
  private readonly lenExtra: number[] = [];
  private readonly terms = new Map<string, PostingsWriter>();

  get size(): number {
    return this.nodeIds.length;
  }

  /** Appends the live documents of `index`, after those already added. */
  add(index: LexicalIndex): this {
    const docs = index.liveDocList();
    const local = new Map(docs.map((d, i) => [d.doc, this.nodeIds.length + i]));
    for (const d of docs) {
      this.nodeIds.push(d.nodeId);
      this.lenMain.push(d.main);
      this.lenExtra.push(d.extra);
    }
    for (const [term, p] of index.sectionPostings()) {
      let writer = this.terms.get(term);
      if (!writer) this.terms.set(term, (writer = new PostingsWriter()));
      writeAscending(writer, p.docs, p.main, p.extra, (doc) => local.get(doc)!);
    }
    return this;
  }

  *postings(): IterableIterator<[string, Uint8Array]> {
    for (const [term, writer] of this.terms) yield [term, writer.bytes()];
  }

  head(): Uint8Array {
    const shortTerms = [...this.terms.keys()].filter(isShortTerm);
    const meta = Buffer.from(JSON.stringify({ docs: this.nodeIds.length, shortTerms, format: SEGMENT_FORMAT }), 'utf8');
    const ids = Buffer.from(this.nodeIds.join('\n'), 'utf8');
    const n = this.nodeIds.length;
    const lengths = new Uint16Array(n * 2);
    for (let i = 0; i < n; i++) {
      lengths[i] = clampCount(this.lenMain[i]);
      lengths[n + i] = clampCount(this.lenExtra[i]);
    }
    const out = Buffer.alloc(8 + meta.length + ids.length + lengths.byteLength);
    out.writeUInt32LE(meta.length, 0);
    meta.copy(out, 4);
    out.writeUInt32LE(ids.length, 4 + meta.length);
    ids.copy(out, 8 + meta.length);
    Buffer.from(lengths.buffer).copy(out, 8 + meta.length + ids.length);
    return out;
  }
}

function decodeHead(id: string, data: Uint8Array): SegmentHead {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const metaLen = buf.readUInt32LE(0);
  const meta = JSON.parse(buf.subarray(4, 4 + metaLen).toString('utf8')) as { docs: number; shortTerms: string[]; format?: number };
  const idsLen = buf.readUInt32LE(4 + metaLen);
  const start = 8 + metaLen + idsLen;
  // Copied: the typed arrays must not share (or be misaligned in) the row's buffer.
  const nodeIds = NodeIdList.fromLines(new Uint8Array(buf.subarray(8 + metaLen, start)), meta.docs);
  const lengths = new Uint16Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + start + meta.docs * 4));
  const lenMain = lengths.subarray(0, meta.docs);
  const lenExtra = lengths.subarray(meta.docs);
  let totalMain = 0;
  let totalExtra = 0;
  for (let i = 0; i < meta.docs; i++) {
    totalMain += lenMain[i];
    totalExtra += lenExtra[i];
  }
  return { id, format: meta.format ?? 1, nodeIds, lenMain, lenExtra, totalMain, totalExtra, shortTerms: meta.shortTerms };
}

/**
 * A stored postings row in the current encoding (postings.ts), in a buffer of its own: the row's
 * buffer holds the whole read, which a cache must not keep alive (`owned`: `data` is a buffer of
 * its own already). Format 1, before compression: the count (u32), then every document (u32),
 * message count (u16), extra count (u16).
 */
export function currentPostings(data: Uint8Array, format: number, owned = false): Uint8Array {
  if (format !== 1) return owned ? data : data.slice();
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const n = view.getUint32(0, true);
  if (data.byteLength !== 4 + n * 8) throw new Error('a lexical segment postings row of the wrong length');
  const docs = new Uint32Array(n);
  const main = new Uint16Array(n);
  const extra = new Uint16Array(n);
  for (let i = 0; i < n; i++) {
    docs[i] = view.getUint32(4 + i * 4, true);
    main[i] = view.getUint16(4 + n * 4 + i * 2, true);
    extra[i] = view.getUint16(4 + n * 6 + i * 2, true);
  }
  return encodePostings(docs, main, extra);
}

function bytes(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v;
  throw new TypeError('a lexical segment row without data');
}

function decodeManifest(data: unknown): Manifest {
  const parsed = JSON.parse(Buffer.from(bytes(data)).toString('utf8')) as { segments?: unknown; published_at?: unknown };
  return { segments: Array.isArray(parsed.segments) ? parsed.segments.map(String) : [], publishedAt: Number(parsed.published_at ?? 0) };
}

/** Where a local store keeps its segments' postings files (segmentFiles.ts). */
export const POSTINGS_FILES_DIR = 'lexicon-postings';

/** Reads and writes the segments of every project of a store. */
export class LexicalSegments {
  /** Local copies of the segments' postings; none for a store on object storage. */
  readonly files: SegmentFiles | null;
  /** The segments each project's last postings read asked for, whose files it keeps open. */
  private readonly asked = new Map<string, string[]>();

  constructor(readonly store: Store) {
    this.files = store.local ? new SegmentFiles(path.join(localPath(store.uri), POSTINGS_FILES_DIR)) : null;
  }

  private get table(): Table {
    return this.store.table(TABLES.lexicalSegments);
  }

  /** Changes whenever any segment or manifest is written or deleted. */
  version(): Promise<number> {
    return retryVanished(() => this.table.version());
  }

  private async rows(where: string, select: string[]): Promise<Row[]> {
    return retryVanished(() => this.table.query().where(where).select(projection(select)).toArray() as Promise<Row[]>);
  }

  /** The project's live segment ids, oldest first (none when it has no manifest), and when they were published. */
  async manifest(project: string): Promise<Manifest> {
    const rows = await this.rows(`project = ${sqlString(project)} AND segment = '' AND term = ''`, ['data']);
    return rows.length === 0 ? { segments: [], publishedAt: 0 } : decodeManifest(rows[0].data);
  }

  /** Heads of the given segments, in the given order; a missing one makes the answer null. */
  async heads(project: string, ids: string[]): Promise<SegmentHead[] | null> {
    if (ids.length === 0) return [];
    const rows = await this.rows(`project = ${sqlString(project)} AND term = '' AND segment IN (${ids.map(sqlString).join(', ')})`, ['segment', 'data']);
    const byId = new Map(rows.map((r) => [String(r.segment), r]));
    if (ids.some((id) => !byId.has(id))) return null;
    return ids.map((id) => decodeHead(id, bytes(byId.get(id)!.data)));
  }

  /** Postings of `terms` in the given segments: term -> segment id -> postings. */
  async postings(project: string, segments: readonly SegmentHead[], terms: string[]): Promise<Map<string, Map<string, SegmentPostings>>> {
    const out = new Map<string, Map<string, SegmentPostings>>();
    if (segments.length === 0) return out;
    const add = (term: string, segment: string, postings: SegmentPostings): void => {
      let bySegment = out.get(term);
      if (!bySegment) out.set(term, (bySegment = new Map()));
      bySegment.set(segment, postings);
    };
    const fromTable: SegmentHead[] = [];
    for (const head of segments) {
      const found = this.files?.lookup(head.id, terms);
      if (!found) {
        fromTable.push(head);
        continue;
      }
      for (const [term, data] of found) add(term, head.id, currentPostings(data, head.format, true));
    }
    this.keepOpen(project, segments);
    if (fromTable.length === 0) return out;
    const formats = new Map(fromTable.map((h) => [h.id, h.format]));
    // Only the given segments' rows: replaced ones stay in the table until collected, and at
    // 1,000,000 cells reading them too doubled a query's postings read.
    const live = `segment IN (${fromTable.map((h) => sqlString(h.id)).join(', ')})`;
    for (let i = 0; i < terms.length; i += TERM_BATCH) {
      const batch = terms.slice(i, i + TERM_BATCH);
      const rows = await this.rows(`project = ${sqlString(project)} AND term IN (${batch.map(sqlString).join(', ')}) AND ${live}`, ['segment', 'term', 'data']);
      for (const r of rows) {
        const segment = String(r.segment);
        const format = formats.get(segment);
        if (format !== undefined) add(String(r.term), segment, currentPostings(bytes(r.data), format));
      }
    }
    return out;
  }

  /** Closes the files of the project's segments that its reads no longer ask for (replaced ones). */
  private keepOpen(project: string, segments: readonly SegmentHead[]): void {
    const ids = segments.map((h) => h.id);
    const before = this.asked.get(project);
    if (before && before.length === ids.length && before.every((id, i) => id === ids[i])) return;
    this.asked.set(project, ids);
    if (before) this.files?.retain(new Set(ids), before);
  }

  /**
   * Writes the files of the live segments that have none (the lease holder, after it indexes;
   * see segmentFiles.ts). Returns how many it wrote.
   */
  async writeFiles(): Promise<number> {
    const files = this.files;
    if (!files) return 0;
    let written = 0;
    // Every project's manifest in one read.
    for (const r of await this.rows(`segment = '' AND term = ''`, ['project', 'data'])) {
      const project = String(r.project);
      for (const segment of decodeManifest(r.data).segments) {
        if (files.has(segment)) continue;
        const where = `project = ${sqlString(project)} AND segment = ${sqlString(segment)}`;
        const rows = this.termRows(`${where} AND term <> ''`);
        if (await files.write(segment, rows, async () => (await this.rows(`${where} AND term = ''`, ['segment'])).length > 0)) written++;
      }
    }
    return written;
  }

  private async *termRows(where: string): AsyncIterable<[string, Uint8Array]> {
    for await (const batch of this.store.batches(TABLES.lexicalSegments, where, ['term', 'data'])) {
      const terms = batch.getChild('term')!;
      const data = batch.getChild('data')!;
      for (let i = 0; i < batch.numRows; i++) yield [String(terms.get(i)), bytes(data.get(i))];
    }
  }

  /** Deletes the postings files of segments the table no longer holds (collected, or forgotten). */
  async sweepFiles(): Promise<number> {
    if (!this.files) return 0;
    const rows = await this.rows(`term = '' AND segment <> ''`, ['segment']);
    return this.files.sweep(new Set(rows.map((r) => String(r.segment))));
  }

  /** Writes one segment (not yet visible) from an in-memory index or a builder; returns its id, or null when empty. */
  async write(project: string, from: LexicalIndex | SegmentBuilder): Promise<string | null> {
    const built = from instanceof SegmentBuilder ? from : new SegmentBuilder().add(from);
    if (built.size === 0) return null;
    const id = newSegmentId();
    const rows: Row[] = [];
    for (const [term, postings] of built.postings()) rows.push({ project, segment: id, term, data: postings });
    rows.push({ project, segment: id, term: '', data: built.head() });
    // One append: the segment's rows commit together.
    await this.store.add(TABLES.lexicalSegments, rows);
    return id;
  }

  /** Makes exactly these segments the project's live ones (one commit). */
  async publish(project: string, ids: string[]): Promise<void> {
    const data = Buffer.from(JSON.stringify({ segments: ids, published_at: Date.now() }), 'utf8');
    await this.store.upsert(TABLES.lexicalSegments, ['project', 'segment', 'term'], [{ project, segment: '', term: '', data }]);
  }

  /**
   * Deletes the project's segments its manifest does not name: those it replaced, once it has
   * been published for GRACE_MS, and those a crashed writer left. A segment written after the
   * manifest (by a writer that has not published yet) is kept.
   */
  async collect(project: string, manifest: Manifest, now = Date.now()): Promise<number> {
    if (now - manifest.publishedAt < GRACE_MS) return 0;
    const rows = await this.rows(`project = ${sqlString(project)} AND term = '' AND segment <> ''`, ['segment']);
    const keep = new Set(manifest.segments);
    const doomed = rows.map((r) => String(r.segment)).filter((id) => !keep.has(id) && segmentTime(id) < manifest.publishedAt);
    if (doomed.length === 0) return 0;
    const where = `project = ${sqlString(project)} AND segment IN (${doomed.map(sqlString).join(', ')})`;
    await retryConflicts(() => this.table.delete(where));
    await this.sweepFiles();
    return doomed.length;
  }

  /** Projects that have segment rows. */
  async projects(): Promise<string[]> {
    const rows = await this.rows(`segment = '' AND term = ''`, ['project']);
    return [...new Set(rows.map((r) => String(r.project)))];
  }
}
