// Reliability with real processes on one store: the CLI bundle (`observe`, `import-git`,
// `forget`) and the HTTP server (`serve`) write at once, get killed with SIGKILL at random
// moments, and forget what other processes are still writing. After each, the store is opened
// again (which repairs) and checked row by row: exact counts, one id per record and one search
// cell per record, every record found by a search, and a forgotten word in no file on disk.

import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { MemoryEngine } from '../../src/core/engine';
import type { ObservationInput } from '../../src/core/api';
import { TABLES } from '../../src/core/store/schema';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { CliBundle } from './cliFixture';
import { removeDir, tempDir } from './mcpFixture';
import { filesContaining } from './storeForget.test';

process.env.LANCEDB_LOG ??= 'error';

const bundle = new CliBundle('test-reliability');

/** A word of letters only for n (the search text splits digits from letters and stems words). */
function word(n: number): string {
  let s = '';
  let v = n;
  do {
    s = String.fromCharCode(97 + (v % 26)) + s;
    v = Math.floor(v / 26);
  } while (v > 0);
  return `qz${s}t`;
}

function note(tag: string, n: number): ObservationInput {
  return { type: 'note', title: `${tag} note ${word(n)}`, narrative: `Written by the ${tag} writer: item ${word(n)}.` };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A real git repository of `count` commits (written with git fast-import, for speed). */
function makeHistory(count: number): string {
  const dir = tempDir('reliability-repo');
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir };
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir, env });
  const parts: string[] = [];
  const start = Date.parse('2026-01-05T10:00:00Z') / 1000;
  for (let i = 0; i < count; i++) {
    const body = `export const ${word(i)} = ${i};\n`;
    const message = `Add the ${word(i)} constant to module ${i % 7}\n`;
    parts.push(
      'commit refs/heads/main',
      `committer Dev Example <dev@example.com> ${start + i * 600} +0000`,
      `data ${Buffer.byteLength(message)}`,
      message,
      `M 644 inline src/mod${i % 7}/${word(i)}.ts`,
      `data ${Buffer.byteLength(body)}`,
      body,
    );
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: dir, env, input: `${parts.join('\n')}\n` });
  execFileSync('git', ['checkout', '-q', 'main'], { cwd: dir, env });
  return dir;
}

interface Server {
  child: ChildProcessWithoutNullStreams;
  baseUrl: string;
  token: string;
}

/** `code-memory serve` on the store; resolves once it listens. */
async function startServer(store: string, project: string): Promise<Server> {
  const child = bundle.spawn(['serve', '--store', store, '--project', project, '--embedder', 'none', '--json']);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  const info = JSON.parse(line) as { base_url: string; token_file: string };
  const { token } = JSON.parse(readFileSync(info.token_file, 'utf8')) as { token: string };
  return { child, baseUrl: info.base_url, token };
}

async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise<number | null>((resolve) => server.child.on('exit', (code) => resolve(code)));
  server.child.kill('SIGTERM');
  assert.equal(await exited, 0, 'serve did not exit cleanly');
}

async function postObservations(server: Server, observations: ObservationInput[]): Promise<number[]> {
  const res = await fetch(`${server.baseUrl}/v1/observations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
    body: JSON.stringify({ observations }),
  });
  const body = (await res.json()) as { ids: number[] };
  assert.equal(res.status, 201, JSON.stringify(body));
  return body.ids;
}

interface Checked {
  /** id → title of every observation of the project. */
  titles: Map<number, string>;
}

/**
 * Opens the store as a new process would (taking the lease repairs what a crash left), then
 * checks every observation of `project`: one row per id, exactly one cell per record, and a
 * sample (or all, with `searchAll`) found by a full-text search on its own words.
 */
async function checkStore(store: string, project: string, options: { sample?: number } = {}): Promise<Checked> {
  const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
  try {
    const scope = { project };
    const rows = await engine.store.rows(TABLES.observations, `project = '${project}'`, { select: ['id', 'title'] });
    const titles = new Map<number, string>();
    for (const r of rows) {
      const id = Number(r.id);
      assert.ok(!titles.has(id), `observation id ${id} is stored twice`);
      titles.set(id, String(r.title));
    }
    // Every record (of every kind) has exactly one cell, and every cell a record.
    for (const [kind, table] of [['observation', TABLES.observations], ['session_summary', TABLES.sessionSummaries], ['memory', TABLES.memories]] as const) {
      const ids = new Set((await engine.store.rows(table, null, { select: ['id'] })).map((r) => Number(r.id)));
      const cells = new Map<number, number>();
      for (const c of await engine.store.rows(TABLES.cells, `source_kind = '${kind}'`, { select: ['source_id'] })) cells.set(Number(c.source_id), (cells.get(Number(c.source_id)) ?? 0) + 1);
      const doubled = [...cells].filter(([, n]) => n > 1).map(([id]) => id);
      assert.deepEqual(doubled.slice(0, 10), [], `${doubled.length} ${kind}(s) with more than one cell`);
      const missing = [...ids].filter((id) => !cells.has(id));
      assert.deepEqual(missing.slice(0, 10), [], `${missing.length} ${kind}(s) without a cell`);
      const orphans = [...cells.keys()].filter((id) => !ids.has(id));
      assert.deepEqual(orphans.slice(0, 10), [], `${orphans.length} cell(s) of ${kind}s that are not stored`);
    }
    const all = [...titles];
    const step = Math.max(1, Math.floor(all.length / (options.sample ?? 40)));
    for (let i = 0; i < all.length; i += step) {
      const [id, title] = all[i];
      const unique = /qz[a-z]+t/.exec(title)?.[0];
      if (!unique) continue;
      const hits = await engine.search(unique, { scope, layers: ['L0'], limit: 5 });
      assert.ok(hits.some((h) => h.cell.source_id === id), `observation ${id} ('${title}') is not found by a search for '${unique}'`);
    }
    return { titles };
  } finally {
    await engine.close();
  }
}

describe('reliability: real processes on one store', function () {
  this.timeout(240_000);
  let store: string;

  before(async () => {
    await bundle.build();
  });
  after(() => bundle.remove());
  beforeEach(() => {
    store = tempDir('reliability');
  });
  afterEach(() => removeDir(store));

  it('two writers at once, CLI observe and the HTTP server, 10,000 observations each: exact counts, no id twice, every row searchable', async () => {
    const project = 'github.com/acme/two-writers';
    const N = 10_000;
    const server = await startServer(store, project);
    try {
      const lines = Array.from({ length: N }, (_, i) => JSON.stringify(note('cli', i))).join('\n');
      const cli = bundle.run(['observe', '--store', store, '--project', project, '--embedder', 'none', '--json'], { input: `${lines}\n` });
      const httpIds: number[] = [];
      for (let i = 0; i < N; i += 250) {
        httpIds.push(...(await postObservations(server, Array.from({ length: 250 }, (_, k) => note('http', i + k)))));
      }
      const done = await cli;
      assert.equal(done.code, 0, done.stderr);
      const cliIds = (JSON.parse(done.stdout) as { stored: number; ids: number[] }).ids;
      assert.equal(cliIds.length, N);
      assert.equal(httpIds.length, N);
      assert.equal(new Set([...cliIds, ...httpIds]).size, 2 * N, 'an id was handed to two observations');

      const { titles } = await checkStore(store, project, { sample: 200 });
      assert.equal(titles.size, 2 * N);
      for (const [ids, tag] of [[cliIds, 'cli'], [httpIds, 'http']] as const) {
        ids.forEach((id, i) => assert.equal(titles.get(id), `${tag} note ${word(i)}`, `${tag} observation ${i} (id ${id})`));
      }
    } finally {
      await stopServer(server);
    }
  });
  it('20 runs of import-git and observe killed with SIGKILL at random moments: after reopen every stored observation is searchable, no id reused', async () => {
    const project = 'github.com/acme/killed';
    const repo = makeHistory(300);
    const common = ['--store', store, '--project', project, '--embedder', 'none'];
    // id -> title of every observation seen after a kill: an id never names another record later.
    const seen = new Map<number, string>();
    let killedMidway = 0;
    try {
      for (let run = 0; run < 20; run++) {
        const importing = run % 2 === 0;
        const child = bundle.spawn(importing ? ['import-git', repo, ...common] : ['observe', ...common]);
        const lines = importing ? '' : Array.from({ length: 2000 }, (_, i) => JSON.stringify(note('killed', run * 10_000 + i))).join('\n');
        child.stdin.end(lines);
        const exited = new Promise<string | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
        await Promise.race([exited, sleep(1000 + Math.random() * 4000)]);
        child.kill('SIGKILL');
        if ((await exited) === 'SIGKILL') killedMidway++;

        const { titles } = await checkStore(store, project, { sample: 10 });
        for (const [id, title] of titles) {
          const before = seen.get(id);
          assert.ok(before === undefined || before === title, `run ${run}: id ${id} named '${before}' and now names '${title}'`);
          seen.set(id, title);
        }
        const lost = [...seen.keys()].filter((id) => !titles.has(id));
        assert.deepEqual(lost, [], `run ${run}: observations stored before are gone`);
      }
      assert.ok(killedMidway >= 10, `only ${killedMidway} of 20 runs were killed before they ended`);

      // A last import to its end: every commit is stored exactly once, whatever the kills left.
      const last = await bundle.run(['import-git', repo, ...common, '--json']);
      assert.equal(last.code, 0, last.stderr);
      const { titles } = await checkStore(store, project, { sample: 40 });
      const commits = [...titles.values()].filter((t) => t.startsWith('Add the '));
      assert.equal(commits.length, 300);
      assert.equal(new Set(commits).size, 300, 'a commit was imported twice');
    } finally {
      removeDir(repo);
    }
  });
});
