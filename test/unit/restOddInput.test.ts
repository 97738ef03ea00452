// REST routes fed odd node ids, paths, limits and bodies: each is served or refused with a JSON
// error, never a 500; no answer names another project's data or echoes the token, and nothing
// reaches the other project; the host option binds to loopback alone.

import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { isJsonError, raw } from './fixtures/rawHttp';
import { openTestEngine, removeDir, seed } from './mcpFixture';

const scope: Scope = { project: 'github.com/acme/app' };
const other: Scope = { project: 'github.com/evil/other' };

describe('REST routes fed odd ids, paths, limits and bodies', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  let server: RunningHttpServer;
  let mine: string;
  let foreign: string;

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    await seed(engine, scope, other);
    server = await startHttpServer({ engine, scope });
    mine = (await engine.search('LanceDB vector store', { scope, limit: 1 }))[0].cell.node_id;
    foreign = (await engine.search('Secret plans', { scope: other, limit: 1 }))[0].cell.node_id;
  });
  after(async () => {
    await server?.close();
    await engine?.close();
    removeDir(dir);
  });

  /** A GET with Host and token, its target on the wire exactly as given. */
  async function get(target: string): Promise<{ status: number; body: string }> {
    const r = await raw(server.port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${server.token}\r\nConnection: close\r\n\r\n`);
    return { status: r.status, body: r.body };
  }
  /** A POST with Host, token and a JSON body. */
  const post = (target: string, body: string, headers = ''): string =>
    `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\n${headers}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;

  it("GET /v1/nodes/{id}: odd spellings of an own id are 200 or a JSON 400, never 500; another project's id in any spelling is 404 or 400 and named nowhere", async () => {
    const wrong: string[] = [];
    const enc = (s: string): string => [...s].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
    const spellings = (id: string): Array<[string, number[]]> => [
      [id, [200]],
      [id.toUpperCase(), [200]],
      [enc(id), [200]],
      [`${id}?x=1`, [200]],
      [`${id}#frag`, [200, 400]],
      [`${id}/`, [400]],
      [`${id}%00`, [400]],
      [`${id}%0a`, [400]],
      [`%20${id}`, [400]],
      [`${id};x`, [400]],
      [`/${id}`, [400]],
      [`${id}/../${id}`, [200, 400]],
      [`x/../${id}`, [200, 400]],
      [`${enc(id).replace(/%/g, '%25')}`, [400]],
      [`${id.replace(/-/g, '')}`, [400]],
      [`{${id}}`, [400]],
      [`${id}%`, [400]],
      [`${id}%zz`, [400]],
      [`${id.slice(0, -1)}\u0660`.replace('\u0660', '%D9%A0'), [400]],
    ];
    for (const [target, want] of spellings(mine)) {
      const r = await get(`/v1/nodes/${target}`);
      if (!want.includes(r.status)) wrong.push(`own /v1/nodes/${target}: ${r.status} ${r.body.slice(0, 100)} (want ${want})`);
      if (r.status >= 400 && !isJsonError(r.body)) wrong.push(`own /v1/nodes/${target}: ${r.status} no JSON error: ${r.body.slice(0, 100)}`);
    }
    for (const [target] of spellings(foreign)) {
      const r = await get(`/v1/nodes/${target}`);
      if (r.status === 200 || r.status >= 500) wrong.push(`foreign /v1/nodes/${target}: ${r.status} ${r.body.slice(0, 100)}`);
      if (/Secret plans|never be visible|evil\/other/i.test(r.body)) wrong.push(`foreign /v1/nodes/${target}: the body names the other project: ${r.body.slice(0, 160)}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('other odd paths and limits are 200, or a JSON 404 or 400, never 500, and name no other project', async () => {
    const wrong: string[] = [];
    for (const [target, want] of [
      ['/v1/health/', [404]],
      ['/v1/health?x=1', [200]],
      ['/V1/HEALTH', [404]],
      ['/v1//health', [404]],
      ['/v1/./health', [200]],
      ['/v1/%2e/health', [200, 404]],
      ['/v1/%68ealth', [404, 200]],
      ['/v1/dev/mcp-requests?limit=0050', [200]],
      ['/v1/dev/mcp-requests?limit=1000', [200]],
      ['/v1/dev/mcp-requests?limit=1001', [400]],
      ['/v1/dev/mcp-requests?limit=+5', [400]],
      ['/v1/dev/mcp-requests?limit=5%00', [400]],
      ['/v1/dev/mcp-requests?limit=5&limit=5000', [200, 400]],
      ['/v1/dev/mcp-requests?limit=', [400]],
      ['/v1/dev/mcp-requests?limit=%EF%BC%95', [400]],
      ['/v1/dev/mcp-requests?project=github.com%2Fevil%2Fother', [200, 400]],
      ['/v1/nodes/', [400]],
      ['/v1/nodes', [404]],
    ] as Array<[string, number[]]>) {
      const r = await get(target);
      if (!want.includes(r.status)) wrong.push(`${target}: ${r.status} ${r.body.slice(0, 100)} (want ${want})`);
      if (r.status >= 400 && !isJsonError(r.body)) wrong.push(`${target}: no JSON error`);
      if (/evil\/other|Secret plans/.test(r.body)) wrong.push(`${target}: names the other project: ${r.body.slice(0, 160)}`);
    }
    assert.deepEqual(wrong, []);
  });

  it("POST /v1/observations: odd bodies (no object, prototype keys, a scope, a BOM) are a JSON 400 and never reach the other project", async () => {
    const before = JSON.stringify(await engine.stats(other));
    const wrong: string[] = [];
    for (const body of [
      'null',
      '"a string"',
      '[]',
      '{}',
      '{"observations":null}',
      '{"observations":{}}',
      '{"type":"note","title":"x","__proto__":{"project":"github.com/evil/other"}}',
      '{"observations":[{"type":"note","title":"x"}],"__proto__":{"project":"github.com/evil/other"}}',
      '{"observations":[{"type":"note","title":"x","constructor":{"prototype":{"project":"github.com/evil/other"}}}]}',
      '{"type":"note","title":"x","scope":{"project":"github.com/evil/other"}}',
      '\ufeff{"type":"note","title":"x"}',
    ]) {
      const r = await raw(server.port, post('/v1/observations', body));
      if (r.status !== 400 && !(r.status === 201 && body === '[]')) wrong.push(`${body}: ${r.status} ${r.body.slice(0, 160)}`);
      else if (!isJsonError(r.body) && r.status !== 201) wrong.push(`${body}: no JSON error: ${r.body.slice(0, 100)}`);
    }
    assert.equal(JSON.stringify(await engine.stats(other)), before, "the other project's counts moved");
    assert.deepEqual(wrong, []);
  });

  it('POST /v1/observations: a dedupe_key given twice in one body is stored once and counted once, as the observe tool counts', async () => {
    const body = JSON.stringify({ observations: [{ type: 'note', title: 'rest twin one', dedupe_key: 'rest-twin' }, { type: 'note', title: 'rest twin two', dedupe_key: 'rest-twin' }] });
    const r = await raw(server.port, post('/v1/observations', body));
    assert.equal(r.status, 201, r.body);
    const out = JSON.parse(r.body) as { stored: number; ids: number[] };
    assert.equal(out.ids[0], out.ids[1]);
    assert.equal(out.stored, 1, r.body);
    assert.deepEqual((await engine.listObservations(scope, { limit: 1000 })).filter((o) => /^rest twin/.test(o.title ?? '')).map((o) => o.title), ['rest twin one']);
  });

  it('echoes no token put in a request target, and keeps none in the request log, whether sent as a REST field or a tool argument name', async () => {
    const t = server.token;
    const found: string[] = [];
    for (const target of [`/v1/nodes/${t}`, `/v1/dev/mcp-requests?limit=${t}`, `/v1/${t}`]) {
      const r = await get(target);
      if (r.body.includes(t)) found.push(`${target}: ${r.body.slice(0, 160)}`);
    }
    // The token as a field name and as a tool argument name. Their errors name the field to its
    // sender, who holds the token anyway: only the request log matters.
    await raw(server.port, post('/v1/observations', JSON.stringify({ type: 'note', [t]: 1 }).padEnd(t.length + 40)));
    await raw(server.port, post('/v1/mcp/memory', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'recall', arguments: { text: 'x', [t]: 1 } } }), 'Accept: application/json, text/event-stream\r\n'));
    const log = await get('/v1/dev/mcp-requests?limit=1000');
    if (log.body.includes(t)) found.push('the request log holds the token');
    assert.deepEqual(found, []);
  });

  it("the host option: ::1 (bracketed or not) and localhost bind and serve; 0.0.0.0, ::, '', 127.0.0.2, 'localhost.' and a mapped IPv4 are refused as loopback only", async () => {
    for (const host of ['0.0.0.0', '::', '', '127.0.0.2', 'localhost.', '[::ffff:127.0.0.1]']) {
      await assert.rejects(startHttpServer({ engine, scope, host }), /loopback only/, `host '${host}'`);
    }
    for (const host of ['::1', '[::1]', 'localhost']) {
      let s: RunningHttpServer | undefined;
      try {
        s = await startHttpServer({ engine, scope, host });
        const r = await fetch(`${s.baseUrl}/v1/health`, { headers: { authorization: `Bearer ${s.token}` } });
        assert.equal(r.status, 200, `host '${host}': ${s.baseUrl}`);
      } catch (error) {
        assert.fail(`host '${host}' (accepted as loopback by isLoopbackHost) failed: ${(error as Error).message}`);
      } finally {
        await s?.close();
      }
    }
  });
});
