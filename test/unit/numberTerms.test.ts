// Issue and pull-request numbers are terms of the word index: "what fixed #48213?" finds the
// commit that says so, whatever the number's size up to 7 digits (large projects count issues in
// six digits). A store whose cells an earlier build prepared without them (numbers over 4 digits
// dropped) has the cells of records holding such numbers prepared again once, at open, keeping
// their vectors; the other cells are not rewritten.
import * as assert from 'node:assert/strict';
import { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { sqlText } from '../../src/core/store/filters';
import { TEXT_PREP_VERSION } from '../../src/core/retrieve/textPrep';
import { removeDir, tempDir } from './mcpFixture';
import { assertPreparedOnce, openLogged, vectorsByNode } from './textPrepFixture';

const SCOPE: Scope = { project: 'github.com/acme/numbers' };

const NOTES = [
  { title: 'Parser hangs on empty flags', text: 'Fixes #48213: the parser looped forever on an empty flag list.' },
  { title: 'Release notes', text: 'Closes issue 1234567 about the changelog ordering.' },
  { title: 'Retry policy', text: 'Exponential backoff with jitter for the 3 retries.' },
];

async function titlesFor(engine: MemoryEngine, query: string): Promise<string[]> {
  return (await engine.search(query, { scope: SCOPE, limit: 3 })).map((h) => h.cell.title);
}

/** The search text of a build that dropped numbers over 4 digits (what this one writes, less them). */
function withoutLongNumbers(searchText: string): string {
  return searchText
    .split(' ')
    .filter((t) => !/^[0-9]{5,}$/.test(t))
    .join(' ');
}

describe('issue numbers in the word index', function () {
  this.timeout(120_000);
  const open = openLogged;

  it('finds a record by an issue number of 5 to 7 digits, by its words alone', async () => {
    const dir = tempDir('number-terms');
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, summariseOrphanSessions: false });
    try {
      for (const n of NOTES) await engine.remember({ ...n, memory_type: 'note' }, SCOPE);
      // The question's other words are stop words: the number decides.
      assert.equal((await titlesFor(engine, 'what was #48213?'))[0], 'Parser hangs on empty flags');
      assert.equal((await titlesFor(engine, 'what was 1234567?'))[0], 'Release notes');
    } finally {
      await engine.close();
      removeDir(dir);
    }
  });

  it('prepares again, once, the cells an earlier build prepared without such numbers, keeping their vectors', async () => {
    const dir = tempDir('number-terms-reprepare');
    let engine = await open(dir);
    try {
      const ids: number[] = [];
      for (const n of NOTES) ids.push((await engine.remember({ ...n, memory_type: 'note' }, SCOPE)).id);
      await engine.waitForVectors();
      // The store as the build before left it: no number over 4 digits in its cells, version 2.
      const cells = engine.repos.forProject(SCOPE.project).cells;
      const searchText = async (id: number): Promise<string> => String((await engine.store.rows('cells', `source_id = ${id}`, { select: ['search_text'] }))[0].search_text);
      for (const id of ids.slice(0, 2)) await cells.update('memory', [id], { search_text: sqlText(withoutLongNumbers(await searchText(id))) });
      await engine.store.setMeta({ text_prep_version: '2' });
      await engine.maintenance.indexLexicon();
      assert.ok(!(await searchText(ids[0])).split(' ').includes('48213'), 'control: the old cell lacks the number');
      const vectorsBefore = await vectorsByNode(engine);
      const untouchedBefore = (await engine.store.rows('cells', `source_id = ${ids[2]}`, { select: ['search_text'], withRowId: true }))[0];
      await engine.close();

      const logged: string[] = [];
      engine = await open(dir, logged);
      assert.ok(logged.some((m) => /prepared the search text of 2 cell\(s\) again/.test(m)), logged.join('\n'));
      assert.ok((await searchText(ids[0])).split(' ').includes('48213'));
      assert.equal((await titlesFor(engine, 'what fixed #48213?'))[0], 'Parser hangs on empty flags');
      assert.equal((await titlesFor(engine, 'issue 1234567'))[0], 'Release notes');
      // The cell with no such number was not rewritten, and every vector stayed.
      assert.deepEqual((await engine.store.rows('cells', `source_id = ${ids[2]}`, { select: ['search_text'], withRowId: true }))[0], untouchedBefore);
      engine = await assertPreparedOnce(engine, dir, vectorsBefore);
    } finally {
      await engine.close();
      removeDir(dir);
    }
  });

  it('leaves the cells of a store a newer build prepared as they are', async () => {
    const dir = tempDir('number-terms-newer');
    let engine = await open(dir);
    try {
      const id = (await engine.remember({ ...NOTES[0], memory_type: 'note' }, SCOPE)).id;
      await engine.waitForVectors();
      const cells = engine.repos.forProject(SCOPE.project).cells;
      await cells.update('memory', [id], { search_text: sqlText('written by a newer build') });
      await engine.store.setMeta({ text_prep_version: String(TEXT_PREP_VERSION + 1) });
      await engine.close();
      const logged: string[] = [];
      engine = await open(dir, logged);
      assert.ok(!logged.some((m) => /prepared the search text/.test(m)), logged.join('\n'));
      assert.equal(String((await engine.store.rows('cells', `source_id = ${id}`, { select: ['search_text'] }))[0].search_text), 'written by a newer build');
      assert.equal(await engine.store.getMeta('text_prep_version'), String(TEXT_PREP_VERSION + 1));
    } finally {
      await engine.close();
      removeDir(dir);
    }
  });
});
