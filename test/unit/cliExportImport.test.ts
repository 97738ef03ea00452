// `code-memory export` and `import` as users run them (the CLI's bundles, as child processes):
// an export through a pipe whose reader is slow or gone, import's limits and exit codes.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { removeDir, tempDir } from './mcpFixture';
import { CliBundle } from './cliFixture';
import type { CliRun } from './cliFixture';

const bundle = new CliBundle('test-cli-export-import');
const ENV = { CODE_MEMORY_EMBEDDER: 'none' };
const HEADER = { kind: 'code-memory-export', schema_version: 4, exported_at: '2026-01-01T00:00:00.000Z', project: 'p1' };

function cli(args: string[], input?: string): Promise<CliRun> {
  return bundle.run(args, { input, env: ENV });
}

function observationLine(record: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): string {
  const base = { id: 7, memory_session_id: 's-x', content_session_id: null, project: 'p1', type: 'note', title: 'a note', subtitle: null, narrative: null, facts: null, concepts: null, files_read: null, files_modified: null, commit_sha: null, branch: null, status: 'active', created_at: '2026-01-01T00:00:00.000Z', created_at_epoch: 1767225600000 };
  return JSON.stringify({ kind: 'observation', record: { ...base, ...record }, ...extra });
}

/** `bash -c script` with the CLI bundle as $CLI; resolves to its exit status and stderr. */
function shell(script: string, env: Record<string, string> = {}): { status: number | null; stderr: string } {
  const r = spawnSync('bash', ['-c', `set -o pipefail; ${script}`], { encoding: 'utf8', env: { ...process.env, LANCEDB_LOG: 'error', CODE_MEMORY_STORE: '', CODE_MEMORY_PROJECT: '', ...ENV, CLI: bundle.cli, NODE: process.execPath, ...env }, timeout: 110_000 });
  return { status: r.status, stderr: r.stderr };
}

describe('code-memory export and import: pipes, limits, exit codes', function () {
  this.timeout(180_000);
  const dirs: string[] = [];
  const dir = (): string => {
    const d = tempDir('cli-export-import');
    dirs.push(d);
    return d;
  };
  let store: string;
  let expected: string;

  before(async () => {
    await bundle.build();
    // 400 observations of ~1.5 KB: an export of ~700 KB, far more than a pipe holds (64 KB).
    store = path.join(dir(), 'store');
    const lines = Array.from({ length: 400 }, (_, i) => JSON.stringify({ type: 'note', title: `note ${i} ${'y'.repeat(400)}`, narrative: 'z'.repeat(1000) })).join('\n');
    const observed = await cli(['observe', '--store', store, '--project', 'p1'], `${lines}\n`);
    assert.equal(observed.code, 0, observed.stderr);
    const file = path.join(dir(), 'full.jsonl');
    const full = await cli(['export', '--store', store, '--project', 'p1', '--out', file]);
    assert.equal(full.code, 0, full.stderr);
    expected = readFileSync(file, 'utf8');
  });

  after(() => {
    dirs.forEach(removeDir);
    bundle.remove();
  });

  it('two imports of one file at once (two processes) store each record once', async () => {
    const file = path.join(dir(), 'twice.jsonl');
    writeFileSync(file, expected);
    const target = path.join(dir(), 'target');
    assert.equal((await cli(['stats', '--store', target, '--project', 'p1'])).code, 0);
    const runs = await Promise.all([1, 2].map(() => cli(['import', file, '--store', target, '--project', 'p1'])));
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    const stats = await cli(['stats', '--store', target, '--project', 'p1', '--json']);
    assert.equal((JSON.parse(stats.stdout) as { observations: number }).observations, 400);
  });

  it('writes the whole export to a pipe whose reader starts reading late, every line whole', async () => {
    // The reader starts once the export has exited, or after 3 s: an export that exits before its
    // output was read (what a pipe holds, 64 KB, and nothing more) is caught every time.
    const child = bundle.spawn(['export', '--store', store, '--project', 'p1'], { env: ENV });
    child.stdin.end();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
    let piped = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (piped += d));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    assert.equal(code, 0, stderr);
    assert.equal(piped.split('\n').length, expected.split('\n').length, `${piped.length} of ${expected.length} bytes came through`);
    // Only the header's export time differs between two exports.
    assert.equal(piped.slice(piped.indexOf('\n')), expected.slice(expected.indexOf('\n')));
    for (const [i, line] of piped.trimEnd().split('\n').entries()) assert.doesNotThrow(() => JSON.parse(line), `line ${i + 1} is cut short`);
  });

  it('ends with a clear error and a non-zero exit, not a hang, when the reader of stdout stops reading', () => {
    const r = shell(`"$NODE" "$CLI" export --store "${store}" --project p1 | head -c 1000 > /dev/null`);
    assert.notEqual(r.status, 0, 'an export cut short exits 0');
    assert.match(r.stderr, /could not write the output \(EPIPE\)/);
    assert.doesNotMatch(r.stderr, /Exported \d+ record/);
  });

  it('refuses an observation whose title is 10 MB (more than Code Memory keeps in a field): exit 2, its line number, nothing stored', async () => {
    const d = dir();
    const target = path.join(d, 'store');
    const title = 'x'.repeat(10_000_000);
    const viaObserve = await cli(['observe', '--store', target, '--project', 'p1'], `${JSON.stringify({ type: 'note', title })}\n`);
    assert.equal(viaObserve.code, 2);
    const file = path.join(d, 'huge.jsonl');
    writeFileSync(file, `${JSON.stringify(HEADER)}\n${observationLine({ id: 1, title: 'fine', created_at_epoch: 1767225600001 })}\n${observationLine({ title })}\n`);
    const r = await cli(['import', file, '--store', target, '--project', 'p1']);
    assert.equal(r.code, 2, r.stderr.slice(0, 300));
    assert.match(r.stderr, /line 3: the observation record title longer than 1000000 characters/);
    assert.ok(r.stderr.length < 2000, 'the error quotes the title');
    const stats = await cli(['stats', '--store', target, '--project', 'p1', '--json']);
    assert.equal((JSON.parse(stats.stdout) as { observations: number }).observations, 0, 'the line before the bad one was stored');
  });

  it('round-trips a record longer than observe and remember accept (a git import keeps a long commit subject as it is)', async () => {
    const d = dir();
    const memory = { id: 3, project: 'p1', title: 't'.repeat(301), text: 'a memory', memory_type: 'note', created_at_epoch: 1, updated_at_epoch: 1, status: 'active', scope: 'project', classification: 'note', classification_reason: 'x', current_context_eligible: false };
    const file = path.join(d, 'long.jsonl');
    writeFileSync(file, `${JSON.stringify(HEADER)}\n${JSON.stringify({ kind: 'memory', record: memory })}\n${observationLine({ title: 's'.repeat(5000), facts: JSON.stringify(['f'.repeat(2001)]) })}\n`);
    const r = await cli(['import', file, '--store', path.join(d, 'store'), '--project', 'p1']);
    assert.equal(r.code, 0, r.stderr);
    const stats = await cli(['stats', '--store', path.join(d, 'store'), '--project', 'p1', '--json']);
    assert.deepEqual(JSON.parse(stats.stdout) as { observations: number; memories: number }, { ...(JSON.parse(stats.stdout) as object), observations: 1, memories: 1 });
  });

  it('refuses a line over 16 MiB as it reads it (exit 2, its line number), even one of fields the import drops', async () => {
    const d = dir();
    const file = path.join(d, 'long.jsonl');
    writeFileSync(file, `${JSON.stringify(HEADER)}\n${observationLine({}, { padding: 'p'.repeat(17 * 1024 * 1024) })}\n`);
    const r = await cli(['import', file, '--store', path.join(d, 'store'), '--project', 'p1']);
    assert.equal(r.code, 2, r.stderr.slice(0, 300));
    assert.match(r.stderr, /Import line 2 is longer than 16 MiB/);
  });

  it('refuses an empty file, and one without the export header, as bad input (exit 2)', async () => {
    const d = dir();
    const empty = path.join(d, 'empty.jsonl');
    writeFileSync(empty, '');
    const headless = path.join(d, 'headless.jsonl');
    writeFileSync(headless, `${observationLine()}\n`);
    const r = await cli(['import', empty, '--store', path.join(d, 'store'), '--project', 'p1']);
    assert.equal(r.code, 2, `exit ${r.code}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /The file is empty: it is not an export of Code Memory/);
    const fromStdin = await cli(['import', '-', '--store', path.join(d, 'store'), '--project', 'p1'], `${observationLine()}\n`);
    assert.equal(fromStdin.code, 2, fromStdin.stderr);
    assert.match(fromStdin.stderr, /no code-memory-export header line/);
  });

  it('import-git on a folder that is not a git repository is bad input (exit 2), as a path that does not exist is', async () => {
    const d = dir();
    const plain = path.join(d, 'plain');
    mkdirSync(plain);
    const missing = await cli(['import-git', path.join(d, 'nope'), '--store', path.join(d, 'store'), '--project', 'g']);
    const notRepo = await cli(['import-git', plain, '--store', path.join(d, 'store'), '--project', 'g']);
    assert.equal(missing.code, 2, missing.stderr);
    assert.equal(notRepo.code, 2, notRepo.stderr);
    assert.match(notRepo.stderr, /Not a git repository/);
  });

  it('export --out into a folder that does not exist names the path given, not a temporary file, and is bad input (exit 2)', async () => {
    const d = dir();
    const out = path.join(d, 'missing', 'dir', 'x.jsonl');
    const r = await cli(['export', '--store', store, '--project', 'p1', '--out', out]);
    assert.equal(r.code, 2, r.stderr);
    assert.ok(r.stderr.includes(`cannot write ${out}: the folder ${path.dirname(out)} does not exist`), r.stderr);
    assert.doesNotMatch(r.stderr, /\.tmp/);
    assert.deepEqual(readdirSync(d), []);
    assert.ok(statSync(store).isDirectory());
  });
});
