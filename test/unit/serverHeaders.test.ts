// Every answer of the loopback server is kept by no cache and sniffed by no browser:
// Cache-Control: no-store and X-Content-Type-Options: nosniff on the MCP answers the SDK's
// transport writes (200, 202, its own 406), on REST answers and refusals, and on the errors
// written straight to the socket. A real engine on LanceDB in a temp folder, a real server.

import * as assert from 'node:assert/strict';
import { request } from 'node:http';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { raw } from './fixtures/rawHttp';
import { openTestEngine, removeDir, seed } from './mcpFixture';

const SCOPE: Scope = { project: 'github.com/acme/app' };
const OTHER: Scope = { project: 'github.com/evil/other' };

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(s: RunningHttpServer, o: { method?: string; path?: string; headers?: Record<string, string>; body?: string }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: s.port, method: o.method ?? 'GET', path: o.path ?? '/v1/health', headers: { host: `127.0.0.1:${s.port}`, authorization: `Bearer ${s.token}`, ...o.headers }, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    if (o.body !== undefined) req.write(o.body);
    req.end();
  });
}

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const rpc = (method: string, params: unknown, id = 1): string => JSON.stringify({ jsonrpc: '2.0', id, method, params });
const mcp = (s: RunningHttpServer, body: string, headers: Record<string, string> = {}): Promise<Reply> => send(s, { method: 'POST', path: '/v1/mcp/memory', headers: { ...MCP_HEADERS, ...headers }, body });

/** What is wrong with an answer's caching and sniffing headers, if anything. */
function headerProblems(name: string, r: { status: number; headers: Record<string, string | string[] | undefined> }): string[] {
  const wrong: string[] = [];
  if (r.headers['cache-control'] !== 'no-store') wrong.push(`${name} (${r.status}): cache-control ${String(r.headers['cache-control'])}`);
  if (r.headers['x-content-type-options'] !== 'nosniff') wrong.push(`${name} (${r.status}): x-content-type-options ${String(r.headers['x-content-type-options'])}`);
  return wrong;
}

describe('loopback server answers: Cache-Control no-store and X-Content-Type-Options nosniff on every one', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  let server: RunningHttpServer;

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    await seed(engine, SCOPE, OTHER);
    server = await startHttpServer({ engine, scope: SCOPE });
  });
  after(async () => {
    await server?.close();
    await engine?.close();
    if (dir) removeDir(dir);
  });

  it('MCP answers the transport writes: initialize, tools/list, tools/call (200), a notification (202), a refused Accept (406)', async () => {
    const cases: Array<[string, number, Reply]> = [
      ['initialize', 200, await mcp(server, rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } }))],
      ['tools/list', 200, await mcp(server, rpc('tools/list', {}))],
      ['tools/call recall', 200, await mcp(server, rpc('tools/call', { name: 'recall', arguments: { text: 'LanceDB' } }))],
      ['notification', 202, await mcp(server, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))],
      ['Accept text/html', 406, await mcp(server, rpc('tools/list', {}), { accept: 'text/html' })],
    ];
    const wrong: string[] = [];
    for (const [name, status, r] of cases) {
      if (r.status !== status) wrong.push(`${name}: status ${r.status} (want ${status}) ${r.body.slice(0, 100)}`);
      wrong.push(...headerProblems(name, r));
    }
    assert.deepEqual(wrong, []);
    // The transport's own headers stay: the initialize answer still hands out its session id.
    assert.ok(cases[0][2].headers['mcp-session-id'], 'initialize lost its Mcp-Session-Id');
    assert.match(String(cases[1][2].headers['content-type']), /^application\/json/);
  });

  it('REST answers and refusals: 200, 401, 403, 404, 400, 405 (MCP GET), 413', async () => {
    const p = server.port;
    const cases: Array<[string, Reply]> = [
      ['health', await send(server, {})],
      ['no token', await send(server, { headers: { authorization: '' } })],
      ['foreign host', await send(server, { headers: { host: `evil.com:${p}` } })],
      ['no route', await send(server, { path: '/nope' })],
      ['bad node id', await send(server, { path: '/v1/nodes/zz' })],
      ['unknown node', await send(server, { path: '/v1/nodes/6f9619ff-8b86-d011-b42d-00cf4fc964ff' })],
      ['MCP GET', await send(server, { path: '/v1/mcp/memory', headers: MCP_HEADERS })],
      ['MCP too large', await mcp(server, `{"a":"${'x'.repeat(1024 * 1024)}"}`)],
    ];
    const wrong = cases.flatMap(([name, r]) => headerProblems(name, r));
    assert.deepEqual(cases.map(([, r]) => r.status), [200, 401, 403, 404, 400, 404, 405, 413]);
    assert.deepEqual(wrong, []);
  });

  it('errors written straight to the socket (a request HTTP cannot parse, an Expect it does not support)', async () => {
    const garbled = await raw(server.port, 'GARBLED\r\n\r\n');
    assert.equal(garbled.status, 400);
    const expect = await raw(server.port, `GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n`);
    assert.equal(expect.status, 417);
    assert.deepEqual([...headerProblems('garbled', garbled), ...headerProblems('expect', expect)], []);
  });
});
