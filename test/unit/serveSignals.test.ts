// The long-running commands stop cleanly on SIGHUP (the terminal closed) as on SIGINT/SIGTERM:
// `serve` removes its token file (README: "It removes the file on exit, if it still names this
// server") and exits 0, `mcp` closes its store and exits 0. Real CLI processes from the sources.

import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { REPO_ROOT, removeDir, tempDir } from './mcpFixture';

const TSX = require.resolve('tsx/cjs');
const CLI = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
}

function start(args: string[]): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--require', TSX, CLI, ...args, '--embedder', 'none'], {
    cwd: REPO_ROOT,
    env: { ...process.env, LANCEDB_LOG: 'error', CODE_MEMORY_STORE: '', CODE_MEMORY_PROJECT: '' },
  });
}

/** Resolves with the first stdout line that `ready` accepts; rejects when the process ends first. */
function firstLine(child: ChildProcessWithoutNullStreams, ready: (line: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const line = out.split('\n').slice(0, -1).find(ready);
      if (line !== undefined) resolve(line);
    });
    child.once('exit', (code, signal) => reject(new Error(`ended (${code ?? signal}) before it was ready: ${out}${err}`)));
  });
}

function ended(child: ChildProcessWithoutNullStreams): Promise<Ended> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

describe('serve and mcp stop cleanly on SIGHUP', function () {
  this.timeout(180_000);
  let dir: string;
  const children: ChildProcessWithoutNullStreams[] = [];
  before(() => {
    dir = tempDir('serve-signals');
  });
  after(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    removeDir(dir);
  });

  it('serve: SIGHUP exits 0 and removes the token file', async () => {
    const store = path.join(dir, 'store-serve');
    const child = start(['serve', '--json', '--store', store, '--project', 'signals/serve']);
    children.push(child);
    const line = JSON.parse(await firstLine(child, (l) => l.startsWith('{'))) as { token_file: string };
    assert.equal(line.token_file, path.join(store, 'server.json'));
    const { url, token } = JSON.parse(readFileSync(line.token_file, 'utf8')) as { url: string; token: string };
    assert.equal((await fetch(new URL('/v1/health', url), { headers: { authorization: `Bearer ${token}` } })).status, 200, 'control: the server answers');
    const end = ended(child);
    child.kill('SIGHUP');
    assert.deepEqual(await end, { code: 0, signal: null });
    assert.equal(existsSync(line.token_file), false, 'the token file of a stopped server is left behind');
  });

  it('mcp: SIGHUP exits 0 (the store closed), not killed by the signal', async () => {
    const store = path.join(dir, 'store-mcp');
    const child = start(['mcp', '--store', store, '--project', 'signals/mcp']);
    children.push(child);
    const answered = firstLine(child, (l) => l.includes('"id":1'));
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'signals', version: '1' } } })}\n`);
    assert.match(await answered, /"result"/);
    const end = ended(child);
    child.kill('SIGHUP');
    assert.deepEqual(await end, { code: 0, signal: null });
  });

  it('serve: SIGTERM lets the calls running finish and answer, their writes whole, then exits 0', async () => {
    const store = path.join(dir, 'store-serve-busy');
    const project = 'signals/serve-busy';
    const child = start(['serve', '--json', '--store', store, '--project', project]);
    children.push(child);
    const { token_file } = JSON.parse(await firstLine(child, (l) => l.startsWith('{'))) as { token_file: string };
    const { url, token } = JSON.parse(readFileSync(token_file, 'utf8')) as { url: string; token: string };
    const remember = (i: number): Promise<number | string> =>
      fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'remember', arguments: { title: `Decision busy.${i}`, text: `Memory ${i}: the store stays embedded in LanceDB; `.repeat(20), memory_type: 'decision' } } }),
      }).then(
        (r) => r.status,
        (e: Error) => e.message,
      );
    assert.equal(await remember(0), 200, 'control: a call is answered');
    const calls = Array.from({ length: 12 }, (_, i) => remember(i + 1));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const end = ended(child);
    child.kill('SIGTERM');
    const statuses = await Promise.all(calls);
    assert.deepEqual(await end, { code: 0, signal: null });
    // The calls sent before the signal were under way (each write takes tens of milliseconds):
    // they are let finish, not cut off; one coming after it is refused (503) or finds no server.
    assert.ok(statuses.includes(200), `no call under way was answered: ${statuses.join(', ')}`);
    for (const status of statuses) assert.ok(status === 200 || status === 503 || status === 'fetch failed', `a call answered ${status}`);
    const logged: string[] = [];
    const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0, logger: (m) => logged.push(m) });
    try {
      assert.deepEqual(logged.filter((m) => /repair|interrupted|no record/.test(m)), [], 'the server left a write half done');
      const stored = (await engine.listMemories({ project }, { includeSuppressed: true })).map((m) => Number(m.title.split('.').at(-1)));
      // Every call that wrote was let finish, and its answer reached the client.
      for (const i of stored) assert.equal(i === 0 ? 200 : statuses[i - 1], 200, `memory ${i} was stored, but its call was answered with ${String(statuses[i - 1])}`);
    } finally {
      await engine.close();
    }
  });
});
