// More bad input to the CLI, run through the sources as a child process: a value flag given twice,
// an empty path, an object-store location or timeout of the wrong shape, --all-projects beside
// --project, stdin that is a folder or not UTF-8, a name the shell passed in other bytes, an eval
// tool list or question file that says nothing, an import file that does not start with its
// header. Each is bad input (exit 2) with one line naming what to fix, and nothing is written.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { runCli } from './crossProjectFixture';
import type { CliRun } from './crossProjectFixture';
import { REPO_ROOT, makeGitRepo, removeDir, tempDir } from './mcpFixture';
import type { TestRepo } from './mcpFixture';

const TSX = require.resolve('tsx/cjs');
const CLI = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');

/**
 * As runCli, with stdin given as bytes (runCli takes text, which cannot hold bytes that are not
 * UTF-8) or as an open file descriptor (a folder redirected into the command).
 */
function runCliWithStdin(args: string[], stdin: Buffer | number): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = { ...(process.env as Record<string, string>), LANCEDB_LOG: 'error' };
    delete env.CODE_MEMORY_PROJECT;
    const child = spawn(process.execPath, ['--require', TSX, CLI, ...args], { cwd: REPO_ROOT, env, stdio: [typeof stdin === 'number' ? stdin : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    if (typeof stdin !== 'number') {
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(stdin);
    }
  });
}

const noStack = (s: string): boolean => !/\n\s+at .+\(.*:\d+:\d+\)/.test(s);
const firstLine = (r: CliRun): string => r.stderr.trim().split('\n')[0];
const notes = (titles: string[]): string => titles.map((t) => JSON.stringify({ type: 'note', title: t, narrative: `${t} narrative` })).join('\n') + '\n';

async function observed(store: string, project: string): Promise<number> {
  const r = await runCli(['stats', '--store', store, '--project', project, '--embedder', 'none', '--json']);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { observations: number }).observations;
}

describe('CLI bad input: repeated flags, empty values, odd stdin and names', function () {
  this.timeout(240_000);
  let dir: string;
  before(() => (dir = tempDir('cli-bad-more')));
  after(() => removeDir(dir));

  describe('a value flag given twice', () => {
    it('forget --ids 1 --ids 2 is refused naming --ids, and nothing is forgotten (not only the last list)', async () => {
      const store = path.join(dir, 'twice-ids');
      const o = await runCli(['observe', '--store', store, '--project', 'W', '--embedder', 'none', '--json'], { input: notes(['a', 'b', 'c']) });
      assert.equal(o.code, 0, o.stderr);
      const ids = (JSON.parse(o.stdout) as { ids: number[] }).ids;
      const r = await runCli(['forget', '--ids', String(ids[0]), '--ids', String(ids[1]), '--kind', 'observation', '--store', store, '--project', 'W', '--embedder', 'none']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(firstLine(r), /--ids is given more than once/);
      assert.equal(await observed(store, 'W'), 3);
    });

    it('--project a --project b is refused rather than the first dropped; --layer, which repeats, still takes several', async () => {
      const store = path.join(dir, 'twice-project');
      const r = await runCli(['stats', '--store', store, '--project', 'A', '--project=B', '--embedder', 'none', '--json']);
      assert.equal(r.code, 2, r.stdout);
      assert.match(firstLine(r), /--project is given more than once/);
      const layers = await runCli(['search', 'anything', '--layer', 'L0', '--layer', 'L2', '--store', store, '--project', 'A', '--embedder', 'none', '--json']);
      assert.equal(layers.code, 0, layers.stderr);
    });
  });

  describe('an empty value', () => {
    it('export --out "" is refused (exit 2) instead of exporting to stdout', async () => {
      const store = path.join(dir, 'empty-out');
      const o = await runCli(['observe', '--store', store, '--project', 'E', '--embedder', 'none'], { input: notes(['e']) });
      assert.equal(o.code, 0, o.stderr);
      const r = await runCli(['export', '--out', '', '--store', store, '--project', 'E', '--embedder', 'none']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(firstLine(r), /--out needs a file path/);
      assert.equal(r.stdout, '');
    });

    it('import-git "" is refused (exit 2) instead of importing the current folder', async () => {
      const store = path.join(dir, 'empty-git');
      const r = await runCli(['import-git', '', '--store', store, '--project', 'E', '--embedder', 'none']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(firstLine(r), /repository path is empty/);
      assert.ok(!existsSync(store), 'the store was created');
    });
  });

  describe('an object-store location or setting of the wrong shape', () => {
    it('CODE_MEMORY_STORE_TIMEOUT that is no number is bad input (exit 2) naming it', async () => {
      const env = { CODE_MEMORY_STORE_TIMEOUT: 'abc', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y', AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL: 'http://127.0.0.1:9' };
      const r = await runCli(['stats', '--store', 's3://bucket/prefix', '--project', 'X', '--embedder', 'none'], { env });
      assert.equal(r.code, 2, r.stderr);
      assert.match(firstLine(r), /CODE_MEMORY_STORE_TIMEOUT must be a number of seconds/);
      assert.ok(noStack(r.stderr), r.stderr);
    });

    it('an s3:// store URI with a query is bad input (exit 2), its query not shown', async () => {
      const r = await runCli(['stats', '--store', 's3://bucket/prefix?region=secret-region', '--project', 'X', '--embedder', 'none']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(firstLine(r), /has a query or fragment/);
      assert.doesNotMatch(r.stderr, /secret-region/);
    });
  });

  it('stats and export with --all-projects and --project are refused (exit 2), not the project ignored', async () => {
    const store = path.join(dir, 'all-projects');
    const o = await runCli(['observe', '--store', store, '--project', 'A', '--embedder', 'none'], { input: notes(['a']) });
    assert.equal(o.code, 0, o.stderr);
    for (const command of ['stats', 'export']) {
      const r = await runCli([command, '--all-projects', '--project', 'B', '--store', store, '--embedder', 'none']);
      assert.equal(r.code, 2, `${command}: ${r.stdout}${r.stderr}`);
      assert.match(firstLine(r), /--all-projects reads every project/);
      assert.equal(r.stdout, '', command);
    }
  });

  it('observe and import - with stdin redirected from a folder are refused (exit 2), not "Stored 0"', async () => {
    const store = path.join(dir, 'stdin-folder');
    for (const args of [['observe', '--project', 'X'], ['import', '-']]) {
      const fd = openSync(dir, 'r');
      try {
        const r = await runCliWithStdin([...args, '--store', store, '--embedder', 'none'], fd);
        assert.equal(r.code, 2, `${args[0]}: ${r.stdout}${r.stderr}`);
        assert.match(firstLine(r), /stdin is a folder/);
      } finally {
        closeSync(fd);
      }
    }
    assert.ok(!existsSync(store), 'the store was created');
  });

  describe('input that is not UTF-8', () => {
    it('observe: a line that is not UTF-8 is refused with its line number and nothing is stored (two keys never become one)', async () => {
      const store = path.join(dir, 'utf8-observe');
      const line = (bytes: number[], title: string): Buffer =>
        Buffer.concat([Buffer.from(`{"type":"note","title":"${title}","dedupe_key":"k`), Buffer.from(bytes), Buffer.from('"}\n')]);
      const input = Buffer.concat([Buffer.from(notes(['fine'])), line([0xff], 'first'), line([0xfe], 'second')]);
      const r = await runCliWithStdin(['observe', '--store', store, '--project', 'U', '--embedder', 'none'], input);
      assert.equal(r.code, 2, r.stderr);
      assert.match(firstLine(r), /nothing stored: line 2 is not valid UTF-8/);
      assert.equal(await observed(store, 'U'), 0);
    });

    it('--project, --branch or CODE_MEMORY_PROJECT holding U+FFFD (what the shell passes that is not UTF-8) is refused', async () => {
      const store = path.join(dir, 'utf8-names');
      const runs: Array<[string[], Record<string, string>, RegExp]> = [
        [['--project', 'team\uFFFD'], {}, /--project holds bytes that are not UTF-8/],
        [['--project', 'team', '--branch', 'fix-\uFFFD'], {}, /--branch holds bytes that are not UTF-8/],
        [[], { CODE_MEMORY_PROJECT: 'team\uFFFD' }, /CODE_MEMORY_PROJECT holds bytes that are not UTF-8/],
      ];
      for (const [flags, env, message] of runs) {
        const r = await runCli(['observe', '--store', store, '--embedder', 'none', ...flags], { env, input: notes(['secret of the team']) });
        assert.equal(r.code, 2, `${JSON.stringify(flags)} ${JSON.stringify(env)}: ${r.stdout}${r.stderr}`);
        assert.match(firstLine(r), message);
      }
      assert.ok(!existsSync(store), 'the store was created');
    });
  });

  describe('eval', () => {
    let repo: TestRepo;
    before(() => (repo = makeGitRepo()));
    after(() => removeDir(repo.dir));

    const question = (): string => JSON.stringify({ id: 'q1', question: 'csv parser', gold_commits: [repo.shas.parser] });

    it('--tools "" is refused (exit 2) rather than running every tool', async () => {
      const q = path.join(dir, 'q.jsonl');
      writeFileSync(q, `${question()}\n`);
      const r = await runCli(['eval', '--repo', repo.dir, '--queries', q, '--tools', '', '--embedder', 'none']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(firstLine(r), /--tools needs tool names/);
    });

    it('a question file with a line that is not UTF-8 is refused with file:line (exit 2), before the import', async () => {
      const q = path.join(dir, 'q-bad.jsonl');
      writeFileSync(q, Buffer.concat([Buffer.from(`${question()}\n{"id":"q2","question":"wh`), Buffer.from([0xff, 0xfe]), Buffer.from(`at","gold_commits":["${repo.shas.parser}"]}\n`)]));
      const r = await runCli(['eval', '--repo', repo.dir, '--queries', q, '--embedder', 'none']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(firstLine(r), /q-bad\.jsonl:2: the line is not valid UTF-8/);
      assert.doesNotMatch(r.stderr, /import: \d+\/\d+ commits/);
    });
  });

  describe('import: the export header comes first', () => {
    const header = JSON.stringify({ kind: 'code-memory-export', schema_version: 1, exported_at: '2026-01-01T00:00:00.000Z', project: 'p' });
    const record = JSON.stringify({ kind: 'observation', record: { id: 1, project: 'p', memory_session_id: 's1', type: 'note', title: 'placed', narrative: 'n', status: 'active', created_at: '2026-01-01T00:00:00.000Z', created_at_epoch: 1767225600000 } });

    it('a file whose header comes after its records is refused at its first line (exit 2), nothing stored', async () => {
      const file = path.join(dir, 'header-late.jsonl');
      writeFileSync(file, `${record}\n${header}\n`);
      const store = path.join(dir, 'header-late-store');
      const r = await runCli(['import', file, '--store', store, '--embedder', 'none']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(firstLine(r), /Import line 1: the file has no code-memory-export header line before it/);
      assert.equal(await observed(store, 'p'), 0);
    });

    it('blank lines before the header are no line: such a file imports', async () => {
      const file = path.join(dir, 'header-after-blank.jsonl');
      writeFileSync(file, `\n  \n${header}\n${record}\n`);
      const store = path.join(dir, 'header-after-blank-store');
      const r = await runCli(['import', file, '--store', store, '--embedder', 'none']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(await observed(store, 'p'), 1);
    });
  });
});
