// README "The HTTP server": a body over 1 MiB is answered 413. One sent in chunks (no
// Content-Length) is found too large only while it arrives: the server answered at once and
// closed the socket under the client still sending, which reset the connection, and the client
// often lost the 413 (a write error, EPIPE; 3 of 4 runs against `code-memory serve`). The rest of
// the body is now read and dropped before the answer. Real `code-memory serve` child.

import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT, removeDir, tempDir } from './mcpFixture';
import { raw } from './fixtures/rawHttp';

const TSX = require.resolve('tsx/cjs');
const CLI = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');

describe('serve: a body that grows past the limit while it arrives', function () {
  this.timeout(180_000);
  let dir: string;
  let child: ChildProcessWithoutNullStreams;
  let port: number;
  let token: string;
  let stderr = '';
  const host = (): string => `127.0.0.1:${port}`;
  const post = (body: string): string =>
    `POST /v1/mcp/memory HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;

  /** Streams `megabytes` of spaces to `target` in 1 MiB chunks; the status the client got, or the client's error. */
  const stream = (target: string, megabytes: number): Promise<number | string> =>
    new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: target, method: 'POST', headers: { host: host(), authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', (e) => resolve(e.message));
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const pump = (): void => {
        while (sent < megabytes) {
          sent++;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end();
      };
      pump();
    });

  before(async () => {
    dir = tempDir('serve-too-large');
    const tokenFile = path.join(dir, 'server.json');
    child = spawn(process.execPath, ['--require', TSX, CLI, 'serve', '--store', path.join(dir, 'store'), '--project', 'too-large', '--embedder', 'hashed', '--token-file', tokenFile, '--json'], {
      cwd: REPO_ROOT,
      env: { ...process.env, LANCEDB_LOG: 'error', CODE_MEMORY_STORE: '', CODE_MEMORY_PROJECT: '' },
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const first = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (out.includes('\n')) resolve(out.split('\n')[0]);
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
    port = (JSON.parse(first) as { port: number }).port;
    token = (JSON.parse(readFileSync(tokenFile, 'utf8')) as { token: string }).token;
    // A store with a record: the server has its background work to do meanwhile.
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'observe', arguments: { observations: [{ type: 'edit', title: 'a record', narrative: 'kept through the big bodies' }] } } });
    const r = await raw(port, post(body));
    assert.equal(r.status, 200, r.body);
  });
  after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    removeDir(dir);
  });

  it('100 MB in chunks to the MCP endpoint and to a REST route: the client reads 413 every time, and the server goes on', async () => {
    for (let i = 0; i < 4; i++) {
      assert.equal(await stream('/v1/mcp/memory', 100), 413, `MCP endpoint, run ${i + 1}`);
      assert.equal(await stream('/v1/observations', 100), 413, `REST route, run ${i + 1}`);
    }
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const ok = await raw(port, post(list));
    assert.equal(ok.status, 200, ok.body);
  });
});
