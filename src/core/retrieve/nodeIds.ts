// The node ids of a project's full-text segments, held as UTF-8 bytes rather than strings.
// A million node id strings (and a Map over them) are two million objects that every full
// garbage collection marks: at 1,000,000 cells each full collection paused the process for
// 60-70 ms, several times a minute under queries, which was most of recall's p95. Bytes in typed
// arrays are not marked at all (3 ms for the same collection); a string is made only for the
// documents a search returns.

import { lowerBound } from './postings';

/** Node ids in order, each a slice of one byte array. */
export class NodeIdList {
  private constructor(
    private readonly bytes: Uint8Array,
    /** Start of id i at offsets[i], its end at offsets[i + 1]. */
    private readonly offsets: Uint32Array,
  ) {}

  /** From newline-separated UTF-8 (how a segment head stores them); `count` ids. */
  static fromLines(bytes: Uint8Array, count: number): NodeIdList {
    const offsets = new Uint32Array(count + 1);
    let n = 0;
    for (let i = 0; i < bytes.length && n < count; i++) if (bytes[i] === 10) offsets[++n] = i + 1;
    // The last id ends the bytes, with no newline after it.
    if (count > 0) offsets[count] = bytes.length + 1;
    return new NodeIdList(bytes, offsets);
  }

  get length(): number {
    return this.offsets.length - 1;
  }

  get(i: number): string {
    return DECODER.decode(this.bytesOf(i));
  }

  /** Id i's bytes (a view, not a copy). */
  bytesOf(i: number): Uint8Array {
    return this.bytes.subarray(this.offsets[i], this.offsets[i + 1] - 1);
  }

  hash(i: number): number {
    return hashBytes(this.bytes, this.offsets[i], this.offsets[i + 1] - 1);
  }

  /** Whether id i equals `key[start..end)`. */
  equals(i: number, key: Uint8Array, start: number, end: number): boolean {
    const from = this.offsets[i];
    if (this.offsets[i + 1] - 1 - from !== end - start) return false;
    for (let k = 0; k < end - start; k++) if (this.bytes[from + k] !== key[start + k]) return false;
    return true;
  }
}

const DECODER = new TextDecoder();
const ENCODER = new TextEncoder();

/** FNV-1a over bytes[start, end). */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}

/**
 * Node id -> document number over a sequence of lists (a project's segments, oldest first: the
 * newest copy of a node wins), in one open-addressing table of document numbers.
 */
export class NodeIdMap {
  private readonly bases: number[] = [];
  private readonly slots: Int32Array;
  private readonly mask: number;

  constructor(private readonly lists: NodeIdList[]) {
    let total = 0;
    for (const list of lists) {
      this.bases.push(total);
      total += list.length;
    }
    let size = 16;
    while (size < total * 2) size *= 2;
    this.slots = new Int32Array(size);
    this.mask = size - 1;
    lists.forEach((list, k) => {
      for (let i = 0; i < list.length; i++) this.insert(list.hash(i), this.bases[k] + i, list, i);
    });
  }

  /** Where a node's document is, or undefined. */
  get(nodeId: string): number | undefined {
    const key = ENCODER.encode(nodeId);
    return this.getBytes(key, 0, key.length);
  }

  /** As get, for a node id given as key[start..end) (e.g. straight from an Arrow column). */
  getBytes(key: Uint8Array, start: number, end: number): number | undefined {
    if (this.bases.length === 0) return undefined;
    for (let s = hashBytes(key, start, end) & this.mask; ; s = (s + 1) & this.mask) {
      const stored = this.slots[s];
      if (stored === 0) return undefined;
      const doc = stored - 1;
      const k = this.listOf(doc);
      if (this.lists[k].equals(doc - this.bases[k], key, start, end)) return doc;
    }
  }

  /** The node id of a document. */
  nodeId(doc: number): string {
    const k = this.listOf(doc);
    return this.lists[k].get(doc - this.bases[k]);
  }

  private insert(hash: number, doc: number, list: NodeIdList, i: number): void {
    for (let s = hash & this.mask; ; s = (s + 1) & this.mask) {
      const stored = this.slots[s];
      if (stored === 0) {
        this.slots[s] = doc + 1;
        return;
      }
      // A later copy of the same node replaces the earlier one.
      const k = this.listOf(stored - 1);
      const j = stored - 1 - this.bases[k];
      if (this.lists[k].hash(j) === hash && this.sameId(k, j, list, i)) {
        this.slots[s] = doc + 1;
        return;
      }
    }
  }

  private sameId(k: number, j: number, list: NodeIdList, i: number): boolean {
    const key = list.bytesOf(i);
    return this.lists[k].equals(j, key, 0, key.length);
  }

  /** The list holding a document: the last whose base is at most `doc`. */
  private listOf(doc: number): number {
    return lowerBound(this.bases, doc + 1) - 1;
  }
}
