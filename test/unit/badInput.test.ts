// Malformed URLs and out-of-range values sent to the loopback server: each is a 4xx with a JSON
// error naming what to fix, nothing is stored, and the server keeps answering.

import * as assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { openTestEngine, removeDir, seed } from './mcpFixture';

const scope: Scope = { project: 'github.com/acme/app' };
const other: Scope = { project: 'github.com/evil/other' };

interface Reply {
  status: number;
  json: { error?: string; message?: string } & Record<string, unknown>;
}

function unchunk(body: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    const size = parseInt(body.slice(at, eol), 16);
    if (!(size > 0)) return out;
    out += body.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

/**
 * One request over a raw socket: the request target goes on the wire exactly as given (http.request
 * and fetch would normalise or refuse some of these).
 */
function rawRequest(server: RunningHttpServer, method: string, target: string, body?: string, head?: { host?: string | null; extra?: string[] }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const text = /^transfer-encoding: *chunked/im.test(head) ? unchunk(rest.join('\r\n\r\n')) : rest.join('\r\n\r\n');
      let json: Reply['json'] = {};
      try {
        json = JSON.parse(text) as Reply['json'];
      } catch {
        json = { error: `(not JSON) ${text.slice(0, 200)}` };
      }
      resolve({ status, json });
    });
    const headers = [
      `${method} ${target} HTTP/1.1`,
      ...(head?.host === null ? [] : [`Host: ${head?.host ?? `127.0.0.1:${server.port}`}`]),
      `Authorization: Bearer ${server.token}`,
      'Connection: close',
      ...(head?.extra ?? []),
      ...(body === undefined ? [] : ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`]),
    ];
    socket.write(`${headers.join('\r\n')}\r\n\r\n${body ?? ''}`);
  });
}

describe('bad input to the loopback server', function () {
  this.timeout(60_000);
  let engine: MemoryEngine;
  let dir: string;
  let server: RunningHttpServer;
  let client: Client;

  async function counts(): Promise<string> {
    const s = await engine.stats(null);
    return JSON.stringify([s.observations, s.session_summaries, s.memories, s.cells]);
  }

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    await seed(engine, scope, other);
    server = await startHttpServer({ engine, scope });
    client = new Client({ name: 'code-memory-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${server.token}` } } }));
  });
  after(async () => {
    await client?.close();
    await server?.close();
    await engine?.close();
    removeDir(dir);
  });

  describe('malformed URLs', () => {
    it('answers 400 invalid_node_id for a node id with malformed percent-encoding', async () => {
      for (const id of ['%E0%A4%A', '%', '%ZZ', '%C0%80', '%ED%A0%80', `${'%'.repeat(4000)}`]) {
        const r = await rawRequest(server, 'GET', `/v1/nodes/${id}`);
        assert.equal(r.status, 400, `${id.slice(0, 20)}: ${JSON.stringify(r.json)}`);
        assert.equal(r.json.error, 'invalid_node_id');
        assert.match(String(r.json.message), /percent-encoding/);
        assert.match(String(r.json.message), /UUID/);
      }
    });

    it('answers 400 for a huge node id and a huge or malformed limit', async () => {
      const huge = await rawRequest(server, 'GET', `/v1/nodes/${'a'.repeat(12_000)}`);
      assert.equal(huge.status, 400);
      assert.equal(huge.json.error, 'invalid_node_id');
      for (const limit of ['%E0%A4%A', '9'.repeat(10_000), '1e2', '0x10', '', '-1', '5.5']) {
        const r = await rawRequest(server, 'GET', `/v1/dev/mcp-requests?limit=${limit}`);
        assert.equal(r.status, 400, `limit=${limit.slice(0, 20)}: ${JSON.stringify(r.json)}`);
        assert.equal(r.json.error, 'invalid_limit');
      }
      assert.equal((await rawRequest(server, 'GET', '/v1/dev/mcp-requests?limit=5')).status, 200);
    });

    it('answers 400 invalid_url for request targets that are not a path or an http URL', async () => {
      for (const target of ['http://[', 'ftp://127.0.0.1/v1/health', '*']) {
        const r = await rawRequest(server, 'GET', target);
        assert.equal(r.status, 400, `${target}: ${JSON.stringify(r.json)}`);
        assert.equal(r.json.error, 'invalid_url');
        assert.match(String(r.json.message), /\/v1\/health/);
      }
    });

    it('reads a path starting with // as a path, not as another host', async () => {
      for (const target of ['//evil.example/v1/health', '//[']) {
        const r = await rawRequest(server, 'GET', target);
        assert.equal(r.status, 404, `${target}: ${JSON.stringify(r.json)}`);
        assert.equal(r.json.error, 'not_found');
      }
      const absolute = await rawRequest(server, 'GET', `http://127.0.0.1:${server.port}/v1/health`);
      assert.equal(absolute.status, 200, JSON.stringify(absolute.json));
      assert.equal(absolute.json.ok, true);
    });

    it('holds an absolute URL target to the Host rule: a foreign host in it is 403 forbidden_host', async () => {
      // RFC 9112 3.2.2: the target's authority is the request's host; the Host header is ignored.
      for (const target of ['http://evil.example/v1/health', `https://evil.example:${server.port}/v1/health`, 'http://127.0.0.1/v1/health']) {
        const r = await rawRequest(server, 'GET', target);
        assert.equal(r.status, 403, `${target}: ${JSON.stringify(r.json)}`);
        assert.equal(r.json.error, 'forbidden_host');
      }
    });

    it('answers a request without Host, or one Node cannot parse, with a JSON error', async () => {
      const noHost = await rawRequest(server, 'GET', '/v1/health', undefined, { host: null });
      assert.equal(noHost.status, 403, JSON.stringify(noHost.json));
      assert.equal(noHost.json.error, 'forbidden_host');
      const portless = await rawRequest(server, 'GET', '/v1/health', undefined, { host: '127.0.0.1' });
      assert.equal(portless.status, 403, JSON.stringify(portless.json));
      const garbled = await rawRequest(server, 'FOO BAR', '/v1/health');
      assert.equal(garbled.status, 400, JSON.stringify(garbled.json));
      assert.equal(garbled.json.error, 'bad_request');
      const hugeHeaders = await rawRequest(server, 'GET', '/v1/health', undefined, { extra: [`X-Pad: ${'a'.repeat(20_000)}`] });
      assert.equal(hugeHeaders.status, 431, JSON.stringify(hugeHeaders.json));
      assert.equal(hugeHeaders.json.error, 'headers_too_large');
      const connectMethod = await rawRequest(server, 'CONNECT', `127.0.0.1:${server.port}`);
      assert.equal(connectMethod.status, 405, JSON.stringify(connectMethod.json));
      assert.equal((await rawRequest(server, 'GET', '/v1/health')).status, 200);
    });

    it('keeps no quoted secret, nor the server\'s own token, of a retrieve_memory prompt in the request log', async () => {
      const secret = 's3cr3tvalue99';
      for (const prompt of [`deploy with DB_PASSWORD="${secret}" please`, `config {"api_key": "${secret}"}`, `my server wants ${server.token}, right?`]) {
        const out = await client.callTool({ name: 'retrieve_memory', arguments: { prompt } });
        assert.ok(!out.isError, JSON.stringify(out));
      }
      const log = await rawRequest(server, 'GET', '/v1/dev/mcp-requests?limit=10');
      assert.equal(log.status, 200);
      const text = JSON.stringify(log.json);
      assert.match(text, /DB_PASSWORD/);
      assert.ok(!text.includes(secret), text.slice(0, 400));
      // The server's own token, pasted as plain text, has no shape to recognise; it is known.
      assert.match(text, /my server wants/);
      assert.ok(!text.includes(server.token), 'the request log holds the server token');
    });
  });

  describe('epochs beyond what a date can hold', () => {
    // 9007199254740991 is a safe integer, but no Date holds it (the limit is 8.64e15 ms).
    const FAR = [9007199254740991, 8.64e15 + 1, 253402300800000];

    it('POST /v1/observations answers 400 invalid_arguments and stores nothing', async () => {
      const before = await counts();
      for (const created of FAR) {
        const body = JSON.stringify({ observations: [{ type: 'note', title: 'fine' }, { type: 'note', title: 'from the far future', created_at_epoch: created }] });
        const r = await rawRequest(server, 'POST', '/v1/observations', body);
        assert.equal(r.status, 400, `${created}: ${JSON.stringify(r.json)}`);
        assert.equal(r.json.error, 'invalid_arguments');
        assert.match(String(r.json.message), /observations\.1\.created_at_epoch/);
        assert.match(String(r.json.message), /milliseconds since 1970/);
      }
      assert.equal(await counts(), before);
      const ok = await rawRequest(server, 'POST', '/v1/observations', JSON.stringify({ type: 'note', title: 'the last millisecond of 9999', created_at_epoch: 253402300799999 }));
      assert.equal(ok.status, 201, JSON.stringify(ok.json));
    });

    it('the observe tool answers invalid_arguments and stores nothing', async () => {
      const before = await counts();
      for (const created of FAR) {
        const result = (await client.callTool({ name: 'observe', arguments: { observations: [{ type: 'note', title: 'far future', created_at_epoch: created }] } })) as { isError?: boolean; content: Array<{ text: string }> };
        assert.equal(result.isError, true);
        assert.match(result.content[0].text, /^invalid_arguments: observations\.0\.created_at_epoch: .*milliseconds since 1970/);
      }
      assert.equal(await counts(), before);
    });

    it('recall answers invalid_arguments for since_epoch or until_epoch out of range', async () => {
      for (const filter of [{ since_epoch: 9007199254740991 }, { until_epoch: 9007199254740991 }, { since_epoch: 0, until_epoch: 253402300800000 }]) {
        const result = (await client.callTool({ name: 'recall', arguments: { text: 'LanceDB', filter } })) as { isError?: boolean; content: Array<{ text: string }> };
        assert.equal(result.isError, true, JSON.stringify(filter));
        assert.match(result.content[0].text, /^invalid_arguments: filter\.(since|until)_epoch: .*milliseconds since 1970/);
      }
      const ok = (await client.callTool({ name: 'recall', arguments: { text: 'LanceDB', filter: { since_epoch: 0, until_epoch: 253402300799999 } } })) as { isError?: boolean; structuredContent?: { nodes: unknown[] } };
      assert.equal(ok.isError, false);
      assert.ok((ok.structuredContent?.nodes.length ?? 0) > 0);
    });

    it('recall publishes that range as the maximum of since_epoch and until_epoch, as observe does for created_at_epoch', async () => {
      const tools = (await client.listTools()).tools;
      const filter = (tools.find((t) => t.name === 'recall')?.inputSchema.properties as Record<string, { properties: Record<string, { minimum?: number; maximum?: number }> }>).filter;
      for (const field of ['since_epoch', 'until_epoch']) {
        assert.deepEqual([filter.properties[field].minimum, filter.properties[field].maximum], [0, 253402300799999], field);
      }
      const observe = tools.find((t) => t.name === 'observe')?.inputSchema.properties as Record<string, { items: { properties: Record<string, { maximum?: number }> } }>;
      assert.equal(observe.observations.items.properties.created_at_epoch.maximum, 253402300799999);
    });
  });

  describe('afterwards', () => {
    it('keeps answering', async () => {
      const r = await rawRequest(server, 'GET', '/v1/health');
      assert.equal(r.status, 200);
      assert.equal(r.json.ok, true);
    });
  });
});
