// The four tools against their contract pages: an empty store, defaults and bounds in real calls,
// records without optional data, and odd queries, through a real MCP client over HTTP.
import * as assert from 'node:assert/strict';
import { countTokens } from '../../src/core/tokens';
import { OTHER, SCOPE, httpToolHarness } from './httpToolHarness';
import { seed } from './mcpFixture';
import { textPack } from './textPack';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

describe('contract: an empty store', function () {
  this.timeout(180_000);
  const h = httpToolHarness();
  const { call, assertValid } = h;

  it('retrieve_memory on an empty store: status ok, memory_ready false, empty retrieval, content = content_text', async () => {
    const r = await call('retrieve_memory', { prompt: 'Who owns the billing service?' });
    assert.equal(r.isError, false, r.content[0].text);
    assertValid('retrieve_memory', r);
    const sc = r.structuredContent!;
    assert.equal(sc.status, 'ok');
    assert.equal(sc.memory_ready, false);
    assert.equal(typeof sc.readiness_state, 'string');
    assert.equal(r.content.length, 1);
    assert.equal(r.content[0].type, 'text');
    assert.equal(r.content[0].text, sc.content_text);
    const rt = sc.retrieval as Record<string, unknown>;
    for (const k of ['facts', 'entities', 'relationships', 'documents']) assert.deepEqual(rt[k], [], k);
    assert.equal(rt.total_items, 0);
    assert.equal(typeof rt.avg_relevance_score, 'number');
    for (const k of ['triage', 'phase1', 'diagnostics']) assert.ok(sc[k] && typeof sc[k] === 'object', k);
  });

  it('recall on an empty store: {nodes: []} in structuredContent and as JSON text', async () => {
    const r = await call('recall', { text: 'which vector store did we pick?', k: 3 });
    assert.equal(r.isError, false, r.content[0].text);
    assert.deepEqual(r.structuredContent, { nodes: [] });
    assert.deepEqual(JSON.parse(r.content[0].text!), { nodes: [] });
  });

  it('recall_context on an empty store: the literal no-match text, used_items/used_tokens 0', async () => {
    const r = await call('recall_context', { query: 'recent decisions' });
    assert.equal(r.isError, false, r.content[0].text);
    assert.equal(r.content[0].text, '### XMemo Context\nItems: 0\nNo matching XMemo memory was found.');
    const pack = textPack(r);
    assert.equal(pack.used_items, 0);
    assert.equal(pack.used_tokens, 0);
  });

  it('get_observations on an empty store: a missing id is a tool error for every source', async () => {
    for (const source of [undefined, 'memory', 'observation', 'session_summary']) {
      const r = await call('get_observations', source ? { ids: [1], source } : { ids: [1] });
      assert.equal(r.isError, true, `${source}: ${r.content[0].text}`);
    }
  });

  it('retrieve_memory called without any arguments object: invalid_arguments in structuredContent', async () => {
    const r = await call('retrieve_memory');
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent?.status, 'error', r.content[0].text);
    assert.equal(r.structuredContent?.error_code, 'invalid_arguments');
    assert.equal(typeof r.structuredContent?.error_message, 'string');
  });
});

describe('contract: defaults, bounds and records without optional data', function () {
  this.timeout(180_000);
  let seeded: Awaited<ReturnType<typeof seed>>;
  const h = httpToolHarness({
    fill: async (engine) => {
      seeded = await seed(engine, SCOPE, OTHER);
      // Many records matching one query, to see defaults bite.
      await engine.observe(
        Array.from({ length: 18 }, (_, i) => ({ type: 'note', title: `Kafka consumer tuning step ${i}`, narrative: `Kafka consumer lag tuning, partition rebalance, step ${i}: raised max.poll.records to ${100 + i}.` })),
        SCOPE,
      );
      await engine.flush();
    },
  });
  const { call, assertValid } = h;

  it('recall: default k is 10', async () => {
    const r = await call('recall', { text: 'Kafka consumer lag tuning partition rebalance' });
    assert.equal(r.isError, false, r.content[0].text);
    const nodes = r.structuredContent!.nodes as Array<{ node_id: string; distance: number }>;
    assert.equal(nodes.length, 10);
    for (const n of nodes) assert.match(n.node_id, UUID);
    assert.deepEqual(JSON.parse(r.content[0].text!), r.structuredContent);
  });

  it('recall_context: defaults max_items 8 / max_tokens 1500', async () => {
    const r = await call('recall_context', { query: 'Kafka consumer lag tuning partition rebalance' });
    assert.equal(r.isError, false, r.content[0].text);
    const lines = r.content[0].text!.split('\n');
    assert.equal(lines[0], '### XMemo Context');
    assert.equal(lines[1], 'Items: 8');
    assert.match(lines[2], /^Budget: /);
    const b = textPack(r).budget!;
    assert.equal(b.max_items, 8);
    assert.equal(b.max_tokens, 1500);
    assert.equal(lines.filter((l) => l.startsWith('Reference: ')).length, 8);
  });

  it('recall_context: the boundary values 1/50 and 1/12000 are accepted, and the body stays within max_tokens', async () => {
    for (const [mi, mt] of [[1, 1], [50, 12000], [50, 1], [1, 12000]] as const) {
      const r = await call('recall_context', { query: 'Kafka consumer tuning', max_items: mi, max_tokens: mt });
      assert.equal(r.isError, false, `${mi}/${mt}: ${r.content[0].text}`);
      const sc = textPack(r);
      assert.ok(sc.used_items <= mi);
      assert.ok(sc.used_tokens <= mt, `${mi}/${mt}: used ${sc.used_tokens}`);
      const text = r.content[0].text!;
      const n = Number(/^Items: (\d+)$/m.exec(text)![1]);
      assert.equal(n, sc.used_items);
      assert.equal(text.split('\n').filter((l) => l.startsWith('Reference: ')).length, n);
      if (n > 0) {
        const body = text.slice(text.indexOf('\nContext:\n') + '\nContext:\n'.length);
        assert.ok(countTokens(body) <= mt, `${mi}/${mt}: body has ${countTokens(body)} tokens`);
      }
    }
  });

  it('get_observations: the project filter naming the caller\'s own project returns the record', async () => {
    const r = await call('get_observations', { ids: [seeded.memoryId], project: SCOPE.project });
    assert.equal(r.isError, false, r.content[0].text);
    assertValid('get_observations', r);
    const r2 = await call('get_observations', { ids: [seeded.observationIds[0]], source: 'observation', project: SCOPE.project });
    assert.equal(r2.isError, false, r2.content[0].text);
  });

  it('get_observations: a memory stored without optional data validates against the published schema', async () => {
    const m = await h.engine.remember({ title: 'Ünïcödé 🎉 title', text: `Long body ${'naïve café 日本語 🎉 '.repeat(1100)}` }, SCOPE);
    const r = await call('get_observations', { ids: [m.id] });
    assert.equal(r.isError, false, r.content[0].text);
    assertValid('get_observations', r);
    const d = (r.structuredContent!.details as Array<Record<string, unknown>>)[0];
    assert.equal(d.title, m.title);
    assert.equal(d.text, m.text, 'complete details: text returned in full');
    assert.equal(d.project, SCOPE.project);
  });

  it('get_observations: an observation with only a type validates against the published schema', async () => {
    const [o] = await h.engine.observe([{ type: 'terminal' }], SCOPE);
    await h.engine.flush();
    const r = await call('get_observations', { ids: [o.id], source: 'observation' });
    assert.equal(r.isError, false, r.content[0].text);
    assertValid('get_observations', r);
    const d = (r.structuredContent!.details as Array<Record<string, unknown>>)[0];
    assert.equal(d.id, o.id);
    assert.equal(d.type, 'terminal');
    assert.equal(typeof d.memory_session_id, 'string');
    assert.equal(typeof d.created_at, 'string');
  });

  it('retrieve_memory: avg_relevance_score is the average of the returned facts\' relevance, facts ranked', async () => {
    const r = await call('retrieve_memory', { prompt: 'Kafka consumer lag tuning' });
    assert.equal(r.isError, false);
    assertValid('retrieve_memory', r);
    const rt = r.structuredContent!.retrieval as { facts: Array<{ relevance_score: number }>; avg_relevance_score: number; total_items: number };
    assert.ok(rt.facts.length > 0);
    const mean = rt.facts.reduce((s, f) => s + f.relevance_score, 0) / rt.facts.length;
    assert.ok(Math.abs(mean - rt.avg_relevance_score) <= 0.01, `${mean} vs ${rt.avg_relevance_score}`);
    for (let i = 1; i < rt.facts.length; i++) assert.ok(rt.facts[i - 1].relevance_score >= rt.facts[i].relevance_score, JSON.stringify(rt.facts.map((f) => f.relevance_score)));
    for (const f of rt.facts) assert.ok(f.relevance_score >= 0 && f.relevance_score <= 1);
  });

  it('recall: whitespace-only and unicode-only text are served (no internal_error)', async () => {
    for (const text of ['   ', '🎉🎉', '日本語のテキスト']) {
      const r = await call('recall', { text });
      assert.equal(r.isError, false, `${JSON.stringify(text)}: ${r.content[0].text}`);
    }
  });

  it('recall_context: whitespace-only and unicode-only query are served (no internal_error)', async () => {
    for (const query of ['   ', '🎉🎉', '日本語のテキスト']) {
      const r = await call('recall_context', { query });
      assert.equal(r.isError, false, `${JSON.stringify(query)}: ${r.content[0].text}`);
      assert.match(r.content[0].text!, /^### XMemo Context\nItems: \d+\n/);
    }
  });
});
