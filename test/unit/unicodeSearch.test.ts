// The word index reads every alphabet: accented words match with or without their accents (and
// whether the accent is a letter of its own or a combining mark), Straße matches strasse, and
// Chinese, Japanese and Korean text is found by a word inside a sentence (pairs of characters).
// ASCII text is prepared exactly as before. A store whose cells an earlier build prepared
// ASCII-only has them prepared again once, at open, keeping their vectors.
import * as assert from 'node:assert/strict';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { sqlText } from '../../src/core/store/filters';
import { TEXT_PREP_VERSION, foldText, prepareQueryText, splitIdentifier, tokenize } from '../../src/core/retrieve/textPrep';
import { removeDir, tempDir } from './mcpFixture';

const SCOPE: Scope = { project: 'github.com/acme/intl' };

const NOTES = [
  { title: 'Café menu parser', text: 'Der Parser für die Speisekarte liest jetzt die Straße und die Hausnummer getrennt.' },
  { title: '数据库连接池', text: '我们决定使用数据库连接池来减少每次请求的延迟。' },
  { title: 'データベースの設定', text: '接続タイムアウトは三十秒に変更しました。' },
  { title: '검색 기능 개선', text: '사용자 검색 결과를 캐시에 저장합니다.' },
  { title: 'Обработчик ошибок', text: 'Повторяем запрос три раза перед сбоем.' },
];

/** What a build before this preparation wrote: ASCII runs only, the rest of each word dropped. */
function asciiOnly(text: string): string {
  return (text.match(/[A-Za-z0-9_$]+/g) ?? []).map((w) => w.toLowerCase()).join(' ');
}

async function titlesFor(engine: MemoryEngine, query: string): Promise<string[]> {
  return (await engine.search(query, { scope: SCOPE, limit: 3 })).map((h) => h.cell.title);
}

describe('the word index reads every alphabet', function () {
  this.timeout(120_000);

  it('folds accents, compatibility forms and spelt-out letters, and leaves ASCII as it was', () => {
    assert.deepEqual(tokenize('café'), tokenize('cafe\u0301'));
    assert.deepEqual(tokenize('CAFÉ résumé'), tokenize('cafe resume'));
    assert.deepEqual(tokenize('Straße'), tokenize('strasse'));
    assert.deepEqual(tokenize('ﬁle Ｆｕｌｌ'), tokenize('file full'));
    assert.equal(foldText('plain ASCII text'), 'plain ASCII text');
    assert.deepEqual(tokenize('getHTTPResponse snake_case kebab-case v2beta'), ['gethttprespons', 'http', 'respons', 'snakecas', 'snake', 'case', 'kebabcas', 'kebab', 'case', 'v2beta', 'beta']);
    assert.deepEqual(splitIdentifier('МирДом2x'), ['мир', 'дом', '2', 'x']);
  });

  it('gives Chinese, Japanese and Korean runs as pairs of characters, so a word inside a sentence is a term', () => {
    assert.deepEqual(tokenize('连接池'), ['连接', '接池']);
    assert.deepEqual(tokenize('库'), ['库']);
    const sentence = new Set(tokenize('我们决定使用数据库连接池来减少延迟'));
    for (const term of tokenize('数据库')) assert.ok(sentence.has(term), term);
    assert.deepEqual(tokenize('parseArgs中文'), ['parsearg', 'pars', 'arg', '中文']);
    assert.ok(prepareQueryText('한국어 검색').split(' ').includes('검색'));
  });

  it('finds notes in other languages by their words, with vectors that know none of them', async () => {
    const dir = tempDir('unicode-search');
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false });
    try {
      for (const n of NOTES) await engine.remember({ ...n, memory_type: 'note' }, SCOPE);
      await engine.waitForVectors();
      assert.equal((await titlesFor(engine, 'cafe'))[0], 'Café menu parser');
      assert.equal((await titlesFor(engine, 'strasse'))[0], 'Café menu parser');
      assert.equal((await titlesFor(engine, 'speisekarte'))[0], 'Café menu parser');
      assert.equal((await titlesFor(engine, '连接池的延迟'))[0], '数据库连接池');
      assert.equal((await titlesFor(engine, 'タイムアウト'))[0], 'データベースの設定');
      assert.equal((await titlesFor(engine, '캐시'))[0], '검색 기능 개선');
      assert.equal((await titlesFor(engine, 'запрос'))[0], 'Обработчик ошибок');
    } finally {
      await engine.close();
      removeDir(dir);
    }
  });

  it('prepares again, once, the cells an earlier build prepared ASCII-only, keeping their vectors', async () => {
    const dir = tempDir('unicode-reprepare');
    const open = (): Promise<MemoryEngine> => MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false, lexiconMinDelta: 1 });
    let engine = await open();
    const logged: string[] = [];
    try {
      const ids: number[] = [];
      for (const n of NOTES) ids.push((await engine.remember({ ...n, memory_type: 'note' }, SCOPE)).id);
      const ascii = await engine.remember({ title: 'Retry policy', text: 'Exponential backoff with jitter.', memory_type: 'note' }, SCOPE);
      await engine.waitForVectors();
      // The store as an earlier build left it: ASCII-only terms in full-text segments, no version in the meta table.
      const cells = engine.repos.forProject(SCOPE.project).cells;
      for (const [i, n] of NOTES.entries()) await cells.update('memory', [ids[i]], { search_text: sqlText(`${asciiOnly(n.title)} ${asciiOnly(n.text)}`) });
      await engine.store.setMeta({ text_prep_version: '1' });
      await engine.maintenance.indexLexicon();
      const cafeText = async (): Promise<string> => String((await engine.store.rows('cells', `source_id = ${ids[0]}`, { select: ['search_text'] }))[0].search_text);
      assert.ok(!(await cafeText()).split(' ').includes('strass'));
      const vectorsBefore = await engine.store.rows('cells', null, { select: ['node_id', 'vector', 'embed_model'] });
      const asciiBefore = (await engine.store.rows('cells', `source_id = ${ascii.id}`, { select: ['search_text'], withRowId: true }))[0];
      await engine.close();

      engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false, lexiconMinDelta: 1, logger: (m) => logged.push(m) });
      assert.ok(logged.some((m) => /prepared the search text of 5 cell\(s\)/.test(m)), logged.join('\n'));
      assert.ok((await cafeText()).split(' ').includes('strass'));
      assert.equal((await titlesFor(engine, 'strasse'))[0], 'Café menu parser');
      assert.equal((await titlesFor(engine, '连接池'))[0], '数据库连接池');
      assert.equal((await titlesFor(engine, 'タイムアウト'))[0], 'データベースの設定');
      // Nothing else was rewritten, and every vector stayed (no cell waits to be embedded again).
      const asciiAfter = (await engine.store.rows('cells', `source_id = ${ascii.id}`, { select: ['search_text'], withRowId: true }))[0];
      assert.deepEqual(asciiAfter, asciiBefore);
      const vectorsAfter = await engine.store.rows('cells', null, { select: ['node_id', 'vector', 'embed_model'] });
      const byNode = (rows: typeof vectorsBefore): Map<string, string> => new Map(rows.map((r) => [String(r.node_id), `${String(r.embed_model)}:${Array.from(r.vector as ArrayLike<number>).join(',')}`]));
      assert.deepEqual(byNode(vectorsAfter), byNode(vectorsBefore));
      assert.equal(await engine.store.getMeta('text_prep_version'), String(TEXT_PREP_VERSION));
      // Segments written after the rewrite serve the new terms too.
      await engine.maintenance.indexLexicon();
      assert.equal((await titlesFor(engine, 'strasse'))[0], 'Café menu parser');
      await engine.close();

      logged.length = 0;
      engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false, logger: (m) => logged.push(m) });
      assert.ok(!logged.some((m) => /prepared the search text/.test(m)), 'prepared again on a second open');
    } finally {
      await engine.close();
      removeDir(dir);
    }
  });
});
