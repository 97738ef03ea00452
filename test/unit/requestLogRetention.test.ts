// The request log's retention as the user sets it: the CLI's flags and environment, and the
// extension's settings through the engine worker, reach the prune of a real store.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import type { RequestLogEntry } from '../../src/core/model/records';
import { requestLogRetention } from '../../src/core/store/repos/requestLog';
import { TABLES } from '../../src/core/store/schema';
import { EngineClient } from '../../src/extension/engineWorker/engineClient';
import { CliBundle, buildNodeBundle } from './cliFixture';
import { filesContaining } from './diskFixture';
import { engineClientOptions } from './fixtures/engineClient';
import { REPO_ROOT, removeDir, tempDir } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const DAY = 24 * 3600_000;
const project = 'github.com/acme/retention';
const bundle = new CliBundle('test-retention');

/** A store with 12 requests: r0-r3 forty days old, r4-r11 from the last minute (r11 newest). */
async function seededStore(): Promise<string> {
  const dir = tempDir('retention');
  const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  try {
    const now = Date.now();
    const entry = (i: number, at: number): RequestLogEntry => ({ request_id: `r${i}`, tool: 'retrieve_memory', project, session_id: null, arguments: '{}', response: '{}', status: 'ok', duration_ms: 1, created_at_epoch: at });
    for (let i = 0; i < 4; i++) await engine.logRequest(entry(i, now - 40 * DAY + i));
    for (let i = 4; i < 12; i++) await engine.logRequest(entry(i, now - (12 - i) * 1000));
  } finally {
    await engine.close();
  }
  return dir;
}

async function requestIds(dir: string): Promise<string[]> {
  const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, requestLogRetention: requestLogRetention(36_500, 10_000_000) });
  try {
    const rows = await engine.store.rows(TABLES.requestLog, null, { select: ['request_id'] });
    return rows.map((r) => String(r.request_id)).sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
  } finally {
    await engine.close();
  }
}

const newest = (n: number): string[] => Array.from({ length: n }, (_, i) => `r${12 - n + i}`);

describe('request log retention as the user sets it', function () {
  this.timeout(180_000);
  let dir: string;
  before(() => bundle.build());
  after(() => bundle.remove());
  beforeEach(async () => {
    dir = await seededStore();
  });
  afterEach(() => removeDir(dir));

  it('the default keeps 30 days: the 40-day-old requests go when a process opens the store', async () => {
    const r = await bundle.run(['stats', '--store', dir, '--project', project, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await requestIds(dir), newest(8));
  });

  it('CLI flags --request-log-days and --request-log-max-rows reach the prune', async () => {
    const r = await bundle.run(['stats', '--store', dir, '--project', project, '--request-log-days', '7', '--request-log-max-rows', '5', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await requestIds(dir), newest(5));
  });

  it('the environment sets them too, and a flag wins over it', async () => {
    const env = { CODE_MEMORY_REQUEST_LOG_DAYS: '60', CODE_MEMORY_REQUEST_LOG_MAX_ROWS: '3' };
    const kept = await bundle.run(['stats', '--store', dir, '--project', project, '--request-log-max-rows', '10', '--json'], { env });
    assert.equal(kept.code, 0, kept.stderr);
    // 60 days keeps the old ones, the flag's 10 rows keeps the newest ten.
    assert.deepEqual(await requestIds(dir), ['r2', 'r3', ...newest(8)]);
    const pruned = await bundle.run(['stats', '--store', dir, '--project', project, '--json'], { env });
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.deepEqual(await requestIds(dir), newest(3));
  });

  it('refuses a value that is not a whole number of at least 1, and touches nothing', async () => {
    for (const [args, env, message] of [
      [['--request-log-days', '0'], {}, /^error: --request-log-days must be a whole number of at least 1, not '0'/],
      [['--request-log-max-rows', '1e3'], {}, /^error: --request-log-max-rows must be a whole number of at least 1, not '1e3'/],
      [[], { CODE_MEMORY_REQUEST_LOG_DAYS: 'forever' }, /^error: CODE_MEMORY_REQUEST_LOG_DAYS must be a whole number of at least 1, not 'forever'/],
      [['--request-log-days', '99999'], {}, /^error: the request log retention in days must be a whole number from 1 to 36500, not 99999/],
    ] as const) {
      const r = await bundle.run(['stats', '--store', dir, '--project', project, ...args], { env: { ...env } });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, message);
    }
    assert.equal((await requestIds(dir)).length, 12);
  });

  it("the extension's settings reach the engine worker's prune", async () => {
    const out = path.join(REPO_ROOT, 'out', 'test-retention-worker', String(process.pid));
    await buildNodeBundle({ entryPoints: { engineWorker: path.join(REPO_ROOT, 'src/extension/engineWorker/worker.ts') }, outdir: out });
    try {
      // What EngineHost passes for codeMemory.requestLog.retentionDays 7 and maxRows 4.
      const client = await EngineClient.start(engineClientOptions(path.join(out, 'engineWorker.js'), dir, { requestLogRetention: requestLogRetention(7, 4) }));
      await client.close();
      assert.deepEqual(await requestIds(dir), newest(4));
    } finally {
      removeDir(out);
    }
  });
});

describe('what the retention deleted leaves the disk', function () {
  this.timeout(180_000);
  let dir: string;
  beforeEach(() => {
    dir = tempDir('retention-disk');
  });
  afterEach(() => removeDir(dir));

  for (const upkeep of ['optimize', 'tidy'] as const) {
    it(`an aged-out request and an expired prompt are rewritten out of their fragments by the upkeep (${upkeep}), not only marked deleted`, async () => {
      const keepAll = requestLogRetention(36_500, 10_000_000);
      let engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, requestLogRetention: keepAll });
      try {
        const now = Date.now();
        const entry = (i: number, at: number, response = '{}'): RequestLogEntry => ({ request_id: `r${i}`, tool: 'retrieve_memory', project, session_id: null, arguments: '{}', response, status: 'ok', duration_ms: 1, created_at_epoch: at });
        await engine.logRequest(entry(0, now - 40 * DAY, '{"text":"Quokkabrine ships on Friday"}'));
        for (let i = 1; i < 60; i++) await engine.logRequest(entry(i, now - i * 1000));
        const prompts = engine.store.table(TABLES.sessionPrompts);
        await prompts.add([{ project, session_id: 's1', prompt: 'when does Quokkaprompt ship?', created_at_epoch: now - 40 * DAY }]);
        await prompts.add(Array.from({ length: 40 }, (_, i) => ({ project, session_id: `s${i + 2}`, prompt: `ordinary prompt ${i}`, created_at_epoch: now - i * 1000 })));
        // Compacted: each table is one fragment, of which one row will age out (below the share of
        // deleted rows from which a compaction rewrites a fragment by itself).
        await engine.optimize(0);
        assert.ok(filesContaining(dir, 'quokkabrine').some((f) => f.startsWith('request_log')), 'control: the entry is on disk');
      } finally {
        await engine.close();
      }
      // The default retention (30 days): the open applies it, the upkeep follows.
      engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      try {
        assert.ok(!(await engine.listRequests({ project }, 1000)).some((e) => e.request_id === 'r0'), 'control: the entry aged out');
        assert.equal(await engine.store.count(TABLES.sessionPrompts), 40, 'control: the prompt expired');
        // optimize after writes, tidy when nothing was written (both with no old version kept).
        await (upkeep === 'optimize' ? engine.optimize(0) : engine.maintenance.tidy(0));
        assert.deepEqual(filesContaining(dir, 'quokkabrine'), []);
        assert.deepEqual(filesContaining(dir, 'quokkaprompt'), []);
        assert.equal((await engine.listRequests({ project }, 1000)).length, 59);
        assert.equal(await engine.store.count(TABLES.sessionPrompts), 40);
      } finally {
        await engine.close();
      }
    });
  }
});
