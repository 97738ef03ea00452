// The loopback server's Host / Origin / token guards, with raw sockets so that any
// request line and header can be sent.
import * as assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { openTestEngine, removeDir } from './mcpFixture';

const scope: Scope = { project: 'github.com/acme/app' };

interface Raw {
  status: number;
  head: string;
  body: string;
  all: string;
}

/** Writes `text` to a fresh socket and reads until the server closes it or `ms` pass. */
function raw(port: number, text: string | Buffer, ms = 1500): Promise<Raw[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (data += d));
    const done = () => {
      socket.destroy();
      const replies: Raw[] = [];
      for (const m of data.split(/(?=HTTP\/1\.[01] \d{3})/)) {
        const match = /^HTTP\/1\.[01] (\d{3})/.exec(m);
        if (!match) continue;
        const [head, ...rest] = m.split('\r\n\r\n');
        replies.push({ status: Number(match[1]), head, body: rest.join('\r\n\r\n'), all: m });
      }
      resolve(replies);
    };
    const timer = setTimeout(done, ms);
    socket.on('close', () => {
      clearTimeout(timer);
      done();
    });
    socket.on('error', (e) => {
      clearTimeout(timer);
      if ((e as NodeJS.ErrnoException).code === 'ECONNRESET') done();
      else reject(e);
    });
    socket.write(text);
  });
}

describe('isolation: loopback server guards over raw sockets', function () {
  this.timeout(60_000);
  let engine: MemoryEngine;
  let dir: string;
  let server: RunningHttpServer;
  const get = (target: string, headers: string[]) => `GET ${target} HTTP/1.1\r\n${headers.join('\r\n')}\r\nConnection: close\r\n\r\n`;
  const auth = () => `Authorization: Bearer ${server.token}`;
  const host = () => `Host: 127.0.0.1:${server.port}`;

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    server = await startHttpServer({ engine, scope });
  });
  after(async () => {
    await server?.close();
    await engine?.close();
    if (dir) removeDir(dir);
  });

  it('baseline: a good request is 200', async () => {
    const [r] = await raw(server.port, get('/v1/health', [host(), auth()]));
    assert.equal(r.status, 200, r.all);
  });

  it('refuses Host spellings that are not loopback: trailing dot, suffix, userinfo, IPv4-mapped, decimal, with the token (403)', async () => {
    const bad: string[] = [];
    for (const h of [`localhost.:${server.port}`, `127.0.0.1.:${server.port}`, `localhost.evil.example:${server.port}`, `evil.example@127.0.0.1:${server.port}`, `[::ffff:7f00:1]:${server.port}`, `2130706433:${server.port}`, `127.1:${server.port}`, `0x7f000001:${server.port}`, `127.0.0.1`, '', `127.0.0.1:${server.port}/`]) {
      const [r] = await raw(server.port, get('/v1/health', [`Host: ${h}`, auth()]));
      if (!r || r.status === 200) bad.push(`${h} -> ${r?.status}`);
    }
    assert.deepEqual(bad, []);
  });

  it('an HTTP/1.0 request without Host is refused (403), not served', async () => {
    const [r] = await raw(server.port, `GET /v1/health HTTP/1.0\r\n${auth()}\r\n\r\n`);
    assert.equal(r.status, 403, r.all);
  });

  it('absolute-form targets naming another host are refused even with a good Host header', async () => {
    const bad: string[] = [];
    for (const t of ['http://evil.example/v1/health', `http://evil.example:${server.port}/v1/health`, `http://127.0.0.1:${server.port}@evil.example/v1/health`, `http://localhost.:${server.port}/v1/health`, `http://127.0.0.1/v1/health`]) {
      const [r] = await raw(server.port, get(t, [host(), auth()]));
      if (!r || r.status === 200) bad.push(`${t} -> ${r?.status}`);
    }
    assert.deepEqual(bad, []);
  });

  it('refuses Origin variants of other origins (403): null, other port, webview, extension, trailing dot, file, duplicated', async () => {
    const bad: string[] = [];
    const origins = ['null', `http://localhost:${server.port + 1}`, 'vscode-webview://abcdef', 'chrome-extension://abcdefghijklmnop', `http://localhost.:${server.port}`, 'file://', `ws://127.0.0.1:${server.port}`, ''];
    for (const o of origins) {
      const [r] = await raw(server.port, get('/v1/health', [host(), auth(), `Origin: ${o}`]));
      if (!r || r.status !== 403) bad.push(`${JSON.stringify(o)} -> ${r?.status}`);
    }
    for (const pair of [[`http://127.0.0.1:${server.port}`, 'https://evil.example'], ['https://evil.example', `http://127.0.0.1:${server.port}`]]) {
      const [r] = await raw(server.port, get('/v1/health', [host(), auth(), ...pair.map((o) => `Origin: ${o}`)]));
      if (!r || r.status === 200) bad.push(`two Origin lines ${pair.join(' + ')} -> ${r?.status}`);
    }
    assert.deepEqual(bad, []);
  });

  it('CORS: a preflight from another origin is refused and no response ever allows a cross origin', async () => {
    const pre = `OPTIONS /v1/mcp/memory HTTP/1.1\r\n${host()}\r\nOrigin: https://evil.example\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization, content-type\r\nConnection: close\r\n\r\n`;
    const [r] = await raw(server.port, pre);
    assert.equal(r.status, 403, r.all);
    assert.doesNotMatch(r.head, /access-control-allow-origin/i);
    const [own] = await raw(server.port, get('/v1/health', [host(), auth(), `Origin: http://127.0.0.1:${server.port}`]));
    assert.equal(own.status, 200);
    assert.doesNotMatch(own.head, /access-control-allow-origin:\s*\*/i);
  });

  it('the token is required on every route and method, and is never accepted from the query string or other schemes', async () => {
    const bad: string[] = [];
    const routes = ['/v1/health', '/v1/dev/mcp-requests', `/v1/nodes/00000000-0000-0000-0000-000000000000`, '/nope', `/v1/health?token=${server.token}`, `/v1/health?access_token=${server.token}`];
    for (const route of routes) {
      for (const extra of [[], [`Authorization: Basic ${Buffer.from(`x:${server.token}`).toString('base64')}`], [`Authorization: ${server.token}`], [`Authorization: Bearer ${server.token}x`], [`Authorization: Bearer ${server.token} ${server.token}`], [`Cookie: token=${server.token}`], [`X-Api-Key: ${server.token}`], [`Authorization: Bearer`]]) {
        const [r] = await raw(server.port, get(route, [host(), ...extra]));
        if (!r || r.status !== 401) bad.push(`${route} ${extra.join()} -> ${r?.status}`);
        else if (r.body.includes(server.token)) bad.push(`${route} echoes the token`);
      }
    }
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE']) {
      const [r] = await raw(server.port, `${method} /v1/mcp/memory HTTP/1.1\r\n${host()}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      if (!r || r.status !== 401) bad.push(`${method} -> ${r?.status}`);
    }
    assert.deepEqual(bad, []);
  });

  it('keep-alive: a refused request does not authorise later requests on the same connection, and a good one does not authorise a later tokenless one', async () => {
    const ka = (headers: string[], target = '/v1/health') => `GET ${target} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`;
    const replies = await raw(server.port, ka([host(), auth()]) + ka([host()]) + ka([`Host: evil.example:${server.port}`, auth()]) + ka([host(), auth()]) + `GET /v1/health HTTP/1.1\r\n${host()}\r\nConnection: close\r\n\r\n`, 3000);
    assert.deepEqual(replies.map((r) => r.status), [200, 401, 403, 200, 401]);
  });

  it('a very long header gets a JSON 431 and the server keeps serving', async () => {
    const [r] = await raw(server.port, get('/v1/health', [host(), auth(), `X-Big: ${'a'.repeat(200_000)}`]));
    assert.equal(r?.status, 431, r?.all.slice(0, 300));
    assert.doesNotThrow(() => JSON.parse(r.body));
    const [ok] = await raw(server.port, get('/v1/health', [host(), auth()]));
    assert.equal(ok.status, 200);
  });
});
