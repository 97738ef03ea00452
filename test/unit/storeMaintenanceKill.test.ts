// SIGKILL of the process doing the store's maintenance (compaction, pruning,
// scalar index rebuilds, full-text segment writes, ANN index build): on reopen the store opens,
// verifies whole, keeps every record once and finds each by search.

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { TABLES } from '../../src/core/store/schema';
import { letterWord } from './diskFixture';

process.env.LANCEDB_LOG ??= 'error';

const ENGINE = path.resolve(__dirname, '../../src/core/engine');
const project = 'github.com/acme/maint';

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A child process that opens the store (hashed vectors, so the backfill and ANN index run too) and runs a full optimize. */
function maintain(store: string): { opened: Promise<number>; exited: Promise<{ code: number | null; signal: string | null; stderr: string }>; kill: () => void } {
  const code = `
    const { MemoryEngine } = require(${JSON.stringify(ENGINE)});
    (async () => {
      const e = await MemoryEngine.open({ storeUri: ${JSON.stringify(store)}, maintenanceIntervalMs: 0, annThreshold: 256, lexiconMinDelta: 50 });
      process.stdout.write('opened\\n');
      await e.waitForVectors();
      await e.optimize(0);
      await e.close();
      process.stdout.write('done\\n');
    })().catch((err) => { process.stderr.write(String(err && err.stack || err)); process.exit(3); });
  `;
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', '-e', code], { cwd: path.resolve(__dirname, '../..'), env: { ...process.env, LANCEDB_LOG: 'error' } });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let stdout = '';
  const opened = new Promise<number>((resolve) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (stdout.includes('opened')) resolve(Date.now());
    });
  });
  return {
    opened,
    exited: new Promise((resolve) => child.on('exit', (c, s) => resolve({ code: c, signal: s, stderr }))),
    kill: () => child.kill('SIGKILL'),
  };
}

async function check(store: string, total: number, what: string): Promise<void> {
  const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
  try {
    const damaged = (await engine.verifyStore()).filter((t) => t.error);
    assert.deepEqual(damaged, [], `${what}: tables that cannot be read`);
    const rows = await engine.store.rows(TABLES.observations, null, { select: ['id'] });
    assert.equal(rows.length, total, `${what}: observations`);
    assert.equal(new Set(rows.map((r) => Number(r.id))).size, total, `${what}: an id twice`);
    const cells = await engine.store.rows(TABLES.cells, `source_kind = 'observation'`, { select: ['source_id'] });
    assert.equal(cells.length, total, `${what}: observation cells`);
    for (let i = 0; i < total; i += 97) {
      const hits = await engine.search(letterWord(i), { scope: { project }, layers: ['L0'], limit: 5 });
      assert.ok(hits.some((h) => h.cell.title.includes(letterWord(i)) || h.cell.text.includes(letterWord(i))), `${what}: note ${letterWord(i)} is not found by search`);
    }
  } finally {
    await engine.close();
  }
}

describe('store: SIGKILL during maintenance', function () {
  this.timeout(900_000);
  let store: string;
  before(() => {
    store = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-maint-kill-'));
  });
  after(() => fs.rmSync(store, { recursive: true, force: true }));

  it('optimize (compaction, pruning, full-text segments, vector backfill and ANN index) killed at moments through its run, 4 times', async () => {
    const N = 2000;
    let total = 0;
    // Many small commits: many fragments to compact.
    const seed = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      for (let b = 0; b < 40; b++) {
        await seed.observe(Array.from({ length: N / 40 }, (_, k) => ({ type: 'note', title: `note ${letterWord(total + k)}`, narrative: `maintenance item ${letterWord(total + k)}` })), { project });
        total += N / 40;
      }
    } finally {
      await seed.close();
    }
    // How long the maintenance itself takes (from the open on): a copy of the store, maintained whole.
    const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-maint-kill-cal-'));
    let budget: number;
    try {
      fs.cpSync(store, probe, { recursive: true });
      const whole = maintain(probe);
      const done = await whole.exited;
      assert.equal(done.code, 0, done.stderr);
      budget = Date.now() - (await whole.opened);
    } finally {
      fs.rmSync(probe, { recursive: true, force: true });
    }
    let killed = 0;
    for (let run = 0; run < 12 && killed < 4; run++) {
      // More rows between runs, so each run has something to compact and index.
      const more = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
      try {
        for (let b = 0; b < 5; b++) {
          await more.observe(Array.from({ length: 20 }, (_, k) => ({ type: 'note', title: `note ${letterWord(total + k)}`, narrative: `maintenance item ${letterWord(total + k)}` })), { project });
          total += 20;
        }
      } finally {
        await more.close();
      }
      const m = maintain(store);
      const opened = await Promise.race([m.opened, m.exited.then(() => 0)]);
      await Promise.race([m.exited, sleep(budget * (0.2 + 0.6 * Math.random()))]);
      m.kill();
      const r = await m.exited;
      if (r.signal === 'SIGKILL') killed++;
      else {
        assert.equal(r.code, 0, r.stderr);
        // It had less to do than the calibration: the next kill comes sooner.
        if (opened > 0) budget = Math.min(budget, Date.now() - opened);
      }
      await check(store, total, `run ${run} (${r.signal ?? 'finished'})`);
    }
    assert.ok(killed >= 3, `only ${killed} runs were killed midway`);
  });
});
