// The request log's and the session prompts' limits hold as promised: in a process that stays
// open and only answers queries (its upkeep applies the retention, not only its open), when
// requests or prompts share a millisecond (no more than the limit stay), and after an import
// adds prompts to a session that has some (its 5 newest stay).
import { strict as assert } from 'node:assert';
import { MemoryEngine } from '../../src/core/engine';
import type { RequestLogEntry, Scope } from '../../src/core/model/records';
import { requestLogRetention } from '../../src/core/store/repos/requestLog';
import { TABLES } from '../../src/core/store/schema';
import { findTool } from '../../src/core/tools/registry';
import { removeDir, tempDir, toolContext } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const DAY = 24 * 3600_000;
const P: Scope = { project: 'github.com/acme/retention-limits' };
const entry = (i: number, at: number): RequestLogEntry => ({ request_id: `r${i}`, tool: 'retrieve_memory', project: P.project, session_id: null, arguments: '{}', response: '{}', status: 'ok', duration_ms: 1, created_at_epoch: at });
const keepAll = requestLogRetention(36_500, 10_000_000);

describe('retention limits', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(() => {
    dir = tempDir('retention-limits');
  });
  afterEach(() => removeDir(dir));

  it('a process that stays open and only answers queries applies the retention (age, rows, expired prompts) on its upkeep timer', async () => {
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 200, upkeepQuietMs: 100, summariseOrphanSessions: false, requestLogRetention: requestLogRetention(1, 3) });
    try {
      const now = Date.now();
      // After the open's prune: a request that aged past the retention while the process ran,
      // more requests than the row limit, and a prompt that expired meanwhile. No cell is written.
      await engine.logRequest(entry(0, now - 40 * DAY));
      for (let i = 1; i <= 6; i++) await engine.logRequest(entry(i, now - (10 - i) * 1000));
      await engine.store.table(TABLES.sessionPrompts).add([{ project: P.project, session_id: 's', prompt: 'an expired prompt', created_at_epoch: now - 40 * DAY }]);
      const deadline = Date.now() + 20_000;
      let ids: string[] = [];
      while (Date.now() < deadline) {
        ids = (await engine.listRequests(P, 1000)).map((r) => r.request_id).sort();
        if (ids.length === 3 && (await engine.store.count(TABLES.sessionPrompts)) === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.deepEqual(ids, ['r4', 'r5', 'r6']);
      assert.equal(await engine.store.count(TABLES.sessionPrompts), 0);
    } finally {
      await engine.close();
    }
  });

  it('the row limit holds when requests share a millisecond: the newest by request id stay', async () => {
    let engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, requestLogRetention: keepAll });
    const now = Date.now();
    try {
      await engine.logRequest(entry(9, now - 1000));
      for (let i = 0; i < 6; i++) await engine.logRequest(entry(i, now));
    } finally {
      await engine.close();
    }
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, requestLogRetention: requestLogRetention(30, 2) });
    try {
      assert.deepEqual((await engine.listRequests(P, 1000)).map((r) => r.request_id).sort(), ['r4', 'r5']);
    } finally {
      await engine.close();
    }
  });

  it("a session's prompts that share a millisecond are trimmed to its 5 newest by the next prompt", async () => {
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, summariseOrphanSessions: false });
    try {
      // Six calls of one session answered in the same millisecond (by several processes).
      const at = Date.now() - 5000;
      await engine.store.table(TABLES.sessionPrompts).add(Array.from({ length: 6 }, (_, i) => ({ project: P.project, session_id: 'tied', prompt: `tied prompt ${i}`, created_at_epoch: at })));
      await engine.addPrompt(P, 'tied', 'the newest prompt');
      assert.equal((await engine.recentPrompts(P, 'tied', 5))[0], 'the newest prompt');
      const rows = await engine.store.rows(TABLES.sessionPrompts, null);
      assert.deepEqual(rows.map((r) => String(r.prompt)).sort(), ['the newest prompt', 'tied prompt 0', 'tied prompt 1', 'tied prompt 2', 'tied prompt 3']);
    } finally {
      await engine.close();
    }
  });

  it("an import into a session that has prompts keeps only the session's 5 newest after the upkeep", async () => {
    const other = tempDir('retention-limits-export');
    try {
      const lines: string[] = [];
      let engine = await MemoryEngine.open({ storeUri: other, embedder: 'none', maintenanceIntervalMs: 0, summariseOrphanSessions: false });
      try {
        for (let i = 0; i < 5; i++) await findTool('retrieve_memory')!.run(toolContext(engine, P), { prompt: `old prompt number ${i} about pools`, session_id: 'shared' });
        await engine.exportJsonl((l) => void lines.push(l), P);
      } finally {
        await engine.close();
      }
      engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, summariseOrphanSessions: false });
      try {
        for (let i = 0; i < 5; i++) await findTool('retrieve_memory')!.run(toolContext(engine, P), { prompt: `new prompt number ${i} about pools`, session_id: 'shared' });
        await findTool('retrieve_memory')!.run(toolContext(engine, P), { prompt: 'a prompt of another session', session_id: 'lone' });
        await engine.importJsonl(
          (async function* () {
            yield* lines;
          })(),
        );
        assert.equal(await engine.store.count(TABLES.sessionPrompts), 11, 'control: the import added the session its 5 older prompts');
        await engine.maintenance.tidy(0);
        const rows = await engine.store.rows(TABLES.sessionPrompts, null);
        assert.deepEqual(rows.map((r) => String(r.prompt)).sort(), ['a prompt of another session', ...Array.from({ length: 5 }, (_, i) => `new prompt number ${i} about pools`)]);
      } finally {
        await engine.close();
      }
    } finally {
      removeDir(other);
    }
  });
});
