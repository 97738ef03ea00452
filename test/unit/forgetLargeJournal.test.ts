// A forget of many records under way (its journal names more than a search's filter lists): every
// search, rank and node read still leaves out what it forgets, from the hits after the search,
// and the project's other records are found as before.
import * as assert from 'node:assert/strict';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import type { Scope } from '../../src/core/model/records';
import { cellNodeId } from '../../src/core/store/cells';
import { TABLES } from '../../src/core/store/schema';
import { removeDir, tempDir } from './mcpFixture';

describe('a forget of thousands of records under way', function () {
  this.timeout(120_000);
  const scope: Scope = { project: 'github.com/acme/large-forget' };
  let dir: string;
  let engine: MemoryEngine;

  before(async () => {
    dir = tempDir('large-forget');
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false });
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  it('serves none of its records, and the others as before', async () => {
    const stored = await engine.observe(
      ['alpha', 'beta', 'gamma'].map((w) => ({ memory_session_id: 's1', type: 'note', title: `numbat colony ${w}`, narrative: `numbat colony report ${w}` })),
      scope,
    );
    const ids = stored.map((o) => o.id);
    await engine.flush();
    const doomed = ids[1];
    // A journal as a forget of 5,000 observations writes it before it deletes anything (its process killed, or still at work).
    const request = { kind: 'observation', ids: [doomed, ...Array.from({ length: 4_999 }, (_, i) => 10_000_000 + i)] };
    await engine.store.setMeta({ 'pending_forget:large': JSON.stringify({ request, scope }) });
    try {
      const hits = await engine.search('numbat colony', { scope, limit: 10 });
      assert.deepEqual(hits.map((h) => h.cell.source_id).sort(), [ids[0], ids[2]].sort());
      const ranked = await engine.rank('numbat colony', { scope, limit: 10 });
      assert.equal(ranked.length, 2);
      const nodes = new Map(hits.map((h) => [h.cell.source_id, h.cell.node_id]));
      assert.ok(await engine.getNode(nodes.get(ids[0])!, scope), 'a record the forget does not name is read');
      assert.deepEqual(new Set(ranked.map((r) => r.node_id)), new Set(nodes.values()), 'the forgotten record is not ranked');
      assert.equal(await engine.getNode(cellNodeId(scope.project, 'observation', doomed), scope), null, 'nor read by its node id');
    } finally {
      await engine.store.delete(TABLES.meta, `key = 'pending_forget:large'`);
    }
    assert.equal((await engine.search('numbat colony', { scope, limit: 10 })).length, 3, 'once the journal is gone, all three');
  });
});
