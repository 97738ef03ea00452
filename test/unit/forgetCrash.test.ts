// kill -9 of a process in the middle of a forget (of a project, of ids), at exact points (after a
// given store or table call) and at random moments: the next open finishes the forget, the
// forgotten words in no file (its journal's older copies included), other records intact, search
// working. And a journal whose closure was damaged: the store opens and the forget is finished.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { spawnSync } from 'node:child_process';
import { MemoryEngine } from '../../src/core/engine';
import { TABLES } from '../../src/core/store/schema';
import { filesContaining } from './diskFixture';
import { removeDir, tempDir } from './mcpFixture';
import { runChild } from './fixtures/killAt';

process.env.LANCEDB_LOG ??= 'error';

const KEEP = 'acme/keep';
const GONE = 'acme/wombatgone';
const SECRET = 'wallabysecret';

async function seedTemplate(dir: string): Promise<{ keepIds: number[]; goneIds: number[] }> {
  const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, lexiconMinDelta: 1 });
  try {
    const keep = await engine.observe(Array.from({ length: 120 }, (_, i) => ({ type: 'note', title: `kept note ${i}`, narrative: `ordinary kept payload number ${i}` })), { project: KEEP });
    const gone = await engine.observe(Array.from({ length: 60 }, (_, i) => ({ type: 'note', title: `doomed note ${i}`, narrative: `the ${SECRET} plan item ${i}` })), { project: GONE });
    // One secret in the kept project too, for the forget by id.
    const [one] = await engine.observe([{ type: 'decision', title: 'The quokkaledger decision', narrative: 'We chose quokkaledger for the books.' }], { project: KEEP });
    await engine.flush();
    await engine.optimize(0);
    return { keepIds: keep.map((o) => o.id), goneIds: [...gone.map((o) => o.id), one.id] };
  } finally {
    await engine.close();
  }
}

async function checkAfter(dir: string, what: string, expectKeep: number): Promise<void> {
  const opened = MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  const engine = await Promise.race([opened, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: open hung 60 s`)), 60_000))]);
  try {
    const pending = await engine.store.metaEntries('pending_forget');
    assert.deepEqual(pending.map(([k]) => k), [], `${what}: a forget journal is left after the open`);
    const kept = await engine.store.count(TABLES.observations, `project = '${KEEP}' AND title LIKE 'kept note %'`);
    assert.equal(kept, expectKeep, `${what}: records of the other project lost`);
    const hits = await engine.search('ordinary kept payload', { scope: { project: KEEP }, layers: ['L0'], limit: 5 });
    assert.ok(hits.length > 0, `${what}: search finds nothing`);
    const verify = (await engine.verifyStore()).filter((t) => t.error);
    assert.deepEqual(verify, [], `${what}: tables unreadable`);
  } finally {
    await engine.close();
  }
  assert.deepEqual(filesContaining(dir, SECRET), [], `${what}: the forgotten word is still on disk after the next open`);
}

describe('forget: kill -9 at any point, then the next open', function () {
  this.timeout(600_000);
  let template: string;
  let seeded: { keepIds: number[]; goneIds: number[] };
  const dirs: string[] = [];
  const copy = (): string => {
    const d = tempDir('forget-crash');
    dirs.push(d);
    fs.cpSync(template, d, { recursive: true });
    return d;
  };
  before(async () => {
    template = tempDir('forget-crash-template');
    seeded = await seedTemplate(template);
  });
  after(() => {
    removeDir(template);
    for (const d of dirs) removeDir(d);
  });

  it('forget of a project killed after its journal became a marker, before the meta table was purged: the next open leaves the project name in no file', async () => {
    const dir = copy();
    // setMeta 1: the journal; 2: the marker that names nothing.
    const r = await runChild(dir, 'forgetProject', { project: GONE }, { killAt: 'store.setMeta:2' });
    assert.equal(r.signal, 'SIGKILL', `control: the child was killed at the hook (${r.stdout} ${r.stderr})`);
    await checkAfter(dir, 'kill after the marker', 120);
    assert.deepEqual(filesContaining(dir, 'wombatgone'), [], "the forgotten project's name (in its journal) is still on disk after the next open");
  });

  for (const point of ['table.delete:1', 'table.update:1', 'table.update:4', 'table.optimize:2']) {
    it(`forget of a project killed after ${point}: the next open finishes it`, async () => {
      const dir = copy();
      const r = await runChild(dir, 'forgetProject', { project: GONE }, { killAt: point });
      assert.equal(r.signal, 'SIGKILL', `control: the child was killed at the hook (${r.stdout} ${r.stderr})`);
      await checkAfter(dir, `forget project, kill after ${point}`, 120);
      assert.deepEqual(filesContaining(dir, 'wombatgone'), [], 'the project name survives');
    });
  }

  for (const point of ['table.delete:1', 'table.update:2', 'store.setMeta:3']) {
    it(`forget of ids killed after ${point}: the next open finishes it`, async () => {
      const dir = copy();
      const ids = [seeded.goneIds[seeded.goneIds.length - 1]];
      const r = await runChild(dir, 'forgetIds', { project: KEEP, ids }, { killAt: point });
      assert.equal(r.signal, 'SIGKILL', `control: the child was killed at the hook (${r.stdout} ${r.stderr})`);
      // the doomed project is untouched by this forget: only the kept project's secret goes
      const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      try {
        assert.equal(await engine.store.count(TABLES.observations, `project = '${KEEP}' AND title LIKE 'kept note %'`), 120);
        assert.equal(await engine.store.count(TABLES.observations, `project = '${GONE}'`), 60);
        assert.deepEqual((await engine.store.metaEntries('pending_forget')).map(([k]) => k), []);
        assert.equal(await engine.store.count(TABLES.observations, `id = ${ids[0]}`), 0);
        assert.equal(await engine.store.count(TABLES.cells, `source_id = ${ids[0]} AND source_kind = 'observation'`), 0);
      } finally {
        await engine.close();
      }
      const files = filesContaining(dir, 'quokkaledger');
      assert.deepEqual(files, [], 'the forgotten record\'s own words survive on disk');
    });
  }

  it('forget of a project killed at random moments (2 runs): the next open finishes it', async () => {
    const cal = copy();
    const whole = await runChild(cal, 'forgetProject', { project: GONE });
    assert.equal(whole.code, 0, whole.stderr);
    for (let run = 0; run < 2; run++) {
      const dir = copy();
      const delay = Math.floor(whole.ms * (0.2 + 0.5 * run));
      const r = await runChild(dir, 'forgetProject', { project: GONE }, { killAfterMs: delay });
      await checkAfter(dir, `run ${run}, killed ${delay} ms into a ${whole.ms} ms forget (${r.signal ?? 'finished'})`, 120);
    }
  });

  it('a forget journal whose closure was damaged (still JSON): the store opens and the forget is finished from the records', async () => {
    const dir = tempDir('forget-journal');
    dirs.push(dir);
    const e = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    let id: number;
    try {
      [{ id }] = await e.observe([{ type: 'note', title: 'the emusecret note', narrative: 'emusecret' }], { project: KEEP });
      await e.observe([{ type: 'note', title: 'kept', narrative: 'kept' }], { project: KEEP });
      await e.flush();
      const dead = spawnSync(process.execPath, ['-e', '']).pid as number;
      const journal = {
        request: { kind: 'observation', ids: [id] },
        scope: { project: KEEP },
        owner: { pid: dead, host: os.hostname() },
        closure: { doomed: { observation: [String(id) + 'x'], session_summary: null, memory: [] }, entities: [], restore: [] },
      };
      await e.store.setMeta({ 'pending_forget:damaged': JSON.stringify(journal) });
    } finally {
      await e.close();
    }
    let opened: MemoryEngine | null = null;
    let error: unknown = null;
    try {
      opened = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    } catch (err) {
      error = err;
    }
    try {
      assert.equal(error, null, `the store does not open any more: ${String((error as Error)?.stack ?? error)}`);
      assert.equal(await opened!.store.count(TABLES.observations, `title = 'kept'`), 1);
      assert.equal(await opened!.store.count(TABLES.observations, `title = 'the emusecret note'`), 0);
      assert.deepEqual((await opened!.store.metaEntries('pending_forget')).map(([k]) => k), []);
    } finally {
      await opened?.close();
    }
    assert.deepEqual(filesContaining(dir, 'emusecret'), []);
  });
});
