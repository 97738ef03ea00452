import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import type { Embedder } from '../../src/core/embed/embedder';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import { TABLES } from '../../src/core/store/schema';

process.env.LANCEDB_LOG ??= 'error';

// What opening the engine waits for: the store opens while the embedder loads, and an open of an
// unchanged store writes nothing.
describe('MemoryEngine.open', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-memory-open-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const later = <T>(value: T, ms: number): Promise<T> => new Promise((resolve) => setTimeout(() => resolve(value), ms));
  const metaVersion = async (): Promise<number> => (await (await lancedb.connect(dir)).openTable(TABLES.meta)).version();

  it('creates a new store with the dimension of an embedder that is still loading', async () => {
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: later<Embedder>(new HashedEmbedder(64), 100), maintenanceIntervalMs: 0 });
    try {
      const [obs] = await engine.observe([{ type: 'change', title: 'retry the upload on timeout', narrative: 'uploads retry three times' }], { project: 'p' });
      await engine.flush();
      const stats = await engine.stats({ project: 'p' });
      assert.deepEqual(stats.embedder, { name: 'hashed-ngram-64', dimension: 64 });
      assert.ok(obs.id > 0);
      const hits = await engine.search('upload retry', { scope: { project: 'p' }, limit: 5 });
      assert.equal(hits[0]?.cell.source_id, obs.id);
    } finally {
      await engine.close();
    }
  });

  it('writes nothing when it opens an unchanged store', async () => {
    await (await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0 })).close();
    const before = await metaVersion();
    await (await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0 })).close();
    assert.equal(await metaVersion(), before);
    // A model switch is recorded.
    await (await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(32), maintenanceIntervalMs: 0 })).close();
    assert.ok((await metaVersion()) > before);
  });

  it('refuses an empty store location instead of writing a store into the current folder', async () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      for (const storeUri of ['', '   ']) {
        await assert.rejects(MemoryEngine.open({ storeUri, embedder: 'none', maintenanceIntervalMs: 0 }), /store location is needed/);
      }
      assert.deepEqual(fs.readdirSync(dir), []);
    } finally {
      process.chdir(cwd);
    }
  });

  it('rejects when the embedder it was given fails', async () => {
    await assert.rejects(MemoryEngine.open({ storeUri: dir, embedder: Promise.reject(new Error('model missing')), maintenanceIntervalMs: 0 }), /model missing/);
  });
});
