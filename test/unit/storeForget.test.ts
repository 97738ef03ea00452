import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { filesContaining } from './diskFixture';
import { toolContext } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

describe('store: forget', function () {
  this.timeout(120_000);
  let dir: string;
  let engine: MemoryEngine;
  const scope = { project: 'acme/app', branch: 'main' };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-forget-'));
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  });
  afterEach(async () => {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('removes a forgotten observation from results and from every file on disk', async () => {
    const filler = Array.from({ length: 200 }, (_, i) => ({ type: 'note', title: `ordinary note number ${i}`, narrative: `routine work item ${i}` }));
    await engine.observe(filler.slice(0, 100), scope);
    const [secret] = await engine.observe(
      [{ type: 'note', title: 'Quokkaphrase migration', narrative: 'We decided to use quokkaphrase for the ledger. Quokkaphrase wins.', facts: ['quokkaphrase is fast'] }],
      scope,
    );
    await engine.observe(filler.slice(100), scope);
    // Compact first: the hard case is a forgotten row inside a big, already compacted fragment.
    await engine.optimize(0);
    assert.equal((await engine.search('quokkaphrase', { scope })).length, 1);
    assert.ok(filesContaining(dir, 'quokkaphrase').length > 0, 'the control failed: the text should be on disk before forget');

    const report = await engine.forget({ kind: 'observation', ids: [secret.id] }, scope);
    assert.equal(report.observations, 1);
    assert.ok(report.pruned);
    assert.equal((await engine.search('quokkaphrase', { scope })).length, 0);
    assert.deepEqual(await engine.getObservations([secret.id], scope), []);
    assert.deepEqual(filesContaining(dir, 'quokkaphrase'), []);
    // Everything else survived, and the store still works.
    assert.equal((await engine.stats(scope)).observations, 200);
    assert.equal((await engine.search('routine work item', { scope, limit: 3 })).length, 3);
    await engine.observe([{ type: 'note', title: 'after forget' }], scope);
    assert.equal((await engine.search('after forget', { scope })).length, 1);
  });

  it('forgets the request log quoting a record dated after the request (a client\'s or a commit\'s date)', async () => {
    const future = Date.now() + 365 * 24 * 3600_000;
    const [o] = await engine.observe([{ type: 'decision', title: 'Futurewombat rollout plan', narrative: 'futurewombat goes live', created_at_epoch: future }], scope);
    await engine.flush();
    const out = await retrieveMemory(toolContext(engine, scope), { prompt: 'what is the rollout plan?', session_id: 't1' });
    assert.match(out.content_text ?? '', /Futurewombat/, 'control: retrieve_memory quotes the record');
    await engine.forget({ kind: 'observation', ids: [o.id] }, scope);
    assert.deepEqual((await engine.listRequests(scope, 100)).filter((e) => /futurewombat/i.test(e.response)).map((e) => e.request_id), []);
    assert.deepEqual(filesContaining(dir, 'futurewombat'), []);
  });

  it('forgets what was derived from an observation (its session summary) too', async () => {
    const session = engine.currentSessionId(scope);
    const [o] = await engine.observe([{ type: 'note', title: 'Wombatcache decision', narrative: 'We decided to use wombatcache instead of redis.' }], scope);
    await engine.observe([{ type: 'edit', title: 'Edited the cache layer', files_modified: ['src/cache.ts'] }], scope);
    const summary = await engine.endSession(scope, session, 'request');
    assert.match(summary?.decisions ?? '', /wombatcache/);
    const report = await engine.forget({ ids: [o.id] }, scope);
    assert.equal(report.session_summaries, 1);
    assert.equal((await engine.search('wombatcache', { scope, layers: ['L0', 'L1', 'L2'] })).length, 0);
    assert.deepEqual(filesContaining(dir, 'wombatcache'), []);
  });

  it('forgets a whole project and leaves the others', async () => {
    await engine.observe([{ type: 'note', title: 'Platypusplan for project one' }], { project: 'one' });
    await engine.observe([{ type: 'note', title: 'Echidnaplan for project two' }], { project: 'two' });
    await engine.forget({ project: 'one' }, null);
    assert.equal((await engine.search('platypusplan', { scope: { project: 'one' } })).length, 0);
    assert.equal((await engine.search('echidnaplan', { scope: { project: 'two' } })).length, 1);
    assert.deepEqual(filesContaining(dir, 'platypusplan'), []);
    await assert.rejects(engine.forget({ project: 'two' }, { project: 'one' }), /cannot forget project/);
  });

  it('forgets everything', async () => {
    await engine.observe([{ type: 'note', title: 'Numbatnote everywhere' }], { project: 'one' });
    await engine.remember({ title: 'Numbatnote memory', text: 'numbatnote' }, { project: 'one' });
    await engine.forget({ all: true }, null);
    const stats = await engine.stats(null);
    assert.equal(stats.observations + stats.memories + stats.cells, 0);
    assert.deepEqual(filesContaining(dir, 'numbatnote'), []);
  });
});
