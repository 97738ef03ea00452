// The CLI run for project beta on a store that also holds project alpha.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { IDENTITY_FILE } from '../../src/core/capture/project';
import * as path from 'node:path';
import type { Scope } from '../../src/core/model/records';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { runCli } from './crossProjectFixture';
import { openTestEngine, REPO_ROOT, removeDir, tempDir } from './mcpFixture';

const CLI_SOURCE = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');

const ALPHA = 'alpha';
const BETA = 'beta';
const alphaScope: Scope = { project: ALPHA };
const betaScope: Scope = { project: BETA };
const ALPHA_WORDS = ['zorblaxquint', 'flimwobble', 'quoffelmorph', 'snarfidex'];

function canaries(text: string): string[] {
  const lower = text.toLowerCase();
  return ALPHA_WORDS.filter((w) => lower.includes(w));
}

describe('isolation: the CLI under beta on a store with alpha', function () {
  this.timeout(180_000);
  let store: string;
  let work: string;
  let alphaObs: number[] = [];
  let alphaMem = 0;
  let alphaStats = '';
  const common = () => ['--store', store, '--embedder', 'hashed'];

  before(async () => {
    work = tempDir('isolation-cli');
    store = path.join(work, 'store');
    const { engine } = await openTestEngine(store);
    alphaObs = (
      await engine.observe(
        [
          { type: 'edit', title: 'Zorblaxquint scheduler uses flimwobble', narrative: 'quoffelmorph jobs starve without it', files_modified: ['src/z.ts'], memory_session_id: 'shared-session', dedupe_key: 'k1' },
          { type: 'note', title: 'Snarfidex cache', narrative: 'snarfidex evicts hourly', memory_session_id: 'shared-session' },
        ],
        alphaScope,
      )
    ).map((o) => o.id);
    alphaMem = (await engine.remember({ title: 'Zorblaxquint decision', text: 'We use flimwobble for zorblaxquint.', memory_type: 'decision' }, alphaScope)).id;
    await engine.observe([{ type: 'note', title: 'Beta own note', narrative: 'vantrelliq', memory_session_id: 'shared-session' }], betaScope);
    await engine.flush();
    alphaStats = JSON.stringify(await engine.stats(alphaScope));
    await engine.close();
  });
  after(() => {
    if (work) removeDir(work);
  });

  async function alphaNow(): Promise<string> {
    const r = await runCli(['stats', ...common(), '--project', ALPHA, '--json']);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  }

  it('search, stats and export for beta show nothing of alpha', async () => {
    const out: string[] = [];
    for (const args of [
      ['search', 'zorblaxquint', 'flimwobble', '--json'],
      ['search', 'snarfidex', '--layer', 'L0', '--json'],
      ['search', 'zorblaxquint', '--layer', 'L2'],
      ['stats', '--json'],
      ['export'],
    ]) {
      const r = await runCli([...args, ...common(), '--project', BETA]);
      const found = canaries(r.stdout + r.stderr);
      if (found.length > 0) out.push(`${args.join(' ')} -> ${found.join(',')}`);
    }
    assert.deepEqual(out, []);
  });

  it("forget --ids of alpha's records under --project beta forgets nothing of alpha's", async () => {
    const before = await alphaNow();
    const r1 = await runCli(['forget', '--ids', alphaObs.join(','), '--kind', 'observation', ...common(), '--project', BETA, '--json']);
    const r2 = await runCli(['forget', '--ids', String(alphaMem), '--kind', 'memory', ...common(), '--project', BETA, '--json']);
    assert.deepEqual(canaries(r1.stdout + r1.stderr + r2.stdout + r2.stderr), []);
    assert.equal(await alphaNow(), before);
  });

  it("import --project beta of alpha's export imports nothing into beta and leaves alpha as it was", async () => {
    const file = path.join(work, 'alpha.jsonl');
    const exp = await runCli(['export', ...common(), '--project', ALPHA, '--out', file]);
    assert.equal(exp.code, 0, exp.stderr);
    assert.ok(canaries(readFileSync(file, 'utf8')).length > 0, 'control: the export holds alpha');
    const before = await alphaNow();
    const imp = await runCli(['import', file, ...common(), '--project', BETA, '--json']);
    assert.equal(imp.code, 0, imp.stderr);
    const report = JSON.parse(imp.stdout) as { imported: number };
    assert.equal(report.imported, 0, imp.stdout);
    const beta = await runCli(['export', ...common(), '--project', BETA]);
    assert.deepEqual(canaries(beta.stdout), []);
    assert.equal(await alphaNow(), before);
    void alphaStats;
  });

  it("doctor for beta counts beta's records only, and names no other project", async () => {
    const stats = await runCli(['stats', ...common(), '--project', BETA, '--json']);
    assert.equal(stats.code, 0, stats.stderr);
    const own = JSON.parse(stats.stdout) as { observations: number; memories: number; cells: number };
    assert.equal(own.observations, 1, 'control: beta holds one observation');
    const r = await runCli(['doctor', ...common(), '--project', BETA, '--json']);
    const detail = (JSON.parse(r.stdout) as { checks: Array<{ name: string; detail: string }> }).checks.find((c) => c.name === 'store')?.detail ?? '';
    assert.match(detail, new RegExp(`: ${own.observations} observations, ${own.memories} memories, ${own.cells} cells in project 'beta'; `), detail);
    assert.doesNotMatch(detail, /project\(s\)|alpha/, detail);
  });

  it('--project with spaces around the name is that project, as CODE_MEMORY_PROJECT is', async () => {
    for (const run of [runCli(['stats', ...common(), '--project', ` ${BETA} `, '--json']), runCli(['stats', ...common(), '--json'], { env: { CODE_MEMORY_PROJECT: ` ${BETA} ` } })]) {
      const r = await run;
      assert.equal(r.code, 0, r.stderr);
      const stats = JSON.parse(r.stdout) as { observations: number; projects: string[] };
      assert.deepEqual([stats.projects, stats.observations], [[BETA], 1], r.stdout);
    }
  });

  it("observe on stdin under --project beta with alpha's dedupe_key is stored in beta", async () => {
    const { spawnSync } = await import('node:child_process');
    const TSX = require.resolve('tsx/cjs');
    const CLI = path.join(__dirname, '..', '..', 'src', 'cli', 'main.ts');
    const env: Record<string, string> = { ...(process.env as Record<string, string>), LANCEDB_LOG: 'error' };
    delete env.CODE_MEMORY_PROJECT;
    const r = spawnSync(process.execPath, ['--require', TSX, CLI, 'observe', ...common(), '--project', BETA, '--json'], { input: JSON.stringify({ type: 'note', title: 'Beta hook line', dedupe_key: 'k1' }) + '\n', env, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /"stored":\s*1/, r.stdout);
    assert.deepEqual(canaries(r.stdout + r.stderr), []);
  });
});

describe('isolation: two folders of one name without a remote', function () {
  this.timeout(180_000);
  const dirs: string[] = [];
  after(() => dirs.forEach(removeDir));

  it('are two projects to the CLI: what one stores, the other never reads', async () => {
    const work = tempDir('isolation-samename');
    dirs.push(work);
    const store = path.join(work, 'store');
    const [mine, theirs, plainMine, plainTheirs] = ['one/app', 'two/app', 'three/tool', 'four/tool'].map((f) => path.join(work, f));
    for (const f of [mine, theirs, plainMine, plainTheirs]) mkdirSync(f, { recursive: true });
    for (const f of [mine, theirs]) execFileSync('git', ['init', '-q', f]);
    const common = ['--store', store, '--embedder', 'hashed'];
    for (const [folder, other] of [
      [mine, theirs],
      [plainMine, plainTheirs],
    ]) {
      const line = JSON.stringify({ type: 'note', title: 'Quorvantile rollout plan', narrative: 'the quorvantile flag ships dark first' });
      const stored = await runCli(['observe', ...common], { cwd: folder, input: `${line}\n` });
      assert.equal(stored.code, 0, stored.stderr);
      const own = await runCli(['search', 'quorvantile', ...common, '--json'], { cwd: folder });
      assert.equal(own.code, 0, own.stderr);
      assert.match(own.stdout, /Quorvantile rollout plan/, 'the folder finds its own note');
      for (const args of [['search', 'quorvantile', '--json'], ['export'], ['stats', '--json']]) {
        const other_ = await runCli([...args, ...common], { cwd: other });
        assert.equal(other_.code, 0, other_.stderr);
        assert.doesNotMatch(other_.stdout, /quorvantile/i, `${args[0]} in the other folder of the same name`);
      }
    }
  });

  it('with --project, a repository without a remote is not given a name of its own', async () => {
    const work = tempDir('isolation-named');
    dirs.push(work);
    const repo = path.join(work, 'app');
    mkdirSync(repo);
    execFileSync('git', ['init', '-q', repo]);
    const run = await runCli(['stats', '--store', path.join(work, 'store'), '--embedder', 'none', '--project', 'chosen', '--json'], { cwd: repo });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(existsSync(path.join(repo, '.git', IDENTITY_FILE)), false, 'the folder was named though --project named the project');
    const unnamed = await runCli(['stats', '--store', path.join(work, 'store'), '--embedder', 'none', '--json'], { cwd: repo });
    assert.equal(unnamed.code, 0, unnamed.stderr);
    assert.equal(existsSync(path.join(repo, '.git', IDENTITY_FILE)), true, 'control: without --project the folder is named');
  });
});

/** A git repository in `dir` whose origin is `remote`. */
function repoWithRemote(dir: string, remote: string): void {
  mkdirSync(dir, { recursive: true });
  execFileSync('git', ['init', '-q', dir]);
  execFileSync('git', ['-C', dir, 'remote', 'add', 'origin', remote]);
}

describe('isolation: repositories whose remotes differ only where their server tells them apart', function () {
  this.timeout(180_000);
  let work: string;
  let store: string;
  before(() => {
    work = tempDir('isolation-remotes');
    store = path.join(work, 'store');
  });
  after(() => work && removeDir(work));

  const pairs: Array<[string, string, string]> = [
    ['paths that differ in case on a self-hosted ssh server', 'ssh://git@git.example.internal/srv/git/Tools.git', 'ssh://git@git.example.internal/srv/git/tools.git'],
    ["two users' home-relative scp paths on one host (alice's ~/app.git, bob's ~/app.git)", 'alice@dev.example.internal:app.git', 'bob@dev.example.internal:app.git'],
  ];
  pairs.forEach(([label, first, second], n) => {
    it(`${label} are two projects: what one stores, the other never reads`, async () => {
      const [a, b] = [path.join(work, `a${n}`), path.join(work, `b${n}`)];
      repoWithRemote(a, first);
      repoWithRemote(b, second);
      const word = `quorvantile${n}x`;
      const common = ['--store', store, '--embedder', 'hashed'];
      const stored = await runCli(['observe', ...common], { cwd: a, input: `${JSON.stringify({ type: 'note', title: `Private ${word} rollout plan` })}\n` });
      assert.equal(stored.code, 0, stored.stderr);
      const own = await runCli(['search', word, ...common, '--json'], { cwd: a });
      assert.match(own.stdout, new RegExp(word), 'control: the first repository finds its own note');
      for (const args of [['search', word, '--json'], ['export']]) {
        const other = await runCli([...args, ...common], { cwd: b });
        assert.equal(other.code, 0, other.stderr);
        assert.doesNotMatch(other.stdout, new RegExp(word), `${args[0]} in ${second} reads the note stored from ${first}`);
      }
    });
  });

  it("an agent's stdio server in one of them recalls nothing of the other", async () => {
    const [a, b] = [path.join(work, 'mcp-a'), path.join(work, 'mcp-b')];
    repoWithRemote(a, 'ssh://git@git.example.internal/srv/git/Payments.git');
    repoWithRemote(b, 'ssh://git@git.example.internal/srv/git/payments.git');
    const line = JSON.stringify({ type: 'decision', title: 'Private drimblepox settlement key rotation', narrative: 'drimblepox settlement keys rotate every friday' });
    const stored = await runCli(['observe', '--store', store, '--embedder', 'hashed'], { cwd: a, input: `${line}\n` });
    assert.equal(stored.code, 0, stored.stderr);
    const env: Record<string, string> = { ...(process.env as Record<string, string>), LANCEDB_LOG: 'error' };
    delete env.CODE_MEMORY_PROJECT;
    const client = new Client({ name: 'isolation-remotes', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: ['--require', require.resolve('tsx/cjs'), CLI_SOURCE, 'mcp', '--store', store, '--embedder', 'hashed'], cwd: b, env, stderr: 'pipe' }));
    try {
      for (const [tool, args] of [
        ['recall_context', { query: 'drimblepox settlement key rotation' }],
        ['recall', { query: 'drimblepox settlement key rotation' }],
        ['retrieve_memory', { prompt: 'when do the drimblepox settlement keys rotate?' }],
      ] as const) {
        const r = await client.callTool({ name: tool, arguments: args });
        assert.doesNotMatch(JSON.stringify(r), /Private drimblepox|every friday/i, `${tool} in the other repository`);
      }
    } finally {
      await client.close();
    }
  });
});
