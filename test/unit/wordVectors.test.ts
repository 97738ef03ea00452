// Word vectors from software documentation: the shipped file, its format, and a search where they
// decide the order among records that share only a generic word with the question.

import { strict as assert } from 'node:assert';
import { WordVectors, wordVectors } from '../../src/core/retrieve/wordVectors';
import { prepareQueryText } from '../../src/core/retrieve/textPrep';
import { SEARCH_SCOPE, searchStore } from './searchFixture';

process.env.LANCEDB_LOG ??= 'error';

/** A word-vector file as scripts/word-neighbours/vectors.py writes it. */
function vectorFile(words: string[], vectors: number[][]): Uint8Array {
  const d = vectors[0].length;
  const head = Buffer.alloc(16);
  head.write('CMWV', 0, 'latin1');
  head.writeUInt32LE(1, 4);
  head.writeUInt32LE(words.length, 8);
  head.writeUInt32LE(d, 12);
  const scales = Buffer.alloc(4 * words.length);
  const comps = Buffer.alloc(words.length * d);
  vectors.forEach((v, i) => {
    const max = Math.max(...v.map(Math.abs));
    scales.writeFloatLE(max / 127, 4 * i);
    v.forEach((x, k) => comps.writeInt8(Math.round((x / max) * 127), i * d + k));
  });
  return new Uint8Array(Buffer.concat([head, scales, comps, Buffer.from(words.join('\n'), 'utf8')]));
}

function cosine(a: Float32Array, b: Float32Array): number {
  return a.reduce((sum, x, k) => sum + x * b[k], 0);
}

describe('word vectors', function () {
  this.timeout(60_000);

  it('reads the file format: weighted means of unit length, unknown words count for nothing', () => {
    const table = new WordVectors(vectorFile(['east', 'north', 'west'], [[1, 0], [0, 1], [-1, 0]]));
    assert.equal(table.size, 3);
    assert.equal(table.dimension, 2);
    assert.ok(table.has('north') && !table.has('south'));
    const ne = table.mean([['east', 1], ['north', 1], ['south', 5]])!;
    assert.ok(Math.abs(ne[0] - Math.SQRT1_2) < 0.01 && Math.abs(ne[1] - Math.SQRT1_2) < 0.01, String(ne));
    const mostlyEast = table.mean([['east', 3], ['north', 1]])!;
    assert.ok(mostlyEast[0] > mostlyEast[1]);
    assert.equal(table.mean([['south', 1]]), null);
    assert.equal(table.mean([['east', 1], ['west', 1]]), null, 'opposite words cancel out: no direction');
  });

  it('refuses a file that is not one, or whose word list does not match its vectors', () => {
    assert.throws(() => new WordVectors(new Uint8Array(Buffer.from('not a vector file at all'))), /not a word-vector file/);
    const good = vectorFile(['a', 'b'], [[1, 0], [0, 1]]);
    assert.throws(() => new WordVectors(good.slice(0, 20)), /not a word-vector file/);
    const badVersion = good.slice();
    badVersion[4] = 9;
    assert.throws(() => new WordVectors(badVersion), /version 9/);
    assert.throws(() => new WordVectors(new Uint8Array(Buffer.concat([Buffer.from(good), Buffer.from('\nc')]))), /3 words for 2 vectors/);
  });

  it('ships vectors keyed by the index\'s own terms, related words nearer than unrelated ones', () => {
    const table = wordVectors();
    assert.ok(table, 'data/word-vectors.bin is shipped');
    assert.ok(table.size > 10_000, `${table.size} words`);
    const v = (w: string): Float32Array => table.mean([[prepareQueryText(w), 1]])!;
    assert.ok(cosine(v('credential'), v('authentication')) > 0.5);
    assert.ok(cosine(v('credential'), v('authentication')) > cosine(v('credential'), v('triangle')) + 0.3);
  });

  describe('in search', () => {
    // Every title has three words besides "Change": BM25 cannot tell them apart on "change" alone.
    const target = 'Change: keep sessions signed';
    const others = ['tidy logging helpers', 'rename build scripts', 'speed test runner', 'move docs folder', 'bump parser version', 'sort changelog entries', 'drop unused fonts', 'split math utilities', 'reformat license headers', 'pin linter version', 'translate error catalogue'];
    const store = searchStore([others.map((t) => ({ type: 'note', title: `Change: ${t}`, narrative: 'routine' })), [{ type: 'bugfix', title: target, narrative: 'routine' }]]);
    const scope = SEARCH_SCOPE;

    it('puts first the record whose words are nearest the question\'s, and not without the vectors', async () => {
      const question = 'which change stopped the browser from losing the login cookie?';
      process.env.CODE_MEMORY_RETRIEVAL = 'relatedWeight=0';
      const found = await store.engine().search(question, { scope, limit: 12 });
      assert.equal(found.length, 12);
      assert.equal(found[0].cell.title, target, JSON.stringify(found.map((h) => h.cell.title)));
      process.env.CODE_MEMORY_RETRIEVAL = 'relatedWeight=0,wordVectorWeight=0';
      const without = await store.engine().search(question, { scope, limit: 12 });
      const scores = new Set(without.map((h) => h.score.toFixed(6)));
      assert.equal(scores.size, 1, `without the vectors the words alone decide, and they tie: ${JSON.stringify(without.map((h) => [h.cell.title, h.score]))}`);
    });
  });
});
