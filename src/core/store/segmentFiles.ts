// Local copies of the full-text segments' postings: one file per segment in the store's folder,
// read with a few positional reads per term instead of a LanceDB query. At 1,000,000 cells a
// query's postings read took 18-24 ms at the median and 92-115 ms at p95 through LanceDB (most
// of it handing the rows to JavaScript); from these files it is a few copies out of the page
// cache. The table stays the truth: a segment without a file (not copied yet, an object-store
// store, a file that does not check out) is read from the table, and a segment is immutable, so
// a file never goes stale while its segment lives.
//
// Only the maintenance-lease holder writes files (Maintenance.writeLexicon), to a temporary name
// renamed into place, so a reader sees a whole file or none. Files whose segment has no rows in
// the table any more (replaced segments once collected, a forgotten project's) are deleted by
// `sweep`, which forget runs before it returns: a forgotten word stays in no file.
//
// Layout (little-endian): magic, slot count (u32), entry count (u32), offset of the slots (u64),
// then the entries, each the term's length (u32), the term (UTF-8), the postings' length (u32)
// and the postings as the table stores them; then the slots, an open-addressing hash table of
// (FNV-1a of the term, u32; the entry's offset, u64, 0 for an empty slot; the CRC-32 of the
// whole entry, u32). A read checks the CRC of the bytes it read, so damaged postings are never
// served: the file is dropped and the table read (the next upkeep writes it again). Files of the
// layout before the CRC (magic CMPOST02) are dropped the same way when first read.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32 } from 'node:zlib';

const MAGIC = Buffer.from('CMPOST03', 'latin1');
const HEADER = 24;
/** A slot: the term's hash (u32), the entry's offset (u64), the entry's CRC-32 (u32). */
const SLOT = 16;
/** An entry's head before its term and postings: the two lengths. */
const ENTRY_HEAD = 8;
/** Terms this long or shorter are compared in a scratch buffer (longer ones, rare, in one of their own). */
const SCRATCH_TERM_BYTES = 256;
/** Segment ids are `newSegmentId`'s: a file name made of them cannot leave the folder. */
const SEGMENT_ID = /^[0-9a-z]{10}-[0-9a-f]{8}$/;
const SUFFIX = '.postings';

function fnv1a(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i];
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** A file that does not check out: the caller reads the table instead and drops the file. */
class BadFile extends Error {}

class SegmentFile {
  /** Scratch for a slot and an entry's head: probes allocate nothing. */
  private readonly slot = Buffer.alloc(SLOT);
  private readonly entry = Buffer.alloc(ENTRY_HEAD + SCRATCH_TERM_BYTES);

  private constructor(
    private readonly fd: number,
    private readonly slots: number,
    private readonly slotsAt: number,
  ) {}

  static open(file: string): SegmentFile | null {
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch {
      return null;
    }
    try {
      const head = Buffer.alloc(HEADER);
      const size = fs.fstatSync(fd).size;
      if (fs.readSync(fd, head, 0, HEADER, 0) !== HEADER || !head.subarray(0, 8).equals(MAGIC)) throw new BadFile('not a postings file');
      const slots = head.readUInt32LE(8);
      const slotsAt = Number(head.readBigUInt64LE(16));
      if (slots === 0 || slotsAt < HEADER || slotsAt + slots * SLOT !== size) throw new BadFile('a postings file of the wrong length');
      return new SegmentFile(fd, slots, slotsAt);
    } catch (error) {
      fs.closeSync(fd);
      throw error;
    }
  }

  private read(into: Uint8Array, length: number, at: number): void {
    if (fs.readSync(this.fd, into, 0, length, at) !== length) throw new BadFile('a postings file cut short');
  }

  /** The term's postings as stored (in a buffer of their own), or undefined when the segment does not hold it. */
  get(term: Uint8Array): Uint8Array | undefined {
    const h = fnv1a(term);
    const { slot } = this;
    const need = ENTRY_HEAD + term.length;
    const entry = need <= this.entry.length ? this.entry : Buffer.alloc(need);
    for (let probe = 0, i = h % this.slots; probe < this.slots; probe++, i = (i + 1) % this.slots) {
      this.read(slot, SLOT, this.slotsAt + i * SLOT);
      const at = Number(slot.readBigUInt64LE(4));
      if (at === 0) return undefined;
      if (slot.readUInt32LE(0) !== h) continue;
      if (at < HEADER || at >= this.slotsAt) throw new BadFile('a postings slot out of range');
      // As much of the entry as the asked term needs: another term's is told apart by its length.
      const head = Math.min(need, this.slotsAt - at);
      if (head < 4) throw new BadFile('a postings entry out of range');
      this.read(entry, head, at);
      const length = entry.readUInt32LE(0);
      if (length !== term.length || head < need || !entry.subarray(4, 4 + length).equals(term)) {
        // Another term of the same hash, or a damaged entry: every entry's term hashes to its slot.
        if (!this.termHashes(at, length, h)) throw new BadFile('a postings entry that does not match its slot');
        continue;
      }
      const size = entry.readUInt32LE(4 + length);
      if (at + need + size > this.slotsAt) throw new BadFile('a postings entry out of range');
      const postings = new Uint8Array(size);
      this.read(postings, size, at + need);
      if (crc32(postings, crc32(entry.subarray(0, need))) !== slot.readUInt32LE(12)) throw new BadFile('a postings entry that fails its checksum');
      return postings;
    }
    return undefined;
  }

  /** Whether the term of the entry at `at` (of `length` bytes) hashes to `h`, as its slot says. */
  private termHashes(at: number, length: number, h: number): boolean {
    if (at + 4 + length > this.slotsAt) return false;
    const stored = Buffer.alloc(length);
    this.read(stored, length, at + 4);
    return fnv1a(stored) === h;
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/** The postings files of one store folder. */
export class SegmentFiles {
  /** Open files by segment id. */
  private readonly open = new Map<string, SegmentFile>();

  constructor(readonly dir: string) {}

  private fileOf(segment: string): string {
    if (!SEGMENT_ID.test(segment)) throw new Error(`not a segment id: ${JSON.stringify(segment)}`);
    return path.join(this.dir, segment + SUFFIX);
  }

  has(segment: string): boolean {
    return this.open.has(segment) || fs.existsSync(this.fileOf(segment));
  }

  /**
   * The postings of `terms` in `segment`'s file (a term the segment lacks is absent), or null
   * when the segment has no file that checks out (one that does not is deleted).
   */
  lookup(segment: string, terms: readonly string[]): Map<string, Uint8Array> | null {
    if (!SEGMENT_ID.test(segment)) return null;
    try {
      let file = this.open.get(segment);
      if (!file) {
        const opened = SegmentFile.open(this.fileOf(segment));
        if (!opened) return null;
        this.open.set(segment, (file = opened));
      }
      const out = new Map<string, Uint8Array>();
      for (const term of terms) {
        const postings = file.get(Buffer.from(term, 'utf8'));
        if (postings) out.set(term, postings);
      }
      return out;
    } catch (error) {
      if (!(error instanceof BadFile)) throw error;
      this.drop(segment);
      fs.rmSync(this.fileOf(segment), { force: true });
      return null;
    }
  }

  /** Closes the files of segments not in `keep` (replaced ones: their files may be gone soon). */
  retain(keep: ReadonlySet<string>, of: readonly string[]): void {
    for (const segment of of) if (!keep.has(segment)) this.drop(segment);
  }

  private drop(segment: string): void {
    this.open.get(segment)?.close();
    this.open.delete(segment);
  }

  /**
   * Writes `segment`'s file from its (term, postings) pairs. `stillLive` is asked once the file is
   * in place: a segment deleted meanwhile (forget) loses the file again, and the answer is false.
   */
  async write(segment: string, entries: AsyncIterable<[string, Uint8Array]>, stillLive: () => Promise<boolean>): Promise<boolean> {
    const file = this.fileOf(segment);
    await fs.promises.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const temp = `${file}.${process.pid}.tmp`;
    const fd = fs.openSync(temp, 'w', 0o600);
    let done = false;
    try {
      const hashes: number[] = [];
      const offsets: number[] = [];
      const sums: number[] = [];
      let at = HEADER;
      for await (const [term, postings] of entries) {
        const bytes = Buffer.from(term, 'utf8');
        const head = Buffer.allocUnsafe(ENTRY_HEAD + bytes.length);
        head.writeUInt32LE(bytes.length, 0);
        bytes.copy(head, 4);
        head.writeUInt32LE(postings.byteLength, 4 + bytes.length);
        fs.writeSync(fd, head, 0, head.length, at);
        fs.writeSync(fd, postings, 0, postings.byteLength, at + head.length);
        hashes.push(fnv1a(bytes));
        offsets.push(at);
        sums.push(crc32(postings, crc32(head)));
        at += head.length + postings.byteLength;
      }
      // At most half full, so a missing term ends its probe at an empty slot soon.
      let slots = 8;
      while (slots < hashes.length * 2) slots *= 2;
      const table = Buffer.alloc(slots * SLOT);
      for (let k = 0; k < hashes.length; k++) {
        let i = hashes[k] % slots;
        while (table.readBigUInt64LE(i * SLOT + 4) !== 0n) i = (i + 1) % slots;
        table.writeUInt32LE(hashes[k], i * SLOT);
        table.writeBigUInt64LE(BigInt(offsets[k]), i * SLOT + 4);
        table.writeUInt32LE(sums[k], i * SLOT + 12);
      }
      fs.writeSync(fd, table, 0, table.length, at);
      const head = Buffer.alloc(HEADER);
      MAGIC.copy(head, 0);
      head.writeUInt32LE(slots, 8);
      head.writeUInt32LE(hashes.length, 12);
      head.writeBigUInt64LE(BigInt(at), 16);
      fs.writeSync(fd, head, 0, HEADER, 0);
      fs.fsyncSync(fd);
      done = true;
    } finally {
      fs.closeSync(fd);
      if (!done) fs.rmSync(temp, { force: true });
    }
    fs.renameSync(temp, file);
    if (!(await stillLive())) {
      fs.rmSync(file, { force: true });
      return false;
    }
    return true;
  }

  /** Deletes the files (and leftover temporary files) of segments not in `live`; returns how many. */
  sweep(live: ReadonlySet<string>): number {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return 0;
    }
    let deleted = 0;
    for (const name of names) {
      const segment = name.slice(0, name.indexOf('.'));
      if (name.endsWith(SUFFIX) && live.has(segment)) continue;
      // A temporary file of a live segment may be another process's write in progress.
      if (name.endsWith('.tmp') && live.has(segment)) continue;
      this.drop(segment);
      fs.rmSync(path.join(this.dir, name), { force: true });
      deleted++;
    }
    return deleted;
  }

  close(): void {
    for (const segment of [...this.open.keys()]) this.drop(segment);
  }
}
