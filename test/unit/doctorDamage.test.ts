// doctor on stores that are not damaged: a race's leftover cell, a table file the user may not
// read (rights, not damage); and on one that is: a table that lost every version.
import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { TABLES } from '../../src/core/store/schema';
import { runMain } from './cliInProcess';
import { filesContaining, storeWithGarbledIndexes } from './diskFixture';
import { findTool } from '../../src/core/tools/registry';
import { REPO_ROOT, toolContext } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

describe('doctor and cells without records', function () {
  this.timeout(120_000);
  let dir = '';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-probe-doctor-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a doubled cell (which the repair removes as a race leftover) is not reported as a damaged store', async () => {
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    const scope = { project: 'acme/app', branch: 'main' };
    await engine.observe([{ type: 'note', title: 'one', narrative: 'first' }, { type: 'note', title: 'two', narrative: 'second' }], scope);
    await engine.flush();
    const [cell] = await engine.store.rows(TABLES.cells, "source_kind = 'observation'");
    // A race's second copy of a record's cell (README: repaired by the lease holder).
    await engine.store.add(TABLES.cells, [{ ...cell, node_id: '00000000-0000-4000-8000-000000000001' }]);
    // Another process (the extension) holds the maintenance lease meanwhile: doctor does not repair.
    const r = await runMain(['doctor', '--store', dir, '--embedder', 'none', '--json']);
    await engine.close();
    const store = JSON.parse(r.out).checks?.find?.((c: { name: string }) => c.name === 'store') ?? JSON.parse(r.out);
    assert.ok(!/damaged/.test(JSON.stringify(store)), `doctor calls the store damaged for one doubled cell: ${JSON.stringify(store)}`);
  });
});

describe('doctor and a table file it may not read', function () {
  this.timeout(120_000);
  it('a table whose data file this user may not read is a rights problem, not a damaged store', async function () {
    const { spawnSync } = await import('node:child_process');
    if (process.getuid?.() !== 0 || spawnSync('setpriv', ['--version']).status !== 0) this.skip();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-probe-perm-'));
    try {
      fs.chmodSync(dir, 0o755);
      const engine = await MemoryEngine.open({ storeUri: path.join(dir, 'store'), embedder: 'none', maintenanceIntervalMs: 0 });
      await engine.observe([{ type: 'note', title: 'hello', narrative: 'world' }], { project: 'p', branch: 'main' });
      await engine.flush();
      await engine.close();
      spawnSync('chmod', ['-R', 'a+rwX', path.join(dir, 'store')]);
      const data = path.join(dir, 'store', 'observations.lance', 'data');
      for (const f of fs.readdirSync(data)) fs.chmodSync(path.join(data, f), 0o600);
      const tsx = path.resolve(__dirname, '../../node_modules/.bin/tsx');
      const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'env', `HOME=${dir}`, tsx, path.resolve(__dirname, '../../src/cli/main.ts'), 'doctor', '--store', path.join(dir, 'store'), '--embedder', 'none', '--json'], { cwd: dir, encoding: 'utf8', timeout: 100_000 });
      const check = (JSON.parse(r.stdout).checks as Array<{ name: string; detail: string; fix?: string }>).find((c) => c.name === 'store');
      assert.ok(!/damaged/.test(check?.detail ?? '') && !/rebuild/.test(check?.fix ?? ''), `doctor tells the user to rebuild a store it may not read: ${JSON.stringify(check)}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a table that lost every version (its _versions folder gone)', function () {
  this.timeout(120_000);
  it('stops the open with a clear error, changes nothing, and doctor calls the store damaged', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-probe-versions-'));
    try {
      const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      await engine.observe([{ type: 'note', title: 'zorbwick one', narrative: 'first' }, { type: 'note', title: 'zorbwick two', narrative: 'second' }], { project: 'acme/app' });
      await engine.flush();
      await engine.close();
      fs.rmSync(path.join(dir, 'observations.lance', '_versions'), { recursive: true, force: true });
      const before = filesContaining(dir, 'zorbwick').sort();
      // LanceDB lists no such table: it was created anew, empty, and the open's repair then deleted
      // the search cells, the only readable copy of the two observations.
      await assert.rejects(MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 }), /corrupt: table observations has data files and no version manifest/);
      const doctor = await runMain(['doctor', '--store', dir, '--embedder', 'none', '--json']);
      assert.notEqual(doctor.code, 0);
      const check = (JSON.parse(doctor.out).checks as Array<{ name: string; ok: boolean; detail: string; fix?: string }>).find((c) => c.name === 'store');
      assert.equal(check?.ok, false);
      assert.match(check?.detail ?? '', /damaged/);
      assert.match(check?.fix ?? '', /Restore the store folder from a backup/);
      assert.deepEqual(filesContaining(dir, 'zorbwick').sort(), before, 'the open and doctor changed what holds the records');
      assert.ok(before.some((f) => f.startsWith('cells.lance')), 'the cells still hold the records');
      assert.ok(!fs.existsSync(path.join(dir, 'observations.lance', '_versions')), 'no empty table was made over the data');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a table whose version manifest is not one', function () {
  this.timeout(120_000);
  for (const table of ['cells', 'observations', 'meta']) {
    it(`(${table}) stops the open at once naming the table, and writes nothing`, async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `cm-garbled-${table}-`));
      try {
        const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
        await engine.observe([{ type: 'note', title: 'zorbwick kept', narrative: 'first' }], { project: 'acme/app' });
        await engine.close();
        const versions = path.join(dir, `${table}.lance`, '_versions');
        for (const m of fs.readdirSync(versions)) if (m.endsWith('.manifest')) fs.writeFileSync(path.join(versions, m), Buffer.alloc(64, 7));
        const listing = () => fs.readdirSync(dir, { recursive: true }).map(String).filter((f) => !f.endsWith('.lock')).sort();
        const before = listing();
        const started = Date.now();
        await assert.rejects(MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 }), new RegExp(`the store is damaged: table ${table} cannot be opened`));
        assert.ok(Date.now() - started < 8_000, `the open took ${Date.now() - started} ms`);
        assert.deepEqual(listing(), before, 'the refused open wrote or deleted files');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe('a table folder the user may not read', function () {
  this.timeout(120_000);
  it('reads as missing rights, not as a corrupt store (the CLI run as another user)', async function () {
    if (process.getuid?.() !== 0 || !fs.existsSync('/usr/bin/setpriv')) this.skip();
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-rights-'));
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-rights-home-'));
    try {
      fs.chmodSync(base, 0o755);
      fs.chmodSync(home, 0o777);
      const store = path.join(base, 'store');
      const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
      await engine.observe([{ type: 'note', title: 'zorbwick kept' }], { project: 'acme/app' });
      await engine.close();
      execFileSync('chmod', ['-R', 'a+rX,go-w', store]);
      fs.chmodSync(path.join(store, 'observations.lance', '_versions'), 0o700);
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: home, LANCEDB_LOG: 'error', CODE_MEMORY_PROJECT: 'acme/app' };
      const cli = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');
      const run = spawnSync('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--require', require.resolve('tsx/cjs'), cli, 'stats', '--store', store, '--embedder', 'none'], { cwd: home, env, timeout: 120_000, encoding: 'utf8' });
      assert.notEqual(run.status, 0, 'control: the store cannot be read');
      assert.doesNotMatch(`${run.stdout}${run.stderr}`, /corrupt|damaged/i, run.stderr);
      assert.match(run.stderr, /permission denied|EACCES/i, run.stderr);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('doctor and a damaged scalar index', function () {
  this.timeout(300_000);
  let dir = '';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-doctor-index-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  type Check = { name: string; ok: boolean; detail: string; fix?: string };
  const storeCheck = (out: string): Check => (JSON.parse(out).checks as Check[]).find((c) => c.name === 'store')!;

  it('a garbled scalar index file of the cells table (LanceDB panics on it): doctor names the index, rebuilds it from the rows, and the reads answer again with nothing lost', async () => {
    await storeWithGarbledIndexes(dir);
    const scope = { project: 'annp' };
    const recall = async (): Promise<{ isError: boolean; text: string; nodes: number }> => {
      const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      try {
        const r = await findTool('recall')!.run(toolContext(engine, scope), { text: 'parser', k: 5 });
        return { isError: r.isError, text: r.text, nodes: r.isError ? 0 : (r.structured as { nodes: unknown[] }).nodes.length };
      } finally {
        await engine.close();
      }
    };
    assert.equal((await recall()).isError, true, 'control: the garbled index breaks recall');

    const doctor = await runMain(['doctor', '--store', dir, '--project', 'annp', '--embedder', 'none', '--json']);
    assert.equal(doctor.code, 1, doctor.out);
    const check = storeCheck(doctor.out);
    assert.equal(check.ok, false);
    assert.match(check.detail, /damaged index(es)? of table cells: \w+_idx on \w+/, JSON.stringify(check));
    assert.match(check.detail, /project_idx on project \(/, JSON.stringify(check));
    assert.match(check.detail, /rebuilt from the table's rows; nothing was lost/, JSON.stringify(check));
    assert.doesNotMatch(`${check.detail} ${check.fix}`, /writable|Restore the store folder/, JSON.stringify(check));
    assert.match(check.fix ?? '', /code-memory doctor/);

    const after = await recall();
    assert.equal(after.isError, false, after.text);
    assert.equal(after.nodes, 5);
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      assert.equal((await engine.stats(scope)).observations, 400);
    } finally {
      await engine.close();
    }
    const again = await runMain(['doctor', '--store', dir, '--project', 'annp', '--embedder', 'none', '--json']);
    assert.equal(storeCheck(again.out).ok, true, again.out);
  });
});
