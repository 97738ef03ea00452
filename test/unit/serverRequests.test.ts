// Odd requests to the loopback server, answered as the README and JSON-RPC 2.0 say:
// - a percent-encoded dot segment in a node id (/v1/nodes/%2e%2e) is a malformed id (400
//   invalid_node_id), not a path the URL parser shortens to another route; literal dot segments
//   still resolve (/v1/nodes/../health is /v1/health);
// - an empty JSON-RPC batch ([]) is one Invalid Request (-32600, id null) with status 400;
// - the 401 says where the token really is (serve prints the token file's path, not the token).
// A real engine on LanceDB in a temp folder, a real server, raw request targets.

import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { raw, restError } from './fixtures/rawHttp';
import { openTestEngine, removeDir, seed } from './mcpFixture';

const SCOPE: Scope = { project: 'github.com/acme/app' };
const OTHER: Scope = { project: 'github.com/evil/other' };

describe('loopback server: encoded dot segments, empty batches, the 401 message', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  let server: RunningHttpServer;
  let own: string;

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    await seed(engine, SCOPE, OTHER);
    server = await startHttpServer({ engine, scope: SCOPE });
    own = (await engine.search('LanceDB vector store', { scope: SCOPE, limit: 1 }))[0].cell.node_id;
  });
  after(async () => {
    await server?.close();
    await engine?.close();
    if (dir) removeDir(dir);
  });

  /** A request with its target on the wire exactly as given. */
  const send = (method: string, target: string, body?: string, token: string | null = server.token): ReturnType<typeof raw> =>
    raw(
      server.port,
      `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n${token === null ? '' : `Authorization: Bearer ${token}\r\n`}` +
        `${body === undefined ? '' : `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`}Connection: close\r\n\r\n${body ?? ''}`,
    );

  it('GET /v1/nodes/ with a percent-encoded dot segment is 400 invalid_node_id, in any spelling', async () => {
    const wrong: string[] = [];
    for (const id of ['%2e%2e', '%2E%2E', '.%2e', '%2e.', '%2e', '%2E', `%2e%2e?x=1`, `${own}/%2e%2e`, `%2e%2e/${own}`]) {
      const r = await send('GET', `/v1/nodes/${id}`);
      if (r.status !== 400 || restError(r.body)?.error !== 'invalid_node_id') wrong.push(`/v1/nodes/${id} -> ${r.status} ${r.body.slice(0, 120)}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('literal dot segments still resolve; an encoded one elsewhere is a path of its own', async () => {
    const cases: Array<[string, number]> = [
      ['/v1/nodes/../health', 200],
      ['/v1/./health', 200],
      [`/v1/nodes/x/../${own}`, 200],
      [`/v1/nodes/${own}`, 200],
      [`http://127.0.0.1:PORT/v1/nodes/%2e%2e`, 400],
      [`http://127.0.0.1:PORT/v1/nodes/../health`, 200],
      ['/v1/%2e%2e/v1/health', 404],
      ['/v1/nodes/..', 404],
    ];
    const wrong: string[] = [];
    for (const [target, status] of cases) {
      const r = await send('GET', target.replace('PORT', String(server.port)));
      if (r.status !== status) wrong.push(`${target} -> ${r.status} (want ${status}) ${r.body.slice(0, 100)}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('an empty batch [] is one Invalid Request: 400, -32600, id null', async () => {
    for (const body of ['[]', ' [ ] ']) {
      const r = await send('POST', '/v1/mcp/memory', body);
      assert.equal(r.status, 400, `${body} -> ${r.status} ${r.body}`);
      const answer = JSON.parse(r.body) as { jsonrpc: string; error: { code: number; message: string }; id: unknown };
      assert.equal(answer.jsonrpc, '2.0');
      assert.equal(answer.error.code, -32600);
      assert.equal(answer.id, null);
      assert.match(r.headers['content-type'], /^application\/json/);
    }
    // A batch of requests is still served.
    const two = await send('POST', '/v1/mcp/memory', `[${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' })},${JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'ping' })}]`);
    assert.equal(two.status, 200, two.body);
    assert.deepEqual((JSON.parse(two.body) as Array<{ id: number }>).map((a) => a.id).sort(), [7, 8]);
  });

  it('the 401 says where the token is: the token file serve names (server.json, --token-file), not that serve shows it', async () => {
    for (const token of [null, 'x'.repeat(43)]) {
      const r = await send('GET', '/v1/health', undefined, token);
      assert.equal(r.status, 401);
      const { message } = restError(r.body)!;
      assert.doesNotMatch(message, /shown by `code-memory serve`/);
      assert.match(message, /token file/);
      assert.match(message, /server\.json/);
      assert.match(message, /--token-file/);
      assert.match(message, /Show MCP Server Info/);
    }
  });
});
