// What outlives one request: a token two servers share, a JSON-RPC id used again on a long-lived
// stdio server, and the token file of two `code-memory serve` processes on one store. Real
// servers and real child processes of the CLI.

import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Scope } from '../../src/core/model/records';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { REPO_ROOT, openTestEngine, removeDir, seed, tempDir } from './mcpFixture';

const scope: Scope = { project: 'github.com/acme/app' };
const other: Scope = { project: 'github.com/evil/other' };
const TSX = require.resolve('tsx/cjs');
const CLI = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');

function spawnCli(args: string[]): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--require', TSX, CLI, ...args, '--embedder', 'hashed'], { cwd: REPO_ROOT, env: { ...process.env, LANCEDB_LOG: 'error', RUST_BACKTRACE: '0' } });
}

function exitOf(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve(child.exitCode) : new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

type ToolReply = { isError?: boolean; content: Array<{ text: string }>; structuredContent?: Record<string, unknown> };

async function call(server: RunningHttpServer, name: string, args: unknown): Promise<ToolReply> {
  const r = await fetch(server.url, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  assert.equal(r.status, 200);
  return ((await r.json()) as { result: ToolReply }).result;
}

describe('server state across requests and servers', function () {
  this.timeout(120_000);

  it('a token two servers share stays redacted while either runs', async () => {
    const { engine, dir } = await openTestEngine();
    const token = 'shared-token-0123456789abcdef';
    let a: RunningHttpServer | undefined;
    let b: RunningHttpServer | undefined;
    try {
      await seed(engine, scope, other);
      a = await startHttpServer({ engine, scope, token });
      b = await startHttpServer({ engine, scope: other, token });
      await a.close();
      const stored = await call(b, 'remember', { title: 'pasted token', text: `the server token is ${token} keep it` });
      assert.equal(stored.isError, false, stored.content[0].text);
      const read = await call(b, 'get_observations', { ids: [(stored.structuredContent as { id: number }).id], source: 'memory' });
      assert.match(read.content[0].text, /the server token is \[REDACTED\] keep it/);
    } finally {
      await a?.close();
      await b?.close();
      await engine.close();
      removeDir(dir);
    }
  });

  it('stdio: a call that uses again the id of an answered call of an unknown tool with a `constructor` argument is served as sent', async () => {
    const store = tempDir('state-stdio');
    const child = spawnCli(['mcp', '--store', store, '--project', scope.project]);
    const replies: Array<{ id?: unknown; result?: ToolReply; error?: unknown }> = [];
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (line.trim()) replies.push(JSON.parse(line) as never);
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const send = (m: unknown): boolean => child.stdin.write(`${JSON.stringify(m)}\n`);
    const answer = async (id: unknown): Promise<(typeof replies)[number]> => {
      for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
        const i = replies.findIndex((x) => x.id === id);
        if (i >= 0) return replies.splice(i, 1)[0];
      }
      throw new Error(`no answer to ${String(id)}; stderr: ${err}`);
    };
    try {
      send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'state-test', version: '1' } } });
      await answer(0);
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'no_such_tool', arguments: { constructor: 1 } } });
      await answer(5);
      send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'recall', arguments: { text: 'LanceDB' } } });
      const clean = await answer(5);
      assert.equal(clean.result?.isError, false, JSON.stringify(clean).slice(0, 300));
      // The argument is still refused where it is sent.
      send({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'recall', arguments: { text: 'LanceDB', constructor: 1 } } });
      const refused = await answer(6);
      assert.equal(refused.result?.isError, true);
      assert.match(refused.result?.content[0].text ?? '', /constructor/);
    } finally {
      child.stdin.end();
      const exited = exitOf(child);
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      removeDir(store);
    }
  });
});

interface Served {
  child: ChildProcessWithoutNullStreams;
  tokenFile: string;
}

/** `code-memory serve`, once it printed where its token is; rejects with its stderr if it exits first. */
function serve(store: string, project: string, extra: string[] = []): Promise<Served> {
  const child = spawnCli(['serve', '--store', store, '--project', project, '--json', ...extra]);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve({ child, tokenFile: (JSON.parse(out.split('\n')[0]) as { token_file: string }).token_file });
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
}

describe('two `code-memory serve` processes on one store', function () {
  this.timeout(120_000);
  let store: string;
  const running: ChildProcessWithoutNullStreams[] = [];
  before(() => {
    store = tempDir('state-serve');
  });
  after(async () => {
    for (const child of running) {
      child.kill('SIGTERM');
      await exitOf(child);
    }
    removeDir(store);
  });

  it('the second refuses the token file of a running first, runs with a file of its own, and each exit removes only its own file', async () => {
    const alpha = await serve(store, 'alpha');
    running.push(alpha.child);
    await assert.rejects(serve(store, 'beta'), /exited with 2: error: .*server\.json names another running server \(pid \d+, project 'alpha'\); give this one a file of its own with --token-file/);
    assert.equal((JSON.parse(readFileSync(alpha.tokenFile, 'utf8')) as { project: string }).project, 'alpha');
    const betaFile = path.join(store, 'beta.json');
    const beta = await serve(store, 'beta', ['--token-file', betaFile]);
    running.push(beta.child);
    alpha.child.kill('SIGTERM');
    assert.equal(await exitOf(alpha.child), 0);
    assert.ok(!existsSync(alpha.tokenFile));
    assert.equal((JSON.parse(readFileSync(betaFile, 'utf8')) as { project: string }).project, 'beta');
  });

  it('of two started together, one claims the token file and the other is refused before it opens the store', async () => {
    const together = tempDir('state-serve-race');
    const ran: Served[] = [];
    try {
      const outcomes = await Promise.allSettled([serve(together, 'alpha'), serve(together, 'beta')]);
      ran.push(...outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : [])));
      assert.equal(ran.length, 1, outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'running')).join(' | '));
      const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
      assert.match(String(refused.reason), /exited with 2: error: .*server\.json names another running server/);
      // The file names the server that runs, so its clients reach that project.
      const named = JSON.parse(readFileSync(ran[0].tokenFile, 'utf8')) as { pid: number; token: string };
      assert.equal(named.pid, ran[0].child.pid);
      assert.ok(named.token);
    } finally {
      for (const r of ran) {
        r.child.kill('SIGTERM');
        await exitOf(r.child);
      }
      removeDir(together);
    }
  });

  it('a --token-file in folders that do not exist yet: they are made private, the file 0600', async () => {
    const base = tempDir('state-serve-tf');
    const file = path.join(base, 'nested', 'dir', 'server.json');
    const eps = await serve(store, 'epsilon', ['--token-file', file]);
    try {
      assert.equal(eps.tokenFile, file);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(statSync(path.join(base, 'nested')).mode & 0o777, 0o700);
      assert.equal(statSync(path.dirname(file)).mode & 0o777, 0o700);
    } finally {
      eps.child.kill('SIGTERM');
      await exitOf(eps.child);
      removeDir(base);
    }
  });

  it('takes over a token file its process left behind (a crash), and leaves a file another server wrote since', async () => {
    const file = path.join(store, 'server.json');
    writeFileSync(file, JSON.stringify({ url: 'http://127.0.0.1:1/v1/mcp/memory', token: 'gone', project: 'ghost', pid: 2 ** 22 + 12345 }));
    const gamma = await serve(store, 'gamma');
    running.push(gamma.child);
    assert.equal((JSON.parse(readFileSync(file, 'utf8')) as { project: string }).project, 'gamma');
    // Another server took the path meanwhile (its owner removed gamma's file by hand): gamma's exit leaves it.
    const theirs = JSON.stringify({ url: 'http://127.0.0.1:2/v1/mcp/memory', token: 'theirs', project: 'delta', pid: process.pid });
    writeFileSync(file, theirs);
    gamma.child.kill('SIGTERM');
    assert.equal(await exitOf(gamma.child), 0);
    assert.equal(readFileSync(file, 'utf8'), theirs);
  });
});
