import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import type { ObservationInput } from '../../src/core/api';
import { MemoryEngine } from '../../src/core/engine';
import { LexicalIndex, bm25Counters, bm25Search, idf } from '../../src/core/retrieve/lexicalIndex';
import { Lexicon, lexiconFor } from '../../src/core/retrieve/lexicon';
import { prepareQueryText } from '../../src/core/retrieve/textPrep';
import { readByRowId } from '../../src/core/retrieve/rowReads';
import { POSTINGS_FILES_DIR, currentPostings } from '../../src/core/store/lexicalSegments';
import { indexProjectLexicon } from '../../src/core/store/lexiconIndexer';
import { PostingCursor, decodePostings, encodePostings, skipBlocks } from '../../src/core/retrieve/postings';
import { TABLES } from '../../src/core/store/schema';
import { filesContaining } from './diskFixture';

process.env.LANCEDB_LOG ??= 'error';

const READER = path.join(__dirname, 'fixtures', 'lexiconReader.ts');
const TSX = require.resolve('tsx/cli');
const WORDS = ['parser', 'option', 'completion', 'environment', 'env', 'command', 'middleware', 'locale', 'validation', 'coerce', 'array'];
const EXTRA_WEIGHT = 0.5;

/**
 * The cells as a second process sees them: when `race.beforeCount` is set, the next count runs
 * it first, once (a writer committing between the view's read of the new rows and its count).
 * `override` answers the members it returns something for; the table answers the rest.
 */
function racingCells(real: lancedb.Table, override: (prop: string | symbol) => unknown = () => undefined): { cells: lancedb.Table; race: { beforeCount: (() => Promise<unknown>) | null } } {
  const race: { beforeCount: (() => Promise<unknown>) | null } = { beforeCount: null };
  const cells = new Proxy(real, {
    get(target, prop) {
      const own = override(prop);
      if (own !== undefined) return own;
      if (prop === 'countRows') {
        return async (filter?: string) => {
          const write = race.beforeCount;
          race.beforeCount = null;
          if (write) await write();
          return target.countRows(filter);
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { cells, race };
}

/** racingCells that also counts the listings of `project` (queries whose whole condition is its scope). */
function listingCells(real: lancedb.Table, project: string): ReturnType<typeof racingCells> & { listings: () => number } {
  let listings = 0;
  const racing = racingCells(real, (prop) =>
    prop !== 'query'
      ? undefined
      : () => {
          const q = real.query();
          const where = q.where.bind(q);
          q.where = (clause: string) => {
            if (clause === `project = '${project}'`) listings++;
            return where(clause);
          };
          return q;
        },
  );
  return { ...racing, listings: () => listings };
}

function note(i: number, tag = ''): ObservationInput {
  const w = (k: number): string => WORDS[(i * k + k) % WORDS.length];
  return {
    type: 'commit',
    title: `${w(1)} ${w(3)} change ${tag}${i}`,
    narrative: `Touches the ${w(5)} and the ${w(7)} ${w(2)}; ${w(1)} again.`,
    search_extra: i % 3 === 0 ? `${w(4)} ${w(6)} diff lines` : undefined,
  } as ObservationInput;
}

type Child = { lease: boolean; titles: string[]; shape: { segments: string[]; deltaDocs: number; liveDocs: number } };

function readInChild(dir: string, project: string, query: string): Promise<Child> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [TSX, READER, dir, project, query], { env: { ...process.env, LANCEDB_LOG: 'error' } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as Child);
    });
  });
}

/** Postings as format 1 stored them, before compression: u32 count, u32 documents, u16 counts. */
function fixedPostings(docs: ArrayLike<number>, main: ArrayLike<number>, extra: ArrayLike<number>): Buffer {
  const n = docs.length;
  const buf = Buffer.alloc(4 + n * 8);
  buf.writeUInt32LE(n, 0);
  for (let i = 0; i < n; i++) {
    buf.writeUInt32LE(docs[i], 4 + i * 4);
    buf.writeUInt16LE(main[i], 4 + n * 4 + i * 2);
    buf.writeUInt16LE(extra[i], 4 + n * 6 + i * 2);
  }
  return buf;
}

describe('segment postings encoding', () => {
  it('round-trips documents and section counts, whatever their size, in about two bytes an entry', () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const docs: number[] = [];
    for (let d = random(3); docs.length < 5000; d += 1 + (random(10) === 0 ? random(100_000) : random(3))) docs.push(d);
    const main = docs.map((_, i) => (i % 97 === 0 ? 15 + random(500) : random(4)));
    const extra = docs.map((_, i) => (i % 89 === 0 ? 14 + random(2) : random(3)));
    main[10] = 70_000;
    const encoded = encodePostings(docs, main, extra);
    assert.ok(encoded.length < docs.length * 3, `${encoded.length} bytes for ${docs.length} entries`);
    const back = decodePostings(encoded);
    assert.deepEqual([...back.docs], docs);
    assert.deepEqual([...back.main], main.map((m) => Math.min(m, 0xffff)));
    assert.deepEqual([...back.extra], extra);
    // Documents given out of order are stored in order, each with its own counts.
    const shuffled = decodePostings(encodePostings([9, 2, 5], [1, 2, 3], [0, 1, 0]));
    assert.deepEqual([[...shuffled.docs], [...shuffled.main], [...shuffled.extra]], [[2, 5, 9], [2, 3, 1], [1, 0, 0]]);
    assert.throws(() => decodePostings(encoded.subarray(0, encoded.length - 1)), /wrong length/);
    // A count far beyond the bytes (a damaged row) ends with them instead of spinning on.
    assert.throws(() => decodePostings(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0, 1])), /wrong length/);
  });

  it('still reads segments written before compression (format 1)', () => {
    const buf = fixedPostings([4, 70_000, 70_001], [1, 2, 300], [0, 5, 1]);
    const p = decodePostings(currentPostings(new Uint8Array(buf), 1));
    assert.deepEqual([[...p.docs], [...p.main], [...p.extra]], [[4, 70_000, 70_001], [1, 2, 300], [0, 5, 1]]);
  });
});

describe('BM25 with MaxScore and skip blocks', () => {
  // A deterministic pseudo-random sequence.
  let seed = 7;
  const rand = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);

  it('seeks through skip blocks to exactly the postings a walk finds, also in a damaged row', () => {
    const docs: number[] = [];
    for (let d = 0; docs.length < 5000; d += 1 + Math.floor(rand() * (rand() < 0.01 ? 5000 : 4))) docs.push(d);
    const data = encodePostings(docs, docs.map((_, i) => i % 20), docs.map((_, i) => i % 3));
    const blocks = skipBlocks(data);
    assert.equal(blocks.last.length, Math.ceil(docs.length / 64));
    for (const damaged of [false, true]) {
      const bytes = damaged ? data.subarray(0, Math.floor(data.length / 2)) : data;
      const walked = decodePostingsLoose(bytes, 100);
      const c = new PostingCursor(bytes, 100, damaged ? skipBlocks(bytes) : blocks);
      let checked = 0;
      for (let target = 100; target < 100 + docs[docs.length - 1] + 10; target += 1 + Math.floor(rand() * 300)) {
        const want = walked.find((p) => p.doc >= target);
        const found = c.seek(target);
        assert.equal(found, want !== undefined, `seek(${target}) found`);
        if (!want) break;
        assert.deepEqual([c.doc, c.main, c.extra], [want.doc, want.main, want.extra], `seek(${target})`);
        checked++;
      }
      assert.ok(checked > 20);
    }
  });

  /** Every posting a cursor reads before the bytes end. */
  function decodePostingsLoose(data: Uint8Array, base: number): Array<{ doc: number; main: number; extra: number }> {
    const c = new PostingCursor(data, base);
    const out: Array<{ doc: number; main: number; extra: number }> = [];
    while (c.next()) out.push({ doc: c.doc, main: c.main, extra: c.extra });
    return out;
  }

  it('ranks exactly like scoring every posting of every term, while skipping the frequent terms', () => {
    // Every document has "common", a fifth "mid", a few of the rare words; counts vary.
    const texts: string[][] = [];
    for (let d = 0; d < 6000; d++) {
      const words: string[] = [];
      for (let n = 1 + Math.floor(rand() * 3); n > 0; n--) words.push('common');
      if (rand() < 0.2) words.push('mid');
      if (rand() < 0.05) words.push('middling');
      for (let r = 0; r < 40; r++) if (rand() < 0.004) for (let n = 1 + Math.floor(rand() * 3); n > 0; n--) words.push(`rare${r}`);
      for (let n = Math.floor(rand() * 12); n > 0; n--) words.push(`filler${Math.floor(rand() * 500)}`);
      texts.push(words);
    }
    const index = new LexicalIndex();
    texts.forEach((words, d) => index.add(`n${d}`, words.join(' ')));
    const lengths = texts.map((w) => w.length);
    const avg = lengths.reduce((a, b) => a + b, 0) / texts.length;
    const dfs = new Map<string, number>();
    for (const words of texts) for (const w of new Set(words)) dfs.set(w, (dfs.get(w) ?? 0) + 1);
    const df = (term: string): number => dfs.get(term) ?? 0;
    function reference(query: Map<string, number>): Array<{ nodeId: string; score: number }> {
      const out: Array<{ nodeId: string; score: number }> = [];
      texts.forEach((words, d) => {
        let score = 0;
        for (const [term, weight] of query) {
          const tf = words.filter((w) => w === term).length;
          if (tf === 0) continue;
          const n = df(term);
          const w = Math.log(1 + (texts.length - n + 0.5) / (n + 0.5)) * weight;
          score += (w * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * lengths[d]) / avg));
        }
        if (score > 0) out.push({ nodeId: `n${d}`, score });
      });
      return out.sort((a, b) => b.score - a.score);
    }
    const before = bm25Counters.pruned;
    const queries = [['rare3', 'common'], ['rare1', 'rare7', 'mid', 'common'], ['middling', 'rare12', 'common', 'mid'], ['common', 'mid'], ['rare5', 'rare6', 'rare8', 'common']];
    for (const words of queries) {
      for (const limit of [1, 10, 50]) {
        const query = new Map(words.map((w, i) => [w, i === 0 ? 1 : 0.5 + i / 10]));
        const got = bm25Search(index, query, limit);
        const want = reference(query).slice(0, limit);
        assert.equal(got.length, want.length, `${words.join(' ')} @${limit}`);
        got.forEach((h, i) => assert.ok(Math.abs(h.score - want[i].score) < 1e-9, `${words.join(' ')} @${limit}: score ${i}`));
        // Equal scores may come in either order; every other position is the same document.
        got.forEach((h, i) => {
          const tied = want.filter((x) => Math.abs(x.score - want[i].score) < 1e-9).map((x) => x.nodeId);
          assert.ok(tied.includes(h.nodeId), `${words.join(' ')} @${limit}: ${h.nodeId} at ${i}`);
        });
      }
    }
    assert.ok(bm25Counters.pruned - before >= 8, `pruned ${bm25Counters.pruned - before} of 15 searches`);
  });
});

describe('full-text index segments', function () {
  this.timeout(120_000);
  let dir: string;
  let engine: MemoryEngine;
  const alpha = { project: 'alpha' };
  const beta = { project: 'beta' };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-lexicon-'));
    // Every new row is written into a segment at the next optimize.
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, lexiconMinDelta: 1 });
  });
  afterEach(async () => {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const lexicon = (project: string) => lexiconFor(engine.store.table(TABLES.cells), engine.repos.lexicalSegments, project);
  const shapeOf = async (project: string) => {
    await lexicon(project).refresh();
    return lexicon(project).shape;
  };

  /** One in-memory index over the project's live rows: what the merged view must equal. */
  async function reference(project: string): Promise<LexicalIndex> {
    const index = new LexicalIndex(EXTRA_WEIGHT);
    for (const r of await engine.store.rows(TABLES.cells, `project = '${project}'`, { select: ['node_id', 'search_text'] })) index.add(String(r.node_id), String(r.search_text));
    return index;
  }

  async function assertSameAsReference(project: string, queries: string[], view: Lexicon = lexicon(project)): Promise<void> {
    const ref = await reference(project);
    for (const text of queries) {
      const terms = prepareQueryText(text).split(' ');
      const corpus = await view.corpus(EXTRA_WEIGHT, terms);
      assert.equal(corpus.liveDocs, ref.liveDocs, 'document count');
      assert.ok(Math.abs(corpus.totalLength - ref.totalLength) < 1e-6, 'total length');
      const q = new Map(terms.map((t) => [t, 1]));
      for (const t of terms) assert.ok(Math.abs(idf(corpus, t) - idf(ref, t)) < 1e-9, `idf of ${t}`);
      const got = new Map(bm25Search(corpus, q, 1000).map((h) => [h.nodeId, h.score]));
      const want = bm25Search(ref, q, 1000);
      assert.ok(want.length > 0, `the control failed: '${text}' matches nothing`);
      assert.equal(got.size, want.length, `hits for '${text}'`);
      for (const h of want) assert.ok(Math.abs((got.get(h.nodeId) ?? -1) - h.score) < 1e-9, `score of ${h.nodeId} for '${text}'`);
    }
  }

  it('scores segments plus delta plus deletions exactly like one index over the live rows', async () => {
    const first = await engine.observe(Array.from({ length: 120 }, (_, i) => note(i)), alpha);
    await engine.optimize();
    assert.equal((await shapeOf('alpha')).segments.length, 1);
    assert.equal((await shapeOf('alpha')).deltaDocs, 0);
    await engine.observe(Array.from({ length: 30 }, (_, i) => note(1000 + i, 'late')), alpha);
    // Rows deleted after their segment was written count nowhere.
    await engine.repos.forProject('alpha').cells.delete('observation', first.slice(0, 10).map((o) => o.id));
    const queries = ['parser option', 'environment variables', 'completion middleware locale', 'coerce array validation', 'command diff lines'];
    await assertSameAsReference('alpha', queries);
    const shape = await shapeOf('alpha');
    assert.deepEqual([shape.segments.length, shape.deltaDocs, shape.deadDocs, shape.liveDocs], [1, 30, 10, 140]);

    await engine.optimize();
    const after = await shapeOf('alpha');
    assert.deepEqual([after.segments.length, after.deltaDocs], [2, 0]);
    await assertSameAsReference('alpha', queries);
    // Through the engine: a late row is found, a deleted one is not.
    const titles = (await engine.search('late1003', { scope: alpha })).map((h) => h.cell.title);
    assert.ok(titles.some((t) => t.endsWith('late1003')), titles.join(' | '));
  });

  it('reads a term once for questions asked together, and after a new segment only that segment', async () => {
    await engine.observe(Array.from({ length: 120 }, (_, i) => note(i)), alpha);
    await engine.optimize();
    // A new process's reader: every postings read it makes is recorded.
    const segments = engine.repos.lexicalSegments;
    const reads: Array<{ segments: string[]; terms: string[] }> = [];
    const spy = Object.create(segments) as typeof segments;
    spy.postings = (project, heads, terms) => {
      reads.push({ segments: heads.map((h) => h.id), terms: [...terms] });
      return segments.postings(project, heads, terms);
    };
    const fresh = new Lexicon(engine.store.table(TABLES.cells), spy, 'alpha');
    const terms = prepareQueryText('parser option completion').split(' ');
    await Promise.all([fresh.corpus(EXTRA_WEIGHT, terms), fresh.corpus(EXTRA_WEIGHT, terms.slice(0, 2)), fresh.corpus(EXTRA_WEIGHT, terms)]);
    const times = (t: string): number => reads.filter((r) => r.terms.includes(t)).length;
    assert.deepEqual(terms.map(times), [1, 1, 1], JSON.stringify(reads));

    // A new segment: the terms keep their postings in the first, only the new one is read.
    const [first] = fresh.shape.segments;
    await engine.observe(Array.from({ length: 30 }, (_, i) => note(2000 + i, 'late')), alpha);
    await engine.optimize();
    reads.length = 0;
    const corpus = await fresh.corpus(EXTRA_WEIGHT, terms);
    assert.equal(fresh.shape.segments.length, 2);
    const second = fresh.shape.segments.find((id) => id !== first)!;
    assert.ok(reads.length > 0 && reads.every((r) => r.segments.length === 1 && r.segments[0] === second), JSON.stringify(reads));
    // Scored as one index over the live rows would.
    const ref = await reference('alpha');
    const q = new Map(terms.map((t) => [t, 1]));
    const want = bm25Search(ref, q, 200);
    assert.ok(want.length > 100, `the control: ${want.length} hits`);
    assert.deepEqual(new Map(bm25Search(corpus, q, 200).map((h) => [h.nodeId, h.score.toFixed(9)])), new Map(want.map((h) => [h.nodeId, h.score.toFixed(9)])));
  });

  it('scores every term of a query whose postings alone overflow the postings cache', async () => {
    await engine.observe(Array.from({ length: 120 }, (_, i) => note(i)), alpha);
    await engine.optimize();
    await engine.observe(Array.from({ length: 10 }, (_, i) => note(500 + i, 'late')), alpha);
    const limit = lexicon('alpha').cacheLimit;
    lexicon('alpha').cacheLimit = 1;
    try {
      await assertSameAsReference('alpha', ['parser option completion', 'environment middleware locale coerce', 'command array validation diff lines']);
    } finally {
      lexicon('alpha').cacheLimit = limit;
    }
  });

  it('follows rows added, rewritten and deleted from an empty project on, exactly like one index over the live rows', async () => {
    const queries = ['parser option', 'environment variables', 'completion middleware locale', 'command diff lines'];
    assert.equal((await shapeOf('alpha')).liveDocs, 0);
    const first = await engine.observe(Array.from({ length: 20 }, (_, i) => note(i)), alpha);
    await assertSameAsReference('alpha', queries);
    assert.equal((await shapeOf('alpha')).liveDocs, 20);
    // A segment, and compaction: every row is stored again under a new row id.
    await engine.optimize();
    await engine.observe(Array.from({ length: 10 }, (_, i) => note(1000 + i, 'late')), alpha);
    // An access count rewrites rows in place: they stay one document each.
    await engine.touch('observation', first.slice(0, 5).map((o) => o.id), alpha);
    await engine.repos.forProject('alpha').cells.delete('observation', [first[6].id]);
    await assertSameAsReference('alpha', queries);
    const shape = await shapeOf('alpha');
    assert.deepEqual([shape.deltaDocs, shape.deadDocs, shape.liveDocs], [10, 1, 29]);
  });

  it("reads a search's rows by row id, and finds those that moved after the row ids were read", async () => {
    await engine.observe(Array.from({ length: 40 }, (_, i) => note(i)), alpha);
    await engine.optimize();
    await engine.observe(Array.from({ length: 5 }, (_, i) => note(100 + i, 'late')), alpha);
    const terms = prepareQueryText('parser option change').split(' ');
    const corpus = await lexicon('alpha').corpus(EXTRA_WEIGHT, terms);
    const ids = bm25Search(corpus, new Map(terms.map((t) => [t, 1])), 100).map((h) => h.nodeId);
    assert.ok(ids.length > 10, `the control failed: ${ids.length} hits`);
    const segmentDoc = ids.find((id) => !lexicon('alpha').deltaIndex.has(id))!;
    const deltaDoc = ids.find((id) => lexicon('alpha').deltaIndex.has(id))!;
    assert.ok(segmentDoc && deltaDoc, 'hits from both the segment and the delta');
    const before = new Map(ids.map((id) => [id, lexicon('alpha').rowIdOf(id)]));
    assert.ok([...before.values()].every((r) => r !== undefined), 'every live row id is known');

    const columns = ['node_id', 'access_count'];
    const scope = `project = 'alpha'`;
    assert.deepEqual([...(await corpus.readRows(ids, scope, columns)).keys()].sort(), [...ids].sort());
    // A filter still applies: rows that fail it are not read, and nothing else is looked up.
    const odd = new Set(ids.filter((_, i) => i % 2 === 1));
    const filtered = await corpus.readRows(ids, `${scope} AND node_id IN (${[...odd].map((id) => `'${id}'`).join(',')})`, columns);
    assert.deepEqual([...filtered.keys()].sort(), [...odd].sort());

    // Rows move after this query's row ids were read: another writer (here a second connection,
    // which this process's lexicon does not hear of) rewrites them and compacts the table.
    const other = await (await lancedb.connect(dir)).openTable(TABLES.cells);
    await other.update({ where: scope, values: { access_count: '1' } });
    await other.optimize();
    const moved = ids.filter((id) => before.get(id) !== undefined);
    const stale = await readByRowId(engine.store.table(TABLES.cells), moved.map((id) => before.get(id)!), scope, columns);
    assert.equal(stale.length, 0, 'control: the old row ids read nothing');
    const rows = await corpus.readRows(moved, scope, columns);
    assert.deepEqual([...rows.keys()].sort(), [...moved].sort(), 'every moved row found again');
    assert.equal(Number(rows.get(segmentDoc)!.access_count), 1, 'the rows as they are now');
    other.close();
    // The next query reads the new row ids.
    await lexicon('alpha').refresh();
    assert.notEqual(lexicon('alpha').rowIdOf(segmentDoc), before.get(segmentDoc));
    const titles = (await engine.search('parser option change', { scope: alpha })).map((h) => h.cell.title);
    assert.equal(titles.length, 10, titles.join(' | '));
  });

  it('catches up with rows a writer commits between its read of the new rows and its count, without listing the project', async () => {
    await engine.observe(Array.from({ length: 40 }, (_, i) => note(i)), alpha);
    await engine.optimize();
    // A second process's view of the cells: it records its listings of the whole project, and
    // its count can let a writer commit first, as a writing process does between the two reads.
    const real = engine.store.table(TABLES.cells);
    const { cells, race, listings } = listingCells(real, 'alpha');
    const fresh = new Lexicon(cells, engine.repos.lexicalSegments, 'alpha');
    await fresh.refresh();
    assert.equal(listings(), 1, 'control: the first refresh lists the project');
    await engine.observe(Array.from({ length: 5 }, (_, i) => note(200 + i, 'late')), alpha);
    race.beforeCount = () => engine.observe(Array.from({ length: 3 }, (_, i) => note(300 + i, 'racing')), alpha);
    await fresh.refresh();
    assert.equal(race.beforeCount, null, 'control: the writer committed between the two reads');
    assert.equal(listings(), 1, 'the project was not listed again');
    assert.equal((await fresh.corpus(EXTRA_WEIGHT, ['parser'])).liveDocs, 48);
    await assertSameAsReference('alpha', ['parser option racing301'], fresh);
  });

  it('reads the text of new rows a writer moved between the catch-up\'s listing and its read of them', async () => {
    await engine.observe(Array.from({ length: 40 }, (_, i) => note(i)), alpha);
    await engine.optimize();
    const real = engine.store.table(TABLES.cells);
    // Once set, the version the view last read: the query that raced asks nothing more.
    let frozen: number | null = null;
    const { cells, race } = racingCells(real, (prop) => (prop === 'version' && frozen !== null ? async () => frozen : undefined));
    const fresh = new Lexicon(cells, engine.repos.lexicalSegments, 'alpha');
    await fresh.refresh();
    const late = await engine.observe(Array.from({ length: 5 }, (_, i) => note(200 + i, 'moved')), alpha);
    // Listed at their row ids, then moved (an access count written) before their text is read.
    race.beforeCount = () => engine.touch('observation', late.map((o) => o.id), alpha);
    const listedAt = await real.version();
    await fresh.refresh();
    assert.equal(race.beforeCount, null, 'control: the rows moved between the listing and the read');
    frozen = listedAt;
    await assertSameAsReference('alpha', ['parser option moved202'], fresh);
  });

  it('reads segments written before compression, and the lease holder writes them again', async () => {
    await engine.observe(Array.from({ length: 120 }, (_, i) => note(i)), alpha);
    await engine.optimize();
    await engine.observe(Array.from({ length: 8 }, (_, i) => note(300 + i, 'late')), alpha);
    // The segments as a store from before compression holds them: heads without a format,
    // postings as u32 documents and u16 counts.
    const table = engine.store.table(TABLES.lexicalSegments);
    const rows = (await table.query().toArray()) as Array<{ project: string; segment: string; term: string; data: Uint8Array }>;
    const old = rows.map((r) => {
      if (r.segment === '') return r;
      const data = Buffer.from(r.data);
      if (r.term === '') {
        const metaLen = data.readUInt32LE(0);
        const meta = JSON.parse(data.subarray(4, 4 + metaLen).toString('utf8')) as Record<string, unknown>;
        delete meta.format;
        const metaOut = Buffer.from(JSON.stringify(meta), 'utf8');
        const head = Buffer.alloc(4);
        head.writeUInt32LE(metaOut.length, 0);
        return { ...r, data: Buffer.concat([head, metaOut, data.subarray(4 + metaLen)]) };
      }
      const p = decodePostings(r.data);
      return { ...r, data: fixedPostings(p.docs, p.main, p.extra) };
    });
    await table.delete('true');
    await table.add(old);
    // A process that opens the store then (which had no postings files either).
    await engine.close();
    fs.rmSync(path.join(dir, POSTINGS_FILES_DIR), { recursive: true, force: true });
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, lexiconMinDelta: 1 });
    lexicon('alpha').cacheLimit = 0;
    const queries = ['parser option', 'environment middleware locale', 'command diff lines'];
    assert.deepEqual((await shapeOf('alpha')).formats, [1]);
    await assertSameAsReference('alpha', queries);

    await engine.optimize();
    const after = await shapeOf('alpha');
    assert.deepEqual([after.formats, after.deltaDocs], [[2], 0]);
    await assertSameAsReference('alpha', queries);
  });

  it('merges many small segments into full ones', async () => {
    for (let round = 0; round < 9; round++) {
      await engine.observe([note(round, 'r')], alpha);
      await engine.optimize();
    }
    // The ninth optimize found eight segments and indexed the project again in one.
    assert.equal((await shapeOf('alpha')).segments.length, 1);
    assert.equal((await shapeOf('alpha')).liveDocs, 9);
    await assertSameAsReference('alpha', ['parser option', 'environment']);
  });

  it('indexes a project of a large store again in a child process, exactly as in place', async () => {
    await engine.close();
    const logged: string[] = [];
    // Every store counts as large here: its full-text upkeep runs in a child process.
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, lexiconMinDelta: 1, upkeepInChildFrom: 1, logger: (m) => logged.push(m) });
    const first = await engine.observe(Array.from({ length: 60 }, (_, i) => note(i)), alpha);
    await engine.observe(Array.from({ length: 30 }, (_, i) => note(i, 'b')), beta);
    await engine.optimize();
    // A project without segments is indexed whole: in the child.
    assert.ok(logged.includes('indexed the full text of 2 project(s) again in a process of its own'), logged.join('\n'));
    assert.equal((await shapeOf('alpha')).deltaDocs, 0);
    assert.equal((await shapeOf('beta')).segments.length, 1);
    await engine.forget({ ids: first.slice(0, 5).map((o) => o.id) }, alpha);
    for (let round = 0; round < 9; round++) {
      await engine.observe([note(round, 'r')], alpha);
      await engine.optimize();
    }
    // New rows became small segments here; the child merged them, as in place (see 'merges many
    // small segments').
    assert.ok(logged.includes('indexed the full text of 1 project(s) again in a process of its own'), logged.join('\n'));
    assert.ok((await shapeOf('alpha')).segments.length < 8);
    assert.equal((await shapeOf('alpha')).liveDocs, 64);
    await assertSameAsReference('alpha', ['parser option', 'environment change']);
    await assertSameAsReference('beta', ['parser option']);
  });

  it('indexes a project of several full segments once, not again at every upkeep', async () => {
    await engine.observe(Array.from({ length: 48 }, (_, i) => note(i)), alpha);
    // Full segments of 10 documents or a little more, built 3 documents at a time.
    const index = () => indexProjectLexicon(engine.store.table(TABLES.cells), engine.repos.lexicalSegments, 'alpha', { minDelta: 1, maxSegments: 3, segmentDocs: 10, chunkDocs: 3 });
    assert.equal(await index(), true);
    const built = await shapeOf('alpha');
    assert.deepEqual([built.sizes, built.liveDocs], [[12, 12, 12, 12], 48]);
    await assertSameAsReference('alpha', ['parser option', 'environment middleware locale']);
    // More full segments than maxSegments is what a big project is: nothing new, nothing written.
    assert.equal(await index(), false);
    assert.equal(await index(), false);
    // New rows become small segments, and three of those are merged.
    for (let round = 0; round < 3; round++) {
      await engine.observe([note(100 + round, 'late')], alpha);
      assert.equal(await index(), true);
    }
    assert.equal((await shapeOf('alpha')).segments.length, 7);
    assert.equal(await index(), true, 'three small segments: indexed again');
    const again = await shapeOf('alpha');
    assert.deepEqual([again.sizes, again.liveDocs], [[12, 12, 12, 12, 3], 51]);
    // Only the small ones were indexed again: the full segments are kept as they were (at
    // 1,000,000 cells, indexing everything again took 100 s of CPU every eight small segments).
    assert.deepEqual(again.segments.slice(0, 4), built.segments);
    assert.equal(await index(), false);
    await assertSameAsReference('alpha', ['parser option', 'environment late']);
  });

  it("keeps each project's words and statistics to itself", async () => {
    await engine.observe(Array.from({ length: 40 }, (_, i) => note(i)), alpha);
    await engine.observe(Array.from({ length: 160 }, (_, i) => ({ ...note(i), narrative: 'zorbleflux parser parser parser' })), beta);
    await engine.optimize();
    assert.equal((await shapeOf('beta')).segments.length, 1);
    const corpus = await lexicon('alpha').corpus(EXTRA_WEIGHT, ['zorbleflux', 'parser']);
    assert.equal(corpus.liveDocs, 40);
    assert.equal(corpus.runs('zorbleflux'), undefined);
    await assertSameAsReference('alpha', ['parser', 'parser option']);
    assert.deepEqual(await engine.search('zorbleflux', { scope: alpha }), []);
    assert.ok((await engine.search('zorbleflux', { scope: beta })).length > 0);
  });

  it("catches up with its project's new rows alone, without listing it, while other projects write beside it", async () => {
    // The catch-up reads every new row of the table and keeps its project's. Another project's
    // rows taken for its own would look like deletions (its count would not add up) and make the
    // view list the project again: so the listings are counted. 'alpha2' starts like 'alpha'.
    await engine.observe(Array.from({ length: 30 }, (_, i) => note(i)), alpha);
    await engine.optimize();
    const real = engine.store.table(TABLES.cells);
    const { cells, listings } = listingCells(real, 'alpha');
    const view = new Lexicon(cells, engine.repos.lexicalSegments, 'alpha');
    await view.refresh();
    assert.equal(listings(), 1, 'control: the first refresh lists the project');
    const other = await engine.observe(Array.from({ length: 20 }, (_, i) => ({ ...note(i), narrative: 'zorbleflux parser' })), { project: 'alpha2' });
    await engine.observe(Array.from({ length: 7 }, (_, i) => note(300 + i, 'late')), alpha);
    await engine.observe(Array.from({ length: 20 }, (_, i) => ({ ...note(40 + i), narrative: 'zorbleflux option' })), beta);
    await view.refresh();
    assert.deepEqual([view.shape.liveDocs, view.shape.deltaDocs], [37, 7]);
    assert.equal((await view.corpus(EXTRA_WEIGHT, ['zorbleflux'])).runs('zorbleflux'), undefined);
    await assertSameAsReference('alpha', ['parser option', 'parser option late301'], view);
    assert.equal(await engine.repos.forProject('alpha2').cells.delete('observation', [other[0].id]), 1);
    await engine.observe(Array.from({ length: 3 }, (_, i) => ({ ...note(500 + i), narrative: 'zorbleflux command' })), { project: 'alpha2' });
    await view.refresh();
    assert.equal(listings(), 1, 'other projects\' writes and deletes listed nothing');
    assert.equal(view.shape.liveDocs, 37);
    await assertSameAsReference('alpha', ['parser option', 'parser option late301'], view);
  });

  it('forget removes the words from the segments on disk, and search goes on', async () => {
    const canary = 'wombatkq';
    assert.equal(prepareQueryText(canary), canary, 'the canary must be indexed as it is written');
    await engine.observe(Array.from({ length: 60 }, (_, i) => note(i)), alpha);
    const [secret] = await engine.observe([{ type: 'note', title: `The ${canary} plan`, narrative: `${canary} everywhere` }], alpha);
    await engine.optimize(0);
    assert.ok(filesContaining(dir, canary).some((f) => f.startsWith('lexical_segments.lance')), 'control: the segments hold the canary');
    assert.ok(filesContaining(dir, canary).some((f) => f.startsWith(POSTINGS_FILES_DIR)), 'control: so do their postings files');

    await engine.forget({ ids: [secret.id] }, alpha);
    assert.deepEqual(filesContaining(dir, canary), []);
    assert.deepEqual(await engine.search(canary, { scope: alpha }), []);
    assert.equal((await shapeOf('alpha')).segments.length, 0);
    assert.ok((await engine.search('parser option', { scope: alpha })).length > 0);
    await engine.optimize(0);
    assert.equal((await shapeOf('alpha')).segments.length, 1);
    assert.deepEqual(filesContaining(dir, canary), []);
    await assertSameAsReference('alpha', ['parser option']);
  });

  it('a second process reads the segments the lease holder wrote, then its own delta', async function () {
    // Three fresh processes; slow on a busy machine.
    this.timeout(300_000);
    await engine.observe(Array.from({ length: 200 }, (_, i) => note(i, 'seg')), alpha);
    await engine.optimize();
    const first = await readInChild(dir, 'alpha', 'seg7');
    assert.equal(first.lease, false);
    assert.equal(first.shape.segments.length, 1);
    assert.equal(first.shape.deltaDocs, 0);
    assert.ok(first.titles[0].endsWith('change seg7'), first.titles.join(' | '));

    await engine.observe(Array.from({ length: 5 }, (_, i) => ({ type: 'note', title: `quasarbeam rollout ${i}` })), alpha);
    const second = await readInChild(dir, 'alpha', 'quasarbeam');
    assert.deepEqual([second.shape.segments.length, second.shape.deltaDocs, second.shape.liveDocs], [1, 5, 205]);
    assert.equal(second.titles.length, 5);

    await engine.optimize();
    const third = await readInChild(dir, 'alpha', 'quasarbeam');
    assert.deepEqual([third.shape.segments.length, third.shape.deltaDocs], [2, 0]);
    assert.equal(third.titles.length, 5);
  });
});
