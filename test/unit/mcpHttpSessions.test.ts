// Over the Streamable HTTP transport with a real MCP client: retrieve_memory's session (the handshake's
// Mcp-Session-Id unless the call names one) and request log, and pure reads that log nothing.
import * as assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { seed } from './mcpFixture';
import { OTHER, SCOPE, httpToolHarness } from './httpToolHarness';

describe('MCP over HTTP: retrieve_memory sessions and the request log', function () {
  this.timeout(120_000);
  const h = httpToolHarness({ fill: async (e) => { await seed(e, SCOPE, OTHER); } });
  const log = async (): Promise<Array<Record<string, unknown>>> => {
    const res = await fetch(new URL('/v1/dev/mcp-requests?limit=100', h.server.url), { headers: { Authorization: `Bearer ${h.server.token}` } });
    assert.equal(res.status, 200);
    return ((await res.json()) as { requests: Array<Record<string, unknown>> }).requests;
  };

  it('omitting session_id uses the handshake Mcp-Session-Id; an explicit one overrides it; the log keeps prompt and response', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(h.server.url), { requestInit: { headers: { Authorization: `Bearer ${h.server.token}` } } });
    const c = new Client({ name: 'session-client', version: '1' });
    await c.connect(transport);
    const handshake = transport.sessionId;
    const p1 = 'first prompt about the vector store';
    const r1 = (await c.callTool({ name: 'retrieve_memory', arguments: { prompt: p1 } })) as { structuredContent?: { diagnostics: { request_id: string } } };
    const p2 = 'second prompt about the tokenizer';
    await c.callTool({ name: 'retrieve_memory', arguments: { prompt: p2, session_id: 'cursor-thread-k7m2p' } });
    await c.close();
    const entries = await log();
    const e1 = entries.find((e) => JSON.stringify(e).includes(p1));
    const e2 = entries.find((e) => JSON.stringify(e).includes(p2));
    assert.ok(e1 && e2, JSON.stringify(entries).slice(0, 2000));
    assert.ok(handshake, 'the server gave the session an id');
    assert.equal(e1.session_id, handshake);
    assert.equal(e2.session_id, 'cursor-thread-k7m2p');
    assert.ok(JSON.stringify(e1).includes(r1.structuredContent!.diagnostics.request_id), 'request id in log');
  });

  it('keeps the last 5 prompts of a session', async () => {
    for (let n = 1; n <= 7; n++) await h.call('retrieve_memory', { prompt: `history prompt number ${n}`, session_id: 'history-thread' });
    await new Promise((r) => setTimeout(r, 500));
    const kept = await h.engine.recentPrompts(SCOPE, 'history-thread', 100);
    assert.equal(kept.length, 5, JSON.stringify(kept));
  });

  it('recall returns only nodes of the caller\'s project, each hydratable by GET /v1/nodes/{id}', async () => {
    const r = await h.call('recall', { text: 'Secret plans of another project about LanceDB', k: 50 });
    const nodes = (r.structuredContent as { nodes: Array<{ node_id: string }> }).nodes;
    assert.ok(nodes.length > 0);
    for (const n of nodes) {
      const res = await fetch(new URL(`/v1/nodes/${n.node_id}`, h.server.url), { headers: { Authorization: `Bearer ${h.server.token}` } });
      assert.equal(res.status, 200, n.node_id);
      const body = JSON.stringify(await res.json());
      assert.ok(!body.includes('Secret plans'), body.slice(0, 300));
    }
  });

  it('recall and recall_context leave no request-log entry and no access time (pure reads)', async () => {
    const before = (await log()).length;
    const o1 = await h.call('get_observations', { ids: [1], source: 'observation' });
    assert.equal(o1.isError, false, o1.content[0].text);
    const t1 = (o1.structuredContent as { details: Array<{ last_accessed_epoch: number | null }> }).details[0].last_accessed_epoch;
    assert.ok(typeof t1 === 'number' && Math.abs(t1 - Date.now()) < 60_000, String(t1));
    await h.call('recall', { text: 'vector store LanceDB' });
    await h.call('recall_context', { query: 'vector store LanceDB' });
    assert.equal((await log()).length, before);
  });
});
