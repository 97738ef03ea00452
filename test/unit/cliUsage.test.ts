// The CLI's usage contract, run as its bundle against real stores in temp folders: bad usage or
// input exits 2 with one clear line, a flag that does not fit is refused rather than ignored,
// and an export never writes through what its path already names.
import * as assert from 'node:assert/strict';
import { existsSync, lstatSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { removeDir, tempDir } from './mcpFixture';
import { CliBundle } from './cliFixture';
import { settingOptions } from '../../src/extension/agents/agentConfig';
import type { CliRun } from './cliFixture';

const bundle = new CliBundle('cli-usage');
const cli = (args: string[], input?: string): Promise<CliRun> => bundle.run(args, { input });

async function observe(store: string, project: string, titles: string[]): Promise<void> {
  const r = await cli(['observe', '--store', store, '--project', project], titles.map((t) => JSON.stringify({ type: 'edit', title: t, narrative: `${t} narrative` })).join('\n') + '\n');
  assert.equal(r.code, 0, r.stderr);
}

async function observations(store: string, project: string): Promise<number> {
  const r = await cli(['stats', '--store', store, '--project', project, '--json']);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { observations: number }).observations;
}

describe('code-memory CLI usage', function () {
  this.timeout(240_000);
  let dir: string;
  before(async () => {
    await bundle.build();
    dir = tempDir('cli-usage');
  });
  after(() => {
    removeDir(dir);
    bundle.remove();
  });

  it("--version prints package.json's version", async () => {
    const pkg = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) {
      const r = await cli([flag]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${pkg.version}\n`);
    }
  });

  it('export --out replaces a symlink at its path instead of writing through it, and leaves no temp file', async () => {
    const store = path.join(dir, 'sym-store');
    await observe(store, 'P', ['symlink export']);
    const target = path.join(dir, 'elsewhere.txt');
    writeFileSync(target, 'precious\n', { mode: 0o644 });
    const link = path.join(dir, 'export.jsonl');
    symlinkSync(target, link);
    const r = await cli(['export', '--out', link, '--store', store, '--project', 'P']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(target, 'utf8'), 'precious\n');
    assert.ok(!lstatSync(link).isSymbolicLink());
    assert.equal(statSync(link).mode & 0o777, 0o600);
    assert.match(readFileSync(link, 'utf8'), /symlink export/);
    assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.tmp')), []);
  });

  it('forget refuses --kind without --ids, and --all with --project, instead of forgetting more than asked', async () => {
    const store = path.join(dir, 'kind-store');
    await observe(store, 'K', ['k one', 'k two']);
    await observe(store, 'L', ['l one']);
    const kind = await cli(['forget', '--whole-project', '--kind', 'memory', '--yes', '--store', store, '--project', 'K']);
    assert.equal(kind.code, 2, kind.stderr);
    assert.match(kind.stderr, /--kind goes with --ids/);
    const all = await cli(['forget', '--all', '--yes', '--store', store, '--project', 'K']);
    assert.equal(all.code, 2, all.stderr);
    assert.match(all.stderr, /--whole-project/);
    assert.equal(await observations(store, 'K'), 2);
    assert.equal(await observations(store, 'L'), 1);
  });

  it('a positional argument a command does not take is refused, not ignored', async () => {
    const store = path.join(dir, 'pos-store');
    await observe(store, 'Q', ['q one']);
    const wanted = path.join(dir, 'wanted.jsonl');
    const r = await cli(['export', wanted, '--store', store, '--project', 'Q']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unexpected argument '.*wanted\.jsonl'/);
    assert.equal(r.stdout, '');
    assert.ok(!existsSync(wanted));
    // Commands that take text keep taking it.
    const search = await cli(['search', 'q', 'one', '--store', store, '--project', 'Q', '--embedder', 'none', '--json']);
    assert.equal(search.code, 0, search.stderr);
  });

  it('observe refuses its whole input, with the line number, when a line after the first 500 holds what the engine would refuse', async () => {
    const store = path.join(dir, 'observe-late-store');
    const good = Array.from({ length: 600 }, (_, i) => JSON.stringify({ type: 'note', title: `good ${i}` }));
    // The CLI writes 500 lines at a time: a line only the engine refused left the first 500 stored.
    const r = await cli(['observe', '--store', store, '--project', 'N'], `${good.join('\n')}\n${JSON.stringify({ type: 'note', title: 'poison', branch: 'a\u0000b' })}\n`);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /line 601: branch: may not contain NUL characters/);
    assert.equal(await observations(store, 'N'), 0);
  });

  it('observe refuses a NUL in any key or file path, or a type the engine refuses, with the line number, storing nothing', async () => {
    const store = path.join(dir, 'observe-nul-store');
    const ok = JSON.stringify({ type: 'note', title: 'fine' });
    const bad: Array<[string, Record<string, unknown>, RegExp]> = [
      ...['branch', 'memory_session_id', 'content_session_id', 'dedupe_key'].map((field): [string, Record<string, unknown>, RegExp] => [field, { [field]: 'a\u0000b' }, new RegExp(`line 2: ${field}: may not contain NUL`)]),
      ...['files_read', 'files_modified'].map((field): [string, Record<string, unknown>, RegExp] => [field, { [field]: ['src/a\u0000b.ts'] }, new RegExp(`line 2: ${field}\\.0: may not contain NUL`)]),
      ['type', { type: 'two words' }, /line 2: type: invalid type 'two words'/],
    ];
    const wrong: string[] = [];
    for (const [name, patch, reason] of bad) {
      const r = await cli(['observe', '--store', store, '--project', 'N'], `${ok}\n${JSON.stringify({ type: 'note', title: name, ...patch })}\n`);
      if (r.code !== 2 || !reason.test(r.stderr)) wrong.push(`${name}: exit ${r.code}: ${r.stderr.trim().split('\n').join(' ')}`);
    }
    assert.deepEqual(wrong, []);
    assert.equal(await observations(store, 'N'), 0);
  });

  it('observe reads stdin that starts with a UTF-8 BOM and has CRLF line endings', async () => {
    const store = path.join(dir, 'observe-bom-store');
    const lines = ['bom first', 'crlf second'].map((title) => JSON.stringify({ type: 'note', title }));
    const r = await cli(['observe', '--store', store, '--project', 'B'], `\ufeff${lines.join('\r\n')}\r\n`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await observations(store, 'B'), 2);
  });

  it('observe counts what it stored: a dedupe_key repeated in one run is stored and counted once', async () => {
    const store = path.join(dir, 'observe-dedupe-store');
    const lines = ['twin one', 'twin two'].map((title) => JSON.stringify({ type: 'note', title, dedupe_key: 'cli-twin' }));
    const r = await cli(['observe', '--store', store, '--project', 'T', '--json'], `${lines.join('\n')}\n`);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { stored: number; ids: number[] };
    assert.equal(out.ids[0], out.ids[1]);
    assert.equal(out.stored, 1, r.stdout);
    assert.equal(await observations(store, 'T'), 1);
    const text = await cli(['observe', '--store', store, '--project', 'U'], `${lines.join('\n')}\n`);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout, "Stored 1 observation(s) in 'U'.\n");
    // Run again: every line's key is stored, so nothing is stored anew.
    const again = await cli(['observe', '--store', store, '--project', 'T', '--json'], `${lines.join('\n')}\n`);
    assert.deepEqual(JSON.parse(again.stdout), { project: 'T', stored: 0, ids: out.ids }, again.stderr);
  });

  it('bad usage or input exits 2 with the reason, whichever command finds it', async () => {
    const store = path.join(dir, 'usage-store');
    const runs: Array<[string, string[], RegExp]> = [
      ['doctor --port abc', ['doctor', '--port', 'abc', '--store', store, '--project', 'U', '--embedder', 'none'], /--port must be an integer/],
      ['serve --port ""', ['serve', '--port', '', '--store', store, '--project', 'U', '--embedder', 'none'], /--port must be an integer/],
      ['--store ""', ['stats', '--store', '', '--project', 'U'], /--store needs a value/],
      ['--project ""', ['stats', '--store', store, '--project', ' '], /--project needs a value/],
      ['forget --ids 1e20', ['forget', '--ids', '99999999999999999999', '--kind', 'observation', '--store', store, '--project', 'U'], /positive integers/],
      ['import-git of a missing folder', ['import-git', path.join(dir, 'no-such-repo'), '--store', store, '--project', 'U'], /is not a folder/],
      ['share without a team store', ['share', '--memory', '1', '--store', store, '--project', 'U'], /no team store/],
      // memory:// kept nothing once the process ended, and reported success; others failed in LanceDB's words.
      ['--store memory://', ['observe', '--store', 'memory://x', '--project', 'U'], /--store 'memory:\/\/x' is not s3:\/\/bucket\/prefix, gs:\/\/, az:\/\/ or a folder/],
      ['--store ftp://', ['stats', '--store', 'ftp://host/x', '--project', 'U'], /is not s3:\/\/bucket\/prefix/],
      // The store's own refusals (FilterError) are bad input too: they exited 1.
      ['--project of 600 characters', ['stats', '--store', store, '--project', 'p'.repeat(600)], /at most 512 characters/],
      ['search --limit 0x10', ['search', 'x', '--limit', '0x10', '--store', store, '--project', 'U'], /--limit must be an integer/],
      ['forget --ids 0', ['forget', '--ids', '0', '--kind', 'observation', '--store', store, '--project', 'U'], /positive integers/],
      ['--branch of 300 characters', ['stats', '--store', store, '--project', 'U', '--branch', 'b'.repeat(300)], /--branch is at most 256 characters/],
      ['--project holding a token', ['stats', '--store', store, '--project', `acme-ghp_${'a1B2c'.repeat(7)}x`], /must not hold a secret/],
    ];
    const wrong: string[] = [];
    for (const [name, args, reason] of runs) {
      const r = await cli(args);
      if (r.code !== 2 || !reason.test(r.stderr)) wrong.push(`${name}: exit ${r.code}: ${r.stderr.split('\n')[0]}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('a store location that is a file is refused by name, for the store and the team store', async () => {
    const file = path.join(dir, 'a-file');
    writeFileSync(file, 'not a store\n');
    const r = await cli(['stats', '--store', file, '--project', 'U']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /the store location .*a-file is a file, not a folder/);
    const team = await cli(['team', '--store', path.join(dir, 'team-file-store'), '--team-store', file, '--project', 'U', '--embedder', 'none']);
    assert.match(team.stdout + team.stderr, /is a file, not a folder/);
    assert.doesNotMatch(team.stdout + team.stderr, /LanceError|os error/);
  });

  it("takes the idle minutes Copy Agent Configuration passes from codeMemory.session.idleMinutes, a fraction included, as the extension does", async () => {
    const store = path.join(dir, 'idle-store');
    // The setting is a number of at least 1, not a whole number: 2.5 is what the extension uses.
    const { args } = settingOptions({ embeddingProvider: 'hashed', embeddingEndpoint: '', embeddingModel: '', rerankEndpoint: '', rerankModel: '', rerankCandidates: 30, teamStore: '', storeEndpoint: '', requestLogRetentionDays: 30, requestLogMaxRows: 10_000, sessionIdleMinutes: 2.5 }, store);
    assert.deepEqual(args.slice(-2), ['--session-idle-minutes', '2.5']);
    const r = await cli(['stats', '--store', store, '--project', 'I', ...args]);
    assert.equal(r.code, 0, r.stderr);
    const fromEnv = await bundle.run(['stats', '--store', store, '--project', 'I'], { env: { CODE_MEMORY_SESSION_IDLE_MINUTES: '1.5' } });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    // Below the setting's minimum, or no plain number, is still bad input.
    const wrong: string[] = [];
    for (const value of ['0.5', '0', '1e3', '.5', '2.', 'abc']) {
      const bad = await cli(['stats', '--store', store, '--project', 'I', '--session-idle-minutes', value]);
      if (bad.code !== 2 || !/--session-idle-minutes must be/.test(bad.stderr)) wrong.push(`${value}: exit ${bad.code}: ${bad.stderr.split('\n')[0]}`);
    }
    assert.deepEqual(wrong, []);
  });
});
