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
  const order = Array.from({ length: docs.length }, (_, i) => i);
  // Indexes hand their documents over in order; only other callers pay for the sort.
  let ascending = true;
  for (let i = 1; i < docs.length && ascending; i++) ascending = docs[i] > docs[i - 1];
  if (!ascending) order.sort((a, b) => docs[a] - docs[b]);
  const out = new ByteWriter(8 + docs.length * 3);
  out.varint(docs.length);
  let prev = -1;
  for (const i of order) {
    out.varint(docs[i] - prev - 1);
    prev = docs[i];
    const m = clampCount(main[i]);
    const e = clampCount(extra[i]);
    if (m < 15 && e < 15) out.byte(m | (e << 4));
    else {
      out.byte(0xff);
      out.varint(m);
      out.varint(e);
    }
  }
  return out.bytes();
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
 * `main` and `extra` describe one posting.
 */
export class PostingCursor {
  doc: number;
  main = 0;
  extra = 0;
  /** Postings not read yet. */
  remaining: number;
  private pos = 0;

  constructor(
    private readonly data: Uint8Array,
    base = 0,
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

  /** True when every posting was read and nothing is left over. */
  get exhausted(): boolean {
    return this.remaining === 0 && this.pos === this.data.length;
  }
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
