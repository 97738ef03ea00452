// The stdio server (`code-memory mcp`) fed requests by a client that does not read its answers:
// the server stops reading stdin while the answers it holds back are many, so its memory stays
// bounded; once the client reads again the server reads and answers on, and SIGTERM ends it (0).

import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT, removeDir, tempDir } from './mcpFixture';

const TSX = require.resolve('tsx/cjs');
const CLI = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');
const PROJECT = 'stdio-back-pressure';
/**
 * tools/list answers are about 22 kB each: 20,000 of them are 440 MB if all were held. A server
 * that reads on answers a few hundred a second into its memory while the client does not read.
 */
const REQUESTS = 20_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const line = (message: unknown): string => `${JSON.stringify(message)}\n`;

/** The resident memory of a process, in kB (Linux). */
function rssKb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
}

describe('the stdio server and a client that does not read its answers', function () {
  this.timeout(240_000);
  let store: string;
  before(() => {
    store = tempDir('stdio-back-pressure');
  });
  after(() => removeDir(store));

  it('stops reading requests instead of holding their answers without bound, and reads on once the client reads', async function () {
    if (process.platform !== 'linux') this.skip();
    const child = spawn(process.execPath, ['--require', TSX, CLI, 'mcp', '--store', store, '--project', PROJECT, '--embedder', 'hashed'], { cwd: REPO_ROOT, env: { ...process.env, LANCEDB_LOG: 'error', RUST_BACKTRACE: '0' } });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin.on('error', () => undefined);
    // Answers are counted by their line ends, not kept: the test holds none of the 440 MB.
    let answers = 0;
    let ready: () => void = () => {};
    const initialized = new Promise<void>((resolve) => (ready = resolve));
    child.stdout.on('data', (chunk: Buffer) => {
      for (let at = chunk.indexOf(0x0a); at >= 0; at = chunk.indexOf(0x0a, at + 1)) answers++;
      if (answers > 0) ready();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      child.stdin.write(line({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } }));
      await Promise.race([initialized, sleep(60_000)]);
      assert.equal(answers, 1, stderr);
      child.stdin.write(line({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      await sleep(500);
      const base = rssKb(child.pid!);

      child.stdout.pause();
      const batch = (from: number): string => Array.from({ length: 1000 }, (_, i) => line({ jsonrpc: '2.0', id: from + i, method: 'tools/list' })).join('');
      const written: Array<Promise<void>> = [];
      for (let from = 100; from < 100 + REQUESTS; from += 1000) written.push(new Promise((resolve) => child.stdin.write(batch(from), () => resolve())));
      // A server that reads on takes them all at once; one that stops reading takes a part.
      await Promise.race([Promise.all(written), sleep(15_000)]);
      await sleep(15_000);
      const grown = rssKb(child.pid!) - base;
      assert.ok(grown < 150 * 1024, `its memory grew by ${grown} kB while the client did not read (no back-pressure)`);

      // Once the client reads again, the server reads and answers on.
      child.stdout.resume();
      for (const end = Date.now() + 60_000; answers < 3000 && Date.now() < end; ) await sleep(100);
      assert.ok(answers >= 3000, `${answers - 1} answers in the minute after the client read again: ${stderr}`);
      child.kill('SIGTERM');
      assert.equal(await Promise.race([exited, sleep(30_000).then(() => 'hung')]), 0, stderr);
      assert.doesNotMatch(stderr, /MaxListeners|Error|\bat .*:\d+:\d+/);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
