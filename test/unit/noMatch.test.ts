// A question about nothing in the store gets nothing (recall_context's "No matching XMemo memory
// was found.", retrieve_memory's zero facts), with the product's sentence encoder and with the
// hashed fallback: a sentence encoder puts any two texts some way apart (USE-lite: 0.1 to 0.35
// between nonsense and a commit), and a neighbour that shares no word with the query counts only
// where it is nearer than everyday sentences about nothing are (retrieve/hybrid.ts unrelatedFloor).
// A paraphrase that shares no word with its record still finds it.
import * as assert from 'node:assert/strict';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { UseLiteEmbedder } from '../../src/core/embed/useLite';
import type { Embedder } from '../../src/core/embed/embedder';
import { MemoryEngine } from '../../src/core/engine';
import { SCOPE, httpToolHarness } from './httpToolHarness';
import { removeDir, tempDir } from './mcpFixture';
import { textPack } from './textPack';
import { runMain } from './cliInProcess';

const NONE = '### XMemo Context\nItems: 0\nNo matching XMemo memory was found.';
// The last three share no word with any record, only neighbours of their words in software
// documentation (nine ~ divided, seven ~ five): such a match is a neighbour like the vectors'.
const UNRELATED_QUERIES = ['qwxz vvbn plmk', 'xyzzy', 'zebra giraffe quantum', 'kumquat', 'recipe for banana bread', 'The train leaves at noon from platform nine.', 'nine', 'seven dwarfs'];

async function fill(engine: MemoryEngine): Promise<void> {
  await engine.observe(
    [
      { type: 'edit', title: 'Switched the vector store to LanceDB', narrative: 'We replaced the SQLite vector extension with LanceDB because it runs embedded and supports object storage.' },
      { type: 'edit', title: 'Token budgets use the o200k tokenizer', narrative: 'recall_context counts tokens with gpt-tokenizer instead of characters divided by four.' },
      { type: 'read', title: 'Read the retry policy of the HTTP client', narrative: 'Exponential backoff with jitter, at most five attempts.' },
      { type: 'edit', title: 'Flash messages are kept in the session between requests', narrative: 'A flashed message survives the redirect and is shown once.' },
    ],
    SCOPE,
  );
  await engine.remember({ title: 'Decision: embedded LanceDB is the vector store', text: 'The team decided to keep all memory in an embedded LanceDB store on the user disk.', memory_type: 'decision' }, SCOPE);
  await engine.waitForVectors();
}

for (const [name, embedder] of [
  ['USE-lite, the default sentence encoder', () => new UseLiteEmbedder()],
  ['the hashed fallback', () => new HashedEmbedder()],
] as Array<[string, () => Embedder]>) {
  describe(`a question about nothing in the store gets nothing (${name})`, function () {
    this.timeout(180_000);
    const h = httpToolHarness({
      open: async () => {
        const dir = tempDir('nomatch');
        return { engine: await MemoryEngine.open({ storeUri: dir, embedder: embedder(), maintenanceIntervalMs: 0 }), dir };
      },
      fill,
    });

    it('recall_context says nothing matched and retrieve_memory has no fact, for nonsense and unrelated questions', async () => {
      const got: string[] = [];
      for (const query of UNRELATED_QUERIES) {
        const r = await h.call('recall_context', { query });
        if (r.content[0].text !== NONE) got.push(`recall_context ${query}: ${r.content[0].text!.slice(0, 200)}`);
        const rm = await h.call('retrieve_memory', { prompt: query });
        const retrieval = rm.structuredContent!.retrieval as { total_items: number };
        if (retrieval.total_items !== 0) got.push(`retrieve_memory ${query}: ${retrieval.total_items} item(s)`);
      }
      assert.deepEqual(got, []);
    });

    it('a question sharing a word with a record still finds it', async () => {
      const r = await h.call('recall_context', { query: 'which tokenizer counts the budget' });
      assert.match(r.content[0].text!, /o200k tokenizer/);
    });
  });
}

describe('a paraphrase sharing no word with its record (USE-lite)', function () {
  this.timeout(180_000);
  const h = httpToolHarness({
    open: async () => {
      const dir = tempDir('nomatch-paraphrase');
      return { engine: await MemoryEngine.open({ storeUri: dir, embedder: new UseLiteEmbedder(), maintenanceIntervalMs: 0 }), dir };
    },
    fill,
  });

  it('is still found through the sentence encoder', async () => {
    const r = await h.call('recall_context', { query: 'one-time notices shown on the next page' });
    assert.notEqual(r.content[0].text, NONE);
    const [first] = textPack(r).items;
    const detail = await h.engine.getNode(first.reference, SCOPE);
    assert.match(String((detail?.source as { title?: string } | undefined)?.title), /Flash messages/, r.content[0].text);
  });
});

describe('an embedder that cannot embed the unrelated sentences', function () {
  this.timeout(120_000);
  it('still searches, and is asked for them once, not at every question', async () => {
    const inner = new HashedEmbedder(96);
    let asked = 0;
    const flaky: Embedder = {
      name: 'flaky-96',
      dimension: 96,
      embed: async (texts: string[]) => {
        if (texts.includes('The train leaves at noon.')) {
          asked++;
          throw new Error('the server refuses this batch');
        }
        return inner.embed(texts);
      },
    };
    const dir = tempDir('nomatch-flaky');
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: flaky, maintenanceIntervalMs: 0 });
    try {
      await engine.observe([{ type: 'edit', title: 'Exponential backoff for uploads', narrative: 'retry with jitter' }], SCOPE);
      await engine.waitForVectors();
      for (let i = 0; i < 6; i++) await engine.search(`kumquat zebra ${i}`, { scope: SCOPE, limit: 5 });
      assert.equal((await engine.search('exponential backoff', { scope: SCOPE, limit: 5 })).length, 1);
      assert.equal(asked, 1);
    } finally {
      await engine.close();
      removeDir(dir);
    }
  });
});

describe('code-memory search of a question about nothing in the store', function () {
  this.timeout(120_000);
  let dir = '';
  before(async () => {
    dir = tempDir('nomatch-cli');
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    await engine.observe(
      [
        { type: 'note', title: 'Login form validates the password field', narrative: 'The login form checks the password length.' },
        { type: 'note', title: 'Upload retries use exponential backoff', narrative: 'Failed uploads are retried five times.' },
      ],
      SCOPE,
    );
    await engine.flush();
    await engine.waitForVectors();
    await engine.close();
  });
  after(() => removeDir(dir));

  it('prints no match, not every record at a score of 0.00; a question sharing a word still finds its record', async () => {
    for (const query of ['*', 'the and of', '!!!', ...UNRELATED_QUERIES]) {
      const r = await runMain(['search', query, '--store', dir, '--project', SCOPE.project, '--embedder', 'hashed']);
      assert.equal(r.code, 0, r.err);
      assert.equal(r.out, `No matches in '${SCOPE.project}'.\n`, `search ${JSON.stringify(query)}`);
    }
    const found = await runMain(['search', 'upload retries', '--store', dir, '--project', SCOPE.project, '--embedder', 'hashed']);
    assert.match(found.out, /^\d\.\d\d .*Upload retries use exponential backoff/);
  });
});

describe('the hashed fallback and a record that shares only spellings with the question', function () {
  this.timeout(120_000);
  it('finds nothing through the spelling alone, and still finds a record sharing the word', async () => {
    // Hashed similarities to "kumquat": 0.23 for the first (kum, qua, uat), above the 0.13 of random
    // vectors that once let a session summary sharing "<se" with "seven" answer "seven dwarfs".
    const dir = tempDir('nomatch-spelling');
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    try {
      await engine.observe([{ type: 'note', title: 'Kumar fixed the squat bug', narrative: '' }], SCOPE);
      await engine.waitForVectors();
      const before = await engine.search('kumquat', { scope: SCOPE, limit: 5 });
      assert.deepEqual(before.filter((h) => h.score > 0).map((h) => h.cell.title), []);
      await engine.observe([{ type: 'note', title: 'Kumquats are sold at the market', narrative: '' }], SCOPE);
      await engine.waitForVectors();
      const after = await engine.search('kumquat', { scope: SCOPE, limit: 5 });
      assert.deepEqual(after.filter((h) => h.score > 0).map((h) => h.cell.title), ['Kumquats are sold at the market']);
    } finally {
      await engine.close();
      removeDir(dir);
    }
  });
});
