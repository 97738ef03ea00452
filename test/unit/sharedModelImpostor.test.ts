import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, unlinkSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SharedModelEmbedder } from '../../src/core/embed/sharedModel/client';
import { encodeFrame, FrameReader, hostFolder, hostSocketPath } from '../../src/core/embed/sharedModel/protocol';
import { startEmbedder } from '../../src/core/embed/start';
import { WorkerEmbedder } from '../../src/core/embed/workerEmbedder';
import { HASHED, alive, endHosts } from './modelHostFixture';


/**
 * A process that is not a model host, listening on a host's socket path: it answers hello with
 * `hello` (or never answers), and keeps the texts it is sent.
 */
function impostor(socketPath: string, hello: Record<string, unknown> | null): Promise<{ server: net.Server; texts: string[] }> {
  const texts: string[] = [];
  const server = net.createServer((socket) => {
    const reader = new FrameReader();
    socket.on('error', () => undefined);
    socket.on('data', (d) => {
      for (const { header } of reader.push(d)) {
        const h = header as { type: string; id: number; texts?: string[] };
        if (h.texts) texts.push(...h.texts);
        if (h.type === 'hello' && hello) socket.write(encodeFrame({ ...hello, id: h.id }));
      }
    });
  });
  return new Promise((resolve) => server.listen(socketPath, () => resolve({ server, texts })));
}

describe('shared model host: another process on its socket', function () {
  this.timeout(120_000);
  let base: string;
  let folder: string;
  const hosts = new Set<number>();

  beforeEach(() => {
    base = mkdtempSync(path.join(os.tmpdir(), 'cm-model-impostor-'));
    folder = hostFolder(base);
  });

  afterEach(() => {
    endHosts(hosts, base);
  });

  it('is not used when it answers hello as another model, and the model then runs in a thread of this process', async () => {
    const evil = { type: 'hello', name: 'evil-model', dimension: 3, pid: 1 };
    const hashed = await impostor(hostSocketPath(folder, HASHED), evil);
    const useLite = await impostor(hostSocketPath(folder, { provider: 'use-lite' }), evil);
    try {
      await assert.rejects(SharedModelEmbedder.connect(HASHED, { folder, startTimeoutMs: 500 }), /is not a shared model host of hashed-ngram-64 \(it answered .*evil-model/);
      const said: string[] = [];
      const e = await startEmbedder({ provider: 'use-lite' }, (m) => said.push(m), { folder, startTimeoutMs: 500 });
      try {
        assert.ok(e instanceof WorkerEmbedder);
        assert.deepEqual([e.name, e.dimension], ['use-lite-512', 512]);
        assert.match(said.join('\n'), /not a shared model host of use-lite-512/);
      } finally {
        await e.close?.();
      }
    } finally {
      hashed.server.close();
      useLite.server.close();
    }
  });

  it('gets no text, and no minute of waiting, when it took the socket of a host that died: the model runs in this process', async () => {
    const e = await SharedModelEmbedder.connect(HASHED, { folder, startTimeoutMs: 5_000 });
    hosts.add(e.hostPid);
    const socketPath = hostSocketPath(folder, HASHED);
    process.kill(e.hostPid, 'SIGKILL');
    while (alive(e.hostPid)) await new Promise((r) => setTimeout(r, 25));
    if (existsSync(socketPath)) unlinkSync(socketPath);
    // It accepts the connection and never answers.
    const { server, texts } = await impostor(socketPath, null);
    try {
      const asked = Date.now();
      const [got] = await e.embed(['a memory of the project']);
      assert.ok(Date.now() - asked < 15_000, `answered after ${Date.now() - asked} ms`);
      const here = await WorkerEmbedder.start(HASHED);
      try {
        assert.deepEqual(Array.from(got), Array.from((await here.embed(['a memory of the project']))[0]));
      } finally {
        await here.close();
      }
      assert.equal(e.usesHost, false);
      assert.deepEqual(texts, []);
    } finally {
      server.close();
      await e.close();
    }
  });
});
