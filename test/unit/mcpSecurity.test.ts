import * as assert from 'node:assert/strict';
import { request } from 'node:http';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { hostAllowed, originAllowed, tokenMatches } from '../../src/mcp/security';
import { openTestEngine, removeDir, seed } from './mcpFixture';

const scope: Scope = { project: 'github.com/acme/app' };
const other: Scope = { project: 'github.com/evil/other' };

interface Reply {
  status: number;
  body: string;
}

/** Raw HTTP so that Host and Origin can be set to anything (fetch forbids changing Host). */
function send(server: RunningHttpServer, options: { method?: string; path?: string; headers?: Record<string, string> | string[]; body?: string | Buffer }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: server.port, method: options.method ?? 'POST', path: options.path ?? '/v1/mcp/memory', headers: options.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' || e.code === 'EPIPE' ? resolve({ status: 413, body: 'reset after 413' }) : reject(e)));
    if (options.body) req.write(options.body);
    req.end();
  });
}

function rpc(method: string, params: unknown, id = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}

describe('MCP server security', function () {
  this.timeout(60_000);
  let engine: MemoryEngine;
  let dir: string;
  let server: RunningHttpServer;
  let seeded: Awaited<ReturnType<typeof seed>>;

  const good = (): Record<string, string> => ({
    host: `127.0.0.1:${server.port}`,
    authorization: `Bearer ${server.token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  });

  async function counts(): Promise<string> {
    const s = await engine.stats(null);
    const requests = await engine.listRequests(scope, 1000);
    return JSON.stringify([s.observations, s.session_summaries, s.memories, s.cells, requests.length]);
  }

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    seeded = await seed(engine, scope, other);
    server = await startHttpServer({ engine, scope, maxBodyBytes: 64 * 1024 });
  });
  after(async () => {
    await server?.close();
    await engine?.close();
    removeDir(dir);
  });

  it('answers a well-formed call (the baseline the refusals below differ from)', async () => {
    const r = await send(server, { headers: good(), body: rpc('tools/call', { name: 'recall', arguments: { text: 'LanceDB' } }) });
    assert.equal(r.status, 200, r.body);
    assert.match(r.body, /"nodes"/);
  });

  it('refuses every request without the right token (401), changing nothing', async () => {
    const before = await counts();
    const body = rpc('tools/call', { name: 'remember', arguments: { title: 't', text: 'should never be stored' } });
    for (const authorization of [undefined, '', 'Bearer', `Bearer ${server.token}x`, `Bearer ${server.token.slice(0, -1)}`, `Basic ${server.token}`, server.token, `Bearer  ${'a'.repeat(5000)}`]) {
      const headers = good();
      if (authorization === undefined) delete headers.authorization;
      else headers.authorization = authorization;
      const r = await send(server, { headers, body });
      assert.equal(r.status, 401, `${authorization}: ${r.body}`);
    }
    for (const path of ['/v1/nodes/00000000-0000-0000-0000-000000000000', '/v1/dev/mcp-requests', '/v1/observations', '/v1/health']) {
      const r = await send(server, { method: path === '/v1/observations' ? 'POST' : 'GET', path, headers: { host: `127.0.0.1:${server.port}` }, body: path === '/v1/observations' ? '{"type":"note"}' : undefined });
      assert.equal(r.status, 401, path);
    }
    assert.equal(await counts(), before);
  });

  it('refuses foreign Origin and Host headers (403) even with the token, changing nothing', async () => {
    const before = await counts();
    const body = rpc('tools/call', { name: 'remember', arguments: { title: 't', text: 'should never be stored' } });
    for (const origin of ['https://evil.example', 'http://127.0.0.1.evil.example', 'null', 'file://', 'http://192.168.1.4:3000']) {
      const r = await send(server, { headers: { ...good(), origin }, body });
      assert.equal(r.status, 403, origin);
    }
    for (const host of ['evil.example', `evil.example:${server.port}`, `127.0.0.1:${server.port + 1}`, '10.0.0.1', `localhost.evil.example:${server.port}`]) {
      const r = await send(server, { headers: { ...good(), host }, body });
      assert.equal(r.status, 403, host);
    }
    const ok = await send(server, { headers: { ...good(), origin: `http://localhost:${server.port}`, host: `localhost:${server.port}` }, body: rpc('tools/list', {}) });
    assert.equal(ok.status, 200);
    assert.equal(await counts(), before);
  });

  it('refuses a second Host or Authorization line (400) whichever comes first, changing nothing', async () => {
    const before = await counts();
    const body = rpc('tools/call', { name: 'remember', arguments: { title: 't', text: 'should never be stored' } });
    const rest = ['content-type', 'application/json', 'accept', 'application/json, text/event-stream'];
    const own = `127.0.0.1:${server.port}`;
    const bearer = `Bearer ${server.token}`;
    for (const headers of [
      ['host', own, 'host', 'evil.example', 'authorization', bearer],
      ['host', 'evil.example', 'host', own, 'authorization', bearer],
      ['host', own, 'authorization', bearer, 'authorization', 'Bearer other'],
      ['host', own, 'authorization', 'Bearer other', 'authorization', bearer],
    ]) {
      const r = await send(server, { headers: [...headers, ...rest], body });
      assert.equal(r.status, 400, headers.join(' '));
    }
    assert.equal((await send(server, { headers: ['host', own, 'authorization', bearer, ...rest], body: rpc('tools/list', {}) })).status, 200);
    assert.equal(await counts(), before);
  });

  it('refuses oversized bodies (413), changing nothing', async () => {
    const before = await counts();
    const big = rpc('tools/call', { name: 'remember', arguments: { title: 'big', text: 'x'.repeat(100 * 1024) } });
    const r = await send(server, { headers: good(), body: big });
    assert.equal(r.status, 413);
    const rest = await send(server, { path: '/v1/observations', headers: good(), body: JSON.stringify({ type: 'note', narrative: 'y'.repeat(100 * 1024) }) });
    assert.equal(rest.status, 413);
    assert.equal(await counts(), before);
  });

  it('rejects unknown tool arguments, hostile filters and hostile ids with their errors, changing nothing', async () => {
    const before = await counts();
    const call = async (name: string, args: unknown) => {
      const r = await send(server, { headers: good(), body: rpc('tools/call', { name, arguments: args }) });
      assert.equal(r.status, 200);
      return (JSON.parse(r.body) as { result: { isError: boolean; content: Array<{ text: string }>; structuredContent?: Record<string, unknown> } }).result;
    };
    const rm = await call('retrieve_memory', { prompt: 'x', project: other.project });
    assert.equal(rm.isError, true);
    assert.equal(rm.structuredContent?.error_code, 'invalid_arguments');
    for (const [name, args] of [
      ['recall', { text: 'x', filter: { project: other.project } }],
      ['recall', { text: 'x', filter: { type: "x') OR 1=1 --" } }],
      ['recall', { text: 'x', filter: { commit_sha: "' OR ''='" } }],
      ['recall', { text: 'x', k: -1 }],
      ['recall_context', { query: 'x', max_items: 1000 }],
      ['get_observations', { ids: ['1; DROP TABLE observations'] }],
      ['get_observations', { ids: [seeded.otherId], source: 'observation' }],
      ['get_observations', { ids: [1], source: "memory' OR 1=1" }],
      ['remember', { title: 't', text: 'x', project: other.project }],
      ['observe', { observations: [{ type: 'note', title: 'x' }], scope: other }],
    ] as const) {
      const result = await call(name, args);
      assert.equal(result.isError, true, `${name} ${JSON.stringify(args)}`);
      assert.match(result.content[0].text, /^(invalid_arguments|not_found|invalid_source):/, result.content[0].text);
    }
    for (const id of ['..%2F..%2Fetc%2Fpasswd', encodeURIComponent("x' OR '1'='1"), '00000000-0000-0000-0000-00000000000g']) {
      const r = await send(server, { method: 'GET', path: `/v1/nodes/${id}`, headers: good() });
      assert.equal(r.status, 400, id);
    }
    const foreignNode = (await engine.search('Secret plans', { scope: other, limit: 1 }))[0].cell.node_id;
    assert.equal((await send(server, { method: 'GET', path: `/v1/nodes/${foreignNode}`, headers: good() })).status, 404);
    assert.equal((await send(server, { path: '/v1/observations', headers: good(), body: JSON.stringify({ type: 'note', project: other.project }) })).status, 400);
    assert.equal((await send(server, { path: '/v1/observations', headers: good(), body: '{not json' })).status, 400);
    // retrieve_memory logs even refused calls; only that log line may change.
    const after = JSON.parse(await counts()) as number[];
    const was = JSON.parse(before) as number[];
    assert.deepEqual(after.slice(0, 4), was.slice(0, 4));
    assert.equal(after[4], was[4] + 1);
  });

  it('only binds to loopback', async () => {
    await assert.rejects(startHttpServer({ engine, scope, host: '0.0.0.0' }), /loopback only/);
  });

  it('guards: host, origin and token checks', () => {
    assert.ok(hostAllowed('127.0.0.1:8080', 8080));
    assert.ok(hostAllowed('[::1]:8080', 8080));
    assert.ok(!hostAllowed('127.0.0.1:8081', 8080));
    assert.ok(!hostAllowed(undefined, 8080));
    assert.ok(originAllowed(undefined, 8080));
    assert.ok(originAllowed('http://127.0.0.1:8080', 8080));
    assert.ok(originAllowed('http://[::1]:8080', 8080));
    assert.ok(!originAllowed('vscode-webview://abc', 8080));
    // A page of another local web server is another origin.
    assert.ok(!originAllowed('http://127.0.0.1:1', 8080));
    assert.ok(!originAllowed('http://localhost', 8080));
    assert.ok(originAllowed('http://localhost', 80));
    assert.ok(!originAllowed('http://evil.example:8080', 8080));
    assert.ok(tokenMatches('Bearer abcdefabcdefabcdef', 'abcdefabcdefabcdef'));
    assert.ok(!tokenMatches('Bearer abcdefabcdefabcdeF', 'abcdefabcdefabcdef'));
  });
});
