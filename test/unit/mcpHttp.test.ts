import * as assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { importGitHistory } from '../../src/core/capture/gitImport';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { makeGitRepo, openTestEngine, removeDir, seed } from './mcpFixture';
import type { TestRepo } from './mcpFixture';
import { textPack } from './textPack';

const scope: Scope = { project: 'github.com/acme/app' };
const other: Scope = { project: 'github.com/evil/other' };

type CallResult = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };

async function connect(server: RunningHttpServer, token = server.token): Promise<Client> {
  const client = new Client({ name: 'code-memory-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return client;
}

describe('MCP over Streamable HTTP (SDK client)', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  let server: RunningHttpServer;
  let client: Client;
  let repo: TestRepo;
  let seeded: Awaited<ReturnType<typeof seed>>;
  let tools: Awaited<ReturnType<Client['listTools']>>['tools'];

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    seeded = await seed(engine, scope, other);
    repo = makeGitRepo();
    const imported = await importGitHistory(engine, repo.dir, { scope });
    assert.equal(imported.imported, 3);
    await engine.flush();
    server = await startHttpServer({ engine, scope });
    client = await connect(server);
    tools = (await client.listTools()).tools;
  });
  after(async () => {
    await client?.close();
    await server?.close();
    await engine?.close();
    removeDir(dir);
    removeDir(repo.dir);
  });

  it('listens on 127.0.0.1 at /v1/mcp/memory on a random port', () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/v1\/mcp\/memory$/);
    assert.ok(server.port > 0);
  });

  it('lists the four contract tools and the write tools with schemas and explicit annotations', () => {
    const byName = new Map(tools.map((t) => [t.name, t]));
    assert.deepEqual([...byName.keys()].sort(), ['get_observations', 'observe', 'recall', 'recall_context', 'remember', 'retrieve_memory']);
    const hints = (name: string) => {
      const a = byName.get(name)?.annotations ?? {};
      return [a.readOnlyHint, a.destructiveHint, a.idempotentHint, a.openWorldHint];
    };
    assert.deepEqual(hints('recall'), [true, false, true, false]);
    assert.deepEqual(hints('recall_context'), [true, false, true, false]);
    assert.deepEqual(hints('retrieve_memory'), [true, false, false, false]);
    assert.deepEqual(hints('get_observations'), [false, true, false, false]);
    assert.equal(hints('remember')[0], false);
    assert.equal(hints('observe')[0], false);
    for (const t of tools) {
      // recall_context's public profile answers with text, not a structured object (its page).
      if (t.name === 'recall_context') assert.equal(t.outputSchema, undefined, 'recall_context publishes an outputSchema');
      else assert.ok(t.outputSchema, `${t.name} has no outputSchema`);
      assert.equal(t.inputSchema.additionalProperties, false, `${t.name} accepts unknown arguments`);
    }
    const rm = byName.get('retrieve_memory')!;
    assert.deepEqual(Object.keys(rm.inputSchema.properties ?? {}).sort(), ['prompt', 'session_id']);
    assert.deepEqual(rm.inputSchema.required, ['prompt']);
    assert.equal((rm.inputSchema.properties as Record<string, { maxLength?: number }>).prompt.maxLength, 8000);
    const rc = byName.get('recall_context')!.inputSchema.properties as Record<string, { default?: number; minimum?: number; maximum?: number }>;
    assert.deepEqual([rc.max_items.default, rc.max_items.minimum, rc.max_items.maximum], [8, 1, 50]);
    assert.deepEqual([rc.max_tokens.default, rc.max_tokens.minimum, rc.max_tokens.maximum], [1500, 1, 12000]);
    const r = byName.get('recall')!.inputSchema.properties as Record<string, { default?: number; minimum?: number }>;
    assert.deepEqual([r.k.default, r.k.minimum], [10, 1]);
    const go = byName.get('get_observations')!.outputSchema as { title?: string; $defs?: Record<string, unknown> };
    assert.equal(go.title, 'ObservationDetailsOutput');
    assert.deepEqual(Object.keys(go.$defs ?? {}).sort(), ['CompressedObservationSourceOutput', 'DetailOutput', 'MemoryDetailOutput', 'MemoryTemporalFactOutput', 'ObservationDetailOutput', 'SessionSummaryDetailOutput', 'TopicTraceOutput']);
  });

  // The client validates structuredContent against each tool's published outputSchema itself;
  // this checks it once more with a fresh validator so a skipped check cannot pass silently.
  function assertValid(name: string, result: CallResult): void {
    const schema = tools.find((t) => t.name === name)!.outputSchema!;
    const check = new AjvJsonSchemaValidator().getValidator(schema as never)(result.structuredContent);
    assert.ok(check.valid, `${name}: ${check.errorMessage}`);
  }

  it('retrieve_memory: markdown report plus the contract structuredContent, and finds imported commits', async () => {
    const result = (await client.callTool({ name: 'retrieve_memory', arguments: { prompt: 'When did we add exponential backoff for failed uploads?', session_id: 'thread-http' } })) as CallResult;
    assert.equal(result.isError, false);
    assertValid('retrieve_memory', result);
    const sc = result.structuredContent!;
    for (const key of ['status', 'memory_ready', 'readiness_state', 'content_text', 'triage', 'phase1', 'retrieval', 'diagnostics']) assert.ok(key in sc, key);
    assert.equal(sc.content_text, result.content[0].text);
    const retrieval = sc.retrieval as { facts: Array<{ statement: string; source_path: string }> };
    const commitFact = retrieval.facts.slice(0, 3).find((f) => f.statement.includes(repo.shas.retry.slice(0, 12)));
    assert.ok(commitFact, JSON.stringify(retrieval.facts.slice(0, 3)));
    assert.match(commitFact.statement, /exponential backoff/i);
  });

  it('retrieve_memory: without session_id, the prompts are kept under the Mcp-Session-Id of the handshake, one per user account', async () => {
    const transport = client.transport as StreamableHTTPClientTransport;
    assert.match(transport.sessionId ?? '', /^[0-9a-f-]{36}$/);
    await client.callTool({ name: 'retrieve_memory', arguments: { prompt: 'Where is the CSV parser?' } });
    await client.callTool({ name: 'retrieve_memory', arguments: { prompt: 'and who wrote it?' } });
    assert.deepEqual(await engine.recentPrompts(scope, transport.sessionId!, 5), ['and who wrote it?', 'Where is the CSV parser?']);
    // A second handshake of the same account gets the same session and goes on with its prompts.
    const second = await connect(server);
    try {
      assert.equal((second.transport as StreamableHTTPClientTransport).sessionId, transport.sessionId);
      const followUp = (await second.callTool({ name: 'retrieve_memory', arguments: { prompt: 'and why was it written?' } })) as CallResult;
      assert.equal((followUp.structuredContent?.triage as { rewritten_query: string }).rewritten_query, 'and why was it written? (follow-up to: and who wrote it? / Where is the CSV parser?)');
    } finally {
      await second.close();
    }
  });

  it('retrieve_memory: unknown arguments are invalid_arguments in structuredContent', async () => {
    const result = (await client.callTool({ name: 'retrieve_memory', arguments: { prompt: 'x', mode: 'deep' } })) as CallResult;
    assert.equal(result.isError, true);
    assertValid('retrieve_memory', result);
    assert.equal(result.structuredContent?.status, 'error');
    assert.equal(result.structuredContent?.error_code, 'invalid_arguments');
  });

  it('recall_context: the literal text pack for questions about the imported commits', async () => {
    const result = (await client.callTool({ name: 'recall_context', arguments: { query: 'dark mode in settings', max_items: 3, max_tokens: 400 } })) as CallResult;
    const { text, used_items } = textPack(result);
    assert.ok(text.startsWith('### XMemo Context\nItems: '), text);
    assert.match(text, /\nReference: [0-9a-f-]{36} \| Type: commit \| Location: src\/ui\/theme\.css, src\/ui\/themeToggle\.ts\n/);
    assert.match(text, /\nContext:\n\[1\] Dark mode toggle in the settings page/);
    assert.ok(used_items >= 1, text);
    const bad = (await client.callTool({ name: 'recall_context', arguments: { query: 'x', max_items: 0 } })) as CallResult;
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text!, /^invalid_arguments: max_items/);
  });

  it('recall: node ids, nearest first, hydrated through GET /v1/nodes/{id} with commit SHA and files', async () => {
    const result = (await client.callTool({ name: 'recall', arguments: { text: 'CSV line parser for the import wizard', k: 3 } })) as CallResult;
    assertValid('recall', result);
    const nodes = (result.structuredContent as { nodes: Array<{ node_id: string; distance: number }> }).nodes;
    assert.ok(nodes.length >= 1 && nodes.length <= 3);
    assert.deepEqual(JSON.parse(result.content[0].text!), result.structuredContent);
    const res = await fetch(`${server.baseUrl}/v1/nodes/${nodes[0].node_id}`, { headers: { Authorization: `Bearer ${server.token}` } });
    assert.equal(res.status, 200);
    const node = (await res.json()) as { cell: { commit_sha: string; files: string }; source: { commit_sha: string; files_modified: string } };
    assert.equal(node.cell.commit_sha, repo.shas.parser);
    assert.equal(node.source.commit_sha, repo.shas.parser);
    assert.match(node.source.files_modified, /src\/parser\/csvParser\.ts/);
  });

  it('get_observations: details per the contract schema; missing ids are tool errors', async () => {
    const result = (await client.callTool({ name: 'get_observations', arguments: { ids: [seeded.observationIds[0]], source: 'observation' } })) as CallResult;
    assert.equal(result.isError, false);
    assertValid('get_observations', result);
    const missing = (await client.callTool({ name: 'get_observations', arguments: { ids: [seeded.otherId], source: 'observation' } })) as CallResult;
    assert.equal(missing.isError, true);
    assert.match(missing.content[0].text!, /^not_found/);
    const unknown = (await client.callTool({ name: 'get_observations', arguments: { ids: [1], source: 'diary' } })) as CallResult;
    assert.equal(unknown.isError, true);
    assert.match(unknown.content[0].text!, /^invalid_source/);
  });

  it('remember and observe write, and REST lists the request log and ingests observations', async () => {
    const m = (await client.callTool({ name: 'remember', arguments: { title: 'Use pnpm', text: 'The team uses pnpm workspaces.', memory_type: 'convention' } })) as CallResult;
    assertValid('remember', m);
    const auth = { Authorization: `Bearer ${server.token}` };
    const posted = await fetch(`${server.baseUrl}/v1/observations`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ observations: [{ type: 'terminal', title: 'Ran the migration script' }] }) });
    assert.equal(posted.status, 201);
    assert.equal(((await posted.json()) as { stored: number }).stored, 1);
    const log = await fetch(`${server.baseUrl}/v1/dev/mcp-requests?limit=5`, { headers: auth });
    assert.equal(log.status, 200);
    const { requests } = (await log.json()) as { requests: Array<{ tool: string; arguments: string; response: string }> };
    assert.ok(requests.some((r) => r.tool === 'retrieve_memory' && r.arguments.includes('exponential backoff') && r.response.includes('"status":"ok"')));
  });

  it('REST: health, method and limit checks, unknown routes', async () => {
    const auth = { Authorization: `Bearer ${server.token}` };
    const health = await fetch(`${server.baseUrl}/v1/health`, { headers: auth });
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { project: string }).project, scope.project);
    assert.equal((await fetch(server.url, { headers: auth })).status, 405);
    assert.equal((await fetch(`${server.baseUrl}/v1/dev/mcp-requests?limit=0`, { headers: auth })).status, 400);
    assert.equal((await fetch(`${server.baseUrl}/v1/observations`, { headers: auth })).status, 405);
    assert.equal((await fetch(`${server.baseUrl}/v1/elsewhere`, { headers: auth })).status, 404);
  });

  it('stateless Streamable HTTP: the POST checks, notifications, batches, a client that leaves', async () => {
    const post = (body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
      fetch(server.url, {
        method: 'POST',
        signal,
        headers: { Authorization: `Bearer ${server.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
    const refused = async (response: Response, status: number, pattern: RegExp) => {
      assert.equal(response.status, status);
      const body = (await response.json()) as { jsonrpc: string; error: { message: string }; id: null };
      assert.equal(body.id, null);
      assert.match(body.error.message, pattern);
    };
    await refused(await post(ping(1), { accept: 'text/html' }), 406, /Not Acceptable/);
    // This server answers with JSON only: a plain JSON client (no Accept, any type, JSON alone) is served.
    for (const accept of [undefined, '*/*', 'application/json', 'application/json; charset=utf-8']) {
      const headers: Record<string, string> = { Authorization: `Bearer ${server.token}`, 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18' };
      if (accept !== undefined) headers.accept = accept;
      const served = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify(ping(3)) });
      assert.equal(served.status, 200, `accept ${accept}`);
      assert.deepEqual(await served.json(), { jsonrpc: '2.0', id: 3, result: {} });
    }
    await refused(await post(ping(1), { 'content-type': 'text/plain' }), 415, /Unsupported Media Type/);
    await refused(await post(ping(1), { 'mcp-protocol-version': '1999-01-01' }), 400, /Unsupported protocol version: 1999-01-01/);
    await refused(await post({ hello: 'world' }), 400, /Invalid JSON-RPC message/);
    await refused(await post(Array.from({ length: 101 }, (_, i) => ping(i))), 400, /Batch must not exceed 100/);
    await refused(await post('{"jsonrpc":'), 400, /Parse error: the request body is not valid JSON/);
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    await refused(await post([initialize, ping(2)]), 400, /Only one initialization request/);

    const notified = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(notified.status, 202);
    assert.equal(await notified.text(), '');

    const one = await post(ping(7));
    assert.equal(one.status, 200);
    assert.match(one.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(await one.json(), { jsonrpc: '2.0', id: 7, result: {} });

    // A batch: the requests' answers in one array, the notification among them unanswered.
    const batch = await post([ping(8), { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 'nine', method: 'tools/call', params: { name: 'get_observations', arguments: { ids: [seeded.observationIds[0]], source: 'observation' } } }]);
    assert.equal(batch.status, 200);
    const answers = (await batch.json()) as Array<{ id: number | string; result: { isError?: boolean } }>;
    assert.deepEqual(answers.map((a) => a.id).sort(), [8, 'nine'].sort());
    assert.equal(answers.find((a) => a.id === 'nine')!.result.isError, false);

    // A client that goes away before its answer leaves the server answering the next one.
    const aborted = new AbortController();
    const leaving = post({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'recall', arguments: { text: 'retry backoff' } } }, {}, aborted.signal);
    aborted.abort();
    await assert.rejects(leaving, { name: 'AbortError' });
    assert.deepEqual(await (await post(ping(11))).json(), { jsonrpc: '2.0', id: 11, result: {} });
  });
});
