// `code-memory export --out f` killed with kill -9 while it writes leaves its temporary file
// (`f.<pid>.<hex>.tmp`, mode 0600, part of the memory in it); the next export into that folder
// removes it, and never one a live process is writing.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CliBundle } from './cliFixture';
import { until } from './fixtures/s3Server';
import { removeDir, tempDir } from './mcpFixture';

const bundle = new CliBundle('test-export-killed-temp');
const ENV = { CODE_MEMORY_EMBEDDER: 'none' };

describe('export killed with kill -9: its temporary file does not stay', function () {
  this.timeout(300_000);
  let dir = '';
  let store = '';
  const exportTo = (out: string) => bundle.run(['export', '--store', store, '--project', 'p1', '--out', out], { env: ENV });

  before(async () => {
    await bundle.build();
    dir = tempDir('export-killed-temp');
    store = path.join(dir, 'store');
    // ~6 MB of export: the writer is still at work when its temporary file first has bytes.
    const lines = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ type: 'note', title: `note ${i} ${'y'.repeat(300)}`, narrative: `marker-temp-tarsier ${'z'.repeat(1500)}` })).join('\n');
    const observed = await bundle.run(['observe', '--store', store, '--project', 'p1'], { input: `${lines}\n`, env: ENV });
    assert.equal(observed.code, 0, observed.stderr);
  });
  after(() => {
    removeDir(dir);
    bundle.remove();
  });

  it('the next export to the same --out removes the temporary file of the export killed mid-write', async () => {
    const folder = path.join(dir, 'killed');
    fs.mkdirSync(folder);
    const out = path.join(folder, 'backup.jsonl');
    const child = bundle.spawn(['export', '--store', store, '--project', 'p1', '--out', out], { env: ENV });
    const exited = new Promise<string | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    await until(() => fs.readdirSync(folder).some((n) => n.endsWith('.tmp') && fs.statSync(path.join(folder, n)).size > 0), 60_000);
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
    const left = fs.readdirSync(folder);
    assert.equal(left.length, 1, `control: the killed export left its temporary file: ${left.join(', ')}`);
    assert.match(left[0], new RegExp(`^backup\\.jsonl\\.${child.pid}\\.[0-9a-f]{12}\\.tmp$`), 'the temporary file names its writer');
    assert.equal(fs.statSync(path.join(folder, left[0])).mode & 0o777, 0o600);

    const again = await exportTo(out);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(fs.readdirSync(folder), ['backup.jsonl']);
    assert.match(fs.readFileSync(out, 'utf8'), /marker-temp-tarsier/);
  });

  it('an export to another file of the folder removes it too; a live writer\'s, an earlier build\'s under a minute old and files not ours stay', async () => {
    const folder = path.join(dir, 'mixed');
    fs.mkdirSync(folder);
    // A process that ran and ended: its pid is free.
    const dead = bundle.spawn(['--help']);
    await new Promise((resolve) => dead.on('exit', resolve));
    const write = (name: string, mode = 0o600, ageMs = 0): string => {
      const file = path.join(folder, name);
      fs.writeFileSync(file, 'part of an export', { mode });
      fs.chmodSync(file, mode);
      if (ageMs) fs.utimesSync(file, new Date(Date.now() - ageMs), new Date(Date.now() - ageMs));
      return file;
    };
    const deadOne = write(`old.jsonl.${dead.pid}.0123456789ab.tmp`);
    const liveOne = write(`live.jsonl.${process.pid}.0123456789ab.tmp`);
    const notOurs = write(`notes.${dead.pid}.0123456789ab.tmp`, 0o644);
    const earlierOld = write('fresh.jsonl.abcdefabcdef.tmp', 0o600, 120_000);
    const earlierNew = write('fresh.jsonl.bbbbbbbbbbbb.tmp');
    const r = await exportTo(path.join(folder, 'fresh.jsonl'));
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      { deadOne: fs.existsSync(deadOne), liveOne: fs.existsSync(liveOne), notOurs: fs.existsSync(notOurs), earlierOld: fs.existsSync(earlierOld), earlierNew: fs.existsSync(earlierNew) },
      { deadOne: false, liveOne: true, notOurs: true, earlierOld: false, earlierNew: true },
    );
  });
});
