// A forget killed with kill -9 in another process, between deleting records and deleting their
// search cells (or right after its journal was written): a process that has the store open
// serves none of the forgotten records from that moment (recall, recall_context,
// retrieve_memory, a search, a node by id), not only after its next upkeep; and that process's
// upkeep finishes the forget, which leaves the forgotten words in no table and no file.

import { strict as assert } from 'node:assert';
import { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { cellNodeId } from '../../src/core/store/cells';
import { TABLES } from '../../src/core/store/schema';
import { recall } from '../../src/core/tools/recall';
import { recallContext } from '../../src/core/tools/recallContext';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { filesContaining } from './diskFixture';
import { runChild } from './fixtures/killAt';
import { tempDirs, toolContext } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const KEEP: Scope = { project: 'acme/keep-crash' };
const GONE: Scope = { project: 'acme/gone-crash' };
const SECRET = 'quokkaledger';
const GONE_SECRET = 'wallabyvault';

describe('a forget killed in another process: this process serves none of it', function () {
  this.timeout(300_000);
  const dirs = tempDirs();
  const engines: MemoryEngine[] = [];
  let dir: string;
  let secretId: number;

  beforeEach(async () => {
    dir = dirs.make('forget-crash-other');
    const e = await open();
    await e.observe(Array.from({ length: 30 }, (_, i) => ({ type: 'note', title: `kept note ${i}`, narrative: `ordinary kept payload number ${i}` })), KEEP);
    [{ id: secretId }] = await e.observe([{ type: 'decision', title: `The ${SECRET} decision`, narrative: `We chose ${SECRET} for the books.` }], KEEP);
    await e.observe(Array.from({ length: 40 }, (_, i) => ({ type: 'note', title: `doomed note ${i}`, narrative: `the ${GONE_SECRET} plan item ${i}` })), GONE);
    await e.flush();
  });
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.close().catch(() => undefined);
    dirs.removeAll();
  });

  async function open(): Promise<MemoryEngine> {
    // No upkeep timer: what is served between the kill and the upkeep is what is looked at.
    const e = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, lexiconMinDelta: 1 });
    engines.push(e);
    return e;
  }

  /** Everything this process's tools and search give for `word` in `scope`, as text. */
  async function served(e: MemoryEngine, scope: Scope, word: string): Promise<string> {
    const ctx = toolContext(e, scope);
    const out = [
      await e.search(word, { scope, limit: 10 }),
      await e.rank(word, { scope, limit: 10 }),
      await recall(ctx, { text: word }),
      await recallContext(ctx, { query: word }),
      // Its answer, less the prompt it quotes.
      (await retrieveMemory(ctx, { prompt: `what about ${word}?` })).retrieval ?? 'error',
    ];
    return JSON.stringify(out);
  }

  async function finishAndCheck(e: MemoryEngine, word: string): Promise<void> {
    // This process's upkeep finishes the dead process's forget.
    await e.optimize(0);
    assert.deepEqual((await e.store.metaEntries('pending_forget')).map(([k]) => k), [], 'the forget journal is left after the upkeep');
    assert.equal(await e.store.count(TABLES.cells, `strpos(text, '${word}') > 0`), 0, 'cells of the forgotten records are left');
    assert.ok(!(await served(e, KEEP, 'ordinary kept payload')).includes(word));
    assert.ok((await e.search('ordinary kept payload', { scope: KEEP, limit: 5 })).length > 0, 'the kept records are not found any more');
    for (const x of engines.splice(0)) await x.close();
    assert.deepEqual(filesContaining(dir, word), [], 'the forgotten word is still on disk');
  }

  it('a forget by id killed between the records and their cells: neither searched nor shown here, then finished by the upkeep', async () => {
    const e = await open();
    const nodeId = cellNodeId(KEEP.project, 'observation', secretId);
    const before = await served(e, KEEP, SECRET);
    assert.ok(before.includes(SECRET) && before.includes(nodeId), 'control: the record is found before the forget');
    const r = await runChild(dir, 'forgetIds', { project: KEEP.project, ids: [secretId] }, { killAt: 'table.delete:1' });
    assert.equal(r.signal, 'SIGKILL', `control: the child was killed at the hook (${r.stdout} ${r.stderr})`);
    assert.equal(await e.store.count(TABLES.observations, `id = ${secretId}`), 0, 'control: the record was deleted');
    assert.equal(await e.store.count(TABLES.cells, `source_kind = 'observation' AND source_id = ${secretId}`), 1, 'control: its cell was not');
    const after = await served(e, KEEP, SECRET);
    assert.ok(!after.includes(SECRET) && !after.includes(nodeId), 'a record the killed forget deleted is still served from its cell');
    assert.equal(await e.getNode(nodeId, KEEP), null);
    await finishAndCheck(e, SECRET);
  });

  it('a forget by id killed right after its journal: its records are no longer served, then it is finished', async () => {
    const e = await open();
    const r = await runChild(dir, 'forgetIds', { project: KEEP.project, ids: [secretId] }, { killAt: 'store.setMeta:1' });
    assert.equal(r.signal, 'SIGKILL', `control: the child was killed at the hook (${r.stdout} ${r.stderr})`);
    assert.equal(await e.store.count(TABLES.observations, `id = ${secretId}`), 1, 'control: nothing was deleted yet');
    const after = await served(e, KEEP, SECRET);
    assert.ok(!after.includes(SECRET) && !after.includes(cellNodeId(KEEP.project, 'observation', secretId)), 'a record under a journalled forget is still served');
    assert.equal(await e.getNode(cellNodeId(KEEP.project, 'observation', secretId), KEEP), null);
    assert.ok((await e.search('ordinary kept payload', { scope: KEEP, limit: 5 })).length > 0, "the project's other records are not found any more");
    await finishAndCheck(e, SECRET);
  });

  it('a forget of a project killed between its records and its cells: the project serves nothing here, the others do, then it is finished', async () => {
    const e = await open();
    assert.ok((await served(e, GONE, GONE_SECRET)).includes(GONE_SECRET), 'control: found before the forget');
    const r = await runChild(dir, 'forgetProject', { project: GONE.project }, { killAt: 'table.delete:1' });
    assert.equal(r.signal, 'SIGKILL', `control: the child was killed at the hook (${r.stdout} ${r.stderr})`);
    assert.equal(await e.store.count(TABLES.observations, `project = '${GONE.project}'`), 0, 'control: the records were deleted');
    assert.ok((await e.store.count(TABLES.cells, `project = '${GONE.project}'`)) > 0, 'control: the cells were not');
    assert.ok(!(await served(e, GONE, GONE_SECRET)).includes(GONE_SECRET), 'a project the killed forget deleted is still served from its cells');
    // The repair (lease holder) takes them for the forget's, not for lost records' only copy.
    await e.maintenance.repairCells();
    assert.equal(await e.store.count(TABLES.cells, `project = '${GONE.project}'`), 0, "the repair kept the killed forget's cells as lost records' copies");
    assert.ok((await e.search('ordinary kept payload', { scope: KEEP, limit: 5 })).length > 0, 'the other project is not found any more');
    await finishAndCheck(e, GONE_SECRET);
  });
});
