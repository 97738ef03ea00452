// Word vectors from software documentation, for how near a record's words are to a question's
// as a whole. The same training as the neighbour table (wordNeighbours.ts, rebuilt by
// `scripts/word-neighbours/`): a question that says "per-user cookie state" and "signing
// credential" lands near a commit about the session and its secret key even where no word is
// shared. A text's vector is the mean of its known words' vectors; the similarity of two texts
// is the cosine of theirs. The file holds numbers and the words they belong to, nothing else.

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { locateDataFile } from './wordNeighbours';

export const WORD_VECTORS_FILE = path.join('data', 'word-vectors.bin');

const MAGIC = 'CMWV';
const HEADER_BYTES = 16;

/**
 * Unit vectors stored as 8-bit integers with a scale each (scripts/word-neighbours/vectors.py):
 * "CMWV", uint32 version 1, uint32 words, uint32 dimensions, float32 scales[words], int8
 * components[words x dimensions], then the words in UTF-8, one a line.
 */
export class WordVectors {
  readonly dimension: number;
  private readonly index = new Map<string, number>();
  private readonly scales: Float32Array;
  private readonly components: Int8Array;

  constructor(bytes: Uint8Array) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const magic = bytes.byteLength >= HEADER_BYTES ? new TextDecoder().decode(bytes.subarray(0, 4)) : '';
    const version = magic === MAGIC ? view.getUint32(4, true) : 0;
    const count = version === 1 ? view.getUint32(8, true) : 0;
    const dimension = version === 1 ? view.getUint32(12, true) : 0;
    const wordsAt = HEADER_BYTES + count * 4 + count * dimension;
    if (version !== 1 || dimension === 0 || dimension > 4096 || wordsAt > bytes.byteLength) {
      throw new Error(`not a word-vector file (${magic === MAGIC ? `version ${version}, ${count} x ${dimension}` : 'no CMWV header'})`);
    }
    this.dimension = dimension;
    // Copies: the file's buffer need not be aligned for a Float32Array.
    this.scales = new Float32Array(count);
    for (let i = 0; i < count; i++) this.scales[i] = view.getFloat32(HEADER_BYTES + i * 4, true);
    this.components = new Int8Array(bytes.slice(HEADER_BYTES + count * 4, wordsAt));
    const words = new TextDecoder().decode(bytes.subarray(wordsAt)).split('\n');
    if (words.length !== count) throw new Error(`word-vector file lists ${words.length} words for ${count} vectors`);
    words.forEach((w, i) => this.index.set(w, i));
  }

  get size(): number {
    return this.index.size;
  }

  has(word: string): boolean {
    return this.index.has(word);
  }

  /**
   * The unit-length weighted mean of the words' vectors (weights by word; words without a vector
   * count for nothing), or null when none of the words has one.
   */
  mean(weights: Iterable<readonly [string, number]>): Float32Array | null {
    const d = this.dimension;
    const sum = new Float64Array(d);
    let total = 0;
    for (const [word, weight] of weights) {
      const i = this.index.get(word);
      if (i === undefined || !(weight > 0)) continue;
      const scale = this.scales[i] * weight;
      const base = i * d;
      for (let k = 0; k < d; k++) sum[k] += this.components[base + k] * scale;
      total += weight;
    }
    let norm = 0;
    for (let k = 0; k < d; k++) norm += sum[k] * sum[k];
    norm = Math.sqrt(norm);
    // Words that cancel out (or none known) leave no direction, only rounding.
    if (total === 0 || norm < 1e-6 * total) return null;
    const out = new Float32Array(d);
    for (let k = 0; k < d; k++) out[k] = sum[k] / norm;
    return out;
  }
}

let loaded: WordVectors | null | undefined;

/** The shipped vectors, read once; null (the lever off) when the file is missing or unreadable. */
export function wordVectors(): WordVectors | null {
  if (loaded !== undefined) return loaded;
  const file = locateDataFile(WORD_VECTORS_FILE);
  try {
    loaded = file ? new WordVectors(readFileSync(file)) : null;
  } catch {
    loaded = null;
  }
  return loaded;
}
