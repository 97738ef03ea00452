// doctor and a local store nothing can be written to (a read-only disk, a folder of another user's):
// it reads, yet every command that records something fails, so doctor must not call it ok. (A
// full disk: diskFull.test.ts.)

import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { runMain } from './cliInProcess';
import { REPO_ROOT } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const project = 'github.com/acme/writes';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

function storeCheck(out: string): Check | undefined {
  return (JSON.parse(out) as { checks: Check[] }).checks.find((c) => c.name === 'store');
}

async function seed(store: string): Promise<void> {
  const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
  try {
    await engine.observe(Array.from({ length: 5 }, (_, i) => ({ type: 'note', title: `kept note ${i}`, narrative: `kept narrative ${i}` })), { project });
    await engine.flush();
  } finally {
    await engine.close();
  }
}

describe('doctor and a store nothing can be written to', function () {
  this.timeout(120_000);
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });
  const tmp = (name: string): string => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), `cm-writes-${name}-`));
    dirs.push(d);
    return d;
  };

  it('a store that can be written: doctor calls it ok and leaves no file of its own in the folder', async () => {
    const store = path.join(tmp('ok'), 'store');
    await seed(store);
    const before = fs.readdirSync(store).sort();
    const doctor = await runMain(['doctor', '--store', store, '--project', project, '--embedder', 'none', '--json']);
    assert.equal(storeCheck(doctor.out)?.ok, true, doctor.out);
    assert.deepEqual(fs.readdirSync(store).sort(), before);
  });

  it('a store on a read-only disk: search works, and doctor does not call the store ok but says it cannot be written, with the rights fix', async function () {
    const disk = tmp('ro');
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', disk], { stdio: 'ignore' });
    } catch {
      this.skip();
    }
    try {
      const store = path.join(disk, 'store');
      await seed(store);
      execFileSync('mount', ['-o', 'remount,ro', disk]);
      const search = await runMain(['search', 'kept', '--store', store, '--project', project, '--embedder', 'none']);
      const doctor = await runMain(['doctor', '--store', store, '--project', project, '--embedder', 'none', '--json']);
      const check = storeCheck(doctor.out);
      const said = `search: ${search.code} ${search.err}\ndoctor: ${doctor.code} ${JSON.stringify(check)}`;
      assert.equal(search.code, 0, said);
      assert.equal(doctor.code, 1, said);
      assert.equal(check?.ok, false, said);
      assert.match(check?.detail ?? '', /5 observations.*; but nothing can be written to it \(EROFS: read-only file system/, said);
      assert.match(check?.fix ?? '', /^Check that the folder is writable/, said);
      assert.doesNotMatch(JSON.stringify(check), /damaged/i, said);
    } finally {
      execFileSync('umount', ['-l', disk]);
    }
  });

  it('a store the user may read but not write (the CLI run as another user): doctor does not call it ok, and names the missing rights', async function () {
    if (process.getuid?.() !== 0 || !fs.existsSync('/usr/bin/setpriv')) this.skip();
    const base = tmp('rights');
    const home = tmp('rights-home');
    fs.chmodSync(base, 0o755);
    fs.chmodSync(home, 0o777);
    const store = path.join(base, 'store');
    await seed(store);
    execFileSync('chmod', ['-R', 'a+rX,go-w', store]);
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: home, LANCEDB_LOG: 'error' };
    const cli = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');
    const run = spawnSync('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--require', require.resolve('tsx/cjs'), cli, 'doctor', '--store', store, '--project', project, '--embedder', 'none', '--json'], {
      cwd: home,
      env,
      timeout: 120_000,
      encoding: 'utf8',
    });
    const check = storeCheck(run.stdout);
    const said = `doctor: ${run.status} ${JSON.stringify(check)} ${run.stderr}`;
    assert.equal(run.status, 1, said);
    assert.equal(check?.ok, false, said);
    assert.match(check?.detail ?? '', /5 observations.*; but nothing can be written to it \(EACCES: permission denied/, said);
    assert.match(check?.fix ?? '', /^Check that the folder is writable/, said);
  });
});
