// The stdio server (`code-memory mcp`) when its client goes away while calls run: it closes the
// read end of the server's stdout, then stdin. A client that leaves is normal: the server exits 0,
// saying nothing (answers to a client that left are moot), and what the calls that were running
// write to the store is there whole, or not at all.

import * as assert from 'node:assert/strict';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { removeDir, tempDir } from './mcpFixture';
import { call, exitOf, initialize, line, start } from './stdioChild';

const PROJECT = 'stdio-client-gone';

describe('the stdio server when its client goes away while calls run', function () {
  this.timeout(180_000);
  let store: string;

  before(async () => {
    store = tempDir('stdio-client-gone');
    const engine = await MemoryEngine.open({ storeUri: store, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    await engine.observe(
      Array.from({ length: 40 }, (_, i) => ({ type: 'edit', title: `LanceDB change ${i}`, narrative: `Change ${i} to the embedded LanceDB store: retries, backoff and jitter.` })),
      { project: PROJECT },
    );
    await engine.flush();
    await engine.close();
  });
  after(() => removeDir(store));

  /** Opens the store as the next process would, its log kept: it repairs what a write left half done, and says so. */
  async function withEngine<T>(use: (engine: MemoryEngine, logged: string[]) => Promise<T>): Promise<T> {
    const logged: string[] = [];
    const engine = await MemoryEngine.open({ storeUri: store, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, logger: (m) => logged.push(m) });
    try {
      return await use(engine, logged);
    } finally {
      await engine.close();
    }
  }

  for (const round of [1, 2, 3]) {
    it(`exits 0 and quietly, its running calls' writes whole (round ${round}: stdout closed, then stdin)`, async () => {
      const c = start(store, PROJECT);
      await initialize(c);
      const texts = new Map<string, string>();
      const requests: string[] = [];
      for (let i = 0; i < 12; i++) {
        const title = `Decision ${round}.${i}: keep LanceDB embedded`;
        const text = `Round ${round}, memory ${i}: the store stays embedded in LanceDB; `.repeat(20);
        texts.set(title, text);
        requests.push(line(call(100 + i, 'remember', { title, text, memory_type: 'decision' })));
        requests.push(line(call(200 + i, 'retrieve_memory', { prompt: `round ${round} question ${i}: why LanceDB?`, session_id: `gone-${round}` })));
        requests.push(line(call(300 + i, 'observe', { observations: [{ type: 'edit', title: `Observed ${round}.${i}`, narrative: 'n '.repeat(200), dedupe_key: `gone-${round}-${i}` }] })));
      }
      c.write(requests.join(''));
      // Some calls answered, others running or still unread, when the client goes.
      await c.waitForId(100, 30_000);
      c.child.stdout.destroy();
      c.child.stdin.end();
      const code = await exitOf(c, 90_000);
      await withEngine(async (engine, logged) => {
        // A record written without its search cell (the store closed between the two) is repaired at open.
        assert.deepEqual(logged.filter((m) => /repair|interrupted|no record/.test(m)), [], 'the server left a write half done');
        const checks = await engine.verifyStore();
        assert.deepEqual(checks.filter((t) => t.error), [], 'a table of the store is damaged');
        const memories = (await engine.listMemories({ project: PROJECT }, { includeSuppressed: true })).filter((m) => m.title.startsWith(`Decision ${round}.`));
        for (const m of memories) assert.equal(m.text, texts.get(m.title), `memory '${m.title}' is not whole`);
        // Each memory stored is found by its title, as any other: its search entries were written too.
        for (const m of memories) {
          const hits = await engine.search(m.title, { scope: { project: PROJECT }, layers: ['L2'], limit: 50 });
          assert.ok(hits.some((h) => h.cell.source_kind === 'memory' && h.cell.source_id === m.id), `memory '${m.title}' is stored but not searchable`);
        }
        const observed = (await engine.listObservations({ project: PROJECT }, { limit: 500 })).filter((o) => o.title?.startsWith(`Observed ${round}.`));
        for (const o of observed) assert.equal(o.narrative?.trim(), 'n '.repeat(200).trim(), `observation '${o.title}' is not whole`);
        // Every logged call is whole: its answer as written.
        for (const entry of await engine.listRequests({ project: PROJECT }, 500)) assert.doesNotThrow(() => JSON.parse(entry.response), `request ${entry.request_id} logged cut`);
      });
      assert.equal(code, 0, `exit ${code}: ${c.stderr()}`);
      assert.equal(c.stderr(), '', 'a client that left is no error');
    });
  }

  it('exits 0, quietly, once an answer finds stdout closed, though stdin is still open (no one is left to serve)', async () => {
    const c = start(store, PROJECT);
    await initialize(c);
    c.write(Array.from({ length: 10 }, (_, i) => line(call(400 + i, 'retrieve_memory', { prompt: `left open ${i}: LanceDB?`, session_id: 'left-open' }))).join(''));
    await new Promise((resolve) => setTimeout(resolve, 30));
    c.child.stdout.destroy();
    const code = await exitOf(c, 30_000);
    assert.equal(code, 0, `exit ${code}: ${c.stderr()}`);
    assert.equal(c.stderr(), '');
    await withEngine(async (engine, logged) => {
      assert.deepEqual(logged.filter((m) => /repair|interrupted|no record/.test(m)), [], 'the server left a write half done');
      for (const entry of await engine.listRequests({ project: PROJECT }, 500)) assert.doesNotThrow(() => JSON.parse(entry.response), `request ${entry.request_id} logged cut`);
    });
  });
});
