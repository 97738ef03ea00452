// A forget by id that finds the disk full before it could journal anything (its first write, the
// journal, fails): the error says it was not done and that it is tried again; once space is freed,
// the process's upkeep finishes it without the user asking again, and its text is in no file.

import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import { looksLikeFullDisk } from '../../src/core/errorText';
import { TABLES } from '../../src/core/store/schema';
import { filesContaining, fillDisk } from './diskFixture';

process.env.LANCEDB_LOG ??= 'error';

describe('a forget by id that finds the disk full before it wrote anything', function () {
  this.timeout(300_000);
  const project = 'acme/fullforget';
  const scope = { project };
  let disk = '';
  let engine: MemoryEngine | null = null;

  beforeEach(function () {
    disk = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-forget-fulldisk-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', disk], { stdio: 'ignore' });
    } catch {
      fs.rmSync(disk, { recursive: true, force: true });
      disk = '';
      this.skip();
    }
  });
  afterEach(async () => {
    await engine?.close().catch(() => undefined);
    engine = null;
    if (!disk) return;
    try {
      execFileSync('umount', ['-l', disk]);
    } catch {
      // not mounted
    }
    fs.rmSync(disk, { recursive: true, force: true });
  });

  it('says it was not done and will be tried again; once space is freed, the upkeep finishes it: the record is not served and its text is in no file', async () => {
    const store = path.join(disk, 'store');
    engine = await MemoryEngine.open({ storeUri: store, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    const m = `zqxfull${randomBytes(4).toString('hex')}`;
    await engine.observe(Array.from({ length: 10 }, (_, i) => ({ type: 'note', title: `ordinary note ${i}`, narrative: `routine item ${i}` })), scope);
    const [o] = await engine.observe([{ type: 'note', title: `${m} title`, narrative: `the ${m} narrative` }], scope);
    await engine.flush();
    await engine.waitForVectors();
    await engine.optimize(0);
    const before = await engine.store.count(TABLES.meta);

    const filler = fillDisk(disk, 0);
    let failure = '';
    try {
      await engine.forget({ kind: 'observation', ids: [o.id] }, scope);
    } catch (e) {
      failure = e instanceof Error ? e.message : String(e);
    }
    assert.ok(failure, 'control: the forget found room on the full disk');
    assert.ok(looksLikeFullDisk(failure), `named as a full disk: ${failure}`);
    assert.equal(await engine.store.count(TABLES.meta), before, `control: nothing was journalled on the full disk (${failure})`);
    assert.match(failure, /not done/i, failure);
    assert.match(failure, /tries it again|tried again|retried/i, failure);

    fs.rmSync(filler);
    // The process runs on: its upkeep (the maintenance timer's) finishes the forget.
    await engine.optimize(0);
    assert.equal(await engine.store.count(TABLES.observations, `id = ${o.id}`), 0, 'the record is still stored after space was freed and the upkeep ran');
    const found = await engine.getObservations([o.id], scope);
    assert.equal(found.length, 0, 'the forgotten record is still served');
    await engine.close();
    engine = null;
    assert.deepEqual(filesContaining(store, m), [], 'files still holding the forgotten record');
  });

  it('the process closes before space is freed: the failure said to run it again, and nothing of it is half done', async () => {
    const store = path.join(disk, 'store');
    engine = await MemoryEngine.open({ storeUri: store, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    const m = `zqxfull${randomBytes(4).toString('hex')}`;
    const [o] = await engine.observe([{ type: 'note', title: `${m} title`, narrative: `the ${m} narrative` }], scope);
    await engine.flush();
    await engine.optimize(0);
    const filler = fillDisk(disk, 0);
    const failure = await engine.forget({ kind: 'observation', ids: [o.id] }, scope).then(
      () => '',
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    assert.ok(failure, 'control: the forget found room on the full disk');
    assert.match(failure, /run (it|the forget) again/i, failure);
    await engine.close().catch(() => undefined);
    engine = null;
    fs.rmSync(filler);
    // Not forgotten at all (never half): the record and its cell are both there.
    const reopened = await MemoryEngine.open({ storeUri: store, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    engine = reopened;
    assert.equal(await reopened.store.count(TABLES.observations, `id = ${o.id}`), 1);
    assert.equal(await reopened.store.count(TABLES.cells, `source_kind = 'observation' AND source_id = ${o.id}`), 1);
    await reopened.forget({ kind: 'observation', ids: [o.id] }, scope);
    await reopened.close();
    engine = null;
    assert.deepEqual(filesContaining(store, m), [], 'files still holding the forgotten record after it was run again');
  });
});
