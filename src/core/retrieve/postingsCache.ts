// The postings a Lexicon has read, by term and segment. Segments are immutable, so a term's
// postings in a segment stay true for as long as the segment is live: when the project's
// segments change (every 1,000 new rows make a small segment; merges replace some), each term
// keeps its postings in the segments that stay, and a question reads only the new segments'.

import type { SegmentPostings } from '../store/lexicalSegments';

/** A term's postings by segment id (only the segments that have the term); null when none has it. */
export type TermPostings = Map<string, SegmentPostings> | null;

interface Entry {
  /** The segments read for the term, whether or not they have it. */
  read: Set<string>;
  postings: Map<string, SegmentPostings>;
  bytes: number;
}

/** What an entry costs beyond its postings (the maps, the strings), as counted against the limit. */
const OVERHEAD_BYTES = 64;

export class PostingsCache {
  /** Least recently used first. */
  private readonly entries = new Map<string, Entry>();
  /** Reads in flight, by term: settled once what they read is in the cache. */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Bytes of postings kept, as counted against the limit. */
  private size = 0;

  /**
   * The term's postings in `segments` when each of them was read (the entry becomes the most
   * recently used); else the segments still to read.
   */
  lookup(term: string, segments: readonly string[]): { hit: TermPostings } | { missing: string[] } {
    const entry = this.entries.get(term);
    const missing = entry ? segments.filter((id) => !entry.read.has(id)) : [...segments];
    if (!entry || missing.length > 0) return { missing };
    this.entries.delete(term);
    this.entries.set(term, entry);
    const hit = new Map<string, SegmentPostings>();
    for (const id of segments) {
      const p = entry.postings.get(id);
      if (p) hit.set(id, p);
    }
    return { hit: hit.size > 0 ? hit : null };
  }

  /** Records a read of `segments` for `term`: `found` holds the postings of those that have it. */
  add(term: string, segments: readonly string[], found: TermPostings | undefined): void {
    let entry = this.entries.get(term);
    if (!entry) {
      entry = { read: new Set(), postings: new Map(), bytes: OVERHEAD_BYTES };
      this.entries.set(term, entry);
      this.size += entry.bytes;
    }
    for (const id of segments) {
      if (entry.read.has(id)) continue;
      entry.read.add(id);
      const p = found?.get(id);
      if (!p) continue;
      entry.postings.set(id, p);
      entry.bytes += p.byteLength + OVERHEAD_BYTES;
      this.size += p.byteLength + OVERHEAD_BYTES;
    }
  }

  /** Forgets every segment but `live` (the project's segments changed); reads in flight are no longer waited for. */
  keepOnly(live: ReadonlySet<string>): void {
    for (const [term, entry] of this.entries) {
      for (const id of entry.read) {
        if (live.has(id)) continue;
        entry.read.delete(id);
        const p = entry.postings.get(id);
        if (!p) continue;
        entry.postings.delete(id);
        entry.bytes -= p.byteLength + OVERHEAD_BYTES;
        this.size -= p.byteLength + OVERHEAD_BYTES;
      }
      if (entry.read.size === 0) {
        this.entries.delete(term);
        this.size -= entry.bytes;
      }
    }
    this.inFlight.clear();
  }

  /** Drops the least recently used terms until at most `limit` bytes are kept. */
  trim(limit: number): void {
    for (const [term, entry] of this.entries) {
      if (this.size <= limit) break;
      this.entries.delete(term);
      this.size -= entry.bytes;
    }
  }

  /** The read in flight for `term`, if any: settles once its postings are in the cache (or the read failed). */
  reading(term: string): Promise<void> | undefined {
    return this.inFlight.get(term);
  }

  /** Marks `terms` as being read until the returned function is called. */
  track(terms: readonly string[]): () => void {
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    for (const t of terms) this.inFlight.set(t, done);
    return () => {
      for (const t of terms) if (this.inFlight.get(t) === done) this.inFlight.delete(t);
      settle();
    };
  }
}
