// A full disk, through the CLI, the tools and doctor: named as such, never as a damaged store to
// restore from a backup (which would lose what was written since); once space is freed, the same
// command works and the store holds each record once.

import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { looksDamaged, looksLikeFullDisk } from '../../src/core/errorText';
import { TABLES } from '../../src/core/store/schema';
import { findTool } from '../../src/core/tools/registry';
import { errorText } from '../../src/core/tools/types';
import { runMain } from './cliInProcess';
import { fillDisk } from './diskFixture';
import { toolContext } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const project = 'github.com/acme/fulldisk';

async function seed(store: string, tag: string, n: number, scope = { project }): Promise<void> {
  const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
  try {
    await engine.observe(Array.from({ length: n }, (_, i) => ({ type: 'note', title: `${tag} note ${i}`, narrative: `${tag} narrative ${i} ${'pad '.repeat(30)}` })), scope);
    await engine.flush();
  } finally {
    await engine.close();
  }
}

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

async function doctorStore(store: string): Promise<{ code: number; check: Check }> {
  const r = await runMain(['doctor', '--store', store, '--project', project, '--embedder', 'none', '--json']);
  const check = (JSON.parse(r.out) as { checks: Check[] }).checks.find((c) => c.name === 'store');
  assert.ok(check, r.out);
  return { code: r.code, check };
}

describe('the words of a full disk', () => {
  it("LanceDB's, Node's and a spent quota's are a full disk, not damage; the tools say so and what to do", () => {
    for (const message of [
      'lance error: LanceError(IO): No space left on device (os error 28)',
      'lance error: LanceError(IO): Generic LocalFileSystem error: Unable to copy data to file: No space left on device (os error 28)',
      'ENOSPC: no space left on device, write',
      'lance error: LanceError(IO): Disk quota exceeded (os error 122)',
      'EDQUOT: disk quota exceeded, write',
    ]) {
      assert.ok(looksLikeFullDisk(message), message);
      assert.ok(!looksDamaged(message), message);
    }
    assert.ok(looksDamaged('lance error: LanceError(IO): failed to read file header'), 'control: another LanceError(IO) is damage');
    assert.ok(!looksLikeFullDisk('lance error: LanceError(IO): failed to read file header'));
    const text = errorText(new Error('lance error: LanceError(IO): No space left on device (os error 28), /root/.cargo/registry/src/lance-io-0.31/src/local.rs:120:9'));
    assert.match(text, /^the disk that holds the store is full \(lance error: LanceError\(IO\): No space left on device \(os error 28\)\): free some space on it and run it again; what the store held before is whole$/);
  });
});

describe('a full disk', function () {
  this.timeout(300_000);
  const mounts: string[] = [];
  /** A tmpfs of `size` at a new folder (the test is skipped where nothing can be mounted). */
  function mount(ctx: Mocha.Context, size: string): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-fulldisk-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    } catch {
      fs.rmSync(dir, { recursive: true, force: true });
      ctx.skip();
    }
    mounts.push(dir);
    return dir;
  }
  const sources: string[] = [];
  after(() => {
    for (const m of mounts) {
      try {
        execFileSync('umount', ['-l', m]);
      } catch {
        // not mounted
      }
      fs.rmSync(m, { recursive: true, force: true });
    }
    for (const d of sources) fs.rmSync(d, { recursive: true, force: true });
  });

  it('an import whose LanceDB write finds the disk full: the CLI and doctor name the full disk, not damage; once space is freed, doctor calls the store ok and the same import stores each record once', async function () {
    const source = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-fulldisk-src-'));
    sources.push(source);
    await seed(path.join(source, 'store'), 'imported', 300);
    const file = path.join(source, 'export.jsonl');
    const exported = await runMain(['export', '--store', path.join(source, 'store'), '--project', project, '--out', file]);
    assert.equal(exported.code, 0, exported.err);

    const disk = mount(this, '3m');
    const store = path.join(disk, 'store');
    await seed(store, 'own', 5, { project: 'acme/own' });
    // Room for the id counter, none for the records' data files.
    const filler = fillDisk(disk, 90 * 1024);
    const args = ['import', file, '--store', store, '--project', project, '--embedder', 'none'];
    const failed = await runMain(args);
    const doctor = await doctorStore(store);
    const said = `import: ${failed.code} ${failed.err}\ndoctor: ${doctor.code} ${JSON.stringify(doctor.check)}`;
    assert.equal(failed.code, 1, said);
    assert.match(failed.err, /LanceError\(IO\).*No space left on device/, `control: a LanceDB write found the disk full\n${said}`);
    assert.match(failed.err, /\nThe disk is full: free some space on it and run it again; what the store held before is whole\.\n$/, said);
    assert.doesNotMatch(failed.err, /damaged|doctor|backup/i, said);
    assert.equal(doctor.code, 1, said);
    assert.equal(doctor.check.ok, false, said);
    assert.match(doctor.check.detail, /disk is full/, said);
    assert.match(doctor.check.fix ?? '', /^Free some space on the disk that holds the store folder/, said);
    assert.doesNotMatch(JSON.stringify(doctor.check), /damaged|from a backup/i, said);

    fs.rmSync(filler);
    const freed = await doctorStore(store);
    assert.equal(freed.check.ok, true, `after freeing space: ${JSON.stringify(freed.check)}`);
    const again = await runMain(args);
    assert.equal(again.code, 0, `${said}\nagain: ${again.err}`);
    const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      const titles = (await engine.store.rows(TABLES.observations, `project = '${project}'`, { select: ['title'] })).map((r) => String(r.title));
      assert.equal(titles.length, 300, said);
      assert.equal(new Set(titles).size, 300, `${said}\nrecords stored twice`);
      assert.equal(await engine.store.count(TABLES.observations, `project = 'acme/own'`), 5);
      let records = 0;
      for (const table of [TABLES.observations, TABLES.sessionSummaries, TABLES.memories] as const) records += await engine.store.count(table);
      assert.equal(await engine.store.count(TABLES.cells), records, 'one search cell a record');
    } finally {
      await engine.close();
    }
  });

  it('remember until the disk is full: the failing call names the full disk, not damage, and says so when it could not take its memory back; every one reported stored reads after space is freed, with its cell', async function () {
    const disk = mount(this, '3m');
    const store = path.join(disk, 'store');
    const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    const scope = { project };
    const stored: number[] = [];
    let failure = '';
    try {
      for (let i = 0; i < 400 && !failure; i++) {
        const r = await findTool('remember')!.run(toolContext(engine, scope), { title: `memo ${i} qzmemo`, text: `memory number ${i} ${'lorem ipsum dolor '.repeat(300)}` });
        if (r.isError) failure = r.text;
        else stored.push(i);
      }
    } finally {
      await engine.close().catch(() => undefined);
    }
    assert.ok(failure, 'control: the disk never filled up');
    assert.match(failure, /^internal_error: the disk that holds the store is full \(.*No space left on device.*\): free some space on it and run it again/, failure);
    assert.doesNotMatch(failure, /damaged|doctor/i, failure);
    execFileSync('mount', ['-o', 'remount,size=64m', disk]);
    const reopened = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      const rows = await reopened.store.rows(TABLES.memories, null, { select: ['id', 'title'] });
      const titles = rows.map((r) => String(r.title));
      const state = `${stored.length} remembered, then: ${failure}\nafter freeing: ${titles.length} memories`;
      for (const i of stored) assert.ok(titles.includes(`memo ${i} qzmemo`), `${state}\nmemory ${i} lost`);
      // Taking the failed call's memory back is a write too, which the full disk may refuse as well:
      // then the call says so, and the record stays (its cell is given by a repair once it is older
      // than a write in flight could be).
      const leftStored = /but this call's memory record \(id \d+\) could not be taken back and stays stored: look before writing it again$/.test(failure);
      assert.equal(titles.length, stored.length + (leftStored ? 1 : 0), `${state}\nthe failed call left its memory without saying so`);
      assert.equal(await reopened.store.count(TABLES.cells, `source_kind = 'memory' AND source_id IN (${rows.filter((r) => stored.some((i) => r.title === `memo ${i} qzmemo`)).map((r) => Number(r.id)).join(', ')})`), stored.length, state);
    } finally {
      await reopened.close();
    }
  });
});
