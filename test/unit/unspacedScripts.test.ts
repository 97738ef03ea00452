// Thai, Lao, Khmer and Myanmar are written without spaces between words, as Chinese and Japanese
// are: their runs are indexed as overlapping pairs of characters (a letter with its marks), so a
// word inside a sentence is found without a dictionary. A store whose cells an earlier build
// prepared with such runs whole has the cells of records holding them prepared again once, at
// open, keeping their vectors; the other cells are not rewritten.
import * as assert from 'node:assert/strict';
import { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { sqlText } from '../../src/core/store/filters';
import { foldText, prepareQueryText, tokenize } from '../../src/core/retrieve/textPrep';
import { removeDir, tempDir } from './mcpFixture';
import { assertPreparedOnce, openLogged, vectorsByNode } from './textPrepFixture';

const SCOPE: Scope = { project: 'github.com/acme/unspaced' };

/** A note per script, and one word of its sentence (never at its start or end). */
const NOTES = [
  { title: 'บันทึกการค้นหา', text: 'เราตัดสินใจใช้ฐานข้อมูลเพื่อเก็บผลการค้นหาไว้', word: 'ฐานข้อมูล' },
  { title: 'ບົດບັນທຶກ', text: 'ພວກເຮົາໃຊ້ຖານຂໍ້ມູນເພື່ອເກັບຜົນການຄົ້ນຫາ', word: 'ຖານຂໍ້ມູນ' },
  { title: 'កំណត់ចំណាំ', text: 'យើងប្រើមូលដ្ឋានទិន្នន័យដើម្បីរក្សាទុកលទ្ធផល', word: 'ទិន្នន័យ' },
  { title: 'မှတ်စု', text: 'ကျွန်ုပ်တို့သည်ဒေတာဘေ့စ်ကိုအသုံးပြုသည်', word: 'ဒေတာဘေ့စ်' },
];

/** What the build before wrote: each run of letters whole (the scripts' runs were one term each). */
function runsWhole(text: string): string {
  return (foldText(text).toLowerCase().match(/[\p{L}\p{N}\p{M}]+/gu) ?? []).filter((w) => w.length >= 2 && w.length <= 40).join(' ');
}

async function titlesFor(engine: MemoryEngine, query: string): Promise<string[]> {
  return (await engine.search(query, { scope: SCOPE, limit: 3 })).map((h) => h.cell.title);
}

describe('scripts written without spaces between words', function () {
  this.timeout(120_000);
  const open = openLogged;

  it('gives Thai, Lao, Khmer and Myanmar runs as pairs of characters, so a word inside a sentence is a term', () => {
    for (const { text, word } of NOTES) {
      const sentence = new Set(tokenize(text));
      const terms = tokenize(word);
      assert.ok(terms.length > 1, word);
      for (const term of terms) assert.ok(sentence.has(term), `${word}: ${term}`);
      assert.ok(prepareQueryText(`parseArgs ${word}`).split(' ').includes('parsearg'));
    }
    // A character is a letter with its marks: no pair starts or ends inside one.
    assert.deepEqual(tokenize('ข้อมูล'), ['ข้อ', 'อมู', 'มูล']);
    assert.deepEqual(tokenize('ไทยparseArgs'), ['ไท', 'ทย', 'parsearg', 'pars', 'arg']);
    // Chinese, Japanese and Korean are paired as before.
    assert.deepEqual(tokenize('连接池'), ['连接', '接池']);
    assert.deepEqual(tokenize('データベース'), ['デー', 'ータ', 'タベ', 'ベー', 'ース']);
  });

  it('finds a note by one word of its sentence, by the words alone', async () => {
    const dir = tempDir('unspaced-search');
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, summariseOrphanSessions: false });
    try {
      for (const { title, text } of NOTES) await engine.remember({ title, text, memory_type: 'note' }, SCOPE);
      await engine.remember({ title: 'Retry policy', text: 'Exponential backoff with jitter.', memory_type: 'note' }, SCOPE);
      for (const { title, word } of NOTES) assert.equal((await titlesFor(engine, word))[0], title, word);
    } finally {
      await engine.close();
      removeDir(dir);
    }
  });

  it('prepares again, once, the cells an earlier build prepared with such runs whole, keeping their vectors', async () => {
    const dir = tempDir('unspaced-reprepare');
    let engine = await open(dir);
    try {
      const ids: number[] = [];
      for (const { title, text } of NOTES) ids.push((await engine.remember({ title, text, memory_type: 'note' }, SCOPE)).id);
      const other = await engine.remember({ title: '数据库连接池', text: 'Café: exponential backoff for #48213.', memory_type: 'note' }, SCOPE);
      await engine.waitForVectors();
      // The store as the build before left it: each run whole, version 3.
      const cells = engine.repos.forProject(SCOPE.project).cells;
      const searchText = async (id: number): Promise<string> => String((await engine.store.rows('cells', `source_id = ${id}`, { select: ['search_text'] }))[0].search_text);
      for (const [i, { title, text }] of NOTES.entries()) await cells.update('memory', [ids[i]], { search_text: sqlText(`${runsWhole(title)} ${runsWhole(title)} ${runsWhole(title)} ${runsWhole(text)}`) });
      await engine.store.setMeta({ text_prep_version: '3' });
      await engine.maintenance.indexLexicon();
      assert.ok(!(await searchText(ids[0])).split(' ').includes(tokenize(NOTES[0].word)[0]), 'control: the old cell lacks the pairs');
      const vectorsBefore = await vectorsByNode(engine);
      const otherBefore = (await engine.store.rows('cells', `source_id = ${other.id}`, { select: ['search_text'], withRowId: true }))[0];
      await engine.close();

      const logged: string[] = [];
      engine = await open(dir, logged);
      assert.ok(logged.some((m) => /prepared the search text of 4 cell\(s\) again/.test(m)), logged.join('\n'));
      for (const [i, { title, word }] of NOTES.entries()) {
        assert.ok((await searchText(ids[i])).split(' ').includes(tokenize(word)[0]), word);
        assert.equal((await titlesFor(engine, word))[0], title, word);
      }
      // The cell holding none of these scripts was not rewritten, and every vector stayed.
      assert.deepEqual((await engine.store.rows('cells', `source_id = ${other.id}`, { select: ['search_text'], withRowId: true }))[0], otherBefore);
      engine = await assertPreparedOnce(engine, dir, vectorsBefore);
    } finally {
      await engine.close();
      removeDir(dir);
    }
  });
});
