// A server killed without its clean-up (kill -9, a crash) leaves its token file in the store
// folder, naming its project. `forget --whole-project` (and `--all`) leaves no file naming the
// project: a dead server's file of that project goes; a running server's, another project's, or a
// file at that path that serve did not write stays.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runMain } from './cliInProcess';
import { removeDir, tempDir } from './mcpFixture';

const ENV = { CODE_MEMORY_EMBEDDER: 'none' };

/** A pid no process has now: that of a child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

describe('forget of a whole project and a dead server\'s token file', function () {
  this.timeout(120_000);
  let dir: string;
  let store: string;
  let info: string;
  beforeEach(() => {
    dir = tempDir('forget-server-file');
    store = path.join(dir, 'store');
    fs.mkdirSync(store, { recursive: true, mode: 0o700 });
    info = path.join(store, 'server.json');
  });
  afterEach(() => removeDir(dir));

  const write = (fields: Record<string, unknown>): void => fs.writeFileSync(info, `${JSON.stringify({ url: 'http://127.0.0.1:1/', token: 'x'.repeat(32), ...fields })}\n`, { mode: 0o600 });
  const forgetProject = async (project: string): Promise<void> => {
    const r = await runMain(['forget', '--store', store, '--project', project, '--whole-project', '--yes'], ENV);
    assert.equal(r.code, 0, r.err);
  };

  it("removes a dead server's file of the project forgotten, and of any project with --all", async () => {
    write({ project: 'acme/app', pid: await deadPid() });
    await forgetProject('acme/app');
    assert.equal(fs.existsSync(info), false);
    write({ project: 'acme/other', pid: await deadPid() });
    const all = await runMain(['forget', '--store', store, '--all', '--yes'], ENV);
    assert.equal(all.code, 0, all.err);
    assert.equal(fs.existsSync(info), false);
  });

  it("keeps a running server's file, another project's, and a file serve did not write", async () => {
    const running = spawn('sleep', ['30']);
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      write({ project: 'acme/app', pid: running.pid });
      await forgetProject('acme/app');
      assert.equal(fs.existsSync(info), true, 'a running server keeps its file');
    } finally {
      running.kill();
    }
    write({ project: 'acme/other', pid: await deadPid() });
    await forgetProject('acme/app');
    assert.equal(fs.existsSync(info), true, "another project's file stays");
    fs.writeFileSync(info, 'my notes: acme/app\n');
    await forgetProject('acme/app');
    assert.equal(fs.readFileSync(info, 'utf8'), 'my notes: acme/app\n');
  });
});
