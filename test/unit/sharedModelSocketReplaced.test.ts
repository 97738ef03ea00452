import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SharedModelEmbedder } from '../../src/core/embed/sharedModel/client';
import { hostFolder, hostSocketPath } from '../../src/core/embed/sharedModel/protocol';
import { HASHED, alive, endHosts } from './modelHostFixture';


describe('shared model host: a socket file removed while its host ran', function () {
  this.timeout(120_000);
  let base: string;
  let folder: string;
  const hosts = new Set<number>();

  beforeEach(() => {
    base = mkdtempSync(path.join(os.tmpdir(), 'cm-model-replaced-'));
    folder = hostFolder(base);
    process.env.CODE_MEMORY_MODEL_HOST_IDLE_MS = '500';
  });

  afterEach(() => {
    delete process.env.CODE_MEMORY_MODEL_HOST_IDLE_MS;
    endHosts(hosts, base);
  });

  it('is taken by a new host, and the old host leaving at its idle time does not remove the new one', async () => {
    const socketPath = hostSocketPath(folder, HASHED);
    const first = await SharedModelEmbedder.connect(HASHED, { folder });
    hosts.add(first.hostPid);
    // A temp cleaner removed the live host's socket file: the next client starts a host of its own.
    unlinkSync(socketPath);
    const second = await SharedModelEmbedder.connect(HASHED, { folder });
    hosts.add(second.hostPid);
    assert.notEqual(second.hostPid, first.hostPid);
    await first.close();
    const deadline = Date.now() + 10_000;
    while (alive(first.hostPid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    assert.ok(!alive(first.hostPid), 'the first host left at its idle time');
    assert.ok(existsSync(socketPath), "the first host took the second one's socket with it");
    const third = await SharedModelEmbedder.connect(HASHED, { folder });
    assert.equal(third.hostPid, second.hostPid);
    assert.deepEqual(Array.from((await third.embed(['still served']))[0]), Array.from((await second.embed(['still served']))[0]));
    await Promise.all([third.close(), second.close()]);
  });
});
