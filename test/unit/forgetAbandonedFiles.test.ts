// A write that loses its commit (an access count racing a vector write-back or another process's
// count, a preempted compaction) leaves a data file no version references, which LanceDB keeps for
// seven days: a forget deletes those holding what it forgot, on disk and in a bucket, and leaves
// the files of other rows alone.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { RowMarkers } from '../../src/core/store/abandonedFiles';
import { TABLES } from '../../src/core/store/schema';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { getObservations } from '../../src/core/tools/getObservations';
import { recallContext } from '../../src/core/tools/recallContext';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { filesContaining } from './diskFixture';
import { setEnv, startS3Server } from './fixtures/s3Server';
import type { S3Server } from './fixtures/s3Server';
import { toolContext } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const marker = (): string => `zqxmarker${randomBytes(4).toString('hex')}`;
/** Rounds of: a record stored, its access counted 5 times in the background, then forgotten at once; the markers of the records. */
async function readThenForget(engine: MemoryEngine, scope: Scope, rounds: number): Promise<string[]> {
  const markers: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const m = marker();
    markers.push(m);
    const [o] = await engine.observe([{ type: 'note', title: `${m} title`, narrative: `the ${m} narrative` }], scope);
    await engine.flush();
    for (let k = 0; k < 5; k++) await engine.touch('observation', [o.id], scope, { background: true });
    await engine.forget({ kind: 'observation', ids: [o.id] }, scope);
  }
  return markers;
}

const ordinary = Array.from({ length: 50 }, (_, i) => ({ type: 'note', title: `ordinary note ${i}`, narrative: `routine item ${i}` }));

describe('RowMarkers: a row told by markers no other row shares', () => {
  const uuid = (n: number): string => `6f9619ff-8b86-d011-b42d-${String(n).padStart(12, '0')}`;
  for (const count of [3, 500]) {
    it(`finds a file holding one of ${count} forgotten rows, and not one holding other rows (${count > 64 ? 'looked up by a window' : 'looked for one by one'})`, () => {
      const cells = new RowMarkers(TABLES.cells);
      for (let i = 0; i < count; i++) cells.add({ node_id: uuid(i) });
      assert.equal(cells.size, count);
      assert.equal(cells.heldIn(`\u0000garbage${uuid(count - 1)}more\u0001`), true);
      assert.equal(cells.heldIn(`\u0000garbage${uuid(count + 7)}more${uuid(count + 8).slice(0, 30)}`), false);
    });
  }
  it('an observation is told by its creation time with its title, both in the file', () => {
    const rows = new RowMarkers(TABLES.observations);
    rows.add({ created_at: '2026-12-05T13:51:19.123Z', title: 'Edited src/app.ts' });
    rows.add({ created_at: 'short', title: 'a title' });
    assert.equal(rows.size, 1, 'a row whose first marker value is too short to tell it is left out');
    assert.equal(rows.heldIn('..2026-12-05T13:51:19.123Z2026-12-05T13:51:20.000Z..Edited src/app.tsEdited src/b.ts'), true);
    // Another edit of the same file written a millisecond later is not the forgotten one.
    assert.equal(rows.heldIn('..2026-12-05T13:51:19.124Z..Edited src/app.ts'), false);
    assert.equal(rows.heldIn('..2026-12-05T13:51:19.123Z..Edited src/other.ts'), false);
  });
});

describe('forget: data files that writes which lost their commit left', function () {
  this.timeout(600_000);
  const scope: Scope = { project: 'acme/abandoned' };
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-forget-abandoned-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a record another engine reads (counts the access of) over and over while it is forgotten is in no file afterwards', async () => {
    const reader = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    const forgetter = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    const markers: string[] = [];
    try {
      await reader.observe(ordinary, scope);
      for (let round = 0; round < 4; round++) {
        const m = marker();
        markers.push(m);
        const [o] = await reader.observe([{ type: 'note', title: `${m} title`, narrative: `the ${m} narrative` }], scope);
        await reader.flush();
        let stop = false;
        const reads = (async () => {
          while (!stop) await reader.touch('observation', [o.id], scope).catch(() => undefined);
        })();
        await new Promise((r) => setTimeout(r, 150));
        await forgetter.forget({ kind: 'observation', ids: [o.id] }, scope);
        stop = true;
        await reads;
      }
    } finally {
      await reader.close();
      await forgetter.close();
    }
    const leaks = markers.flatMap((m) => filesContaining(dir, m).map((f) => `${m}: ${f}`));
    assert.deepEqual(leaks, [], 'files still holding a forgotten record');
    const kept = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      assert.equal(await kept.store.count(TABLES.observations), ordinary.length, 'the other records stay, readable');
      assert.equal((await kept.search('routine item', { scope, layers: ['L0'], limit: 60 })).length, ordinary.length);
    } finally {
      await kept.close();
    }
  });

  it('reads counted in the background right before the forget (one engine, its vector write-back running) leave it in no file', async () => {
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    let markers: string[] = [];
    try {
      await engine.observe(ordinary, scope);
      markers = await readThenForget(engine, scope, 4);
    } finally {
      await engine.close();
    }
    assert.deepEqual(
      markers.flatMap((m) => filesContaining(dir, m).map((f) => `${m}: ${f}`)),
      [],
    );
  });

  for (const tool of ['get_observations', 'retrieve_memory', 'recall_context'] as const) {
    it(`a fresh observation an agent read through ${tool}, then forgotten, is in no file`, async () => {
      const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
      const markers: string[] = [];
      try {
        await engine.observe(ordinary, scope);
        for (let round = 0; round < 3; round++) {
          const m = marker();
          markers.push(m);
          const [o] = await engine.observe([{ type: 'decision', title: `${m} title`, narrative: `We decided ${m} for the cache.` }], scope);
          const ctx = toolContext(engine, scope);
          if (tool === 'get_observations') await getObservations(ctx, { ids: [o.id], source: 'observation' });
          else if (tool === 'retrieve_memory') await retrieveMemory(ctx, { prompt: `what did we decide about ${m}?`, session_id: 'ps' });
          else await recallContext(ctx, { query: `${m} decision` });
          await engine.forget({ kind: 'observation', ids: [o.id] }, scope);
        }
      } finally {
        await engine.close();
      }
      assert.deepEqual(
        markers.flatMap((m) => filesContaining(dir, m).map((f) => `${m}: ${f}`)),
        [],
      );
    });
  }
});

describe('forget on a personal store on S3: objects that writes which lost their commit left', function () {
  this.timeout(300_000);
  let dir: string;
  let s: S3Server;
  let restoreEnv: () => void;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-forget-abandoned-s3-'));
    s = await startS3Server({ directory: path.join(dir, 's3'), bucket: 'personal' });
    restoreEnv = setEnv(s.env);
  });
  afterEach(async () => {
    restoreEnv();
    await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a record read (its access counted) right before its forget is in no object of the bucket', async () => {
    const scope: Scope = { project: 'acme/s3read' };
    let markers: string[] = [];
    const engine = await MemoryEngine.open({ storeUri: 's3://personal/me', embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    try {
      await engine.observe(ordinary.slice(0, 20), scope);
      markers = await readThenForget(engine, scope, 3);
    } finally {
      await engine.close();
    }
    const files = await s.files();
    const leaks = markers.flatMap((m) => files.filter((f) => f.bytes.includes(m)).map((f) => `${m}: ${f.file}`));
    assert.deepEqual(leaks, [], 'objects still holding a forgotten record');
  });
});
