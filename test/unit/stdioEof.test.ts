// The stdio server (`code-memory mcp`) when its client closes stdin: a piped client
// (`printf ... | code-memory mcp`) writes its requests and closes at once, and still gets every
// answer, the server exiting 0 once they are written; the request log keeps each call whole.

import * as assert from 'node:assert/strict';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { removeDir, tempDir } from './mcpFixture';
import { call, exitOf, initialize, line, start } from './stdioChild';
import type { Child } from './stdioChild';

const PROJECT = 'stdio-eof';
const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'piped', version: '1' } } };
const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };

type Answer = { id: number; result?: { isError?: boolean; structuredContent?: { status?: string; diagnostics?: { request_id?: string } } }; error?: unknown };

function answers(c: Child): Map<number, Answer> {
  const found = new Map<number, Answer>();
  for (const l of c.lines) {
    const message = JSON.parse(l) as Answer;
    found.set(message.id, message);
  }
  return found;
}

describe('the stdio server when its client closes stdin', function () {
  this.timeout(120_000);
  let store: string;

  before(async () => {
    store = tempDir('stdio-eof');
    const engine = await MemoryEngine.open({ storeUri: store, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    await engine.observe(
      [
        { type: 'edit', title: 'Switched the vector store to LanceDB', narrative: 'LanceDB runs embedded, in the extension host.' },
        { type: 'edit', title: 'Retry policy', narrative: 'Exponential backoff with jitter.' },
      ],
      { project: PROJECT },
    );
    await engine.flush();
    await engine.close();
  });
  after(() => removeDir(store));

  async function requestLog(): Promise<Array<{ request_id: string; session_id: string | null; response: string; status: string }>> {
    const engine = await MemoryEngine.open({ storeUri: store, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    try {
      return await engine.listRequests({ project: PROJECT }, 200);
    } finally {
      await engine.close();
    }
  }

  it('answers a piped client that closes stdin right after its requests, exits 0, and logs each call whole', async () => {
    const c = start(store, PROJECT);
    const calls = [10, 11, 12, 13, 14].map((id) => call(id, 'retrieve_memory', { prompt: `piped question ${id} about LanceDB`, session_id: 'piped' }));
    c.write([init, initialized, ...calls, call(20, 'recall_context', { query: 'LanceDB' }), { jsonrpc: '2.0', id: 21, method: 'ping' }].map(line).join(''));
    c.child.stdin.end();
    assert.equal(await exitOf(c, 90_000), 0, c.stderr());
    const got = answers(c);
    assert.deepEqual([...got.keys()].sort((a, b) => a - b), [1, 10, 11, 12, 13, 14, 20, 21], c.stderr());
    for (const id of [10, 11, 12, 13, 14, 20]) assert.equal(got.get(id)?.result?.isError, false, JSON.stringify(got.get(id)).slice(0, 300));
    assert.equal(c.stderr(), '');
    const logged = new Map((await requestLog()).map((e) => [e.request_id, e]));
    for (const id of [10, 11, 12, 13, 14]) {
      const answer = got.get(id)!.result!.structuredContent!;
      const entry = logged.get(answer.diagnostics!.request_id!);
      assert.ok(entry, `call ${id} is not in the request log`);
      assert.equal(entry.session_id, 'piped');
      assert.equal(entry.status, 'ok');
      assert.deepEqual(JSON.parse(entry.response), answer);
    }
  });

  it('answers the calls still running when stdin closes after the handshake', async () => {
    const c = start(store, PROJECT);
    await initialize(c);
    c.write([initialized, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, call(3, 'recall_context', { query: 'LanceDB' }), call(4, 'retrieve_memory', { prompt: 'why LanceDB?', session_id: 'eof' })].map(line).join(''));
    await new Promise((resolve) => setTimeout(resolve, 150));
    c.child.stdin.end();
    assert.equal(await exitOf(c, 90_000), 0, c.stderr());
    const got = answers(c);
    assert.deepEqual([...got.keys()].sort((a, b) => a - b), [1, 2, 3, 4], c.stderr());
    assert.equal(got.get(4)?.result?.structuredContent?.status, 'ok', JSON.stringify(got.get(4)).slice(0, 300));
  });

  it('exits within seconds, with no stack trace, when its client closes stdout and stdin while calls run (no one is left to answer)', async () => {
    const c = start(store, PROJECT);
    await initialize(c);
    c.write(Array.from({ length: 10 }, (_, i) => line(call(100 + i, 'retrieve_memory', { prompt: `gone ${i}: LanceDB` }))).join(''));
    await new Promise((resolve) => setTimeout(resolve, 30));
    c.child.stdout.destroy();
    c.child.stdin.end();
    const code = await exitOf(c, 30_000);
    assert.notEqual(code, 'killed', c.stderr());
    // A reader that went away is normal: the answers are moot, the exit is 0 (stdioClientGone.test.ts).
    assert.equal(code, 0, c.stderr());
    assert.doesNotMatch(c.stderr(), /Unhandled|TypeError|MaxListeners|\bat .*:\d+:\d+/);
  });

  it('does not wait for a call its client cancelled before closing stdin (no answer is due), and answers the others', async () => {
    const c = start(store, PROJECT);
    await initialize(c);
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'the user moved on' } };
    const began = Date.now();
    c.write([initialized, call(5, 'retrieve_memory', { prompt: 'cancel me: LanceDB' }), cancel, call(6, 'recall', { text: 'LanceDB' })].map(line).join(''));
    c.child.stdin.end();
    assert.equal(await exitOf(c, 90_000), 0, c.stderr());
    // Well under the 60 s a request that is never answered may hold the exit for.
    assert.ok(Date.now() - began < 30_000, `exited after ${Date.now() - began} ms`);
    const got = answers(c);
    assert.equal(got.has(5), false, 'the cancelled call was answered: the test did not cancel it while it ran');
    assert.ok(got.has(6), c.stderr());
    assert.equal(got.get(6)?.result?.isError, false);
  });
});
