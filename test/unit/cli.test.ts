import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { COMMAND_IMPLS } from '../../src/cli/commands/implementations';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { COMMAND_SPECS } from '../../src/cli/commands/specs';
import { REPO_ROOT, makeGitRepo, removeDir, tempDir } from './mcpFixture';
import type { TestRepo } from './mcpFixture';
import { CliBundle } from './cliFixture';
import type { CliRun } from './cliFixture';

// The CLI runs as its esbuild bundles, as users get them (see cliFixture.ts).
const bundle = new CliBundle('test-cli');
const CLI = bundle.cli;
const PROJECT = 'github.com/acme/cli-test';
type Run = CliRun;

function cli(args: string[], options: { input?: string; cwd?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return bundle.run(args, options);
}

describe('code-memory CLI', function () {
  this.timeout(180_000);
  let store: string;
  let repo: TestRepo;
  const common = (): string[] => ['--store', store, '--project', PROJECT];

  async function counts(storeDir = store): Promise<{ observations: number; memories: number; cells: number }> {
    const r = await cli(['stats', '--store', storeDir, '--project', PROJECT, '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as { observations: number; memories: number; cells: number };
  }

  before(async () => {
    await bundle.build();
    store = tempDir('cli-store');
    repo = makeGitRepo();
  });
  after(() => {
    removeDir(store);
    removeDir(repo.dir);
    bundle.remove();
  });

  it('prints help for the program and every command, and rejects unknown commands and options', async () => {
    const top = await cli(['--help']);
    assert.equal(top.code, 0);
    for (const name of ['mcp', 'serve', 'import-git', 'observe', 'node', 'search', 'stats', 'export', 'import', 'forget', 'doctor', 'eval']) {
      assert.match(top.stdout, new RegExp(`\\n  ${name} +\\S`), name);
    }
    assert.match(top.stdout, /--store <uri>/);
    const sub = await cli(['import-git', '--help']);
    assert.equal(sub.code, 0);
    assert.match(sub.stdout, /Usage: code-memory import-git/);
    assert.match(sub.stdout, /--json/);
    assert.equal((await cli(['frobnicate'])).code, 2);
    const badOption = await cli(['stats', '--frob']);
    assert.equal(badOption.code, 2);
    assert.match(badOption.stderr, /--frob/);
  });

  it('answers --help and usage errors from cli.js alone, loading the commands bundle only to run a command', async () => {
    const alone = tempDir('cli-alone');
    try {
      copyFileSync(CLI, path.join(alone, 'cli.js'));
      const run = (args: string[]): Promise<Run> => bundle.run(args, { cli: path.join(alone, 'cli.js') });
      const help = await run(['--help']);
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, /\n {2}search +Search the project memory/);
      assert.match((await run(['search', '--help'])).stdout, /Usage: code-memory search/);
      assert.equal((await run(['stats', '--frob'])).code, 2);
      // Running a command is what needs the commands bundle: without it, the load fails.
      const stats = await run(['stats', '--store', alone, '--project', PROJECT]);
      assert.equal(stats.code, 1);
      assert.match(stats.stderr, /cliCommands/);
    } finally {
      removeDir(alone);
    }
  });

  it('stats counts the vectors a store holds though it loads no model itself', async () => {
    const dir = tempDir('cli-vectors');
    try {
      const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(512), maintenanceIntervalMs: 0 });
      try {
        await engine.observe([{ type: 'note', title: 'Kangaroo routing table' }, { type: 'note', title: 'Wombat cache' }], { project: PROJECT });
        await engine.waitForVectors();
      } finally {
        await engine.close();
      }
      const json = await cli(['stats', '--store', dir, '--project', PROJECT, '--json']);
      assert.equal(json.code, 0, json.stderr);
      const s = JSON.parse(json.stdout) as { cells: number; cells_with_vectors: number; vector_models: Record<string, number> };
      assert.deepEqual(s.vector_models, { [new HashedEmbedder(512).name]: 2 });
      assert.equal(s.cells_with_vectors, 2);
      const text = await cli(['stats', '--store', dir, '--project', PROJECT]);
      assert.match(text.stdout, new RegExp(`cells +${s.cells} \\(2 with vectors\\)`));
      assert.match(text.stdout, new RegExp(`vectors +${new HashedEmbedder(512).name} 2 \\(512 dims\\)`));
    } finally {
      removeDir(dir);
    }
  });

  it('has one implementation for every command spec and none without a spec', () => {
    assert.deepEqual(COMMAND_IMPLS.map((c) => c.name), COMMAND_SPECS.map((c) => c.name));
  });

  it('import-git imports each commit once, with progress on stderr, and search finds them', async () => {
    const first = await cli(['import-git', repo.dir, ...common(), '--json']);
    assert.equal(first.code, 0, first.stderr);
    const report = JSON.parse(first.stdout) as { imported: number; skipped: number; sessions: number };
    assert.equal(report.imported, 3);
    assert.ok(report.sessions >= 1);
    assert.match(first.stderr, /commits 3\/3 \(100%\)/);
    const second = await cli(['import-git', repo.dir, ...common(), '--json']);
    assert.equal(second.code, 0, second.stderr);
    assert.equal((JSON.parse(second.stdout) as { imported: number }).imported, 0);
    assert.equal((await counts()).observations, 3);

    const found = await cli(['search', 'retry uploads backoff', ...common(), '--json']);
    assert.equal(found.code, 0, found.stderr);
    const hits = JSON.parse(found.stdout) as Array<{ node_id: string; commit_sha: string }>;
    assert.equal(hits[0].commit_sha, repo.shas.retry);

    const node = await cli(['node', hits[0].node_id, ...common(), '--json']);
    assert.equal(node.code, 0, node.stderr);
    const detail = JSON.parse(node.stdout) as { cell: { commit_sha: string }; source: { files_modified: string } };
    assert.equal(detail.cell.commit_sha, repo.shas.retry);
    assert.match(detail.source.files_modified, /retryPolicy\.ts/);
    const text = await cli(['node', hits[0].node_id, ...common()]);
    assert.match(text.stdout, /Retry failed uploads with exponential backoff/);
    assert.equal((await cli(['node', 'not-a-uuid', ...common()])).code, 2);
    assert.equal((await cli(['node', hits[0].node_id, '--store', store, '--project', 'someone/else'])).code, 1);
  });

  it('observe stores JSON lines from stdin, and stores nothing if any line is bad', async () => {
    const before = (await counts()).observations;
    const good = [JSON.stringify({ type: 'terminal', title: 'Ran npm test', narrative: 'all green' }), JSON.stringify({ type: 'edit', title: 'Edited the README', files_modified: ['README.md'] })].join('\n');
    const ok = await cli(['observe', ...common(), '--json'], { input: `${good}\n` });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal((JSON.parse(ok.stdout) as { stored: number }).stored, 2);
    assert.equal((await counts()).observations, before + 2);
    const bad = await cli(['observe', ...common()], { input: `${good}\n{"type": "edit", "secret_field": 1}\nnot json\n` });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /line 3: unknown argument\(s\) 'secret_field'/);
    assert.match(bad.stderr, /line 4: not JSON/);
    assert.equal((await counts()).observations, before + 2);
  });

  it('export and import move the project to another store', async () => {
    const exported = await cli(['export', ...common()]);
    assert.equal(exported.code, 0, exported.stderr);
    const lines = exported.stdout.trim().split('\n');
    assert.ok(lines.length >= 5);
    const other = tempDir('cli-store2');
    try {
      const imported = await cli(['import', '-', '--store', other, '--json'], { input: exported.stdout });
      assert.equal(imported.code, 0, imported.stderr);
      const a = await counts();
      const b = await counts(other);
      assert.equal(b.observations, a.observations);
    } finally {
      removeDir(other);
    }
  });

  it('import of a missing file or a folder is a usage error (exit 2) that names it, and imports nothing', async () => {
    const missing = await cli(['import', path.join(store, 'no-such-file.jsonl'), ...common()]);
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /cannot read .*no-such-file\.jsonl: ENOENT/);
    const folder = await cli(['import', store, ...common()]);
    assert.equal(folder.code, 2, folder.stderr);
    assert.match(folder.stderr, /is not a file/);
  });

  it('export --out writes a file only the user can read (0600), also over an existing file', async () => {
    const dir = tempDir('cli-export');
    try {
      const fresh = path.join(dir, 'memory.jsonl');
      const created = await cli(['export', '--out', fresh, ...common()]);
      assert.equal(created.code, 0, created.stderr);
      assert.equal(statSync(fresh).mode & 0o777, 0o600);
      assert.ok(readFileSync(fresh, 'utf8').trim().split('\n').length >= 5);
      const existing = path.join(dir, 'shared.jsonl');
      writeFileSync(existing, 'an older export\n');
      chmodSync(existing, 0o644);
      const over = await cli(['export', '--out', existing, ...common()]);
      assert.equal(over.code, 0, over.stderr);
      assert.equal(statSync(existing).mode & 0o777, 0o600);
      // The old content is gone: the same records as the fresh export (the header differs in its time).
      const records = (file: string) => readFileSync(file, 'utf8').split('\n').slice(1);
      assert.deepEqual(records(existing), records(fresh));
    } finally {
      removeDir(dir);
    }
  });

  it('refuses a file:// store that names no local folder, before opening anything', async () => {
    const dir = tempDir('cli-store-uri');
    try {
      for (const store of ['file://[', `file://${dir}/%E0%A4%A`, `file://${dir}/a%2Fb`]) {
        const r = await cli(['stats', '--store', store, '--project', PROJECT]);
        assert.equal(r.code, 2, `${store}: ${r.stdout}${r.stderr}`);
        assert.match(r.stderr, /^error: --store '.*' is not a file URI of a local folder \(.+\); give a folder path, or a file:\/\/\/absolute\/path URI/);
      }
      const fromEnv = await cli(['stats', '--project', PROJECT], { env: { CODE_MEMORY_STORE: 'file://[' } });
      assert.equal(fromEnv.code, 2);
      assert.match(fromEnv.stderr, /^error: CODE_MEMORY_STORE 'file:\/\/\[' is not a file URI/);
      // A well-formed file URI is the folder it names, percent-decoded.
      const spaced = await cli(['stats', '--store', `file://${dir}/my%20store`, '--project', PROJECT, '--json']);
      assert.equal(spaced.code, 0, spaced.stderr);
      assert.ok(existsSync(path.join(dir, 'my store')));
      assert.ok(!existsSync(path.join(dir, 'my%20store')));
    } finally {
      removeDir(dir);
    }
  });

  it('forget deletes the given ids and asks for --yes before deleting a project', async () => {
    const before = (await counts()).observations;
    const refused = await cli(['forget', '--whole-project', ...common()]);
    assert.equal(refused.code, 2);
    assert.equal((await cli(['forget', '--ids', '1;2', '--kind', 'observation', ...common()])).code, 2);
    assert.equal((await counts()).observations, before);
    const exported = (await cli(['export', ...common()])).stdout.trim().split('\n').map((l) => JSON.parse(l) as { kind?: string; table?: string; record?: { id: number; type: string }; id?: number; type?: string });
    const obs = exported.map((e) => e.record ?? e).find((r) => (r as { type?: string }).type === 'terminal') as { id: number };
    const done = await cli(['forget', '--ids', String(obs.id), '--kind', 'observation', ...common(), '--json']);
    assert.equal(done.code, 0, done.stderr);
    assert.equal((JSON.parse(done.stdout) as { observations: number }).observations, 1);
    assert.equal((await counts()).observations, before - 1);
  });

  it('doctor checks the store, model and port, and says what to fix', async () => {
    const ok = await cli(['doctor', ...common(), '--json']);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    const report = JSON.parse(ok.stdout) as { ok: boolean; checks: Array<{ name: string; ok: boolean }> };
    assert.deepEqual(report.checks.map((c) => c.name).slice(0, 3), ['store', 'model', 'port']);
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (blocker.address() as AddressInfo).port;
      const busy = await cli(['doctor', ...common(), '--port', String(port)]);
      assert.equal(busy.code, 1);
      assert.match(busy.stdout, /FAIL port/);
      assert.match(busy.stdout, /fix: /);
    } finally {
      blocker.close();
    }
  });

  it('serve prints the URL, keeps the token in a 0600 file (also over a world-readable one left behind), answers MCP with it, and cleans up on SIGTERM', async () => {
    const leftBehind = path.join(store, 'server.json');
    writeFileSync(leftBehind, '{}\n');
    chmodSync(leftBehind, 0o644);
    const child = spawn(process.execPath, [CLI, 'serve', ...common(), '--json'], { cwd: REPO_ROOT, env: { ...process.env, LANCEDB_LOG: 'error', CODE_MEMORY_EMBEDDER: 'hashed' } });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => {
          out += d;
          if (out.includes('\n')) resolve(out.split('\n')[0]);
        });
        child.on('exit', (code) => reject(new Error(`serve exited with ${code}`)));
      });
      const info = JSON.parse(line) as { url: string; token_file: string };
      assert.match(info.url, /^http:\/\/127\.0\.0\.1:\d+\/v1\/mcp\/memory$/);
      assert.equal(info.token_file, leftBehind);
      assert.equal(statSync(info.token_file).mode & 0o777, 0o600);
      const { token } = JSON.parse(readFileSync(info.token_file, 'utf8')) as { token: string };
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
      assert.equal((await fetch(info.url, { method: 'POST', headers, body })).status, 401);
      const res = await fetch(info.url, { method: 'POST', headers: { ...headers, authorization: `Bearer ${token}` }, body });
      assert.equal(res.status, 200);
      assert.match(await res.text(), /"retrieve_memory"/);
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      assert.equal(existsSync(info.token_file), false);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
