// The read tools against their contract pages: recall, recall_context and retrieve_memory change
// nothing, forgotten records are gone from every tool, merged observations keep their sources.
import * as assert from 'node:assert/strict';
import { TABLES } from '../../src/core/store/schema';
import { OTHER, SCOPE, httpToolHarness } from './httpToolHarness';
import { seed } from './mcpFixture';

describe('contract: reads and forgotten records', function () {
  this.timeout(180_000);
  const h = httpToolHarness({ fill: (engine) => seed(engine, SCOPE, OTHER).then(() => undefined) });
  const { call, assertValid } = h;

  it('recall, recall_context and retrieve_memory are reads: no access time or count changes on any record or cell', async () => {
    await h.engine.flush();
    const snap = async () => JSON.stringify(await Promise.all([TABLES.cells, TABLES.observations, TABLES.memories].map(async (t) =>
      (await h.engine.store.rows(t, null)).map((r) => [r.node_id ?? r.id, r.access_count ?? null, r.last_accessed_epoch ?? null, r.status, r.updated_at_epoch ?? null]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))))));
    const before = await snap();
    await call('recall', { text: 'LanceDB vector store decision' });
    await call('recall_context', { query: 'LanceDB vector store decision' });
    await call('retrieve_memory', { prompt: 'Which vector store did we decide on and why?' });
    await h.engine.flush();
    assert.equal(await snap(), before);
  });

  it('recall and recall_context leave no request log entry and no prompt history (only retrieve_memory logs)', async () => {
    const before = (await h.engine.store.rows(TABLES.requestLog, null)).length;
    const prompts = (await h.engine.store.rows(TABLES.sessionPrompts, null)).length;
    await call('recall', { text: 'LanceDB' });
    await call('recall_context', { query: 'LanceDB' });
    assert.equal((await h.engine.store.rows(TABLES.requestLog, null)).length, before);
    assert.equal((await h.engine.store.rows(TABLES.sessionPrompts, null)).length, prompts);
  });

  it('forgotten records: get_observations answers a tool error for each source; recall/recall_context no longer return them', async () => {
    const [o] = await h.engine.observe([{ type: 'note', title: 'Zanzibar flamingo migration plan', narrative: 'The zanzibar flamingo migration moves the queue workers.' }], SCOPE);
    const m = await h.engine.remember({ title: 'Zanzibar flamingo decision', text: 'Zanzibar flamingo workers run on spot instances.' }, SCOPE);
    await h.engine.flush();
    const hitsBefore = (await call('recall', { text: 'zanzibar flamingo' })).structuredContent!.nodes as unknown[];
    assert.ok(hitsBefore.length > 0);
    await h.engine.forget({ kind: 'observation', ids: [o.id] }, SCOPE);
    await h.engine.forget({ kind: 'memory', ids: [m.id] }, SCOPE);
    const go = await call('get_observations', { ids: [o.id], source: 'observation' });
    assert.equal(go.isError, true);
    assert.match(go.content[0].text!, /^not_found/);
    const gm = await call('get_observations', { ids: [m.id], include_suppressed: true });
    assert.equal(gm.isError, true);
    const rc = await call('recall_context', { query: 'zanzibar flamingo' });
    assert.ok(!/zanzibar/i.test(rc.content[0].text!), rc.content[0].text);
  });

  it('get_observations: a merged observation (compressed session) returns compressed_sources per the schema, sources stay readable', async () => {
    const session = await h.engine.currentSessionId(SCOPE);
    const edits = [0, 1, 2, 3].map((i) => ({ type: 'edit', title: `Edit exporter step ${i}`, files_modified: ['src/exporter.ts'], narrative: `Step ${i}: stream rows in batches.` }));
    const stored = await h.engine.observe(edits, SCOPE);
    const summary = await h.engine.endSession(SCOPE, session, 'request');
    assert.ok(summary);
    const merged = (await h.engine.listObservations(SCOPE)).filter((x) => x.type === 'merged');
    assert.ok(merged.length >= 1);
    const r = await call('get_observations', { ids: [merged[0].id, stored[0].id], source: 'observation' });
    assert.equal(r.isError, false, r.content[0].text);
    assertValid('get_observations', r);
    const d = r.structuredContent!.details as Array<Record<string, unknown>>;
    assert.ok(Array.isArray(d[0].compressed_sources) && (d[0].compressed_sources as unknown[]).length === 4);
    const s = await call('get_observations', { ids: [summary.id], source: 'session_summary' });
    assert.equal(s.isError, false, s.content[0].text);
    assertValid('get_observations', s);
    const sd = (s.structuredContent!.details as Array<Record<string, unknown>>)[0];
    assert.equal(sd.id, summary.id);
    assert.equal(sd.memory_session_id, session);
  });

});
