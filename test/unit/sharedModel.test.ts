import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { SharedModelEmbedder } from '../../src/core/embed/sharedModel/client';
import { hostFolder, hostSocketPath, encodeFrame, FrameReader, unpackVectors, type HostReply } from '../../src/core/embed/sharedModel/protocol';
import { UseLiteEmbedder } from '../../src/core/embed/useLite';
import { startEmbedder } from '../../src/core/embed/start';
import { WorkerEmbedder } from '../../src/core/embed/workerEmbedder';
import { assertLoadedBeforeTheFirstQuestion } from './embedFixture';
import { HASHED, alive, endHosts } from './modelHostFixture';

const CLI = path.resolve(__dirname, '../../src/cli/main.ts');

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** One request on a raw socket, as a client that does not use SharedModelEmbedder would send it. */
function rawExchange(socketPath: string, bytes: Buffer): Promise<{ replies: HostReply[]; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    const reader = new FrameReader();
    const replies: HostReply[] = [];
    socket.on('data', (d) => {
      for (const f of reader.push(d)) replies.push(f.header as HostReply);
      if (replies.length > 0) socket.end();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ replies, closed: true }));
    socket.write(bytes);
  });
}

describe('shared model host frames', () => {
  it('reads frames however the stream cuts them, several in one chunk or one in many', () => {
    const vectors = new Float32Array([0.5, -1, 2.25, 3, 4, 5]);
    const stream = Buffer.concat([encodeFrame({ type: 'result', id: 1, count: 2 }, vectors), encodeFrame({ type: 'hello', id: 2 }), encodeFrame({ type: 'error', id: 3, error: 'é' })]);
    for (const size of [1, 3, 8, 13, stream.length]) {
      const reader = new FrameReader();
      const frames = [];
      for (let i = 0; i < stream.length; i += size) frames.push(...reader.push(stream.subarray(i, i + size)));
      assert.deepEqual(frames.map((f) => f.header), [{ type: 'result', id: 1, count: 2 }, { type: 'hello', id: 2 }, { type: 'error', id: 3, error: 'é' }], `cut every ${size} bytes`);
      assert.deepEqual(unpackVectors(frames[0].payload, 2, 3).map((v) => Array.from(v)), [[0.5, -1, 2.25], [3, 4, 5]]);
      assert.equal(frames[1].payload.length, 0);
    }
    assert.throws(() => unpackVectors(Buffer.alloc(20), 2, 3), /sent 20 bytes for 2 vectors of 3 dimensions/);
  });
});

describe('shared model host', function () {
  this.timeout(120_000);
  let base: string;
  let folder: string;
  const hosts = new Set<number>();
  const connect = async (config: Parameters<typeof SharedModelEmbedder.connect>[0] = HASHED) => {
    const e = await SharedModelEmbedder.connect(config, { folder });
    hosts.add(e.hostPid);
    return e;
  };

  beforeEach(() => {
    base = mkdtempSync(path.join(os.tmpdir(), 'cm-model-host-'));
    folder = hostFolder(base);
  });

  afterEach(() => {
    endHosts(hosts, base);
  });

  it('serves every client from one host process, with the vectors the model gives in-process', async () => {
    // Clients arriving together: all but one of the hosts they start find the socket taken and leave.
    const clients = await Promise.all(Array.from({ length: 4 }, () => connect()));
    try {
      assert.equal(new Set(clients.map((c) => c.hostPid)).size, 1);
      assert.notEqual(clients[0].hostPid, process.pid);
      assert.equal(clients[0].name, 'hashed-ngram-64');
      const texts = ['first text about parsing', '', 'third: renameSymbol in the editor'];
      const local = await new HashedEmbedder(64).embed(texts);
      for (const vectors of await Promise.all(clients.map((c) => c.embed(texts)))) {
        assert.deepEqual(vectors.map((v) => Array.from(v)), local.map((v) => Array.from(v)));
      }
      assert.deepEqual(await clients[0].embed([]), []);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
    await assert.rejects(clients[0].embed(['x']), /closed/);
  });

  it('loads the bundled model as it starts, so that the first question does not wait for the load', async () => {
    const e = await connect({ provider: 'use-lite' });
    try {
      // Its client meanwhile opens its store.
      await assertLoadedBeforeTheFirstQuestion(e);
    } finally {
      await e.close();
    }
  });

  it('gives the bundled model bit-identical vectors', async () => {
    const e = await connect({ provider: 'use-lite' });
    try {
      assert.equal(e.name, 'use-lite-512');
      const texts = ['the CLI hung at startup when LANG was .UTF-8', 'refactor the authentication middleware', '', 'x'.repeat(2500)];
      const [shared, local] = await Promise.all([e.embed(texts), new UseLiteEmbedder().embed(texts)]);
      shared.forEach((v, i) => assert.deepEqual(Array.from(v), Array.from(local[i]), `text ${i}`));
    } finally {
      await e.close();
    }
  });

  it('starts a new host when the old one was killed mid-request, over its stale socket, and resends the request', async () => {
    const e = await connect();
    const first = e.hostPid;
    const socketPath = hostSocketPath(folder, HASHED);
    try {
      const texts = Array.from({ length: 9_000 }, (_, i) => `text ${i} ${'with enough words to take a while '.repeat(20)}`);
      const inFlight = e.embed(texts);
      await new Promise((r) => setTimeout(r, 100));
      process.kill(first, 'SIGKILL');
      await until(() => !alive(first), 'the host to die');
      assert.ok(existsSync(socketPath), 'kill -9 leaves the socket file behind');
      const vectors = await inFlight;
      assert.equal(vectors.length, texts.length);
      assert.deepEqual(Array.from(vectors[8_999]), Array.from((await new HashedEmbedder(64).embed([texts[8_999]]))[0]));
      const again = await connect();
      assert.notEqual(again.hostPid, first);
      await again.close();
    } finally {
      await e.close();
    }
  });

  it('serves a query before the rest of another client\'s large batch', async () => {
    const [bulk, query] = [await connect(), await connect()];
    try {
      const texts = Array.from({ length: 9_000 }, (_, i) => `observation ${i}: modified src/core/file${i % 97}.ts, renamed handleRequest${i} ${'and more words '.repeat(20)}`);
      let batchDone = 0;
      const batch = bulk.embed(texts).then(() => (batchDone = Date.now()));
      // Long enough for the batch's frame to reach the host and its first calls to run.
      await new Promise((r) => setTimeout(r, 400));
      const asked = Date.now();
      await query.embed(['one question']);
      const answered = Date.now();
      await batch;
      // Served in turn, the query would wait for the whole batch: its answer would come at the
      // batch's end (replies on two sockets only reorder by the time a large one takes to read).
      assert.ok(batchDone - answered > (batchDone - asked) / 2, `query answered after ${answered - asked} ms, the batch ${batchDone - answered} ms later`);
    } finally {
      await Promise.all([bulk.close(), query.close()]);
    }
  });

  it('lets another client connect and ask between the model calls of a long batch', async () => {
    const bulk = await connect({ provider: 'use-lite' });
    try {
      await bulk.embed(['load the model first']);
      const texts = Array.from({ length: 64 }, (_, i) => `text ${i}: ${'the uploads retry with exponential backoff and jitter '.repeat(28)}`);
      let batchDone = 0;
      const batch = bulk.embed(texts).then(() => (batchDone = Date.now()));
      await new Promise((r) => setTimeout(r, 300));
      const asked = Date.now();
      // A window opening its store meanwhile: its hello, then its first query.
      const other = await connect({ provider: 'use-lite' });
      await other.embed(['one question']);
      const answered = Date.now();
      await other.close();
      await batch;
      // Served after whole requests, the window would wait for the rest of the batch.
      assert.ok(batchDone - answered > (batchDone - asked) / 2, `hello and query answered after ${answered - asked} ms, the batch ${batchDone - answered} ms later`);
    } finally {
      await bulk.close();
    }
  });

  it('still answers the others when a client leaves while its last model call runs', async () => {
    const other = await connect({ provider: 'use-lite' });
    try {
      const socketPath = hostSocketPath(folder, { provider: 'use-lite' });
      const long = (i: number) => `text ${i}: ${'the uploads retry with exponential backoff '.repeat(30)}`;
      // One call's worth of texts (the first also loads the model): in flight when its client leaves.
      const leaving = net.connect(socketPath);
      leaving.on('error', () => undefined);
      leaving.write(encodeFrame({ type: 'embed', id: 1, texts: Array.from({ length: 32 }, (_, i) => long(i)) }));
      await new Promise((r) => setTimeout(r, 300));
      // A raw client, which has no backstop: a request the host dropped would never be answered.
      const answered = rawExchange(socketPath, encodeFrame({ type: 'embed', id: 2, texts: Array.from({ length: 40 }, (_, i) => long(100 + i)) }));
      await new Promise((r) => setTimeout(r, 50));
      leaving.destroy();
      assert.deepEqual((await answered).replies, [{ type: 'result', id: 2, count: 40 }]);
    } finally {
      await other.close();
    }
  });

  it('answers malformed requests with an error or by hanging up, and keeps serving', async () => {
    const e = await connect();
    const socketPath = hostSocketPath(folder, HASHED);
    try {
      const huge = Buffer.alloc(8);
      huge.writeUInt32LE(0xffffffff, 0);
      assert.deepEqual(await rawExchange(socketPath, huge), { replies: [], closed: true });
      const notJson = Buffer.concat([Buffer.from([3, 0, 0, 0, 0, 0, 0, 0]), Buffer.from('{{{')]);
      assert.deepEqual(await rawExchange(socketPath, notJson), { replies: [], closed: true });
      const bad = await rawExchange(socketPath, encodeFrame({ type: 'embed', id: 7, texts: ['ok', 42] }));
      assert.deepEqual(bad.replies, [{ type: 'error', id: 7, error: 'embed needs texts: an array of strings.' }]);
      const tooMany = await rawExchange(socketPath, encodeFrame({ type: 'embed', id: 8, texts: Array.from({ length: 10_001 }, () => 'a') }));
      assert.match((tooMany.replies[0] as { error: string }).error, /at most 10000 texts/);
      assert.equal((await e.embed(['still here']))[0].length, 64);
    } finally {
      await e.close();
    }
  });

  it('gives up on a host that stopped answering instead of waiting for ever', async () => {
    const e = await connect();
    process.kill(e.hostPid, 'SIGSTOP');
    try {
      // The kernel still accepts the connection; nobody answers it.
      await assert.rejects(SharedModelEmbedder.connect(HASHED, { folder, startTimeoutMs: 500 }), /went away \(no answer within 500 ms\)/);
    } finally {
      process.kill(e.hostPid, 'SIGCONT');
      await e.close();
    }
  });

  it('exits once no client has been connected for its idle time, and takes its socket with it', async () => {
    process.env.CODE_MEMORY_MODEL_HOST_IDLE_MS = '300';
    try {
      const e = await connect();
      await e.embed(['hello']);
      await new Promise((r) => setTimeout(r, 600));
      assert.ok(alive(e.hostPid), 'a connected client keeps the host');
      await e.close();
      await until(() => !alive(e.hostPid), 'the idle host to exit');
      assert.ok(!existsSync(hostSocketPath(folder, HASHED)));
    } finally {
      delete process.env.CODE_MEMORY_MODEL_HOST_IDLE_MS;
    }
  });

  it('refuses a socket folder that another user could have made or entered', () => {
    const open = path.join(base, 'open');
    mkdirSync(path.join(open, `code-memory-${process.getuid!()}`), { recursive: true });
    chmodSync(path.join(open, `code-memory-${process.getuid!()}`), 0o777);
    assert.throws(() => hostFolder(open), /can be entered by other users \(mode 777\)/);
    const linked = path.join(base, 'linked');
    mkdirSync(linked);
    symlinkSync(folder, path.join(linked, `code-memory-${process.getuid!()}`));
    assert.throws(() => hostFolder(linked), /is not a folder/);
  });

  it('refuses a socket path the system cannot bind, with what to do', () => {
    const deep = path.join(base, 'd'.repeat(80));
    assert.throws(() => hostSocketPath(deep, HASHED), /socket path is too long for the system .*set XDG_RUNTIME_DIR to a shorter folder/);
    assert.ok(Buffer.byteLength(hostSocketPath(folder, HASHED)) <= 103);
  });

  it('falls back to a thread of this process when the host cannot be used, and says why', async () => {
    const said: string[] = [];
    const e = await startEmbedder({ provider: 'use-lite' }, (m) => said.push(m), { folder, hostEntry: path.join(base, 'missing.js'), startTimeoutMs: 300 });
    try {
      assert.ok(e instanceof WorkerEmbedder);
      assert.match(said.join('\n'), /shared model host is not available \(The shared model host did not start within 300 ms/);
    } finally {
      await e.close?.();
    }
    const hashed = await startEmbedder(HASHED, (m) => said.push(m));
    assert.ok(hashed instanceof WorkerEmbedder, 'only the bundled model is shared');
    await hashed.close?.();
  });

  it('does not keep a client process alive once it is idle', () => {
    const script = `
      const { SharedModelEmbedder } = require(${JSON.stringify(path.resolve(__dirname, '../../src/core/embed/sharedModel/client.ts'))});
      SharedModelEmbedder.connect({ provider: 'hashed', dimension: 64 }, { folder: ${JSON.stringify(folder)} })
        .then((e) => e.embed(['hello']).then((v) => console.log('dims', v[0].length, 'host', e.hostPid)));
    `;
    const res = spawnSync(process.execPath, ['--require', require.resolve('tsx/cjs'), '-e', script], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(res.status, 0, res.stderr);
    const m = /dims 64 host (\d+)/.exec(res.stdout);
    assert.ok(m, res.stdout);
    hosts.add(Number(m[1]));
    assert.ok(alive(Number(m[1])), 'the host outlives the client that started it');
  });

  it('serves two code-memory mcp servers with the bundled model from one host, which a server starts again when it dies', async () => {
    const store = path.join(base, 'store');
    const servers: Array<{ client: Client; stderr: string[] }> = [];
    const call = async (i: number, name: string, args: Record<string, unknown>) => {
      const r = (await servers[i].client.callTool({ name, arguments: args })) as { content: Array<{ text?: string }>; isError?: boolean };
      assert.ok(!r.isError, r.content[0]?.text);
      return r.content.map((c) => c.text ?? '').join('\n');
    };
    try {
      for (let i = 0; i < 2; i++) {
        const stderr: string[] = [];
        const transport = new StdioClientTransport({
          command: process.execPath,
          args: ['--require', require.resolve('tsx/cjs'), CLI, 'mcp', '--store', store, '--project', 'github.com/acme/app'],
          env: { ...(process.env as Record<string, string>), LANCEDB_LOG: 'error', XDG_RUNTIME_DIR: base, CODE_MEMORY_EMBEDDER: 'use-lite' },
          stderr: 'pipe',
        });
        transport.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
        const client = new Client({ name: `shared-model-test-${i}`, version: '1.0.0' });
        await client.connect(transport);
        servers.push({ client, stderr });
      }
      await call(0, 'remember', { title: 'Retry policy', text: 'Uploads retry with exponential backoff, five attempts at most.' });
      assert.match(await call(1, 'recall_context', { query: 'exponential backoff for uploads' }), /Retry policy/);
      const sockets = readdirSync(folder).filter((f) => f.endsWith('.sock'));
      assert.equal(sockets.length, 1, sockets.join(', '));
      assert.match(sockets[0], /^model-use-lite-/);
      const probe = await connect({ provider: 'use-lite' });
      const first = probe.hostPid;
      await probe.close();
      process.kill(first, 'SIGKILL');
      await until(() => !alive(first), 'the host to die');
      assert.match(await call(0, 'recall_context', { query: 'how many upload attempts' }), /Retry policy/);
      // The server's query embedding started the new host (a raw hello starts nothing).
      const hello = await rawExchange(path.join(folder, sockets[0]), encodeFrame({ type: 'hello', id: 1 }));
      const second = (hello.replies[0] as { pid?: number }).pid;
      assert.ok(second && second !== first, JSON.stringify(hello));
      hosts.add(second);
      for (const s of servers) assert.doesNotMatch(s.stderr.join(''), /not available|could not start/);
    } finally {
      await Promise.all(servers.map((s) => s.client.close()));
    }
  });
});
