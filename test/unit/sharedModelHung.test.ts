import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { SharedModelEmbedder } from '../../src/core/embed/sharedModel/client';
import { encodeFrame, FrameReader, hostFolder, hostSocketPath } from '../../src/core/embed/sharedModel/protocol';
import { HASHED, alive, endHosts } from './modelHostFixture';

async function until(check: () => boolean, what: string, ms = 20_000, step?: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await step?.();
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await work;
  return { value, ms: Date.now() - started };
}

const vector = async (text: string) => Array.from((await new HashedEmbedder(64).embed([text]))[0]);

describe('shared model host: a host that stops answering without dying', function () {
  this.timeout(180_000);
  let base: string;
  let folder: string;
  const hosts = new Set<number>();
  const stopped = new Set<number>();

  beforeEach(() => {
    base = mkdtempSync(path.join(os.tmpdir(), 'cm-model-hung-'));
    folder = hostFolder(base);
  });

  afterEach(() => {
    for (const pid of stopped) if (alive(pid)) process.kill(pid, 'SIGCONT');
    stopped.clear();
    endHosts(hosts, base);
  });

  const connect = async (config: Parameters<typeof SharedModelEmbedder.connect>[0] = HASHED) => {
    const e = await SharedModelEmbedder.connect(config, { folder });
    hosts.add(e.hostPid);
    return e;
  };
  const stop = (pid: number) => {
    process.kill(pid, 'SIGSTOP');
    stopped.add(pid);
  };

  it('answers a query from this process within seconds, asks that host nothing more, and uses it again once it answers', async () => {
    const e = await connect();
    try {
      await e.embed(['the host answers at first']);
      assert.ok(e.usesHost);
      stop(e.hostPid);
      // The connection stays open and the kernel takes the request; nobody reads it.
      const first = await timed(e.embed(['where is the retry policy of the uploads']));
      assert.deepEqual(Array.from(first.value[0]), await vector('where is the retry policy of the uploads'));
      assert.ok(first.ms < 15_000, `the query waited ${first.ms} ms for a stopped host`);
      assert.ok(!e.usesHost, 'a host that missed its deadline is not asked again');
      // Every later request is answered here at once, in flight together or one after the other.
      const later = await timed(Promise.all(['second question', 'third question'].map((t) => e.embed([t]))));
      assert.deepEqual(later.value.map((v) => Array.from(v[0])), [await vector('second question'), await vector('third question')]);
      assert.ok(later.ms < first.ms, `later requests took ${later.ms} ms, as long as the first (${first.ms} ms)`);
      process.kill(e.hostPid, 'SIGCONT');
      stopped.delete(e.hostPid);
      await until(() => e.usesHost, 'the host to be used again once it answers', 20_000, () => e.embed(['is the host back']));
      assert.deepEqual(Array.from((await e.embed(['served by the host again']))[0]), await vector('served by the host again'));
    } finally {
      await e.close();
    }
  });

  it('gives requests in flight when the host stopped to this process, and uses a new host once one runs', async () => {
    const e = await connect();
    const old = e.hostPid;
    try {
      await e.embed(['the host answers at first']);
      stop(old);
      const texts = Array.from({ length: 300 }, (_, i) => `observation ${i}: renamed handleRequest${i}`);
      const [batch, query] = await Promise.all([e.embed(texts), e.embed(['one question'])]);
      assert.equal(batch.length, 300);
      assert.deepEqual(Array.from(batch[299]), await vector(texts[299]));
      assert.deepEqual(Array.from(query[0]), await vector('one question'));
      // The stopped host is killed: the next requests start a new one, and use it.
      process.kill(old, 'SIGKILL');
      stopped.delete(old);
      await until(() => e.usesHost, 'a new host to be used', 30_000, () => e.embed(['start a new host']));
      const other = await connect();
      assert.notEqual(other.hostPid, old);
      await other.close();
      assert.deepEqual(Array.from((await e.embed(['from the new host']))[0]), await vector('from the new host'));
    } finally {
      await e.close();
    }
  });

  it('gives up within seconds on a host that answered its hello and then reads without ever writing', async () => {
    // A host of the same model, wedged after its greeting: it keeps reading, and answers nothing.
    const socketPath = hostSocketPath(folder, HASHED);
    let greeted = false;
    const server = net.createServer((socket) => {
      const reader = new FrameReader();
      socket.on('error', () => undefined);
      socket.on('data', (d) => {
        for (const { header } of reader.push(d)) {
          const h = header as { type: string; id: number };
          if (h.type === 'hello' && !greeted) socket.write(encodeFrame({ type: 'hello', id: h.id, name: 'hashed-ngram-64', dimension: 64, pid: 1 }));
          greeted = true;
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    const e = await SharedModelEmbedder.connect(HASHED, { folder });
    try {
      const { value, ms } = await timed(e.embed(['a question for a wedged host']));
      assert.deepEqual(Array.from(value[0]), await vector('a question for a wedged host'));
      assert.ok(ms < 15_000, `the query waited ${ms} ms for a wedged host`);
      assert.ok(!e.usesHost);
    } finally {
      await e.close();
      server.close();
    }
  });

  it('does not take a slow host for a hung one: a batch of long texts on a loaded machine', async () => {
    const e = await connect({ provider: 'use-lite' });
    // Every core busy with another process while the host embeds.
    const burners: ChildProcess[] = Array.from({ length: os.cpus().length }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
    try {
      await e.embed(['load the model first']);
      // Seconds of model calls (tens on a loaded machine), during which the host sends nothing.
      const texts = Array.from({ length: 128 }, (_, i) => `note ${i}: ${'the uploads retry with exponential backoff and jitter, five attempts at most '.repeat(26)}`);
      const { value, ms } = await timed(e.embed(texts));
      assert.equal(value.length, 128);
      assert.ok(e.usesHost, `the host was given up during a batch that took ${ms} ms`);
    } finally {
      for (const b of burners) b.kill('SIGKILL');
      await e.close();
    }
  });
});
