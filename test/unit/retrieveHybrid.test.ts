import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ObservationInput } from '../../src/core/api';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import { LexicalIndex, isAbbreviation } from '../../src/core/retrieve/lexicalIndex';
import { prepareIndexText } from '../../src/core/retrieve/textPrep';

describe('retrieval', () => {
  describe('LexicalIndex', () => {
    it('ranks by BM25 and forgets removed documents', () => {
      const index = new LexicalIndex();
      index.add('a', prepareIndexText({ title: 'parse numbers', text: 'numeric conversion of values' }));
      index.add('b', prepareIndexText({ title: 'help output', text: 'wrap the help text' }));
      index.add('c', prepareIndexText({ title: 'numbers everywhere', text: 'number number number' }));
      const q = new Map([['number', 1]]);
      assert.deepEqual(index.search(q, 10).map((h) => h.nodeId), ['c', 'a']);
      index.remove('c');
      assert.deepEqual(index.search(q, 10).map((h) => h.nodeId), ['a']);
      assert.equal(index.df('number'), 1);
    });

    it('weighs the extra section below the message', () => {
      const index = new LexicalIndex(0.5);
      index.add('message', prepareIndexText({ title: 'x', text: 'completion script' }));
      index.add('diff', prepareIndexText({ title: 'x', text: '', extra: 'completion script' }));
      assert.equal(index.search(new Map([['complet', 1]]), 2)[0].nodeId, 'message');
    });

    it('finds the abbreviations the store uses for a query word, only when they co-occur', () => {
      const index = new LexicalIndex();
      for (let i = 0; i < 4; i++) index.add(`env${i}`, prepareIndexText({ title: 'read environment variables', text: 'process.env lookup' }));
      for (let i = 0; i < 20; i++) index.add(`other${i}`, prepareIndexText({ title: `unrelated change ${i}`, text: 'start the parser' }));
      index.add('str', prepareIndexText({ title: 'str helper', text: '' }));
      assert.deepEqual(index.abbreviationsOf('environ', 2, 2), ['env']);
      assert.deepEqual(index.abbreviationsOf('start', 2, 2), []);
    });

    it('isAbbreviation accepts prefixes and consonant skeletons', () => {
      assert.ok(isAbbreviation('env', 'environ'));
      assert.ok(isAbbreviation('pkg', 'packag'));
      assert.ok(isAbbreviation('cfg', 'configur'));
      assert.ok(isAbbreviation('cmd', 'command'));
      assert.ok(!isAbbreviation('cmd', 'config'));
      assert.ok(!isAbbreviation('ab', 'absent'));
      assert.ok(!isAbbreviation('env', 'env'));
      assert.ok(!isAbbreviation('en', 'environ'));
    });
  });

  describe('hybrid search through the engine', () => {
    let dir: string;
    let engine: MemoryEngine;
    const scope = { project: 'alpha' };
    const other = { project: 'beta' };
    const obs = (title: string, narrative: string, extra = '', files: string[] = []): ObservationInput => ({
      type: 'commit',
      title,
      narrative,
      search_extra: extra,
      files_modified: files,
    });

    beforeEach(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'code-memory-retrieve-'));
      engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder() });
    });

    afterEach(async () => {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('finds camelCase identifiers by their words, stems and ranks the best match first', async () => {
      await engine.observe(
        [
          obs('Tidy the README', 'Spelling fixes', '', ['README.md']),
          obs('Handle empty input', 'Guard the reader', 'function readStdinSync () {\n+ if (!buffer.length) return ""', ['lib/stdin.js']),
          obs('Coerce values', 'Numbers parse to numbers', 'coerceNumber(value)', ['lib/coerce.js']),
        ],
        scope,
      );
      const hits = await engine.search('reading stdin synchronously', { scope, limit: 3 });
      assert.equal(hits[0].cell.title, 'Handle empty input');
      assert.ok(hits[0].score > 0 && hits[0].score <= 1);
      for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1].distance <= hits[i].distance, 'distance follows the ranking');
    });

    it('sees rows written after the first search, and stops returning forgotten ones', async () => {
      const [first] = await engine.observe([obs('Add completion script', 'bash completion')], scope);
      assert.equal((await engine.search('completion', { scope, limit: 5 })).length, 1);
      await engine.observe([obs('Zsh completion', 'completion for zsh')], scope);
      const both = await engine.search('completion', { scope, limit: 5 });
      assert.equal(both.length, 2);
      await engine.forget({ kind: 'observation', ids: [first.id] }, scope);
      const after = await engine.search('completion', { scope, limit: 5 });
      assert.deepEqual(after.map((h) => h.cell.title), ['Zsh completion']);
    });

    it('never returns another project\'s cells, even when they match better', async () => {
      const noise = Array.from({ length: 60 }, (_, i) => obs(`wrap help text ${i}`, 'wrap wrap wrap help text columns'));
      await engine.observe(noise, other);
      await engine.observe([obs('Wrap long lines', 'help text wraps at the terminal width')], scope);
      const hits = await engine.search('wrap help text', { scope, limit: 10 });
      assert.equal(hits.length, 1);
      assert.equal(hits[0].cell.project, 'alpha');
    });

    it('rank gives the search\'s ranking without its cells, for every fusion rule, scope and filter', async () => {
      await engine.observe(Array.from({ length: 40 }, (_, i) => obs(`wrap help text ${i}`, `wrap help columns ${i % 7}`)), other);
      await engine.observe(Array.from({ length: 40 }, (_, i) => obs(`Help text ${i}`, `wraps the help at width ${i % 5}`, '', [`lib/f${i % 3}.js`])), scope);
      for (let i = 0; i < 200; i++) {
        const s = await engine.stats(null);
        if (s.cells_with_vectors >= s.cells) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      for (const settings of ['', 'fusion=score', 'fusion=rrf', 'fusion=z,vectorList=1']) {
        process.env.CODE_MEMORY_RETRIEVAL = settings;
        try {
          for (const options of [{ scope, limit: 15 }, { scope, limit: 5, filter: { files: ['lib/f1.js'] } }, { scope: other, limit: 10 }]) {
            const hits = await engine.search('wrap the help text', options);
            const ranked = await engine.rank('wrap the help text', options);
            assert.ok(hits.length > 0, `${settings}: something found`);
            assert.deepEqual(ranked, hits.map((h) => ({ node_id: h.cell.node_id, score: h.score, distance: h.distance })), settings);
            assert.ok(hits.every((h) => h.cell.project === options.scope.project), 'within the scope');
          }
        } finally {
          delete process.env.CODE_MEMORY_RETRIEVAL;
        }
      }
    });

    it('calibrated fusion (fusion=z) brings in the nearest neighbours the words did not find', async () => {
      const noise = Array.from({ length: 30 }, (_, i) => obs(`Palette change ${i}`, `palette entry ${i}`));
      // No word of 'colour palette' after stemming, but most of its spelling.
      await engine.observe([...noise, obs('Colours', 'colour palette swatches'), obs('Colorized swatches', 'the colorized swatches')], scope);
      for (let i = 0; i < 200; i++) {
        const s = await engine.stats(scope);
        if (s.cells_with_vectors >= s.cells) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const search = async (settings: string) => {
        process.env.CODE_MEMORY_RETRIEVAL = settings;
        try {
          return await engine.search('colour palette', { scope, limit: 40 });
        } finally {
          delete process.env.CODE_MEMORY_RETRIEVAL;
        }
      };
      const z = await search('fusion=z,vectorList=1');
      const words = await search('fusion=z,vectorList=1,vectorWeight=0');
      assert.equal(z[0].cell.title, 'Colours', 'both lists agree on it, so it comes first');
      for (const h of z) assert.ok(h.score > 0 && h.score < 1, 'logistic scores in (0, 1)');
      for (let i = 1; i < z.length; i++) assert.ok(z[i - 1].score >= z[i].score);
      assert.ok(!words.some((h) => h.cell.title === 'Colorized swatches'), 'no word of the query reaches it');
      assert.ok(z.some((h) => h.cell.title === 'Colorized swatches'), 'its spelling is near: the vector list brings it in');
    });

    it('matches the short form the code uses for a word of the question', async () => {
      const notes = Array.from({ length: 10 }, (_, i) => obs(`Unrelated change ${i}`, 'touch the parser'));
      await engine.observe(
        [
          ...notes,
          obs('Read env defaults', 'Options fall back to prefixed env vars', 'process.env.PREFIX_NAME'),
          obs('Document the environment variables', 'The environment sets defaults; see process.env', ''),
          obs('Print config', 'Show the env', 'console.log(process.env)'),
        ],
        scope,
      );
      const hits = await engine.search('defaults from the environment', { scope, limit: 3 });
      assert.ok(hits.some((h) => h.cell.title === 'Read env defaults'), hits.map((h) => h.cell.title).join(', '));
    });
  });
});
