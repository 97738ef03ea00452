// A term's postings as they are stored, cached and scored: compressed bytes, read in place.
// The count as a varint, then per document the gap from the previous document number (minus
// one) as a varint and its two section counts: one byte when both are below 15 (the message
// count in the low four bits), else 0xff and two varints. Most entries take two bytes. Search
// walks these bytes with a PostingCursor instead of decoding them into arrays: at 1,000,000
// cells a query of common words covers 1.7 million postings, and their arrays cost more in
// allocation and garbage collection than the scoring itself.

/** Counts are kept up to this (a segment's document lengths too). */
export const MAX_COUNT = 0xffff;

export function clampCount(n: number): number {
  return Math.min(MAX_COUNT, Math.max(0, Math.round(n)));
}

/** Encodes documents (any order; stored ascending) with their message and extra section counts. */
export function encodePostings(docs: ArrayLike<number>, main: ArrayLike<number>, extra: ArrayLike<number>): Uint8Array {
  const out = new PostingsWriter(docs.length * 3);
  writeAscending(out, docs, main, extra, (doc) => doc);
  return out.bytes();
}

/**
 * Adds postings to `out` in ascending order of their documents, numbered by `number`. Indexes
 * hand their documents over in order; only other callers pay for the sort.
 */
export function writeAscending(out: PostingsWriter, docs: ArrayLike<number>, main: ArrayLike<number>, extra: ArrayLike<number>, number: (doc: number) => number): void {
  let ascending = true;
  for (let i = 1; i < docs.length && ascending; i++) ascending = docs[i] > docs[i - 1];
  if (ascending) {
    for (let i = 0; i < docs.length; i++) out.add(number(docs[i]), main[i], extra[i]);
    return;
  }
  const order = Array.from({ length: docs.length }, (_, i) => i).sort((a, b) => docs[a] - docs[b]);
  for (const i of order) out.add(number(docs[i]), main[i], extra[i]);
}

/**
 * Encodes postings given one at a time, documents ascending: how a segment of many documents is
 * built from the postings of its parts without holding them decoded (about two bytes each).
 */
export class PostingsWriter {
  private readonly body: ByteWriter;
  private prev = -1;
  count = 0;

  constructor(size = 16) {
    this.body = new ByteWriter(size);
  }

  add(doc: number, main: number, extra: number): void {
    if (doc <= this.prev) throw new Error(`postings out of order: ${doc} after ${this.prev}`);
    this.body.varint(doc - this.prev - 1);
    this.prev = doc;
    this.count++;
    const m = clampCount(main);
    const e = clampCount(extra);
    if (m < 15 && e < 15) this.body.byte(m | (e << 4));
    else {
      this.body.byte(0xff);
      this.body.varint(m);
      this.body.varint(e);
    }
  }

  /** The count, then the postings. */
  bytes(): Uint8Array {
    const head = new ByteWriter(5);
    head.varint(this.count);
    const h = head.bytes();
    const b = this.body.bytes();
    const out = new Uint8Array(h.length + b.length);
    out.set(h);
    out.set(b, h.length);
    return out;
  }
}

class ByteWriter {
  private buf: Uint8Array;
  private pos = 0;

  constructor(size: number) {
    this.buf = new Uint8Array(size);
  }

  byte(b: number): void {
    if (this.pos === this.buf.length) {
      const grown = new Uint8Array(this.buf.length * 2);
      grown.set(this.buf);
      this.buf = grown;
    }
    this.buf[this.pos++] = b;
  }

  varint(n: number): void {
    while (n >= 0x80) {
      this.byte((n & 0x7f) | 0x80);
      n = Math.floor(n / 0x80);
    }
    this.byte(n);
  }

  bytes(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
}

/**
 * Walks encoded postings: after each next() that returns true, `doc` (offset by the base given),
 * `main` and `extra` describe one posting. With the postings' skip blocks, seek() jumps over
 * the blocks that end before its target instead of reading them.
 */
export class PostingCursor {
  doc: number;
  main = 0;
  extra = 0;
  /** Postings not read yet. */
  remaining: number;
  private pos = 0;
  private block = 0;

  constructor(
    private readonly data: Uint8Array,
    private readonly base = 0,
    private readonly blocks: SkipBlocks | null = null,
  ) {
    this.remaining = data.length === 0 ? 0 : this.varint();
    this.doc = base - 1;
  }

  private varint(): number {
    let b = this.data[this.pos++];
    let v = b & 0x7f;
    for (let scale = 0x80; b & 0x80; scale *= 0x80) {
      b = this.data[this.pos++];
      v += (b & 0x7f) * scale;
    }
    return v;
  }

  next(): boolean {
    // A damaged row that claims more postings than it holds ends where its bytes do.
    if (this.remaining === 0 || this.pos >= this.data.length) return false;
    this.remaining--;
    // One-byte gaps (most of a common term's) without the varint loop.
    const g = this.data[this.pos];
    if (g < 0x80) {
      this.pos++;
      this.doc += g + 1;
    } else this.doc += this.varint() + 1;
    const c = this.data[this.pos++];
    if (c !== 0xff) {
      this.main = c & 0x0f;
      this.extra = c >> 4;
    } else {
      this.main = this.varint();
      this.extra = this.varint();
    }
    return true;
  }

  /**
   * Moves to the first posting at or after `target` (the current one when it is there already);
   * false when none is left. Targets must not go down between calls.
   */
  seek(target: number): boolean {
    if (this.doc >= target && this.doc >= this.base) return true;
    const blocks = this.blocks;
    if (blocks) {
      // The first block ending at or after the target, from the one last jumped to on.
      const lo = lowerBound(blocks.last, target - this.base, this.block);
      if (lo === blocks.last.length) {
        this.remaining = 0;
        return false;
      }
      this.block = lo;
      if (blocks.pos[lo] > this.pos) {
        this.pos = blocks.pos[lo];
        this.doc = this.base + blocks.before[lo];
        this.remaining = blocks.remaining[lo];
      }
    }
    while (this.doc < target) if (!this.next()) return false;
    return true;
  }

  /** True when every posting was read and nothing is left over. */
  get exhausted(): boolean {
    return this.remaining === 0 && this.pos === this.data.length;
  }

  /** Byte position of the next posting (for skipBlocks). */
  get position(): number {
    return this.pos;
  }
}

/** The first index at or after `from` whose value is at least `value`, in ascending `sorted`. */
export function lowerBound(sorted: ArrayLike<number>, value: number, from = 0): number {
  let lo = from;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Postings per skip block. */
const BLOCK = 64;

/**
 * Where every BLOCK-th posting of encoded postings starts, so that a cursor can jump there: the
 * document of each block's last posting, the document before its first (-1 for the first
 * block), the byte position of its first and the postings left from there. Documents are
 * relative to the run's base.
 */
export interface SkipBlocks {
  last: Int32Array;
  before: Int32Array;
  pos: Int32Array;
  remaining: Int32Array;
}

// Kept as long as the postings are (the lexicon's cache, a delta's runs): built by one walk.
const skipCache = new WeakMap<Uint8Array, SkipBlocks>();

/** The skip blocks of encoded postings (one walk, the first time; cached with the bytes). */
export function skipBlocks(data: Uint8Array): SkipBlocks {
  const cached = skipCache.get(data);
  if (cached) return cached;
  const c = new PostingCursor(data);
  const n = Math.ceil(c.remaining / BLOCK);
  const blocks: SkipBlocks = { last: new Int32Array(n), before: new Int32Array(n), pos: new Int32Array(n), remaining: new Int32Array(n) };
  let k = 0;
  for (let i = 0; k < n; i++) {
    if (i % BLOCK === 0) {
      blocks.before[k] = c.doc;
      blocks.pos[k] = c.position;
      blocks.remaining[k] = c.remaining;
    }
    const more = c.next();
    // A damaged row ends where its bytes do: its last block ends with its last posting.
    if (!more || (i + 1) % BLOCK === 0 || c.remaining === 0) {
      blocks.last[k++] = c.doc;
      if (!more) break;
    }
  }
  const out = k === n ? blocks : { last: blocks.last.slice(0, k), before: blocks.before.slice(0, k), pos: blocks.pos.slice(0, k), remaining: blocks.remaining.slice(0, k) };
  skipCache.set(data, out);
  return out;
}

export interface DecodedPostings {
  docs: number[];
  main: number[];
  extra: number[];
}

/** Every posting of encoded bytes (tests, and checks of stored rows). */
export function decodePostings(data: Uint8Array): DecodedPostings {
  const out: DecodedPostings = { docs: [], main: [], extra: [] };
  const c = new PostingCursor(data);
  while (c.next()) {
    out.docs.push(c.doc);
    out.main.push(c.main);
    out.extra.push(c.extra);
  }
  if (!c.exhausted) throw new Error('a postings row of the wrong length');
  return out;
}
