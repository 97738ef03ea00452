// kill -9 of a JSON Lines import (after exact writes and at random moments), then the same file
// imported again: every record once, each with one search cell, the store's own records kept.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { TABLES } from '../../src/core/store/schema';
import { runChild } from './fixtures/killAt';
import { removeDir, tempDir } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

async function* linesOf(file: string): AsyncIterable<string> {
  yield* fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim());
}

const A = 'acme/imported';
const B = 'acme/second';
const OWN = 'acme/own';

async function check(dir: string, what: string, expect: { obs: number; mem: number; own: number }): Promise<void> {
  const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  try {
    const obs = await engine.store.rows(TABLES.observations, `project IN ('${A}', '${B}')`, { select: ['id', 'title', 'project'] });
    const titles = obs.map((r) => `${r.project}|${r.title}`);
    assert.equal(new Set(titles).size, titles.length, `${what}: an imported observation stored twice`);
    assert.equal(obs.length, expect.obs, `${what}: imported observations`);
    const mem = await engine.store.rows(TABLES.memories, `project IN ('${A}', '${B}')`, { select: ['id', 'title'] });
    assert.equal(mem.length, expect.mem, `${what}: imported memories`);
    assert.equal(await engine.store.count(TABLES.observations, `project = '${OWN}'`), expect.own, `${what}: the store's own records`);
    const ids = (await engine.store.rows(TABLES.observations, null, { select: ['id'] })).map((r) => Number(r.id));
    assert.equal(new Set(ids).size, ids.length, `${what}: an id twice`);
    let records = 0;
    for (const t of [TABLES.observations, TABLES.sessionSummaries, TABLES.memories] as const) records += await engine.store.count(t);
    assert.equal(await engine.store.count(TABLES.cells), records, `${what}: cells vs records`);
    const hits = await engine.search('echidnaword', { scope: { project: A }, layers: ['L0'], limit: 5 });
    assert.ok(hits.length > 0, `${what}: search finds no imported record`);
  } finally {
    await engine.close();
  }
}

describe('import: kill -9 at any point, then the same file again', function () {
  this.timeout(600_000);
  let file: string;
  let target: string;
  let src: string;
  const dirs: string[] = [];
  let counts = { obs: 0, mem: 0 };
  before(async () => {
    src = tempDir('import-crash-src');
    target = tempDir('import-crash-target');
    const s = await MemoryEngine.open({ storeUri: src, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      for (const [p, n] of [[A, 400], [B, 200]] as const) {
        for (let i = 0; i < n; i += 100) {
          await s.observe(Array.from({ length: 100 }, (_, k) => ({ type: 'edit', title: `${p} change ${i + k}`, narrative: `echidnaword work ${i + k}`, files_modified: [`src/f${(i + k) % 7}.ts`], memory_session_id: `sess-${(i + k) % 5}` })), { project: p });
        }
        for (let m = 0; m < 5; m++) await s.remember({ title: `${p} decision ${m}`, text: `We decided echidnaword ${m}.`, memory_type: 'decision' }, { project: p });
      }
      await s.flush();
      const lines: string[] = [];
      await s.exportJsonl((l) => lines.push(l), null);
      file = path.join(src, 'export.jsonl');
      fs.writeFileSync(file, lines.join('\n') + '\n');
      counts = { obs: await s.store.count(TABLES.observations), mem: await s.store.count(TABLES.memories) };
    } finally {
      await s.close();
    }
    // The target holds records of its own, whose ids clash with the file's.
    const t = await MemoryEngine.open({ storeUri: target, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      await t.observe(Array.from({ length: 150 }, (_, k) => ({ type: 'note', title: `own note ${k}`, narrative: `own ${k}` })), { project: OWN });
      await t.flush();
    } finally {
      await t.close();
    }
  });
  after(() => {
    removeDir(src);
    removeDir(target);
    for (const d of dirs) removeDir(d);
  });
  const copy = (): string => {
    const d = tempDir('import-crash');
    dirs.push(d);
    fs.cpSync(target, d, { recursive: true });
    return d;
  };

  const points = ['table.add:2', 'table.mergeInsert:1', 'store.upsert:2'];
  for (const point of points) {
    it(`killed after ${point}, then imported again: every record once, with its cell`, async () => {
      const dir = copy();
      const r = await runChild(dir, 'import', { file }, { killAt: point });
      assert.equal(r.signal, 'SIGKILL', `control: the child was killed at the hook (${r.code} ${r.stderr.slice(0, 500)})`);
      const e = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      try {
        await e.importJsonl(linesOf(file));
      } finally {
        await e.close();
      }
      await check(dir, `kill after ${point} (${r.signal ?? 'finished'})`, { ...counts, own: 150 });
    });
  }

  it('killed at random moments (2 runs), then imported again', async () => {
    const cal = copy();
    const whole = await runChild(cal, 'import', { file });
    assert.equal(whole.code, 0, whole.stderr);
    await check(cal, 'uninterrupted', { ...counts, own: 150 });
    for (let run = 0; run < 2; run++) {
      const dir = copy();
      const delay = Math.floor(whole.ms * (0.25 + 0.4 * run));
      const r = await runChild(dir, 'import', { file }, { killAfterMs: delay });
      const e = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      try {
        await e.importJsonl(linesOf(file));
      } finally {
        await e.close();
      }
      await check(dir, `run ${run}, killed ${delay} of ${whole.ms} ms (${r.signal ?? 'finished'})`, { ...counts, own: 150 });
    }
  });
});
