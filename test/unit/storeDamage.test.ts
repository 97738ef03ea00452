// Damaged stores and a full disk, through the CLI: a clear error, no silent loss, no write that
// reports failure and still leaves half of itself behind.

import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { MemoryEngine } from '../../src/core/engine';
import { TABLES } from '../../src/core/store/schema';
import { CliBundle } from './cliFixture';
import { runMain } from './cliInProcess';
import { storeWithGarbledIndexes } from './diskFixture';
import { findTool } from '../../src/core/tools/registry';
import { looksDamaged } from '../../src/core/errorText';
import { toolContext } from './mcpFixture';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { commitAll, git } from './gitImportFixture';

process.env.LANCEDB_LOG ??= 'error';

const bundle = new CliBundle('test-store-damage');
const project = 'github.com/acme/corrupt';

/** A store holding 5 observations, the summary of their session and a memory, each with its search cell: the cells of each kind, by source_kind. */
async function seedRecords(store: string): Promise<Record<string, number>> {
  const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
  try {
    const scope = { project };
    const session = await engine.currentSessionId(scope);
    await engine.observe(Array.from({ length: 5 }, (_, i) => ({ type: 'note', title: `ledger decision number ${i} zebrafish`, narrative: `zebrafish ledger ${i}` })), scope);
    assert.ok(await engine.endSession(scope, session, 'request'), 'control: the session was summarised');
    await engine.remember({ memory_type: 'decision', title: 'zebrafish ledger', text: 'The zebrafish ledger keeps every decision' }, scope);
    await engine.flush();
  } finally {
    await engine.close();
  }
  return cellsByKind(store);
}

/** The search cells of each kind, read with LanceDB alone (no open of the store, no repair). */
async function cellsByKind(store: string): Promise<Record<string, number>> {
  const db = await lancedb.connect(store);
  try {
    const cells = await db.openTable(TABLES.cells);
    const out: Record<string, number> = {};
    for (const kind of ['observation', 'session_summary', 'memory']) out[kind] = await cells.countRows(`source_kind = '${kind}'`);
    cells.close();
    return out;
  } finally {
    db.close();
  }
}

function notes(tag: string, n: number): string {
  return `${Array.from({ length: n }, (_, i) => JSON.stringify({ type: 'note', title: `${tag} note ${i}`, narrative: `${'padding '.repeat(40)} ${tag} ${i}` })).join('\n')}\n`;
}

describe('store damage and a full disk', function () {
  this.timeout(600_000);
  const dirs: string[] = [];
  const tmp = (name: string): string => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), `cm-damage-${name}-`));
    dirs.push(d);
    return d;
  };
  before(async () => {
    await bundle.build();
  });
  after(() => {
    bundle.remove();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('a record table that lost its newest version (manifest file gone): doctor does not call the store ok, and the open does not delete the surviving search cells', async () => {
    const store = tmp('manifest');
    const seeded = await bundle.run(['observe', '--store', store, '--project', project, '--embedder', 'none', '--json'], { input: notes('kept', 30) });
    assert.equal(seeded.code, 0, seeded.stderr);
    const versions = path.join(store, 'observations.lance', '_versions');
    // Lance names manifests u64::MAX - version: the newest sorts first.
    const newest = fs.readdirSync(versions).filter((f) => f.endsWith('.manifest')).sort()[0];
    fs.rmSync(path.join(versions, newest));
    const doctor = await bundle.run(['doctor', '--store', store, '--project', project, '--embedder', 'none', '--json']);
    const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    let observations: number;
    let cells: number;
    try {
      observations = await engine.store.count(TABLES.observations);
      cells = await engine.store.count(TABLES.cells, `source_kind = 'observation'`);
    } finally {
      await engine.close();
    }
    assert.ok(
      doctor.code !== 0 || observations === 30,
      `doctor exited 0 ("${doctor.stdout.replace(/\s+/g, ' ').slice(0, 300)}") on a store whose observations table went from 30 rows to ${observations}`,
    );
    assert.ok(cells >= 30 || observations === 30, `the open's repair deleted ${30 - cells} search cells, the only copy left of records whose table lost its newest version`);
  });

  const kinds = { [TABLES.observations]: 'observation', [TABLES.sessionSummaries]: 'session_summary', [TABLES.memories]: 'memory' } as const;
  for (const [table, kind] of Object.entries(kinds)) {
    it(`a store whose ${table} table folder is gone (fewer records than the orphan cells a race may leave): the open refuses it as damaged, naming the table, makes no empty table in its place and keeps the search cells, the only copy of the text; doctor calls it damaged`, async () => {
      const store = tmp(`gone-${table}`);
      const before = await seedRecords(store);
      assert.ok(before[kind] > 0 && before[kind] <= 20, `control: ${before[kind]} ${kind} cells`);
      fs.rmSync(path.join(store, `${table}.lance`), { recursive: true, force: true });
      const missing = new RegExp(`corrupt: its table ${table} is missing \\(no ${table}\\.lance in `);

      await assert.rejects(MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 }), missing);
      const search = await bundle.run(['search', 'zebrafish', '--store', store, '--project', project, '--embedder', 'none']);
      assert.equal(search.code, 1, search.stdout);
      assert.match(search.stderr, missing);
      assert.match(search.stderr, /`code-memory doctor` with the same --store says which table/);
      const doctor = await bundle.run(['doctor', '--store', store, '--project', project, '--embedder', 'none', '--json']);
      assert.equal(doctor.code, 1, doctor.stdout);
      const check = (JSON.parse(doctor.stdout).checks as Array<{ name: string; ok: boolean; detail: string; fix?: string }>).find((c) => c.name === 'store');
      assert.equal(check?.ok, false);
      assert.match(check?.detail ?? '', /damaged/);
      assert.match(check?.detail ?? '', missing);
      assert.match(check?.fix ?? '', /Restore the store folder from a backup/);

      assert.ok(!fs.existsSync(path.join(store, `${table}.lance`)), `an empty ${table} table was made in place of the lost one`);
      assert.deepEqual(await cellsByKind(store), before, 'the search cells changed');
    });
  }

  it('a store that lost its meta table (which held the digests of forgotten commits) is refused, naming it, and nothing is written: no import brings a forgotten commit back; doctor says so, and doctor --rebuild-meta makes it anew keeping every record', async () => {
    const store = tmp('meta');
    const repo = tmp('meta-repo');
    git(repo, ['init', '-q', '-b', 'main']);
    commitAll(repo, { subject: 'Add the ledger module', time: 1767600000, files: { 'src/ledger.ts': 'export const ledger = 1;\n' } });
    commitAll(repo, { subject: 'Leak the qzforgottenq credentials plan', time: 1767603600, files: { 'src/plan.ts': 'export const plan = 2;\n' } });
    const scope = { project };
    const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      await importGitHistory(engine, repo, { scope });
      const commit = (await engine.listObservations(scope, { limit: 100 })).find((o) => /qzforgottenq/.test(o.title ?? ''));
      assert.ok(commit, 'control: the commit was imported');
      await engine.forget({ kind: 'observation', ids: [commit.id] }, scope);
      await engine.flush();
    } finally {
      await engine.close();
    }
    const before = await cellsByKind(store);
    fs.rmSync(path.join(store, `${TABLES.meta}.lance`), { recursive: true, force: true });
    const missing = /corrupt: its table meta is missing \(no meta\.lance in .*nothing was changed.*doctor --rebuild-meta/;

    await assert.rejects(MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 }), missing);
    const imported = await bundle.run(['import-git', repo, '--store', store, '--project', project, '--embedder', 'none']);
    assert.equal(imported.code, 1, `import-git into a store that lost its meta table: ${imported.stdout}`);
    assert.match(imported.stderr, missing);
    assert.ok(!fs.existsSync(path.join(store, `${TABLES.meta}.lance`)), 'an empty meta table was made in place of the lost one');
    const doctor = await bundle.run(['doctor', '--store', store, '--project', project, '--embedder', 'none', '--json']);
    assert.equal(doctor.code, 1, doctor.stdout);
    const check = (JSON.parse(doctor.stdout).checks as Array<{ name: string; ok: boolean; detail: string; fix?: string }>).find((c) => c.name === 'store');
    assert.equal(check?.ok, false);
    assert.match(check?.detail ?? '', /damaged.*table meta is missing/);
    assert.match(check?.fix ?? '', /Restore meta\.lance .* doctor --rebuild-meta/);
    assert.deepEqual(await cellsByKind(store), before, 'the search cells changed');

    const rebuilt = await bundle.run(['doctor', '--rebuild-meta', '--store', store, '--project', project, '--embedder', 'none', '--json']);
    assert.equal(rebuilt.code, 0, `${rebuilt.stdout}\n${rebuilt.stderr}`);
    assert.match(rebuilt.stderr, /its lost meta table was made anew/);
    const again = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      const titles = (await again.listObservations(scope, { limit: 100 })).map((o) => o.title ?? '');
      assert.ok(titles.some((t) => /ledger module/.test(t)), `the records are kept: ${JSON.stringify(titles)}`);
      assert.ok(!titles.some((t) => /qzforgottenq/.test(t)), 'the forgotten commit is still forgotten');
      assert.match(String(await again.store.getMeta('meta_rebuilt_at')), /^\d{4}-\d\d-\d\dT/);
    } finally {
      await again.close();
    }
  });

  it('a store that lost its meta table and a records table: doctor --rebuild-meta does not make an empty records table over the search cells, the only copy of its text', async () => {
    const store = tmp('created');
    const before = await seedRecords(store);
    assert.ok(before.memory > 0 && before.memory <= 20, 'control: a few memory cells');
    for (const t of [TABLES.meta, TABLES.memories]) fs.rmSync(path.join(store, `${t}.lance`), { recursive: true, force: true });
    await assert.rejects(MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 }), /table meta is missing/);
    const rebuilt = await bundle.run(['doctor', '--rebuild-meta', '--store', store, '--project', project, '--embedder', 'none', '--json']);
    assert.equal(rebuilt.code, 1, rebuilt.stdout);
    assert.match(rebuilt.stdout, /its table memories is missing/);
    assert.ok(!fs.existsSync(path.join(store, `${TABLES.memories}.lance`)), 'an empty memories table was made');
    assert.deepEqual(await cellsByKind(store), before, 'the search cells changed');
  });

  it('tables a store may lack (added by a later version, or rebuilt from the records) are created by the open, with no records lost', async () => {
    const store = tmp('optional');
    const before = await seedRecords(store);
    const optional = [TABLES.cells, TABLES.sessionPrompts, TABLES.requestLog, TABLES.entities, TABLES.relationships, TABLES.lexicalSegments];
    for (const t of optional) fs.rmSync(path.join(store, `${t}.lance`), { recursive: true, force: true });
    const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      for (const t of optional) assert.ok(fs.existsSync(path.join(store, `${t}.lance`)), `${t} was not created`);
      assert.equal(await engine.store.count(TABLES.observations), 5);
      // The open's repair gives every record its cell again.
      assert.deepEqual(await cellsByKind(store), before);
      const hits = await engine.search('zebrafish', { scope: { project }, layers: ['L0'], limit: 10 });
      assert.ok(hits.length > 0, 'search finds the records again');
    } finally {
      await engine.close();
    }
  });

  it('doctor on a store with a garbage manifest names it damaged and says to restore it, not to check that the folder is writable', async () => {
    const store = tmp('garbage');
    const seeded = await bundle.run(['observe', '--store', store, '--project', project, '--embedder', 'none'], { input: notes('kept', 10) });
    assert.equal(seeded.code, 0, seeded.stderr);
    const versions = path.join(store, 'observations.lance', '_versions');
    for (const f of fs.readdirSync(versions)) fs.writeFileSync(path.join(versions, f), 'garbage\n');
    const doctor = await bundle.run(['doctor', '--store', store, '--project', project, '--embedder', 'none']);
    assert.equal(doctor.code, 1);
    const storeLine = doctor.stdout.split('\n').filter((l) => /store/.test(l)).join('\n');
    assert.doesNotMatch(storeLine + doctor.stdout, /Check that the folder is writable/, `doctor's advice for a damaged table:\n${doctor.stdout}`);
  });

  it('a command on a table whose newest manifest was cut short says the store looks damaged and points at doctor, with no stack trace', async () => {
    const store = tmp('cut');
    const seeded = await bundle.run(['observe', '--store', store, '--project', project, '--embedder', 'none'], { input: notes('kept', 10) });
    assert.equal(seeded.code, 0, seeded.stderr);
    const versions = path.join(store, 'cells.lance', '_versions');
    const newest = path.join(versions, fs.readdirSync(versions).filter((f) => f.endsWith('.manifest')).sort()[0]);
    fs.truncateSync(newest, Math.floor(fs.statSync(newest).size / 2));
    const search = await bundle.run(['search', 'kept', '--store', store, '--project', project, '--embedder', 'none']);
    assert.equal(search.code, 1, search.stdout);
    assert.match(search.stderr, /^error: .+\nThe store's files look damaged: `code-memory doctor` with the same --store says which table, and how to recover\.\n$/);
    assert.doesNotMatch(search.stderr, /\n\s+at /, 'a stack trace');
  });

  it('observe on a full disk (tmpfs): the error names the full disk, not damage; a run that exits with an error leaves none of its records behind, so running it again stores each once', async function () {
    const mountPoint = tmp('tmpfs');
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=6m', 'tmpfs', mountPoint], { stdio: 'ignore' });
    } catch {
      this.skip();
    }
    try {
      const store = path.join(mountPoint, 'store');
      const args = ['observe', '--store', store, '--project', project, '--embedder', 'none', '--json'];
      let failed = -1;
      let failure = '';
      for (let run = 0; run < 60 && failed < 0; run++) {
        const r = await bundle.run(args, { input: notes(`run${run}`, 300) });
        if (r.code !== 0) {
          failed = run;
          failure = r.stderr;
        }
      }
      assert.ok(failed >= 0, 'control: the disk never filled up');
      assert.match(failure, /No space left on device/, 'control: the failure names the full disk');
      assert.match(failure, /\nThe disk is full: free some space on it and run it again; what the store held before is whole\.\n$/, failure);
      assert.doesNotMatch(failure, /damaged|doctor/, `a full disk is no damaged store:\n${failure}`);
      // The user frees space and runs the same command again.
      execFileSync('mount', ['-o', 'remount,size=256m', mountPoint]);
      const again = await bundle.run(args, { input: notes(`run${failed}`, 300) });
      assert.equal(again.code, 0, again.stderr);
      const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
      try {
        const rows = await engine.store.rows(TABLES.observations, `title LIKE 'run${failed} note %'`, { select: ['id', 'title'] });
        const titles = rows.map((r) => String(r.title));
        const doubled = titles.length - new Set(titles).size;
        assert.equal(doubled, 0, `run ${failed} exited 1 with "No space left on device", yet after running it again ${rows.length} observations hold its 300 notes (${doubled} stored twice)`);
        assert.equal(rows.length, 300);
      } finally {
        await engine.close();
      }
    } finally {
      execFileSync('umount', [mountPoint]);
    }
  });
});

describe('a damaged scalar index of the cells table', function () {
  this.timeout(300_000);
  let dir = '';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-damage-index-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a read that makes LanceDB panic on it: the tools and the CLI say the store looks damaged and point at doctor, never a bare internal error', async () => {
    await storeWithGarbledIndexes(dir);
    const scope = { project: 'annp' };
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    const said: string[] = [];
    try {
      for (const [name, args] of [
        ['recall', { text: 'parser retry', k: 5 }],
        ['recall_context', { query: 'parser retry' }],
      ] as const) {
        const r = await findTool(name)!.run(toolContext(engine, scope), args);
        said.push(`${name}: ${r.isError} ${r.text.slice(0, 300)}`);
        if (!r.isError) continue;
        assert.match(r.text, /^internal_error: the store's files look damaged \(.+\); run `code-memory doctor`/, said.join('\n'));
        assert.doesNotMatch(r.text, /\n\s+at |panicked|RUST_BACKTRACE/, said.join('\n'));
      }
      const rm = await findTool('retrieve_memory')!.run(toolContext(engine, scope), { prompt: 'how does the parser retry?' });
      const answer = rm.structured as { status: string; error_message?: string };
      said.push(`retrieve_memory: ${answer.status} ${answer.error_message ?? ''}`);
      assert.equal(answer.status, 'error', said.join('\n'));
      assert.match(String(answer.error_message), /^the store's files look damaged \(.+\); run `code-memory doctor`/, said.join('\n'));
    } finally {
      await engine.close();
    }
    assert.ok(said.some((s) => s.includes(': true ')), `control: no read failed on the garbled index:\n${said.join('\n')}`);
    const search = await runMain(['search', 'parser retry', '--store', dir, '--project', 'annp', '--embedder', 'none']);
    assert.equal(search.code, 1, search.out);
    assert.match(search.err, /The store's files look damaged: `code-memory doctor` with the same --store says which/, search.err);
  });
});

describe('a data file the newest manifest lists, gone from the disk or cut short', function () {
  this.timeout(300_000);
  let dir = '';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-damage-lost-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("Lance's words for a lost data, deletion or index file are damage; a table or store not found is not", () => {
    for (const kind of ['data/0a1b.lance', '_deletions/3-7.arrow', '_indices/5f2e/page_data.lance']) {
      assert.ok(looksDamaged(`lance error: Not found: home/me/.code-memory/store/cells.lance/${kind}`), kind);
    }
    assert.ok(looksDamaged('lance error: Not found: C:\\Users\\me\\my store\\cells.lance\\data\\0a1b.lance'), 'a Windows path');
    assert.ok(!looksDamaged('Table \'cells\' was not found'));
    assert.ok(!looksDamaged('lance error: Not found: home/me/store/cells.lance/_versions'));
  });

  for (const table of [TABLES.cells, TABLES.observations]) {
    it(`(${table}) a read of it says the store looks damaged and points at doctor, and doctor calls the store damaged naming the table`, async () => {
      await seedRecords(dir);
      const data = path.join(dir, `${table}.lance`, 'data');
      const lost = fs.readdirSync(data).filter((f) => f.endsWith('.lance'));
      assert.ok(lost.length > 0, 'control: the table has data files');
      for (const f of lost) fs.rmSync(path.join(data, f));
      const said: string[] = [];
      for (const args of [['search', 'zebrafish ledger'], ['stats']]) {
        const r = await runMain([...args, '--store', dir, '--project', project, '--embedder', 'none']);
        said.push(`${args[0]}: ${r.code} ${r.err}`);
        if (r.code === 0) continue;
        assert.match(r.err, /^error: .*Not found: .*\.lance\/data\/\w+\.lance\nThe store's files look damaged: `code-memory doctor` with the same --store says which table, and how to recover\.\n$/, said.join('\n'));
      }
      assert.ok(said.some((s) => !/: 0 /.test(s)), `control: no read failed:\n${said.join('\n')}`);
      const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      try {
        const r = await findTool('recall')!.run(toolContext(engine, { project }), { text: 'zebrafish ledger', k: 5 });
        if (r.isError) assert.match(r.text, /^internal_error: the store's files look damaged \(.*Not found: .*\); run `code-memory doctor`/, r.text);
      } finally {
        await engine.close();
      }
      const doctor = await runMain(['doctor', '--store', dir, '--project', project, '--embedder', 'none', '--json']);
      const check = (JSON.parse(doctor.out) as { checks: Array<{ name: string; ok: boolean; detail: string }> }).checks.find((c) => c.name === 'store');
      assert.equal(check?.ok, false, doctor.out);
      assert.match(check?.detail ?? '', new RegExp(`damaged, table ${table} cannot be read`), doctor.out);
    });
  }

  it("a data file of the cells table cut short: get_observations of a memory, whose access time cannot be recorded then: access_update_failed says the store looks damaged and points at doctor, as the other tools do, with no Rust source line or chain of causes", async () => {
    await seedRecords(dir);
    const data = path.join(dir, `${TABLES.cells}.lance`, 'data');
    for (const f of fs.readdirSync(data).filter((n) => n.endsWith('.lance'))) {
      const bytes = fs.readFileSync(path.join(data, f));
      fs.writeFileSync(path.join(data, f), bytes.subarray(0, Math.floor(bytes.length / 2)));
    }
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      const ctx = toolContext(engine, { project });
      const [memory] = await engine.listMemories({ project });
      assert.ok(memory, 'control: the memory is read from its own table');
      const recall = await findTool('recall_context')!.run(ctx, { query: 'zebrafish ledger' });
      assert.match(recall.text, /^internal_error: the store's files look damaged \(.+\); run `code-memory doctor`/, `control: recall_context says so: ${recall.text}`);
      const r = await findTool('get_observations')!.run(ctx, { ids: [memory.id] });
      assert.ok(r.isError, `control: the access update fails: ${r.text}`);
      assert.match(r.text, new RegExp(`^access_update_failed: could not record access to memories ${memory.id}: the store's files look damaged \\(.+\\); run \`code-memory doctor\``), r.text);
      assert.doesNotMatch(r.text, /\.rs:\d+|Caused by|\n/, r.text);
    } finally {
      await engine.close().catch(() => undefined);
    }
  });
});
