// What the CLI does with a path it is told to write that already names something: `serve
// --token-file` takes over only a token file a server left, and `export --out` writes into a pipe
// or a device rather than replacing it; anything else (a user's file, a folder, a socket) is
// refused as bad input (exit 2) and left exactly as it was.
import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { runCli } from './crossProjectFixture';
import { REPO_ROOT, removeDir, tempDir } from './mcpFixture';

const TSX = require.resolve('tsx/cjs');
const CLI = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');

const noStack = (s: string): boolean => !/\n\s+at .+\(.*:\d+:\d+\)/.test(s);
const lines = (titles: string[]): string => titles.map((t) => JSON.stringify({ type: 'note', title: t, narrative: `${t} narrative` })).join('\n') + '\n';

/** `code-memory serve --json`, once it printed where its token is, or its exit code and output if it ends first. */
function serve(args: string[]): Promise<{ child: ChildProcessWithoutNullStreams; code: number | null; out: string }> {
  const child = spawn(process.execPath, ['--require', TSX, CLI, 'serve', '--json', '--embedder', 'none', ...args], { cwd: REPO_ROOT, env: { ...process.env, LANCEDB_LOG: 'error' } });
  return new Promise((resolve) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve({ child, code: null, out });
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.once('exit', (code) => resolve({ child, code, out }));
  });
}

function exitOf(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve(child.exitCode) : new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** A pid no process has: above Linux's largest. */
const NO_PID = 2 ** 22 + 12345;

describe('paths the CLI writes that already name something', function () {
  this.timeout(180_000);
  let dir: string;
  before(() => {
    dir = tempDir('cli-file-targets');
  });
  after(() => removeDir(dir));

  describe('serve --token-file', () => {
    it("refuses a file that is no server's token file (exit 2, naming it) and leaves it as it was", async () => {
      const store = path.join(dir, 'tf-store');
      const cases: Array<[string, string]> = [
        ['notes.txt', 'my precious notes\n'],
        ['config.json', `${JSON.stringify({ theme: 'dark' })}\n`],
        ['settings.json', `${JSON.stringify({ token: 'mine', editor: 'vim' })}\n`],
        ['list.json', '[1, 2, 3]\n'],
      ];
      for (const [name, text] of cases) {
        const file = path.join(dir, name);
        writeFileSync(file, text);
        const r = await runCli(['serve', '--token-file', file, '--store', store, '--project', 'T', '--embedder', 'none']);
        assert.equal(readFileSync(file, 'utf8'), text, `${name} was changed`);
        assert.equal(r.code, 2, `${name}: ${r.stderr}`);
        assert.match(r.stderr, new RegExp(`${name.replace('.', '\\.')} is a file that is no server's token file`));
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith(`${name}.`)), [], 'a file was left beside it');
      }
    });

    it('refuses a folder (exit 2) and leaves it where it was, with what it holds', async () => {
      const store = path.join(dir, 'tfd-store');
      const folder = path.join(dir, 'a-folder');
      mkdirSync(folder);
      writeFileSync(path.join(folder, 'keep.txt'), 'keep\n');
      const r = await runCli(['serve', '--token-file', folder, '--store', store, '--project', 'T', '--embedder', 'none']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /a-folder is a folder/);
      assert.ok(noStack(r.stderr), r.stderr);
      assert.equal(readFileSync(path.join(folder, 'keep.txt'), 'utf8'), 'keep\n');
      assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith('a-folder.')), []);
    });

    it('refuses a symbolic link (exit 2), leaving the link and what it points at', async () => {
      const store = path.join(dir, 'tfl-store');
      const target = path.join(dir, 'pointed-at.txt');
      writeFileSync(target, 'pointed at\n');
      const link = path.join(dir, 'token-link.json');
      symlinkSync(target, link);
      const r = await runCli(['serve', '--token-file', link, '--store', store, '--project', 'T', '--embedder', 'none']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /token-link\.json is a symbolic link/);
      assert.ok(lstatSync(link).isSymbolicLink());
      assert.equal(readFileSync(target, 'utf8'), 'pointed at\n');
    });

    it('refuses an empty path (exit 2, one line, no stack)', async () => {
      const r = await runCli(['serve', '--token-file', '', '--store', path.join(dir, 'tfe-store'), '--project', 'T', '--embedder', 'none']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /--token-file needs a path/);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    });

    it('still takes over what a crashed server left: an empty file or object, or the claim of one that died starting', async () => {
      const store = path.join(dir, 'tfc-store');
      const leftovers: Array<[string, string]> = [
        ['empty.json', ''],
        ['empty-object.json', '{}\n'],
        ['claim.json', `${JSON.stringify({ project: 'ghost', pid: NO_PID, starting: true })}\n`],
      ];
      for (const [name, text] of leftovers) {
        const file = path.join(dir, name);
        writeFileSync(file, text, { mode: 0o600 });
        const s = await serve(['--token-file', file, '--store', store, '--project', 'T']);
        assert.equal(s.code, null, `${name}: serve refused: ${s.out}`);
        try {
          const written = JSON.parse(readFileSync(file, 'utf8')) as { pid: number; project: string; token: string };
          assert.equal(written.pid, s.child.pid);
          assert.equal(written.project, 'T');
          assert.ok(written.token);
        } finally {
          s.child.kill('SIGTERM');
          assert.equal(await exitOf(s.child), 0);
        }
        assert.ok(!existsSync(file), `${name} was not removed on exit`);
      }
    });
  });

  describe('export --out', () => {
    let store: string;
    before(async () => {
      store = path.join(dir, 'export-store');
      const o = await runCli(['observe', '--store', store, '--project', 'E'], { input: lines(['exported one', 'exported two']) });
      assert.equal(o.code, 0, o.stderr);
    });

    it('writes into a named pipe for its reader, which stays a pipe', async () => {
      const fifo = path.join(dir, 'out-fifo');
      execFileSync('mkfifo', [fifo]);
      const reader = spawn('timeout', ['60', 'cat', fifo]);
      let got = '';
      reader.stdout.setEncoding('utf8').on('data', (d: string) => (got += d));
      const readerDone = new Promise<void>((resolve) => reader.on('close', () => resolve()));
      const r = await runCli(['export', '--out', fifo, '--store', store, '--project', 'E']);
      await readerDone;
      assert.equal(r.code, 0, r.stderr);
      assert.ok(lstatSync(fifo).isFIFO(), 'the pipe was replaced');
      const records = got.trim().split('\n').map((l) => JSON.parse(l) as { kind: string; record?: { title?: string } });
      assert.equal(records[0].kind, 'code-memory-export');
      assert.deepEqual(records.filter((l) => l.kind === 'observation').map((l) => l.record?.title).sort(), ['exported one', 'exported two']);
      assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith('out-fifo.')), [], 'a temporary file was left');
    });

    it('writes into a character device (as /dev/null is), which stays a device', async function () {
      const node = path.join(dir, 'null-device');
      try {
        execFileSync('mknod', [node, 'c', '1', '3'], { stdio: 'ignore' });
      } catch {
        this.skip(); // Making a device node needs privileges this run lacks.
      }
      const r = await runCli(['export', '--out', node, '--store', store, '--project', 'E']);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(lstatSync(node).isCharacterDevice(), 'the device was replaced');
      assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith('null-device.')), []);
    });

    it('refuses a folder or a socket (exit 2, one line) and leaves it as it was', async () => {
      const folder = path.join(dir, 'out-folder');
      mkdirSync(folder);
      writeFileSync(path.join(folder, 'keep.txt'), 'keep\n');
      const intoFolder = await runCli(['export', '--out', folder, '--store', store, '--project', 'E']);
      assert.equal(intoFolder.code, 2, intoFolder.stderr);
      assert.match(intoFolder.stderr, /cannot write .*out-folder: it is a folder/);
      assert.equal(intoFolder.stderr.trim().split('\n').length, 1, intoFolder.stderr);
      assert.equal(readFileSync(path.join(folder, 'keep.txt'), 'utf8'), 'keep\n');

      const socket = path.join(dir, 'out.sock');
      const server = net.createServer();
      await new Promise<void>((resolve) => server.listen(socket, () => resolve()));
      try {
        const intoSocket = await runCli(['export', '--out', socket, '--store', store, '--project', 'E']);
        assert.equal(intoSocket.code, 2, intoSocket.stderr);
        assert.match(intoSocket.stderr, /cannot write .*out\.sock: it is a socket/);
        assert.ok(noStack(intoSocket.stderr), intoSocket.stderr);
        assert.ok(lstatSync(socket).isSocket(), 'the socket was replaced');
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.tmp')), []);
    });
  });
});
