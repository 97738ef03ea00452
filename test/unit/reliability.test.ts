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
import { filesContaining, letterWord } from './diskFixture';

process.env.LANCEDB_LOG ??= 'error';

const bundle = new CliBundle('test-reliability');

function note(tag: string, n: number): ObservationInput {
  return { type: 'note', title: `${tag} note ${letterWord(n)}`, narrative: `Written by the ${tag} writer: item ${letterWord(n)}.` };
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
    const body = `export const ${letterWord(i)} = ${i};\n`;
    const message = `Add the ${letterWord(i)} constant to module ${i % 7}\n`;
    parts.push(
      'commit refs/heads/main',
      `committer Dev Example <dev@example.com> ${start + i * 600} +0000`,
      `data ${Buffer.byteLength(message)}`,
      message,
      `M 644 inline src/mod${i % 7}/${letterWord(i)}.ts`,
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
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise<number | null>((resolve) => server.child.on('exit', (code) => resolve(code)));
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 30_000);
  try {
    assert.equal(await exited, 0, 'serve did not exit cleanly on SIGTERM');
  } finally {
    clearTimeout(timer);
  }
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

interface Batch {
  started: number;
  ended: number;
  first: number;
  ids: number[];
}

/** Posts batches of 50 observations to the server, one after another, until stopped. */
class Writer {
  readonly batches: Batch[] = [];
  private stopped = false;
  private next = 0;
  private failure: unknown = null;
  private readonly done: Promise<void>;

  constructor(
    private readonly server: Server,
    readonly tag: string,
  ) {
    this.done = this.loop().catch((e: unknown) => {
      this.failure = e;
    });
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const started = Date.now();
      const first = this.next;
      this.next += 50;
      const ids = await postObservations(this.server, Array.from({ length: 50 }, (_, k) => note(this.tag, first + k)));
      this.batches.push({ started, ended: Date.now(), first, ids });
    }
  }

  private check(): void {
    if (this.failure) throw new Error(`the writer failed: ${String((this.failure as Error).message ?? this.failure)}`);
  }

  /** Resolves once `count` more batches are stored. */
  async wait(count: number): Promise<void> {
    const target = this.batches.length + count;
    while (this.batches.length < target) {
      this.check();
      await sleep(50);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
    this.check();
  }

  /** The title each stored id must have. */
  titles(batches = this.batches): Map<number, string> {
    const out = new Map<number, string>();
    for (const b of batches) b.ids.forEach((id, k) => out.set(id, note(this.tag, b.first + k).title as string));
    return out;
  }
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
  // Minutes on a loaded 2-core machine (the whole file takes about 2.5 minutes on a quiet one).
  this.timeout(600_000);
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
        ids.forEach((id, i) => assert.equal(titles.get(id), `${tag} note ${letterWord(i)}`, `${tag} observation ${i} (id ${id})`));
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
    const runOf = (importing: boolean, run: number, args: string[]): { child: ChildProcessWithoutNullStreams; exited: Promise<string | null> } => {
      const child = bundle.spawn(importing ? ['import-git', repo, ...args] : ['observe', ...args]);
      const lines = importing ? '' : Array.from({ length: 2000 }, (_, i) => JSON.stringify(note('killed', run * 10_000 + i))).join('\n');
      child.stdin.end(lines);
      return { child, exited: new Promise<string | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal))) };
    };
    // How long a whole run of each takes on this machine (into a store of its own), so that the
    // kills land at random moments inside a run however fast or loaded the machine is.
    const whole: Record<'import' | 'observe', number> = { import: 0, observe: 0 };
    const calibration = tempDir('reliability-calibration');
    try {
      for (const importing of [true, false]) {
        const started = Date.now();
        await runOf(importing, -1, ['--store', calibration, '--project', project, '--embedder', 'none']).exited;
        whole[importing ? 'import' : 'observe'] = Date.now() - started;
      }
    } finally {
      removeDir(calibration);
    }
    try {
      for (let run = 0; run < 20; run++) {
        const importing = run % 2 === 0;
        const { child, exited } = runOf(importing, run, common);
        // Import runs after the first have less left to do: they are killed earlier in their run.
        const span = whole[importing ? 'import' : 'observe'] * (importing ? 0.8 / (1 + run / 2) : 0.9);
        await Promise.race([exited, sleep(Math.max(50, Math.random() * span))]);
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
  it('forget by ids, by project and all, with the HTTP server writing beside it: the canary is in no file, nothing of the writer is lost, nothing forgotten comes back', async () => {
    const alpha = { project: 'github.com/acme/alpha' };
    const beta = { project: 'github.com/acme/beta' };
    // Its stem is itself, so the full-text index holds it as written.
    const CANARY = 'zqxblorpt';
    const seeded = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    let secretIds: number[];
    let memoryId: number;
    try {
      await seeded.observe(Array.from({ length: 200 }, (_, i) => note('seed', i)), alpha);
      secretIds = (await seeded.observe(Array.from({ length: 5 }, (_, i) => ({ type: 'note', title: `The ${CANARY} plan, part ${letterWord(i)}`, narrative: `Keep ${CANARY} quiet.` })), alpha)).map((o) => o.id);
      memoryId = (await seeded.remember({ title: `Decision: ${CANARY} ships in May`, text: `We decided that ${CANARY} ships in May.`, memory_type: 'decision' }, alpha)).id;
      // retrieve_memory logs the request and keeps the prompt: two more copies of the word.
      await retrieveMemory({ engine: seeded, scope: alpha, log: () => undefined }, { prompt: `what did we decide about ${CANARY}?`, session_id: 'forget-1' });
      await seeded.observe(Array.from({ length: 20 }, (_, i) => ({ type: 'note', title: `beta ${CANARY} notes ${letterWord(i)}` })), beta);
    } finally {
      await seeded.close();
    }
    assert.ok(filesContaining(store, CANARY).length > 0, 'the canary is not on disk before forget: this test could not see it after');
    const common = ['--store', store, '--embedder', 'none', '--json'];
    const forget = async (args: string[]): Promise<void> => {
      const r = await bundle.run(['forget', ...args, ...common]);
      assert.equal(r.code, 0, r.stderr);
    };

    // By ids and by project, while alpha's server writes.
    let server = await startServer(store, alpha.project);
    let writer = new Writer(server, 'writer');
    try {
      await writer.wait(2);
      await forget(['--ids', secretIds.join(','), '--kind', 'observation', '--project', alpha.project]);
      await forget(['--ids', String(memoryId), '--kind', 'memory', '--project', alpha.project]);
      await forget(['--whole-project', '--yes', '--project', beta.project]);
      await writer.wait(2);
      await writer.stop();
      assert.deepEqual(filesContaining(store, CANARY), [], 'the canary is still on disk while the server runs');
    } finally {
      await writer.stop();
      await stopServer(server);
    }
    const afterIds = await checkStore(store, alpha.project);
    for (const [id, title] of writer.titles()) assert.equal(afterIds.titles.get(id), title, `the writer's observation ${id} is lost`);
    for (const id of secretIds) assert.ok(!afterIds.titles.has(id), `forgotten observation ${id} came back`);
    assert.equal([...afterIds.titles.values()].filter((t) => t.startsWith('seed ')).length, 200);
    assert.equal((await checkStore(store, beta.project)).titles.size, 0);
    assert.deepEqual(filesContaining(store, CANARY), [], 'the canary came back after the server closed');

    // All, while the server writes: what was stored before is gone, what came after is kept.
    const LATE = 'zqxvrumpt';
    server = await startServer(store, alpha.project);
    writer = new Writer(server, 'late');
    let forgetStarted = 0;
    let forgetEnded = 0;
    try {
      await postObservations(server, [{ type: 'note', title: `The ${LATE} plan` }]);
      await writer.wait(2);
      forgetStarted = Date.now();
      await forget(['--all', '--yes']);
      forgetEnded = Date.now();
      await writer.wait(3);
    } finally {
      await writer.stop();
      await stopServer(server);
    }
    const afterAll = await checkStore(store, alpha.project);
    const before = writer.titles(writer.batches.filter((b) => b.ended < forgetStarted));
    const after = writer.titles(writer.batches.filter((b) => b.started > forgetEnded));
    const during = writer.titles(writer.batches.filter((b) => b.ended >= forgetStarted && b.started <= forgetEnded));
    assert.ok(before.size > 0 && after.size > 0);
    for (const [id, title] of afterAll.titles) {
      assert.ok(!before.has(id), `observation ${id} ('${title}'), stored before forget --all, came back`);
      assert.ok(after.get(id) === title || during.get(id) === title, `observation ${id} ('${title}') is not one the writer stored after forget began`);
    }
    for (const [id, title] of after) assert.equal(afterAll.titles.get(id), title, `the writer's observation ${id}, stored after forget --all, is lost`);
    assert.deepEqual(filesContaining(store, CANARY), []);
    assert.deepEqual(filesContaining(store, LATE), [], 'a word stored before forget --all is still on disk');
  });
});
