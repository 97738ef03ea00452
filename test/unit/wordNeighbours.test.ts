// Related words from software documentation for the question's words a project never uses: the
// shipped table, and a search that reaches a record only through it; likewise two words of the
// question joined as the project writes them.

import { strict as assert } from 'node:assert';
import { NeighbourTable, wordNeighbours } from '../../src/core/retrieve/wordNeighbours';
import { prepareQueryText } from '../../src/core/retrieve/textPrep';
import { SEARCH_SCOPE, searchStore } from './searchFixture';

process.env.LANCEDB_LOG ??= 'error';

describe('word neighbours', function () {
  this.timeout(60_000);

  it('parses the table format and skips malformed lines', () => {
    const table = new NeighbourTable('cooki\tjar:0.78,samesit:0.70\nno tab here\nempty\t\nbad\tx:notanumber,y:0.5,z:7\nlast\tw:0.6');
    assert.deepEqual(table.get('cooki'), [['jar', 0.78], ['samesit', 0.7]]);
    assert.deepEqual(table.get('empty'), []);
    assert.deepEqual(table.get('no tab here'), []);
    assert.deepEqual(table.get('bad'), [['y', 0.5]]);
    assert.deepEqual(table.get('last'), [['w', 0.6]]);
    assert.deepEqual(table.get('missing'), []);
  });

  it('ships a table keyed by the index\'s own terms, nearest first', () => {
    const table = wordNeighbours();
    assert.ok(table.size > 10_000, `${table.size} words`);
    const credential = prepareQueryText('credential');
    const near = table.get(credential).map(([w]) => w);
    assert.ok(near.includes(prepareQueryText('authentication')), `${credential}: ${near.join(' ')}`);
    for (const list of [...table.words()].slice(0, 500).map((w) => table.get(w))) {
      for (let i = 0; i < list.length; i++) {
        assert.ok(list[i][1] > 0 && list[i][1] <= 1);
        if (i > 0) assert.ok(list[i][1] <= list[i - 1][1]);
      }
    }
  });

  describe('in search', () => {
    const filler = ['Refactor the cache layer', 'Rename the build scripts', 'Speed up the test runner', 'Move the docs to a new folder', 'Bump the parser version'];
    const store = searchStore([
      filler.map((title, i) => ({ type: 'note', title, narrative: `routine change ${i}` })),
      [{ type: 'decision', title: 'Expired tokens are refused at login', narrative: 'The authentication middleware rejects a token past its expiry.' }],
      [{ type: 'bugfix', title: 'Strip the port from SERVERNAME for cookies', narrative: 'Browsers dropped the cookie.' }],
    ]);
    const scope = SEARCH_SCOPE;

    it('finds a record through the neighbours of a word the project never uses, and not without them', async () => {
      const question = 'why was my credential turned away?';
      process.env.CODE_MEMORY_RETRIEVAL = '';
      const found = await store.engine().search(question, { scope, limit: 3 });
      assert.equal(found[0]?.cell.title, 'Expired tokens are refused at login', JSON.stringify(found.map((h) => h.cell.title)));
      process.env.CODE_MEMORY_RETRIEVAL = 'relatedWeight=0';
      const without = await store.engine().search(question, { scope, limit: 3 });
      assert.ok(!without.some((h) => h.cell.title === 'Expired tokens are refused at login'), JSON.stringify(without.map((h) => h.cell.title)));
    });

    it('finds a record whose identifier joins two words of the question, and not without joining them', async () => {
      const question = 'which fix concerned the server name?';
      process.env.CODE_MEMORY_RETRIEVAL = 'relatedWeight=0';
      const found = await store.engine().search(question, { scope, limit: 3 });
      assert.equal(found[0]?.cell.title, 'Strip the port from SERVERNAME for cookies', JSON.stringify(found.map((h) => h.cell.title)));
      process.env.CODE_MEMORY_RETRIEVAL = 'relatedWeight=0,joinedWeight=0';
      const without = await store.engine().search(question, { scope, limit: 3 });
      assert.ok(!without.some((h) => h.cell.title === 'Strip the port from SERVERNAME for cookies'), JSON.stringify(without.map((h) => h.cell.title)));
    });
  });
});
