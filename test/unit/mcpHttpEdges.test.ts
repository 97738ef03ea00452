// Edges of the loopback HTTP server that only raw sockets reach: headers hidden behind Node's
// header-count cap, slow clients (Node's header and request timeouts), clients that leave mid-body,
// Expect headers, chunk extensions and backslashes in the request target. Every answer is a JSON
// error, and a client that merely left is never logged as the server's failure.

import * as assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { HttpServerOptions, RunningHttpServer } from '../../src/mcp/httpServer';
import { openTestEngine, removeDir, seed } from './mcpFixture';

const scope: Scope = { project: 'github.com/acme/app' };
const other: Scope = { project: 'github.com/evil/other' };

interface RawReply {
  /** 0 when no status line came back. */
  status: number;
  body: string;
  raw: string;
  /** How the exchange ended: the first response complete, the server closed, or we gave up. */
  ended: 'complete' | 'close' | 'timeout';
  ms: number;
}

/**
 * The status and body of the first response in `raw` (latin1, as read), and whether it is all
 * there: a Content-Length or a chunked body.
 */
function parseFirst(raw: string): { status: number; body: string; complete: boolean } {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, body: '', complete: false };
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1] ?? 0);
  const header = (name: string): string | undefined => {
    const line = lines.find((l) => l.toLowerCase().startsWith(`${name}:`));
    return line === undefined ? undefined : line.slice(name.length + 1).trim().toLowerCase();
  };
  const rest = raw.slice(end + 4);
  const length = header('content-length');
  if (length !== undefined) {
    const bytes = Buffer.from(rest, 'latin1');
    return { status, body: bytes.subarray(0, Number(length)).toString('utf8'), complete: bytes.length >= Number(length) };
  }
  if (header('transfer-encoding') !== 'chunked') return { status, body: Buffer.from(rest, 'latin1').toString('utf8'), complete: false };
  let body = '';
  let at = 0;
  for (;;) {
    const eol = rest.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(rest.slice(at, eol), 16);
    if (!Number.isFinite(size)) break;
    if (size === 0) return { status, body: Buffer.from(body, 'latin1').toString('utf8'), complete: true };
    if (rest.length < eol + 2 + size + 2) break;
    body += rest.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
  return { status, body: Buffer.from(body, 'latin1').toString('utf8'), complete: false };
}

/**
 * Writes `request` to the server over a loopback socket, then reads until the first response is
 * complete (or, with `untilClose`, until the server closes), giving up after `waitMs`.
 */
function raw(port: number, request: string, options: { waitMs?: number; untilClose?: boolean } = {}): Promise<RawReply> {
  const waitMs = options.waitMs ?? 10_000;
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let data = '';
    let done = false;
    const finish = (ended: RawReply['ended']): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const parsed = parseFirst(data);
      resolve({ status: parsed.status, body: parsed.body, raw: data, ended, ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish('timeout'), waitMs);
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      data += d;
      if (!options.untilClose && parseFirst(data).complete) finish('complete');
    });
    socket.on('error', () => finish('close'));
    socket.on('close', () => finish('close'));
    socket.on('connect', () => socket.write(request, 'latin1'));
  });
}

/** The parsed body when it is the REST error shape {error, message} (strings), else undefined. */
function jsonError(body: string): { error: string; message: string } | undefined {
  try {
    const value = JSON.parse(body) as Record<string, unknown>;
    return typeof value.error === 'string' && typeof value.message === 'string' ? { error: value.error, message: value.message } : undefined;
  } catch {
    return undefined;
  }
}

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
  const get = (target: string, headers: string[]): string => `GET ${target} HTTP/1.1\r\n${headers.join('\r\n')}\r\nConnection: close\r\n\r\n`;
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
        assert.equal(jsonError(r.body)?.error, 'bad_request', `${label}: ${r.body}`);
      }
      const many = Array.from({ length: 3000 }, (_, i) => `h${i}: v`);
      const r = await raw(server.port, get('/v1/health', [`Host: ${own(server)}`, `Authorization: ${auth(server)}`, ...many]), { untilClose: true });
      assert.equal(r.status, 431, r.raw.slice(0, 300));
      assert.equal(jsonError(r.body)?.error, 'headers_too_large', r.body);
      await assertServes(server);
    });
  });

  describe('slow clients and clients that leave (short timeouts)', () => {
    let server: RunningHttpServer;
    before(async () => {
      server = await start({ headersTimeoutMs: 400, requestTimeoutMs: 800 });
    });

    it('answers headers that never finish with a JSON 408 request_timeout', async () => {
      const r = await raw(server.port, `GET /v1/health HTTP/1.1\r\nHost: ${own(server)}\r\nAuthorization: ${auth(server)}\r\n`, { waitMs: 10_000, untilClose: true });
      assert.equal(r.status, 408, `after ${r.ms} ms (${r.ended}): ${r.raw.slice(0, 300)}`);
      assert.equal(jsonError(r.body)?.error, 'request_timeout', r.body);
      assert.equal(r.ended, 'close', 'the server closes the connection');
      assert.deepEqual(logged, []);
      await assertServes(server);
    });

    it('answers a body that never finishes with a JSON 408 request_timeout, on MCP and REST, logging nothing', async () => {
      for (const route of ['/v1/mcp/memory', '/v1/observations']) {
        const r = await raw(server.port, stalledPost(server, route), { waitMs: 10_000, untilClose: true });
        assert.equal(r.status, 408, `${route} after ${r.ms} ms (${r.ended}): ${r.raw.slice(0, 300)}`);
        assert.equal(jsonError(r.body)?.error, 'request_timeout', `${route}: ${r.body}`);
        assert.equal(r.ended, 'close', `${route}: the server closes the connection`);
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
      assert.equal(jsonError(r.body)?.error, 'payload_too_large', r.body);
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
        const error = jsonError(r.body);
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
        assert.equal(jsonError(r.body)?.error, 'invalid_url', `${line}: ${r.body}`);
      }
      // Percent-encoded, a backslash is an ordinary character of a path segment.
      const encoded = await raw(server.port, get('/v1%5Chealth', h));
      assert.equal(encoded.status, 404, encoded.raw.slice(0, 300));
      await assertServes(server);
    });
  });
});
