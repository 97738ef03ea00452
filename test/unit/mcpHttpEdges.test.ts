// Edges of the loopback HTTP server that only raw sockets reach: the spellings of Host, Origin and
// the token, CORS, headers hidden behind Node's header-count cap, slow clients (Node's header and
// request timeouts), clients that leave mid-body, Expect headers, chunk extensions, backslashes in
// the request target, odd HTTP features, and bodies over the product's 1 MiB limit. Every refusal
// is a JSON error, the server keeps serving, and a client that merely left is never logged as the
// server's failure.

import * as assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { DEFAULT_MAX_BODY_BYTES, startHttpServer } from '../../src/mcp/httpServer';
import type { HttpServerOptions, RunningHttpServer } from '../../src/mcp/httpServer';
import { isJsonError, parseFirstResponse, raw, restError } from './fixtures/rawHttp';
import type { RawReply } from './fixtures/rawHttp';
import { openTestEngine, removeDir, seed } from './mcpFixture';

const scope: Scope = { project: 'github.com/acme/app' };
const other: Scope = { project: 'github.com/evil/other' };

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('MCP HTTP server edges (raw sockets)', function () {
  this.timeout(60_000);
  let engine: MemoryEngine;
  let dir: string;
  const servers: RunningHttpServer[] = [];
  const logged: string[] = [];

  async function start(extra: Partial<HttpServerOptions> = {}): Promise<RunningHttpServer> {
    const server = await startHttpServer({ engine, scope, maxBodyBytes: 64 * 1024, log: (m) => logged.push(m), ...extra });
    servers.push(server);
    return server;
  }

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    await seed(engine, scope, other);
  });
  after(async () => {
    for (const server of servers) await server.close();
    await engine?.close();
    removeDir(dir);
  });
  beforeEach(() => {
    logged.length = 0;
  });

  const own = (server: RunningHttpServer): string => `127.0.0.1:${server.port}`;
  const auth = (server: RunningHttpServer): string => `Bearer ${server.token}`;
  /** A request without a body, the connection closed after it. */
  const bodiless = (method: string, target: string, headers: string[]): string => `${method} ${target} HTTP/1.1\r\n${headers.join('\r\n')}\r\nConnection: close\r\n\r\n`;
  const get = (target: string, headers: string[]): string => bodiless('GET', target, headers);
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
  const post = (target: string, headers: string[], body = list): string =>
    `POST ${target} HTTP/1.1\r\n${headers.join('\r\n')}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
  /** Headers and the first bytes of a 1000-byte body that never comes. */
  const stalledPost = (server: RunningHttpServer, target: string): string =>
    `POST ${target} HTTP/1.1\r\nHost: ${own(server)}\r\nAuthorization: ${auth(server)}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":`;

  async function assertServes(server: RunningHttpServer): Promise<void> {
    const r = await raw(server.port, get('/v1/health', [`Host: ${own(server)}`, `Authorization: ${auth(server)}`]));
    assert.equal(r.status, 200, r.raw.slice(0, 300));
  }

  /** Sends `request`; notes in `wrong` a status other than `want`, or a refusal that is no JSON error. */
  async function expectStatus(server: RunningHttpServer, label: string, request: string, want: number | number[], wrong: string[]): Promise<RawReply> {
    const r = await raw(server.port, request, { waitMs: 15_000 });
    const wanted = Array.isArray(want) ? want : [want];
    if (!wanted.includes(r.status)) wrong.push(`${label}: got ${r.status} ${r.body.slice(0, 160)} (want ${String(want)})`);
    else if (r.status >= 400 && !isJsonError(r.body)) wrong.push(`${label}: ${r.status} but the body is no JSON error: '${r.body.slice(0, 160)}'`);
    return r;
  }

  describe('Host, Origin and token', () => {
    let server: RunningHttpServer;
    let port: number;
    before(async () => {
      server = await start();
      port = server.port;
    });

    it('refuses every Host that is not this loopback address and port (JSON 400 or 403), even with the token', async () => {
      const wrong: string[] = [];
      for (const host of [
        `localhost.:${port}`,
        `127.0.0.1.:${port}`,
        `localhost.evil.example:${port}`,
        `127.1:${port}`,
        `0x7f000001:${port}`,
        `2130706433:${port}`,
        `[::ffff:127.0.0.1]:${port}`,
        `[0:0:0:0:0:0:0:1]:${port}`,
        `127.0.0.1:${port}@evil.example`,
        `evil.example#@127.0.0.1:${port}`,
        `127.0.0.1:${port}:${port}`,
        `127.0.0.1:${port} evil.example`,
        '127.0.0.1',
        'localhost',
        '',
        `127.0.0.1:${port + 65536}`,
      ]) {
        await expectStatus(server, `Host '${host}'`, get('/v1/health', [`Host: ${host}`, `Authorization: ${auth(server)}`]), [400, 403], wrong);
      }
      assert.deepEqual(wrong, []);
    });

    it('serves the loopback spellings of its own Host (any case, IPv6) on REST and MCP', async () => {
      const wrong: string[] = [];
      for (const host of [`LOCALHOST:${port}`, `LocalHost:${port}`, `[::1]:${port}`]) {
        await expectStatus(server, `Host '${host}' GET /v1/health`, get('/v1/health', [`Host: ${host}`, `Authorization: ${auth(server)}`]), 200, wrong);
        await expectStatus(server, `Host '${host}' POST tools/list`, post('/v1/mcp/memory', [`Host: ${host}`, `Authorization: ${auth(server)}`]), 200, wrong);
      }
      assert.deepEqual(wrong, []);
    });

    it("holds absolute-form request targets to its own authority: another port, a trailing dot or a foreign host is refused on REST and MCP, its own is served", async () => {
      // badInput.test.ts holds the plain foreign host, this server's own URL on GET, ftp:, GET * and '//'.
      const wrong: string[] = [];
      const h = [`Host: ${own(server)}`, `Authorization: ${auth(server)}`];
      for (const [target, want] of [
        [`http://evil.example:${port}/v1/health`, 403],
        [`http://127.0.0.1:${port + 1}/v1/health`, 403],
        [`http://localhost.:${port}/v1/health`, 403],
        [`http://user@127.0.0.1:${port}/v1/health`, [200, 400, 403]],
      ] as Array<[string, number | number[]]>) {
        await expectStatus(server, `GET ${target}`, get(target, h), want, wrong);
      }
      await expectStatus(server, 'POST http://evil.example/v1/mcp/memory', post('http://evil.example/v1/mcp/memory', h), 403, wrong);
      await expectStatus(server, `POST http://127.0.0.1:${port}/v1/mcp/memory`, post(`http://127.0.0.1:${port}/v1/mcp/memory`, h), 200, wrong);
      await expectStatus(server, 'OPTIONS *', bodiless('OPTIONS', '*', h), 400, wrong);
      assert.deepEqual(wrong, []);
    });

    it('refuses every Origin but its own (403), even with the token, and two Origin lines (400 or 403)', async () => {
      const wrong: string[] = [];
      const h = [`Host: ${own(server)}`, `Authorization: ${auth(server)}`];
      for (const origin of [
        'null',
        `http://localhost:${port + 1}`,
        `http://127.0.0.1:${port === 80 ? 81 : 80}`,
        'vscode-webview://1234abcd',
        'vscode-file://vscode-app',
        'file://',
        'chrome-extension://abcdef',
        `http://localhost.:${port}`,
        `http://127.0.0.1.evil.example:${port}`,
        `ws://127.0.0.1:${port}`,
        `http://[::ffff:7f00:1]:${port}`,
        `http://0.0.0.0:${port}`,
        `http://127.0.0.2:${port}`,
        '',
      ]) {
        await expectStatus(server, `Origin '${origin}'`, post('/v1/mcp/memory', [...h, `Origin: ${origin}`]), 403, wrong);
      }
      // Node joins two Origin lines with ', '.
      await expectStatus(server, 'Origin own + Origin evil', post('/v1/mcp/memory', [...h, `Origin: http://127.0.0.1:${port}`, 'Origin: https://evil.example']), [400, 403], wrong);
      await expectStatus(server, 'Origin evil + Origin own', post('/v1/mcp/memory', [...h, 'Origin: https://evil.example', `Origin: http://127.0.0.1:${port}`]), [400, 403], wrong);
      assert.deepEqual(wrong, []);
    });

    it('serves its own origin in its spellings (scheme and host in any case, IPv6)', async () => {
      const wrong: string[] = [];
      const h = [`Host: ${own(server)}`, `Authorization: ${auth(server)}`];
      for (const origin of [`http://127.0.0.1:${port}`, `HTTP://LOCALHOST:${port}`, `http://[::1]:${port}`]) {
        await expectStatus(server, `Origin '${origin}'`, post('/v1/mcp/memory', [...h, `Origin: ${origin}`]), 200, wrong);
      }
      assert.deepEqual(wrong, []);
    });

    it('reads the token from the Authorization header alone, as one exact Bearer credential: the query string, a cookie, other headers and other shapes get a 401 that does not echo it', async () => {
      const wrong: string[] = [];
      const t = server.token;
      const h = [`Host: ${own(server)}`];
      for (const [label, headers, target] of [
        ['?access_token=', h, `/v1/health?access_token=${t}`],
        ['?token=', h, `/v1/health?token=${t}`],
        ['cookie', [...h, `Cookie: token=${t}; access_token=${t}`], '/v1/health'],
        ['Proxy-Authorization', [...h, `Proxy-Authorization: Bearer ${t}`], '/v1/health'],
        ['X-Auth-Token', [...h, `X-Auth-Token: ${t}`], '/v1/health'],
        ['Authorization: Token', [...h, `Authorization: Token ${t}`], '/v1/health'],
        ['Authorization: Bearer<TAB>', [...h, `Authorization: Bearer\t${t}`], '/v1/health'],
        ['Authorization: Bearer token junk', [...h, `Authorization: Bearer ${t} junk`], '/v1/health'],
        ['Authorization: Bearer token,other', [...h, `Authorization: Bearer ${t},Bearer x`], '/v1/health'],
        ['Authorization: Bearer prefix', [...h, `Authorization: Bearer ${t.slice(0, 16)}`], '/v1/health'],
        ['Authorization: Bearer upper-cased token', [...h, `Authorization: Bearer ${t.toUpperCase()}`], '/v1/health'],
        ['Authorization: Basic', [...h, `Authorization: Basic ${Buffer.from(`x:${t}`).toString('base64')}`], '/v1/health'],
      ] as Array<[string, string[], string]>) {
        const r = await expectStatus(server, label, get(target, headers), 401, wrong);
        if (r.raw.includes(t)) wrong.push(`${label}: the answer holds the token`);
      }
      assert.deepEqual(wrong, []);
    });

    it('reads the Bearer scheme name in any case (RFC 9110 11.1), and extra spaces before the token', async () => {
      const wrong: string[] = [];
      for (const scheme of ['bearer', 'BEARER', 'Bearer ']) {
        await expectStatus(server, `'${scheme} <token>'`, get('/v1/health', [`Host: ${own(server)}`, `Authorization: ${scheme} ${server.token}`]), 200, wrong);
      }
      assert.deepEqual(wrong, []);
    });

    it('sends no Access-Control-Allow-* header on any answer and answers no CORS preflight, whatever the origin', async () => {
      const found: string[] = [];
      const preflight = (origin: string, withToken: boolean, target: string): string =>
        `OPTIONS ${target} HTTP/1.1\r\nHost: ${own(server)}\r\nOrigin: ${origin}\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization, content-type\r\n${withToken ? `Authorization: ${auth(server)}\r\n` : ''}Connection: close\r\n\r\n`;
      for (const origin of ['https://evil.example', `http://127.0.0.1:${port}`, 'null']) {
        for (const target of ['/v1/mcp/memory', '/v1/health', '/v1/observations']) {
          for (const withToken of [false, true]) {
            const r = await raw(port, preflight(origin, withToken, target));
            const acl = r.headerList.filter(([name]) => name.startsWith('access-control-'));
            if (acl.length) found.push(`OPTIONS ${target} Origin ${origin} token=${withToken}: ${r.status} ${JSON.stringify(acl)}`);
            if (r.status === 200 || r.status === 204) found.push(`OPTIONS ${target} Origin ${origin} token=${withToken}: preflight answered ${r.status}`);
          }
        }
      }
      const ok = await raw(port, post('/v1/mcp/memory', [`Host: ${own(server)}`, `Authorization: ${auth(server)}`, `Origin: http://127.0.0.1:${port}`]));
      const acl = ok.headerList.filter(([name]) => name.startsWith('access-control-'));
      if (acl.length) found.push(`own-origin POST: ${JSON.stringify(acl)}`);
      assert.deepEqual(found, []);
    });
  });

  describe('header count', () => {
    let server: RunningHttpServer;
    before(async () => {
      server = await start();
    });

    it('refuses a second Host or Authorization line hidden behind 2,000 other headers (400), and still answers 3,000 headers with the JSON 431', async () => {
      // 2,000 short lines stay under Node's 16 KiB header limit; Node's default maxHeadersCount
      // (2,000) would drop every line after them.
      const filler = Array.from({ length: 2000 }, (_, i) => `x${i}: 1`);
      for (const [label, last] of [
        ['second Host', 'Host: evil.example'],
        ['second Authorization', 'Authorization: Bearer someone-else-entirely'],
      ]) {
        const r = await raw(server.port, get('/v1/health', [`Host: ${own(server)}`, `Authorization: ${auth(server)}`, ...filler, last]));
        assert.equal(r.status, 400, `${label}: ${r.raw.slice(0, 300)}`);
        assert.equal(restError(r.body)?.error, 'bad_request', `${label}: ${r.body}`);
      }
      const many = Array.from({ length: 3000 }, (_, i) => `h${i}: v`);
      const r = await raw(server.port, get('/v1/health', [`Host: ${own(server)}`, `Authorization: ${auth(server)}`, ...many]), { untilClose: true });
      assert.equal(r.status, 431, r.raw.slice(0, 300));
      assert.equal(restError(r.body)?.error, 'headers_too_large', r.body);
      await assertServes(server);
    });
  });

  describe('slow clients and clients that leave (short timeouts)', () => {
    let server: RunningHttpServer;
    before(async () => {
      server = await start({ headersTimeoutMs: 400, requestTimeoutMs: 800 });
    });

    /** Whether the server ended the connection itself (a close or a reset), not the reader's patience. */
    const serverEnded = (r: RawReply): boolean => r.ended === 'close' || r.ended === 'reset';

    it('answers headers that never finish with a JSON 408 request_timeout', async () => {
      const r = await raw(server.port, `GET /v1/health HTTP/1.1\r\nHost: ${own(server)}\r\nAuthorization: ${auth(server)}\r\n`, { waitMs: 10_000, untilClose: true });
      assert.equal(r.status, 408, `after ${r.ms} ms (${r.ended}): ${r.raw.slice(0, 300)}`);
      assert.equal(restError(r.body)?.error, 'request_timeout', r.body);
      assert.ok(serverEnded(r), `the server closes the connection (${r.ended})`);
      assert.deepEqual(logged, []);
      await assertServes(server);
    });

    it('answers a body that never finishes with a JSON 408 request_timeout, on MCP and REST, logging nothing', async () => {
      for (const route of ['/v1/mcp/memory', '/v1/observations']) {
        const r = await raw(server.port, stalledPost(server, route), { waitMs: 10_000, untilClose: true });
        assert.equal(r.status, 408, `${route} after ${r.ms} ms (${r.ended}): ${r.raw.slice(0, 300)}`);
        assert.equal(restError(r.body)?.error, 'request_timeout', `${route}: ${r.body}`);
        assert.ok(serverEnded(r), `${route}: the server closes the connection (${r.ended})`);
      }
      // The handlers waiting for those bodies see them end: that is no internal error.
      await sleep(300);
      assert.deepEqual(logged, []);
      await assertServes(server);
    });

    it('logs nothing and sends no 500 for a client that disconnects mid-body', async () => {
      for (const route of ['/v1/mcp/memory', '/v1/observations']) {
        const socket = connect({ host: '127.0.0.1', port: server.port });
        socket.on('error', () => undefined);
        try {
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error('no connection in 5 s')), 5000);
            socket.once('connect', () => {
              clearTimeout(timer);
              resolve();
            });
          });
          socket.write(stalledPost(server, route));
          await sleep(150);
        } finally {
          socket.destroy();
        }
      }
      await sleep(300);
      assert.deepEqual(logged.map((l) => l.split('\n')[0]), []);
      await assertServes(server);
    });
  });

  describe('odd requests', () => {
    let server: RunningHttpServer;
    before(async () => {
      server = await start();
    });

    it('answers chunk extensions over Node\'s limit with a JSON 413', async () => {
      const request = `POST /v1/observations HTTP/1.1\r\nHost: ${own(server)}\r\nAuthorization: ${auth(server)}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2;ext=${'x'.repeat(20_000)}\r\n{}\r\n0\r\n\r\n`;
      const r = await raw(server.port, request, { untilClose: true });
      assert.equal(r.status, 413, r.raw.slice(0, 300));
      assert.equal(restError(r.body)?.error, 'payload_too_large', r.body);
      await sleep(200);
      assert.deepEqual(logged, []);
      await assertServes(server);
    });

    it('answers an Expect other than 100-continue with a JSON 417 that tells a caller without the token nothing else', async () => {
      for (const [label, request] of [
        ['with Host and token', get('/v1/health', [`Host: ${own(server)}`, `Authorization: ${auth(server)}`, 'Expect: something-else'])],
        ['foreign Host, no token', get('/v1/health', ['Host: evil.example', 'Expect: x'])],
        ['MCP route', post('/v1/mcp/memory', [`Host: ${own(server)}`, 'Expect: 200-ok'])],
      ]) {
        const r = await raw(server.port, request);
        assert.equal(r.status, 417, `${label}: ${r.raw.slice(0, 300)}`);
        const error = restError(r.body);
        assert.equal(error?.error, 'expectation_failed', `${label}: ${r.body}`);
        assert.deepEqual(Object.keys(JSON.parse(r.body) as object).sort(), ['error', 'message'], label);
        assert.ok(!r.raw.includes(scope.project) && !r.raw.includes(server.token), `${label}: ${r.raw}`);
      }
      await assertServes(server);
    });

    it('refuses a request target with a backslash (JSON 400 invalid_url) instead of reading it as a slash', async () => {
      const h = [`Host: ${own(server)}`, `Authorization: ${auth(server)}`];
      for (const request of [post('/v1\\mcp\\memory', h), post('/v1/mcp\\memory', h), get('/v1\\health', h), get('/v1/nodes\\..\\health', h)]) {
        const r = await raw(server.port, request);
        const line = request.slice(0, request.indexOf('\r\n'));
        assert.equal(r.status, 400, `${line}: ${r.raw.slice(0, 300)}`);
        assert.equal(restError(r.body)?.error, 'invalid_url', `${line}: ${r.body}`);
      }
      // Percent-encoded, a backslash is an ordinary character of a path segment.
      const encoded = await raw(server.port, get('/v1%5Chealth', h));
      assert.equal(encoded.status, 404, encoded.raw.slice(0, 300));
      await assertServes(server);
    });

    it('answers a WebSocket upgrade, a garbled request line, Content-Length with Transfer-Encoding, HTTP/1.0 without Host, and HEAD, DELETE or an SSE GET, each with a JSON error', async () => {
      const wrong: string[] = [];
      const h = [`Host: ${own(server)}`, `Authorization: ${auth(server)}`];
      const upgrade = get('/v1/health', [...h, 'Upgrade: websocket', 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==']).replace('Connection: close', 'Connection: Upgrade');
      await expectStatus(server, 'Upgrade: websocket', upgrade, [200, 400, 426], wrong);
      await expectStatus(server, 'garbled request line', 'GARBAGE\r\n\r\n', 400, wrong);
      await expectStatus(server, 'CL + TE', `POST /v1/observations HTTP/1.1\r\nHost: ${own(server)}\r\nAuthorization: ${auth(server)}\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, 400, wrong);
      await expectStatus(server, 'HTTP/1.0 without Host', 'GET /v1/health HTTP/1.0\r\n\r\n', 403, wrong);
      // HEAD: no body by definition; only the status is checked.
      const head = await raw(server.port, bodiless('HEAD', '/v1/health', h));
      if (head.status !== 405) wrong.push(`HEAD /v1/health: ${head.status}`);
      await expectStatus(server, 'DELETE /v1/mcp/memory', bodiless('DELETE', '/v1/mcp/memory', h), [405], wrong);
      await expectStatus(server, 'GET /v1/mcp/memory', get('/v1/mcp/memory', [...h, 'Accept: text/event-stream']), [405], wrong);
      assert.deepEqual(wrong, []);
    });

    it('answers odd header values on the MCP endpoint (obs-text, odd names, a long or repeated session id), never with an empty body or a 500', async () => {
      const wrong: string[] = [];
      const h = [`Host: ${own(server)}`, `Authorization: ${auth(server)}`];
      for (const [label, extra] of [
        ['obs-text value', ['X-Weird: caf\xe9 \xff\xfe']],
        ['obs-text Mcp-Session-Id', ['Mcp-Session-Id: s\xe9ssion']],
        ['odd header name', ["X-!#$%&'*+-.^_|~: 1"]],
        ['Mcp-Session-Id of 8 KiB', [`Mcp-Session-Id: ${'s'.repeat(8192)}`]],
        ['two Mcp-Session-Id lines', ['Mcp-Session-Id: a', 'Mcp-Session-Id: b']],
        ['Mcp-Protocol-Version twice', ['Mcp-Protocol-Version: 2025-06-18', 'Mcp-Protocol-Version: 2025-03-26']],
        ['empty Mcp-Protocol-Version', ['Mcp-Protocol-Version:']],
      ] as Array<[string, string[]]>) {
        // latin1: each of those characters is one byte on the wire, as obs-text is.
        const r = await raw(server.port, Buffer.from(post('/v1/mcp/memory', [...h, ...extra]), 'latin1'));
        if (r.status === 0 || r.status >= 500) wrong.push(`${label}: ${r.status} ${r.body.slice(0, 160)}`);
        else if (r.status >= 400 && !isJsonError(r.body)) wrong.push(`${label}: ${r.status} no JSON error: '${r.body.slice(0, 160)}'`);
      }
      assert.deepEqual(wrong, []);
    });
  });

  describe('bodies over the limit, at the product default (1 MiB)', () => {
    let server: RunningHttpServer;
    before(async () => {
      server = await start({ maxBodyBytes: DEFAULT_MAX_BODY_BYTES });
    });

    const headers = (): Record<string, string> => ({ authorization: auth(server), 'content-type': 'application/json', accept: 'application/json, text/event-stream' });

    async function healthy(): Promise<void> {
      const r = await fetch(`${server.baseUrl}/v1/health`, { headers: { authorization: auth(server) } });
      assert.equal(r.status, 200);
    }

    it('answers a JSON-RPC or REST body nested 30,000 and 400,000 deep with an error (never a 500 or silence), and keeps serving', async () => {
      const wrong: string[] = [];
      const h = [`Host: ${own(server)}`, `Authorization: ${auth(server)}`];
      for (const depth of [30_000, 400_000]) {
        const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`;
        for (const [label, body] of [
          ['the body', deep],
          ['retrieve_memory session_id', `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"retrieve_memory","arguments":{"prompt":"x","session_id":${deep}}}}`],
          ['recall text', `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":{"text":${deep}}}}`],
          ['observe observations', `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"observe","arguments":{"observations":[{"type":"note","title":"t","files_read":${deep}}]}}}`],
          ['params', `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":{"text":"x"},"_meta":${deep}}}`],
        ] as Array<[string, string]>) {
          const r = await raw(server.port, post('/v1/mcp/memory', h, body), { waitMs: 30_000 });
          if (r.status === 0) wrong.push(`${label} (${depth} deep): no answer (${r.ended})`);
          else if (r.status === 500) wrong.push(`${label} (${depth} deep): 500 ${r.body.slice(0, 200)}`);
          else if (r.status === 200 && !/"isError":true|"error"/.test(r.body)) wrong.push(`${label}: 200 without an error: ${r.body.slice(0, 200)}`);
        }
        const restBody = `{"type":"note","title":"t","files_read":${deep}}`;
        const rest = await raw(server.port, `POST /v1/observations HTTP/1.1\r\nHost: ${own(server)}\r\nAuthorization: ${auth(server)}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(restBody)}\r\nConnection: close\r\n\r\n${restBody}`, { waitMs: 30_000 });
        if (rest.status === 500 || rest.status === 0) wrong.push(`POST /v1/observations nested: ${rest.status} ${rest.body.slice(0, 200)}`);
      }
      const again = await raw(server.port, get('/v1/health', h));
      assert.equal(again.status, 200, 'the server still serves');
      assert.deepEqual(wrong, []);
    });

    it('lets fetch (undici) read the JSON 413 of a 2 MiB and a 16 MiB body, not a reset, on MCP and REST', async () => {
      const got: string[] = [];
      const rpcOf = (size: number): string => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'remember', arguments: { title: 'big', text: 'x'.repeat(size) } } });
      const observation = (size: number): string => JSON.stringify({ type: 'note', title: 'big', narrative: 'y'.repeat(size) });
      for (const size of [2 * 1024 * 1024, 16 * 1024 * 1024]) {
        for (const [route, body] of [['/v1/mcp/memory', rpcOf(size)], ['/v1/observations', observation(size)]] as const) {
          try {
            const r = await fetch(`${server.baseUrl}${route}`, { method: 'POST', headers: headers(), body, signal: AbortSignal.timeout(30_000) });
            const text = await r.text();
            if (r.status !== 413 || !isJsonError(text)) got.push(`${route} ${size} B: ${r.status} ${text.slice(0, 120)}`);
          } catch (error) {
            const e = error as Error & { cause?: { code?: string; message?: string } };
            got.push(`${route} ${size} B: fetch failed: ${e.message} (${e.cause?.code ?? ''} ${e.cause?.message ?? ''})`);
          }
        }
      }
      await healthy();
      assert.deepEqual(got, []);
    });

    it('lets node:http, streaming a 4 MiB chunked body (no Content-Length), read the JSON 413', async () => {
      let timer: NodeJS.Timeout | undefined;
      const outcome = await new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), 30_000);
        const req = httpRequest({ host: '127.0.0.1', port: server.port, method: 'POST', path: '/v1/observations', headers: headers() }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (d: string) => (body += d));
          res.on('end', () => resolve(`${res.statusCode} ${body.slice(0, 120)}`));
          res.on('error', (e) => resolve(`response error ${e.message}`));
        });
        req.on('error', (e: NodeJS.ErrnoException) => resolve(`request error ${e.code}`));
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        let sent = 0;
        const pump = (): void => {
          while (sent < 64) {
            sent++;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          req.end();
        };
        req.write('{"type":"note","title":"big","narrative":"');
        pump();
      });
      clearTimeout(timer);
      await healthy();
      assert.match(outcome, /^413 \{"error":"payload_too_large"/);
    });

    it('answers a Content-Length just over the limit with 413 at once, before any of the body', async () => {
      const r = await raw(server.port, `POST /v1/observations HTTP/1.1\r\nHost: ${own(server)}\r\nAuthorization: ${auth(server)}\r\nContent-Type: application/json\r\nContent-Length: ${DEFAULT_MAX_BODY_BYTES + 1}\r\n\r\n`, { waitMs: 5000 });
      assert.equal(r.status, 413, `${r.ended} ${r.raw.slice(0, 200)}`);
    });

    it('keeps answering others quickly while 20 clients never finish their bodies', async () => {
      const sockets: Socket[] = [];
      try {
        for (let i = 0; i < 20; i++) {
          const socket = connect({ host: '127.0.0.1', port: server.port });
          socket.on('error', () => undefined);
          socket.write(stalledPost(server, '/v1/mcp/memory'));
          sockets.push(socket);
        }
        const started = Date.now();
        for (let i = 0; i < 5; i++) await healthy();
        assert.ok(Date.now() - started < 5000, 'answers stay quick next to 20 stalled bodies');
      } finally {
        for (const socket of sockets) socket.destroy();
      }
    });
  });
});

describe('the raw HTTP fixture', () => {
  it('reads the final response past a 100 Continue, by Content-Length or by chunks, its body as UTF-8', () => {
    const continued = parseFirstResponse('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 413 Payload Too Large\r\ncontent-length: 2\r\n\r\n{}');
    assert.deepEqual([continued.status, continued.body, continued.complete], [413, '{}', true]);
    // 'é' is two bytes, read one character a byte as a socket in latin1 gives them.
    const utf8 = Buffer.from('{"a":"é"}').toString('latin1');
    const chunked = parseFirstResponse(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n${utf8.slice(0, 4)}\r\n${(utf8.length - 4).toString(16)}\r\n${utf8.slice(4)}\r\n0\r\n\r\n`);
    assert.deepEqual([chunked.status, chunked.body, chunked.complete], [200, '{"a":"é"}', true]);
    assert.equal(parseFirstResponse('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{"a"').complete, false);
  });
});
