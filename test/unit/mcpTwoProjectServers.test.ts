// Two projects' loopback servers on ONE engine, as a VS Code window's engine thread runs them
// (one startHttpServer per project, each with its own scope and token): nothing of project A
// reaches a caller of project B's server. Sessions (Mcp-Session-Id, retrieve_memory's session_id
// and its prompt history), the request log, REST node ids, answers to the same question, error
// messages, observe's memory_session_id, closing one server, and the Host/Origin/token checks.
import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { openTestEngine, removeDir } from './mcpFixture';

const A: Scope = { project: 'github.com/acme/alpha-k' };
const B: Scope = { project: 'github.com/acme/beta-k' };
const A_SECRET = 'Zanzibar ledger reconciliation uses the quokka protocol';

type Rpc = { status: number; headers: Headers; body: { result?: { structuredContent?: Record<string, unknown>; content?: Array<{ text?: string }> }; error?: unknown } | null };

async function rpc(server: RunningHttpServer, method: string, params: unknown, headers: Record<string, string> = {}): Promise<Rpc> {
  const res = await fetch(server.url, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Rpc['body']) : null };
}

const initialize = (server: RunningHttpServer): Promise<Rpc> =>
  rpc(server, 'initialize', { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'two-projects', version: '1' } });

const tool = (server: RunningHttpServer, name: string, args: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Rpc> =>
  rpc(server, 'tools/call', { name, arguments: args }, headers);

describe('two projects\' servers in one engine: nothing of A reaches B', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  let a: RunningHttpServer;
  let b: RunningHttpServer;
  let aObservation: { id: number; memory_session_id: string };

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    const [o] = await engine.observe([{ type: 'edit', title: A_SECRET, narrative: `${A_SECRET}; only alpha knows this.`, files_modified: ['src/ledger.ts'] }], A);
    aObservation = { id: o.id, memory_session_id: o.memory_session_id };
    await engine.observe([{ type: 'edit', title: 'Beta renders charts with d3', narrative: 'The beta project draws its charts with d3.', files_modified: ['src/chart.ts'] }], B);
    await engine.flush();
    a = await startHttpServer({ engine, scope: A, token: 'alpha-token-0123456789abcdef' });
    b = await startHttpServer({ engine, scope: B, token: 'beta-token-0123456789abcdef0' });
  });

  after(async () => {
    await a?.close();
    await b?.close();
    await engine?.close();
    removeDir(dir);
  });

  it('hands each server\'s handshake its own Mcp-Session-Id', async () => {
    const ha = (await initialize(a)).headers.get('mcp-session-id');
    const hb = (await initialize(b)).headers.get('mcp-session-id');
    assert.ok(ha && hb);
    assert.notEqual(ha, hb);
  });

  it('B\'s retrieve_memory with A\'s session_id or A\'s Mcp-Session-Id sees none of A\'s prompts, and logs in B only', async () => {
    const ha = (await initialize(a)).headers.get('mcp-session-id')!;
    const aPrompt = `What did we decide about the ${A_SECRET}?`;
    const ra = await tool(a, 'retrieve_memory', { prompt: aPrompt, session_id: 'shared-thread' }, { 'mcp-session-id': ha });
    assert.equal(ra.status, 200);
    await tool(a, 'retrieve_memory', { prompt: `Where is the ${A_SECRET} configured?` }, { 'mcp-session-id': ha });
    // B, with A's session id in the argument and A's handshake id in the header.
    const rb1 = await tool(b, 'retrieve_memory', { prompt: 'and why was it changed?', session_id: 'shared-thread' }, { 'mcp-session-id': ha });
    const rb2 = await tool(b, 'retrieve_memory', { prompt: 'and who changed it?' }, { 'mcp-session-id': ha });
    for (const r of [rb1, rb2]) {
      assert.equal(r.status, 200);
      const text = JSON.stringify(r.body);
      assert.ok(!/zanzibar|quokka|ledger/i.test(text), text.slice(0, 2000));
    }
    assert.deepEqual(await engine.recentPrompts(B, 'shared-thread', 5), ['and why was it changed?']);
    assert.deepEqual(await engine.recentPrompts(B, ha, 5), ['and who changed it?']);
    const aLog = JSON.stringify(await engine.listRequests(A, 100));
    const bLog = JSON.stringify(await engine.listRequests(B, 100));
    assert.ok(!aLog.includes('and why was it changed?') && !aLog.includes('and who changed it?'), 'B\'s calls are not in A\'s log');
    assert.ok(bLog.includes('and why was it changed?') && bLog.includes('and who changed it?'), 'B\'s calls are in B\'s log');
    assert.ok(!/zanzibar|quokka/i.test(bLog), bLog.slice(0, 2000));
    // B's REST view of the request log is B's.
    const res = await fetch(`${b.baseUrl}/v1/dev/mcp-requests?limit=100`, { headers: { authorization: `Bearer ${b.token}` } });
    assert.ok(!/zanzibar|quokka/i.test(await res.text()));
  });

  it('A\'s answer to a question is not B\'s answer to the same question (no shared result)', async () => {
    const q = { prompt: `Explain the ${A_SECRET} in the ledger code` };
    const ra = await tool(a, 'retrieve_memory', q);
    assert.ok(/only alpha|src\/ledger/i.test(JSON.stringify(ra.body)), 'A finds its own record');
    for (const name of ['retrieve_memory', 'recall', 'recall_context'] as const) {
      const args = name === 'retrieve_memory' ? q : name === 'recall' ? { text: A_SECRET } : { query: A_SECRET };
      await tool(a, name, args);
      const rb = await tool(b, name, args);
      assert.equal(rb.status, 200);
      // The question itself names A's words (B echoes it); A's record's own text must not come back.
      assert.ok(!/only alpha|src\/ledger/i.test(JSON.stringify(rb.body)), `${name}: ${JSON.stringify(rb.body).slice(0, 1500)}`);
    }
  });

  it('A\'s node id and observation id asked on B: not found, and the message names nothing of A', async () => {
    const ra = await tool(a, 'recall', { text: A_SECRET, k: 5 });
    const nodes = (ra.body?.result?.structuredContent as { nodes: Array<{ node_id: string }> }).nodes;
    assert.ok(nodes.length > 0);
    for (const n of nodes) {
      const onA = await fetch(`${a.baseUrl}/v1/nodes/${n.node_id}`, { headers: { authorization: `Bearer ${a.token}` } });
      assert.equal(onA.status, 200);
      const onB = await fetch(`${b.baseUrl}/v1/nodes/${n.node_id}`, { headers: { authorization: `Bearer ${b.token}` } });
      const text = await onB.text();
      assert.equal(onB.status, 404, text);
      assert.ok(!/alpha|quokka|zanzibar/i.test(text), text);
    }
    const got = await tool(b, 'get_observations', { ids: [aObservation.id], source: 'observation' });
    assert.ok(!/quokka|zanzibar|alpha/i.test(JSON.stringify(got.body)), JSON.stringify(got.body).slice(0, 1500));
  });

  it('observe on B with A\'s memory_session_id writes into B only, and A\'s session does not grow', async () => {
    const res = await fetch(`${b.baseUrl}/v1/observations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${b.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ observations: [{ type: 'edit', title: 'Beta hijack attempt', narrative: 'written on beta with alpha\'s session id', memory_session_id: aObservation.memory_session_id }] }),
    });
    const text = await res.text();
    assert.equal(res.status, 201, text);
    assert.ok(!/quokka|zanzibar|alpha/i.test(text), text);
    await engine.flush();
    const aCheck = await tool(a, 'recall', { text: 'Beta hijack attempt', k: 20 });
    assert.ok(!/hijack/i.test(JSON.stringify(aCheck.body)), JSON.stringify(aCheck.body).slice(0, 1500));
    const ended = await engine.endSession(A, aObservation.memory_session_id, 'request');
    assert.ok(ended, 'A\'s session has a summary');
    assert.ok(!/hijack/i.test(JSON.stringify(ended)), JSON.stringify(ended).slice(0, 1500));
    const stored = await engine.getObservations([aObservation.id], B);
    assert.ok(!stored.some((o) => o.title === A_SECRET), 'A\'s observation is nothing in B');
    // A filter on A's session id, on B, finds B's own record of that id and nothing of A.
    const filtered = await tool(b, 'recall', { text: A_SECRET, k: 50, filter: { session_id: aObservation.memory_session_id } });
    for (const n of (filtered.body?.result?.structuredContent as { nodes: Array<{ node_id: string }> }).nodes) {
      const node = await (await fetch(`${b.baseUrl}/v1/nodes/${n.node_id}`, { headers: { authorization: `Bearer ${b.token}` } })).text();
      assert.ok(!/only alpha|quokka/i.test(node), node.slice(0, 800));
    }
  });

  it('B\'s writes naming A\'s dedupe key, topic key or memory id touch nothing of A', async () => {
    const [ao] = await engine.observe([{ type: 'edit', title: 'Alpha deduped record', narrative: 'only alpha: dedupe probe', dedupe_key: 'dedupe-probe-k' }], A);
    const am = await engine.remember({ title: 'Alpha topic decision', text: 'only alpha: the topic decision', memory_type: 'decision', topic_key: 'topic-probe-k' }, A);
    await engine.flush();
    const ob = await tool(b, 'observe', { observations: [{ type: 'edit', title: 'Beta deduped record', narrative: 'beta probe', dedupe_key: 'dedupe-probe-k' }] });
    const obText = JSON.stringify(ob.body);
    assert.ok(!/only alpha/i.test(obText), obText.slice(0, 1500));
    const ids = (ob.body?.result?.structuredContent as { ids: number[] }).ids;
    const [bo] = await engine.getObservations(ids, B);
    assert.ok(bo && bo.title === 'Beta deduped record', JSON.stringify(bo));
    const rb = await tool(b, 'remember', { title: 'Beta topic decision', text: 'beta: the topic decision', memory_type: 'decision', topic_key: 'topic-probe-k', supersedes: [am.id] });
    const rbText = JSON.stringify(rb.body);
    assert.ok(!/only alpha/i.test(rbText), rbText.slice(0, 1500));
    const [still] = await engine.getMemories([am.id], A, { includeSuppressed: true });
    assert.equal(still.status, 'active', JSON.stringify(still));
    for (const [id, source] of [[am.id, 'memory'], [ao.id, 'observation']] as const) {
      const got = JSON.stringify((await tool(b, 'get_observations', { ids: [id], source })).body);
      assert.ok(!/only alpha/i.test(got), got.slice(0, 1500));
    }
    const [aoStill] = await engine.getObservations([ao.id], A);
    assert.equal(aoStill.title, 'Alpha deduped record');
  });

  it('refuses A\'s token, A\'s port as Host and A\'s origin on B', async () => {
    const withA = await fetch(`${b.baseUrl}/v1/health`, { headers: { authorization: `Bearer ${a.token}` } });
    assert.equal(withA.status, 401);
    const hostA = await rawGet(b, { host: `127.0.0.1:${a.port}` });
    assert.equal(hostA, 403);
    const originA = await fetch(`${b.baseUrl}/v1/health`, { headers: { authorization: `Bearer ${b.token}`, origin: `http://127.0.0.1:${a.port}` } });
    assert.equal(originA.status, 403);
  });

  it('closing A\'s server leaves B serving, a call under way on B included', async () => {
    const under = tool(b, 'retrieve_memory', { prompt: 'How does beta render its charts with d3?' });
    await a.close();
    const rb = await under;
    assert.equal(rb.status, 200);
    const health = await fetch(`${b.baseUrl}/v1/health`, { headers: { authorization: `Bearer ${b.token}` } });
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { project: string }).project, B.project);
    const again = await tool(b, 'retrieve_memory', { prompt: 'Which library draws the beta charts?' });
    assert.equal(again.status, 200);
    assert.equal((again.body?.result?.structuredContent as { status: string }).status, 'ok');
  });
});

/** A GET /v1/health with a Host header of our choosing (fetch sets its own). */
async function rawGet(server: RunningHttpServer, headers: Record<string, string>): Promise<number> {
  const http = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, path: '/v1/health', headers: { authorization: `Bearer ${server.token}`, ...headers } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}
