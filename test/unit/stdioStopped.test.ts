// The stdio server (`code-memory mcp`) stopped by a signal while calls run (the agent's host ends
// it with SIGTERM, a user presses Ctrl+C): no new call starts, the calls running finish, are
// answered, and their writes are whole, before the store closes and the process exits 0.

import * as assert from 'node:assert/strict';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { removeDir, tempDir } from './mcpFixture';
import { call, exitOf, initialize, line, start } from './stdioChild';

const PROJECT = 'stdio-stopped';

describe('the stdio server stopped by a signal while calls run', function () {
  this.timeout(180_000);
  let store: string;

  before(() => (store = tempDir('stdio-stopped')));
  after(() => removeDir(store));

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal}: the calls running finish and are answered, their writes whole, and it exits 0`, async () => {
      const c = start(store, PROJECT);
      await initialize(c);
      const requests: string[] = [];
      for (let i = 0; i < 12; i++) {
        const text = `${signal} memory ${i}: the store stays embedded in LanceDB; `.repeat(20);
        requests.push(line(call(100 + i, 'remember', { title: `Decision ${signal}.${i}`, text, memory_type: 'decision' })));
        requests.push(line(call(200 + i, 'observe', { observations: [{ type: 'edit', title: `Observed ${signal}.${i}`, narrative: 'n '.repeat(200), dedupe_key: `${signal}-${i}` }] })));
      }
      c.write(requests.join(''));
      await c.waitForId(100, 30_000);
      c.child.kill(signal);
      const code = await exitOf(c, 60_000);
      assert.equal(code, 0, `exit ${code}: ${c.stderr()}`);
      const answered = new Set(c.lines.map((l) => (JSON.parse(l) as { id: number }).id));
      const logged: string[] = [];
      const engine = await MemoryEngine.open({ storeUri: store, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, logger: (m) => logged.push(m) });
      try {
        assert.deepEqual(logged.filter((m) => /repair|interrupted|no record/.test(m)), [], 'the server left a write half done');
        const memories = (await engine.listMemories({ project: PROJECT }, { includeSuppressed: true })).filter((m) => m.title.startsWith(`Decision ${signal}.`));
        assert.ok(memories.length > 0, 'the first call was answered, so it was stored');
        // Every call that wrote was let finish, and its answer reached the client.
        for (const m of memories) {
          const i = Number(m.title.split('.').at(-1));
          assert.ok(answered.has(100 + i), `memory '${m.title}' was stored, but its call was never answered`);
          const hits = await engine.search(m.title, { scope: { project: PROJECT }, layers: ['L2'], limit: 50 });
          assert.ok(hits.some((h) => h.cell.source_kind === 'memory' && h.cell.source_id === m.id), `memory '${m.title}' is stored but not searchable`);
        }
        const observed = (await engine.listObservations({ project: PROJECT }, { limit: 500 })).filter((o) => o.title?.startsWith(`Observed ${signal}.`));
        for (const o of observed) assert.ok(answered.has(200 + Number(o.title?.split('.').at(-1))), `observation '${o.title}' was stored, but its call was never answered`);
        for (const entry of await engine.listRequests({ project: PROJECT }, 500)) assert.doesNotThrow(() => JSON.parse(entry.response), `request ${entry.request_id} logged cut`);
      } finally {
        await engine.close();
      }
    });
  }
});
