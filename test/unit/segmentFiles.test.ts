import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { POSTINGS_FILES_DIR } from '../../src/core/store/lexicalSegments';
import type { LexicalSegments } from '../../src/core/store/lexicalSegments';
import { SegmentFiles } from '../../src/core/store/segmentFiles';
import { prepareQueryText } from '../../src/core/retrieve/textPrep';

process.env.LANCEDB_LOG ??= 'error';

async function* entries(pairs: Array<[string, Uint8Array]>): AsyncIterable<[string, Uint8Array]> {
  yield* pairs;
}

const bytes = (...xs: number[]): Uint8Array => Uint8Array.from(xs);

interface Entry {
  term: string;
  at: number;
  length: number;
}

/** The entries of a postings file: each term and where its postings lie. */
function entriesOf(buf: Buffer): Entry[] {
  const slotsAt = Number(buf.readBigUInt64LE(16));
  const out: Entry[] = [];
  let at = 24;
  while (at < slotsAt) {
    const tl = buf.readUInt32LE(at);
    const term = buf.subarray(at + 4, at + 4 + tl).toString('utf8');
    const pl = buf.readUInt32LE(at + 4 + tl);
    out.push({ term, at: at + 8 + tl, length: pl });
    at += 8 + tl + pl;
  }
  return out;
}

/** The same file in the layout before checksums (magic CMPOST02, slots of hash and offset). */
function oldLayout(buf: Buffer): Buffer {
  const slots = buf.readUInt32LE(8);
  const slotsAt = Number(buf.readBigUInt64LE(16));
  const out = Buffer.alloc(slotsAt + slots * 12);
  buf.copy(out, 0, 0, slotsAt);
  out.write('CMPOST02', 0, 'latin1');
  for (let i = 0; i < slots; i++) buf.copy(out, slotsAt + i * 12, slotsAt + i * 16, slotsAt + i * 16 + 12);
  return out;
}

describe('full-text segments: postings files', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-postfiles-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('finds every term it was written with, and none it was not', async () => {
    const files = new SegmentFiles(dir);
    const pairs: Array<[string, Uint8Array]> = Array.from({ length: 3000 }, (_, i) => [`term${i}`, bytes(i % 251, (i >> 8) % 251, 7)]);
    pairs.push(['café', bytes(1, 2, 3)], ['日本語', bytes(9)], ['', bytes(4)], ['big', new Uint8Array(300_000).fill(5)], ['x'.repeat(300), bytes(6)], ['y'.repeat(70_000), bytes(8)]);
    assert.equal(await files.write('00mx57mv4y-cc898d4d', entries(pairs), async () => true), true);
    const got = files.lookup('00mx57mv4y-cc898d4d', [...pairs.map(([t]) => t), 'absent', 'term3000', 'cafe', 'x'.repeat(299), 'x'.repeat(301)])!;
    assert.equal(got.size, pairs.length);
    for (const [term, want] of pairs) assert.deepEqual(got.get(term), want, term);
    assert.equal(['absent', 'term3000', 'cafe', 'x'.repeat(299), 'x'.repeat(301)].some((t) => got.has(t)), false);
    // A segment without a file, or an id that is not one, is read from the table.
    assert.equal(files.lookup('00mx57mv4y-00000000', ['term1']), null);
    assert.equal(files.lookup('../../etc/passwd', ['term1']), null);
    files.close();
  });

  it('drops a damaged file and answers null, so the table is read instead', async () => {
    const files = new SegmentFiles(dir);
    const id = '00mx57mv4y-cc898d4d';
    await files.write(id, entries([['alpha', bytes(1, 2)], ['beta', bytes(3)]]), async () => true);
    const file = path.join(dir, `${id}.postings`);
    const size = fs.statSync(file).size;
    fs.truncateSync(file, size - 5);
    assert.equal(files.lookup(id, ['alpha']), null);
    assert.equal(fs.existsSync(file), false, 'the damaged file is gone');
    // A file whose header is not one.
    fs.writeFileSync(file, 'not a postings file at all, just some text of the right kind of length');
    assert.equal(files.lookup(id, ['alpha']), null);
    assert.equal(fs.existsSync(file), false);
    // A file whose entries were overwritten, its header and slots intact: not "no such term".
    await files.write(id, entries([['alpha', bytes(1, 2)], ['beta', bytes(3)]]), async () => true);
    const buf = fs.readFileSync(file);
    buf.fill(0xff, 24, Number(buf.readBigUInt64LE(16)));
    fs.writeFileSync(file, buf);
    const fresh = new SegmentFiles(dir);
    assert.equal(fresh.lookup(id, ['alpha']), null);
    assert.equal(fs.existsSync(file), false);
    fresh.close();
    files.close();
  });

  it('does not keep the file of a segment deleted while it was written, and sweeps those of segments gone', async () => {
    const files = new SegmentFiles(dir);
    assert.equal(await files.write('00mx57mv4y-cc898d4d', entries([['alpha', bytes(1)]]), async () => false), false);
    assert.deepEqual(fs.readdirSync(dir), []);
    await files.write('00mx57mv4y-11111111', entries([['alpha', bytes(1)]]), async () => true);
    await files.write('00mx57mv4y-22222222', entries([['alpha', bytes(2)]]), async () => true);
    fs.writeFileSync(path.join(dir, '00mx57mv4y-33333333.postings.99.tmp'), 'a crashed writer');
    assert.deepEqual(files.lookup('00mx57mv4y-11111111', ['alpha'])!.get('alpha'), bytes(1));
    assert.equal(files.sweep(new Set(['00mx57mv4y-22222222'])), 2);
    assert.deepEqual(fs.readdirSync(dir), ['00mx57mv4y-22222222.postings']);
    assert.equal(files.lookup('00mx57mv4y-11111111', ['alpha']), null);
    files.close();
  });

  describe('in a store', () => {
    let engine: MemoryEngine;
    const scope = { project: 'alpha' };
    beforeEach(async () => {
      engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, lexiconMinDelta: 1 });
    });
    afterEach(() => engine.close());

    /** The same reads with no files: the table alone. */
    const tableOnly = (segments: LexicalSegments): LexicalSegments => Object.create(segments, { files: { value: null } }) as LexicalSegments;

    it('the lease holder copies each live segment to a file, and reads from it equal the table', async () => {
      const words = ['parser', 'option', 'completion', 'environment', 'middleware', 'locale', 'zürich', 'validation'];
      const notes = Array.from({ length: 150 }, (_, i) => ({ type: 'note', title: `${words[i % 8]} ${words[(i * 3) % 8]} change ${i}`, narrative: `touches ${words[(i * 5) % 8]} again` }));
      await engine.observe(notes, scope);
      await engine.optimize();
      const segments = engine.repos.lexicalSegments;
      const { segments: ids } = await segments.manifest('alpha');
      assert.equal(ids.length, 1);
      const folder = path.join(dir, POSTINGS_FILES_DIR);
      assert.deepEqual(fs.readdirSync(folder), [`${ids[0]}.postings`]);
      const heads = (await segments.heads('alpha', ids))!;
      const terms = [...new Set(prepareQueryText(`${words.join(' ')} change 17 nowhere`).split(' '))];
      const fromFiles = await segments.postings('alpha', heads, terms);
      const fromTable = await tableOnly(segments).postings('alpha', heads, terms);
      assert.ok(fromTable.size >= words.length, `the control: ${fromTable.size} terms found`);
      assert.deepEqual(fromFiles, fromTable);

      // A file lost (or never written, as on object storage): the table answers, and the next
      // upkeep writes it again.
      segments.files!.close();
      fs.rmSync(path.join(folder, `${ids[0]}.postings`));
      assert.deepEqual(await segments.postings('alpha', heads, terms), fromTable);
      await engine.optimize();
      assert.deepEqual(fs.readdirSync(folder), [`${ids[0]}.postings`]);
      assert.deepEqual(await segments.postings('alpha', heads, terms), fromTable);
      const hits = await engine.search('middleware locale', { scope, limit: 3 });
      assert.ok(hits.length === 3 && hits.every((h) => /middleware|locale/.test(h.cell.title + h.cell.text)), JSON.stringify(hits.map((h) => h.cell.title)));
    });

    it('a file whose payload bytes were damaged (two terms\' postings swapped) is dropped, read around, and written again', async () => {
      const words = ['parser', 'option', 'completion', 'environment', 'middleware', 'locale', 'zebra', 'validation'];
      // Each word in its own notes, so that every term's postings differ.
      const notes = Array.from({ length: 80 }, (_, i) => ({ type: 'note', title: `${words[i % 8]} record ${i}`, narrative: `only about ${words[i % 8]}` }));
      await engine.observe(notes, scope);
      await engine.optimize();
      const segments = engine.repos.lexicalSegments;
      const { segments: ids } = await segments.manifest('alpha');
      const file = path.join(dir, POSTINGS_FILES_DIR, `${ids[0]}.postings`);
      const buf = fs.readFileSync(file);
      const stems = words.map((w) => prepareQueryText(w).split(' ')[0]);
      const all = entriesOf(buf).filter((e) => stems.includes(e.term));
      let pair: [Entry, Entry] | null = null;
      for (const a of all) for (const b of all) if (!pair && a !== b && a.length === b.length && !buf.subarray(a.at, a.at + a.length).equals(buf.subarray(b.at, b.at + b.length))) pair = [a, b];
      assert.ok(pair, `no two entries of one length among ${JSON.stringify(all)}`);
      const [a, b] = pair;
      const pa = Buffer.from(buf.subarray(a.at, a.at + a.length));
      buf.subarray(b.at, b.at + b.length).copy(buf, a.at);
      pa.copy(buf, b.at);
      segments.files!.close();
      fs.writeFileSync(file, buf);

      const heads = (await segments.heads('alpha', ids))!;
      const terms = [a.term, b.term];
      const fromTable = await tableOnly(segments).postings('alpha', heads, terms);
      assert.deepEqual(await segments.postings('alpha', heads, terms), fromTable);
      assert.equal(fs.existsSync(file), false, 'the damaged file is dropped');
      const hits = await engine.search(a.term, { scope, limit: 50 });
      assert.equal(hits.length, 10);
      assert.ok(hits.every((h) => h.cell.title.startsWith(words[stems.indexOf(a.term)])), JSON.stringify(hits.map((h) => h.cell.title)));
      // The next upkeep copies the segment again, and reads from the new file equal the table.
      await engine.optimize();
      assert.equal(fs.existsSync(file), true);
      assert.deepEqual(await segments.postings('alpha', heads, terms), fromTable);
    });

    it('a file of the layout before checksums is not trusted: it is dropped and written again', async () => {
      await engine.observe(Array.from({ length: 40 }, (_, i) => ({ type: 'note', title: `gnomon ${i} sundial` })), scope);
      await engine.optimize();
      const segments = engine.repos.lexicalSegments;
      const { segments: ids } = await segments.manifest('alpha');
      const file = path.join(dir, POSTINGS_FILES_DIR, `${ids[0]}.postings`);
      // The older layout: same header, 12-byte slots without a checksum.
      const heads = (await segments.heads('alpha', ids))!;
      const terms = prepareQueryText('gnomon sundial').split(' ');
      const fromTable = await tableOnly(segments).postings('alpha', heads, terms);
      segments.files!.close();
      fs.writeFileSync(file, oldLayout(fs.readFileSync(file)));
      assert.deepEqual(await segments.postings('alpha', heads, terms), fromTable);
      assert.equal(fs.existsSync(file), false, 'the old file is dropped');
      await engine.optimize();
      assert.equal(fs.readFileSync(file).subarray(0, 8).toString('latin1'), 'CMPOST03');
      assert.deepEqual(await segments.postings('alpha', heads, terms), fromTable);
    });

    it('forgetting a project deletes its postings files', async () => {
      await engine.observe(Array.from({ length: 40 }, (_, i) => ({ type: 'note', title: `gnomon ${i}` })), scope);
      await engine.observe(Array.from({ length: 40 }, (_, i) => ({ type: 'note', title: `quokka ${i} burrow` })), { project: 'beta' });
      await engine.optimize();
      const folder = path.join(dir, POSTINGS_FILES_DIR);
      assert.equal(fs.readdirSync(folder).length, 2);
      const beta = (await engine.repos.lexicalSegments.manifest('beta')).segments;
      await engine.forget({ project: 'alpha' }, scope);
      assert.deepEqual(fs.readdirSync(folder), beta.map((id) => `${id}.postings`));
      const hits = await engine.search('quokka burrow', { scope: { project: 'beta' }, limit: 50 });
      assert.equal(hits.length, 40);
    });
  });
});
