// A project's stats (GET /v1/health of its server, `code-memory stats --project`) say nothing of
// the store's other projects: not even that they hold enough cells for an ANN index.

import { strict as assert } from 'node:assert';
import type { MemoryEngine } from '../../src/core/engine';
import { ensureAnnIndex } from '../../src/core/store/annIndex';
import { TABLES } from '../../src/core/store/schema';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { runMain } from './cliInProcess';
import { rest } from './crossProjectFixture';
import { openTestEngine, removeDir, tempDir } from './mcpFixture';

describe("a project's stats and the store's other projects", function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  let betaHttp: RunningHttpServer;

  before(async () => {
    dir = tempDir('iso-stats');
    ({ engine } = await openTestEngine(dir));
    betaHttp = await startHttpServer({ engine, scope: { project: 'beta' } });
  });
  after(async () => {
    await betaHttp?.close();
    await engine?.close();
    removeDir(dir);
  });

  it("beta's health and stats stay the same when alpha's cells get an ANN index (built from a number of cells in the whole store)", async () => {
    const batch = Array.from({ length: 400 }, (_, i) => ({ type: 'note', title: `alpha note ${i}`, narrative: `alpha text ${i}` }));
    await engine.observe(batch, { project: 'alpha' });
    await engine.flush();
    await engine.waitForVectors();
    const health = async (): Promise<Record<string, unknown>> => (JSON.parse((await rest(betaHttp, '/v1/health')).body) as { stats: Record<string, unknown> }).stats;
    const before = await health();
    assert.ok(['built', 'exists'].includes(await ensureAnnIndex(engine.store.table(TABLES.cells), { threshold: 100 })), 'control: the index is there');
    assert.deepEqual(await health(), before, "beta's health moved when alpha's cells got an ANN index");
    const beta = await runMain(['stats', '--project', 'beta', '--store', dir, '--json']);
    assert.equal(beta.code, 0, beta.err);
    assert.equal((JSON.parse(beta.out) as Record<string, unknown>).ann_index, undefined, beta.out);
    const all = await runMain(['stats', '--all-projects', '--store', dir, '--json']);
    assert.equal((JSON.parse(all.out) as Record<string, unknown>).ann_index, true, `the whole store's stats keep it: ${all.out}`);
  });
});
