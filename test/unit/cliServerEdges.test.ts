// The CLI's edges as its built bundle meets them: a hook piping a huge line into `observe`, a
// store given as `~/...` with no shell to expand it, a token file whose crashed server's pid an
// unrelated process got since, stdio requests with an id of their own but a `_meta` MCP does not
// define, and `eval` given a question file or repository that is not there. Real child processes
// of the CLI on real stores in temporary folders.

import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { processStarted, processStartedAt } from '../../src/core/store/processRef';
import { CliBundle } from './cliFixture';
import { makeGitRepo, removeDir, tempDir } from './mcpFixture';
import type { TestRepo } from './mcpFixture';

const bundle = new CliBundle('test-cli-server-edges');

function exitOf(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve(child.exitCode) : new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Writes `chunk` to the child's stdin until `total` bytes went or the child stopped reading; resolves to the bytes written. */
async function pour(stdin: NodeJS.WritableStream, chunk: Buffer, total: number): Promise<number> {
  const s = stdin as NodeJS.WritableStream & { destroyed: boolean; writableEnded: boolean };
  let gone = false;
  s.on('error', () => (gone = true));
  s.on('close', () => (gone = true));
  let sent = 0;
  while (sent < total && !gone && !s.destroyed) {
    sent += chunk.length;
    if (!s.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          s.off('drain', done);
          s.off('close', done);
          s.off('error', done);
          resolve();
        };
        s.on('drain', done);
        s.on('close', done);
        s.on('error', done);
      });
    }
  }
  if (!gone && !s.destroyed) s.end();
  return sent;
}

describe('code-memory CLI and servers at their edges', function () {
  this.timeout(240_000);
  let dir: string;
  before(async () => {
    await bundle.build();
    dir = tempDir('cli-edges');
  });
  after(() => {
    removeDir(dir);
    bundle.remove();
  });

  it('observe refuses a stdin line over 16 MiB as it streams in (exit 2, naming the line, no stack trace), reading no further and storing nothing', async () => {
    const store = path.join(dir, 'observe-huge');
    const child = bundle.spawn(['observe', '--store', store, '--project', 'P']);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = exitOf(child);
    // A valid first line, then a hook piping a binary: 600 MB with no line end.
    child.stdin.write('{"type":"note","title":"a good first line"}\n');
    const sent = await pour(child.stdin, Buffer.alloc(4 * 1024 * 1024, 0x61), 600 * 1024 * 1024);
    const code = await exited;
    assert.doesNotMatch(stderr, /RangeError|\n\s+at /, stderr.slice(0, 600));
    assert.equal(code, 2, stderr.slice(0, 600));
    assert.match(stderr, /^error: nothing stored: line 2 is longer than 16 MiB/);
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.equal(stdout, '');
    // It stopped reading at the cap: not the whole 600 MB (readline read it all, then failed).
    assert.ok(sent < 128 * 1024 * 1024, `${sent} bytes were read`);
    assert.ok(!existsSync(store), 'the store was opened');
  });

  it("a store, or a team store, given as '~' or '~/…' (by --store, $CODE_MEMORY_STORE, --team-store) is in the home folder, never a folder named '~' in the current one; --help says so", async () => {
    const home = path.join(dir, 'home');
    const cwd = path.join(dir, 'cwd');
    mkdirSync(home, { recursive: true });
    mkdirSync(cwd, { recursive: true });
    const input = '{"type":"note","title":"tilde store"}\n';
    const viaArg = await bundle.run(['observe', '--store', '~/cm-arg', '--project', 'P'], { cwd, input, env: { HOME: home } });
    assert.equal(viaArg.code, 0, viaArg.stderr);
    const viaEnv = await bundle.run(['observe', '--project', 'P', '--json'], { cwd, input, env: { HOME: home, CODE_MEMORY_STORE: '~/cm-env' } });
    assert.equal(viaEnv.code, 0, viaEnv.stderr);
    const stats = await bundle.run(['stats', '--project', 'P', '--json', '--team-store', '~/cm-team'], { cwd, env: { HOME: home, CODE_MEMORY_STORE: '~/cm-env' } });
    assert.equal(stats.code, 0, stats.stderr);
    assert.equal((JSON.parse(stats.stdout) as { observations: number }).observations, 1);
    assert.deepEqual(readdirSync(cwd), [], 'made in the current folder');
    assert.ok(existsSync(path.join(home, 'cm-arg')));
    assert.ok(existsSync(path.join(home, 'cm-env')));
    assert.ok(existsSync(path.join(home, 'cm-team')));
    const help = await bundle.run(['observe', '--help']);
    assert.match(help.stdout, /--store <uri> +Store location: a folder \(a leading ~ is your home folder\)/);
    assert.match(help.stdout, /--team-store <uri> +.*a leading ~ is your home folder/);
  });

  it('serve takes over a token file whose crashed server\'s pid an unrelated process got since (told by its start time), and still refuses one naming a running server', async function () {
    const sleeper = spawn('sleep', ['120']);
    const started = processStarted(sleeper.pid!);
    if (!started) this.skip(); // No /proc: the pid alone decides, as before.
    const store = path.join(dir, 'serve-store');
    mkdirSync(store, { recursive: true });
    const file = path.join(store, 'server.json');
    const serve = (): Promise<{ child: ChildProcessWithoutNullStreams; code: number | null; out: string }> =>
      new Promise((resolve) => {
        const child = bundle.spawn(['serve', '--store', store, '--project', 'P', '--json']);
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => {
          out += d;
          if (out.includes('\n')) resolve({ child, code: null, out });
        });
        child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
        child.once('exit', (code) => resolve({ child, code, out }));
      });
    try {
      // The crashed server started at another time than the process its pid names now.
      const [boot, ticks] = started!.split('/');
      const crashed = { url: 'http://127.0.0.1:9/v1/mcp/memory', token: 'old', project: 'ghost', pid: sleeper.pid, process_started: `${boot}/${Number(ticks) - 1}` };
      writeFileSync(file, `${JSON.stringify(crashed)}\n`, { mode: 0o600 });
      const taken = await serve();
      assert.equal(taken.code, null, `serve refused: ${taken.out}`);
      const written = JSON.parse(readFileSync(file, 'utf8')) as { pid: number; project: string; process_started?: string };
      assert.equal(written.project, 'P');
      assert.equal(written.pid, taken.child.pid);
      assert.equal(written.process_started, processStarted(taken.child.pid!));
      taken.child.kill('SIGTERM');
      assert.equal(await exitOf(taken.child), 0);
      assert.ok(!existsSync(file));

      // An older build's file (no start time), written an hour before the process its pid names now started: taken over.
      writeFileSync(file, `${JSON.stringify({ url: 'http://127.0.0.1:9/v1/mcp/memory', token: 'older', project: 'ghost', pid: sleeper.pid })}\n`, { mode: 0o600 });
      const anHourBefore = new Date(processStartedAt(sleeper.pid!)! - 3600_000);
      utimesSync(file, anHourBefore, anHourBefore);
      const older = await serve();
      assert.equal(older.code, null, `serve refused: ${older.out}`);
      assert.equal((JSON.parse(readFileSync(file, 'utf8')) as { pid: number }).pid, older.child.pid);
      older.child.kill('SIGTERM');
      assert.equal(await exitOf(older.child), 0);

      // The same file naming a server whose process started after the file's time (a clock set back): still refused.
      const server = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)', 'serve']);
      try {
        writeFileSync(file, `${JSON.stringify({ url: 'http://127.0.0.1:9/v1/mcp/memory', token: 'skewed', project: 'alive', pid: server.pid })}\n`, { mode: 0o600 });
        utimesSync(file, anHourBefore, anHourBefore);
        const skewed = await serve();
        if (skewed.code === null) {
          skewed.child.kill('SIGTERM');
          await exitOf(skewed.child);
        }
        assert.equal(skewed.code, 2, skewed.out);
      } finally {
        server.kill('SIGKILL');
      }

      // A file naming a process that runs and started when it says: refused, as a file without a start time (an older build's) written since is.
      for (const running of [{ pid: sleeper.pid, process_started: started }, { pid: sleeper.pid }]) {
        writeFileSync(file, `${JSON.stringify({ url: 'http://127.0.0.1:9/v1/mcp/memory', token: 'live', project: 'alive', ...running })}\n`, { mode: 0o600 });
        const refused = await serve();
        if (refused.code === null) {
          refused.child.kill('SIGTERM');
          await exitOf(refused.child);
        }
        assert.equal(refused.code, 2, refused.out);
        assert.match(refused.out, /server\.json names another running server \(pid \d+, project 'alive'\)/);
        assert.equal((JSON.parse(readFileSync(file, 'utf8')) as { token: string }).token, 'live');
      }
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  describe('eval given inputs that are not there', () => {
    let repo: TestRepo;
    before(() => {
      repo = makeGitRepo();
    });
    after(() => removeDir(repo.dir));

    it('a --queries file that is missing, a folder or holds no question, or a --repo that is no folder or no repository, is a usage error (exit 2, one line), as for import', async () => {
      const questions = path.join(dir, 'questions.jsonl');
      writeFileSync(questions, `${JSON.stringify({ id: 'q1', question: 'what changed?', gold_commits: ['abcdef1'] })}\n`);
      const broken = path.join(dir, 'broken.jsonl');
      writeFileSync(broken, `${JSON.stringify({ id: 'q1', question: 'what changed?', gold_commits: ['abcdef1'] })}\n{"question": "no gold"}\n`);
      const notRepo = path.join(dir, 'not-a-repo');
      mkdirSync(notRepo, { recursive: true });
      const runs: Array<[string, string[], RegExp]> = [
        ['a missing question file', ['--repo', repo.dir, '--queries', path.join(dir, 'no-such.jsonl')], /^error: cannot read .*no-such\.jsonl: ENOENT$/],
        ['a folder as question file', ['--repo', repo.dir, '--queries', dir], /^error: .* is not a file \(give a JSON Lines question file\)$/],
        ['a question file with a bad line', ['--repo', repo.dir, '--queries', broken], /^error: .*broken\.jsonl:2: "gold_commits" must be a non-empty array/],
        ['a missing repository', ['--repo', path.join(dir, 'no-such-repo'), '--queries', questions], /^error: '.*no-such-repo' is not a folder: give the path of a git repository$/],
        ['a folder that is no repository', ['--repo', notRepo, '--queries', questions], /^error: Not a git repository/],
      ];
      const wrong: string[] = [];
      for (const [label, args, expected] of runs) {
        const r = await bundle.run(['eval', ...args, '--embedder', 'hashed']);
        const lines = r.stderr.trim().split('\n');
        if (r.code !== 2 || lines.length !== 1 || !expected.test(lines[0])) wrong.push(`${label}: exit ${r.code}, stderr ${r.stderr.slice(0, 400)}`);
      }
      assert.deepEqual(wrong, []);
    });
  });
});
