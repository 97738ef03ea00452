// The four tools' edges as an agent written against the contracts meets them (a real SDK client
// over the real loopback server): where a page is silent, the README's tool reference settles it.
import * as assert from 'node:assert/strict';
import { OTHER, SCOPE, httpToolHarness } from './httpToolHarness';
import { seed } from './mcpFixture';
import { textPack } from './textPack';

describe('tool contracts at their edges, over MCP (HTTP)', function () {
  this.timeout(180_000);
  let seeded: Awaited<ReturnType<typeof seed>>;
  const h = httpToolHarness({
    fill: async (engine) => {
      seeded = await seed(engine, SCOPE, OTHER);
    },
  });
  const { call } = h;

  it('recall_context: Budget "dropped=<d>+" only when more candidates existed than were fetched (README)', async () => {
    // Two L0/L2 records match 'LanceDB vector store'; max_items=1 fetches 1+8 candidates, so all were fetched.
    const r = await call('recall_context', { query: 'LanceDB vector store', max_items: 1 });
    const text = r.content[0].text!;
    const budget = text.split('\n').find((l) => l.startsWith('Budget: '))!;
    assert.ok(budget, text);
    assert.equal(textPack(r).budget?.dropped, 1);
    assert.doesNotMatch(budget, /dropped=\d+\+/, `only 2 candidates exist and all 9 fetch slots were not used, yet: ${budget}`);
  });

  it('retrieve_memory: any string session_id is accepted (only unknown arguments are invalid_arguments); an empty one falls back', async () => {
    // Contract: session_id is an optional string; "Only prompt and session_id are accepted. Any OTHER argument returns invalid_arguments."
    const id = `cursor-thread-${'k7m2p'.repeat(60)}`;
    const long = await call('retrieve_memory', { prompt: 'Which vector store did we pick?', session_id: id });
    assert.equal(long.structuredContent?.status, 'ok', JSON.stringify(long.structuredContent));
    // The same long id is the same session: its prompt history feeds the next call.
    const again = await call('retrieve_memory', { prompt: 'and why?', session_id: id });
    assert.equal(again.structuredContent?.status, 'ok');
    for (const sessionId of ['', 'nul\u0000inside']) {
      const r = await call('retrieve_memory', { prompt: 'Which vector store did we pick?', session_id: sessionId });
      assert.equal(r.structuredContent?.status, 'ok', JSON.stringify(r.structuredContent));
    }
  });

  it('get_observations: a suppressed session summary is not_found without include_suppressed (README), like memories and observations', async () => {
    const session = await h.engine.currentSessionId(SCOPE);
    await h.engine.observe([{ type: 'note', title: 'Decision', narrative: 'We decided to use async iterators instead of arrays.' }], SCOPE);
    const summary = await h.engine.endSession(SCOPE, session, 'request');
    assert.ok(summary);
    await h.engine.setStatus('session_summary', summary.id, 'suppressed', SCOPE);
    const hidden = await call('get_observations', { ids: [summary.id], source: 'session_summary' });
    assert.equal(hidden.isError, true, `suppressed summary returned: ${hidden.content[0].text!.slice(0, 200)}`);
    assert.match(hidden.content[0].text!, /^not_found/);
    const shown = await call('get_observations', { ids: [summary.id], source: 'session_summary', include_suppressed: true });
    assert.equal(shown.isError, false);
  });

  it('recall, recall_context, get_observations and retrieve_memory at their edge values', async () => {
    assert.match((await call('recall', { text: 'LanceDB', k: 0 })).content[0].text!, /^invalid_arguments: k/);
    assert.match((await call('recall_context', { query: 'LanceDB', max_items: 51 })).content[0].text!, /^invalid_arguments: max_items/);
    assert.match((await call('recall_context', { query: 'LanceDB', max_tokens: 12001 })).content[0].text!, /^invalid_arguments: max_tokens/);
    assert.match((await call('recall_context', { query: '' })).content[0].text!, /^invalid_arguments: query/);
    const none = await call('recall_context', { query: 'zebra giraffe quantum' });
    assert.equal(none.content[0].text, '### XMemo Context\nItems: 0\nNo matching XMemo memory was found.');
    assert.match((await call('get_observations', { ids: [seeded.observationIds[0], 99999], source: 'observation' })).content[0].text!, /^not_found/);
    assert.match((await call('get_observations', { ids: [seeded.otherId], source: 'observation' })).content[0].text!, /^not_found/);
    assert.match((await call('get_observations', { ids: [1], source: 'MEMORY' })).content[0].text!, /^invalid_source/);
    const rm = await call('retrieve_memory', { prompt: 'x', mode: 'deep' });
    assert.equal(rm.structuredContent?.error_code, 'invalid_arguments');
    assert.equal((await call('retrieve_memory', { prompt: 'a'.repeat(8001) })).structuredContent?.error_code, 'invalid_arguments');
    assert.equal((await call('retrieve_memory', { prompt: '🎉'.repeat(8000) })).structuredContent?.status, 'ok');
    // The pages set no maximum on a query: a long one (a pasted file) is served by its first 8,000 characters, a huge one refused.
    const pasted = `LanceDB vector store decision ${'padding words of a pasted file '.repeat(400)}`;
    const long = await call('recall', { text: pasted });
    assert.equal(long.isError, false, long.content[0].text);
    assert.ok((long.structuredContent!.nodes as unknown[]).length > 0);
    const longPack = await call('recall_context', { query: pasted });
    assert.equal(longPack.isError, false, longPack.content[0].text);
    assert.match(longPack.content[0].text!, /^### XMemo Context\nItems: [1-9]/);
    assert.match((await call('recall', { text: 'a'.repeat(100_001) })).content[0].text!, /^invalid_arguments: text/);
    assert.match((await call('recall_context', { query: 'a'.repeat(100_001) })).content[0].text!, /^invalid_arguments: query/);
    const nodes = (await call('recall', { text: 'LanceDB vector store decision' })).structuredContent!.nodes as Array<{ node_id: string; distance: number }>;
    for (let i = 1; i < nodes.length; i++) assert.ok(nodes[i - 1].distance <= nodes[i].distance);
    for (const n of nodes) assert.equal((await h.engine.getNode(n.node_id, SCOPE))?.cell.layer, 'L0');
  });

  it('recall_context: Location names up to three files, then how many more (README)', async () => {
    await h.engine.observe([{ type: 'commit', title: 'walrus commit touching four files', commit_sha: 'abcdef0123456789abcdef0123456789abcdef01', files_modified: ['a.ts', 'b.ts', 'c.ts', 'd.ts'] }], SCOPE);
    await h.engine.flush();
    const r = await call('recall_context', { query: 'walrus commit touching four files', max_items: 1 });
    assert.equal(r.isError, false, r.content[0].text);
    const { items } = textPack(r);
    assert.equal(items[0]?.location, 'a.ts, b.ts, c.ts (+1 more)', r.content[0].text);
    assert.match(r.content[0].text!, /\| Location: a\.ts, b\.ts, c\.ts \(\+1 more\)\n/);
  });

  it('retrieve_memory keeps the last 5 prompts of a session', async () => {
    for (let i = 0; i < 7; i++) await call('retrieve_memory', { prompt: `prompt ${i} about LanceDB`, session_id: 'keep5' });
    assert.deepEqual(await h.engine.recentPrompts(SCOPE, 'keep5', 10), [6, 5, 4, 3, 2].map((i) => `prompt ${i} about LanceDB`));
  });
});
