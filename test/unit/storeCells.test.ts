// One search cell per record, whatever two processes did at once. A record and its cell are two
// commits, so a crash, a writer slower than the repair's grace, or a forget racing a writer can
// leave a record without a cell, a record with two, or a cell without its record. Each state is
// made here as the race leaves it, and the next repair (at open, or when the lease is renewed)
// must bring the store back to exactly one cell per record.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { cellNodeId, observationCell } from '../../src/core/store/cells';
import { observationToRow } from '../../src/core/store/mapping';
import { TABLES } from '../../src/core/store/schema';

process.env.LANCEDB_LOG ??= 'error';

describe('store: one cell per record', function () {
  this.timeout(60_000);
  const scope = { project: 'github.com/acme/cells' };
  let dir: string;
  let engine: MemoryEngine;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-cells-'));
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  });
  afterEach(async () => {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function cellsOf(id: number): Promise<Array<{ node_id: string }>> {
    return (await engine.store.rows(TABLES.cells, `source_kind = 'observation' AND source_id = ${id}`, { select: ['node_id'] })) as Array<{ node_id: string }>;
  }

  it('a writer slower than the repair adds no second cell: both write the same node, and the repair keeps one', async () => {
    const [kept] = await engine.observe([{ type: 'note', title: 'an ordinary row' }], scope);
    // The writer committed the record; before it wrote the cell, the repair's grace ran out.
    const slow = { ...kept, id: kept.id + 1, title: 'the slow quokka row', created_at_epoch: Date.now() };
    await engine.store.add(TABLES.observations, [observationToRow(slow, {})]);
    assert.equal(await engine.maintenance.repairCells(), 1);
    const [repaired] = await cellsOf(slow.id);
    // Then the writer's own cell lands.
    await engine.repos.forProject(scope.project).cells.add([observationCell(slow, null, engine.store.dimension)]);
    const both = await cellsOf(slow.id);
    assert.deepEqual(both.map((c) => c.node_id), [repaired.node_id, repaired.node_id], 'the writer and the repair named the cell differently');

    await engine.maintenance.repairCells();
    assert.deepEqual((await cellsOf(slow.id)).map((c) => c.node_id), [repaired.node_id]);
    assert.equal((await cellsOf(kept.id)).length, 1);
    const hits = await engine.search('quokka', { scope });
    assert.deepEqual(hits.map((h) => h.cell.node_id), [repaired.node_id]);
    assert.equal((await engine.getNode(repaired.node_id, scope))?.cell.source_id, slow.id);
  });

  it('a cell whose record a racing forget deleted is removed by the next repair', async () => {
    const [kept, ghost] = await engine.observe([{ type: 'note', title: 'a row that stays' }, { type: 'note', title: 'the ghostly wombat row' }], scope);
    // forget --all deleted the records, then the writer's cells landed, then forget deleted cells.
    await engine.store.delete(TABLES.observations, `id = ${ghost.id}`);
    assert.equal((await engine.search('wombat', { scope })).length, 1, 'the setup left no orphan cell');

    await engine.maintenance.repairCells();
    assert.equal((await cellsOf(ghost.id)).length, 0);
    assert.equal((await cellsOf(kept.id)).length, 1);
    assert.deepEqual(await engine.search('wombat', { scope }), []);
  });

  it('names every cell after its project, kind and id, so every writer names a cell alike', async () => {
    const [a] = await engine.observe([{ type: 'note', title: 'first' }], scope);
    const other = { project: 'github.com/acme/other' };
    const [b] = await engine.observe([{ type: 'note', title: 'second' }], other);
    const id = cellNodeId(scope.project, 'observation', a.id);
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepEqual((await cellsOf(a.id)).map((c) => c.node_id), [id]);
    assert.deepEqual((await cellsOf(b.id)).map((c) => c.node_id), [cellNodeId(other.project, 'observation', b.id)]);
    // The same id in another project or of another kind is another node.
    assert.notEqual(cellNodeId(other.project, 'observation', a.id), id);
    assert.notEqual(cellNodeId(scope.project, 'memory', a.id), id);
  });

  it('a write whose cells fail (a full disk) leaves none of its records behind: trying again stores each once', async () => {
    const store = engine.store;
    const add = store.add.bind(store);
    store.add = async (name, rows, key) => {
      if (name === TABLES.cells) throw new Error('No space left on device (os error 28)');
      return add(name, rows, key);
    };
    const notes = Array.from({ length: 30 }, (_, i) => ({ type: 'note', title: `full disk note ${i}` }));
    try {
      await assert.rejects(engine.observe(notes, scope), /No space left/);
      await assert.rejects(engine.remember({ title: 'full disk memory', text: 'kept?' }, scope), /No space left/);
    } finally {
      store.add = add;
    }
    assert.equal((await engine.stats(scope)).observations, 0, 'the failed write took its records back');
    assert.equal((await engine.stats(scope)).memories, 0);
    await engine.observe(notes, scope);
    const stats = await engine.stats(scope);
    assert.equal(stats.observations, 30);
    assert.equal(stats.cells, 30);
  });
});
