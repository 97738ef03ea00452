// The stdio server (`code-memory mcp`) writing to a client that reads slowly: answers pile up
// behind the full pipe, and are written one after another once it reads again, all of them, in
// full, with nothing on stderr (Node warns of a listener leak when a 'drain' listener is added per
// blocked write).

import * as assert from 'node:assert/strict';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { removeDir, tempDir } from './mcpFixture';
import { initialize, start, stop } from './stdioChild';

const PROJECT = 'stdio-slow-reader';

describe('the stdio server writing to a slow reader', function () {
  this.timeout(120_000);
  let store: string;
  let ids: number[] = [];

  before(async () => {
    store = tempDir('stdio-slow-reader');
    const engine = await MemoryEngine.open({ storeUri: store, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    // Four observations of ~100 KB each: every get_observations answer is ~400 KB, far over a pipe's 64 KB.
    const big = await engine.observe(
      Array.from({ length: 4 }, (_, i) => ({ type: 'edit', title: `large observation ${i}`, narrative: `n${i} `.repeat(20_000) })),
      { project: PROJECT },
    );
    ids = big.map((o) => o.id);
    await engine.flush();
    await engine.close();
  });
  after(() => removeDir(store));

  it('delivers 30 large answers, whole, to a reader that stops reading for a while, and writes no warning to stderr', async () => {
    const c = start(store, PROJECT);
    try {
      await initialize(c);
      c.child.stdout.pause();
      const requested = Array.from({ length: 30 }, (_, i) => 100 + i);
      for (const id of requested) c.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_observations', arguments: { ids, source: 'observation' } } })}\n`);
      // Long enough for every call to be answered into the full pipe.
      await new Promise((resolve) => setTimeout(resolve, 8000));
      c.child.stdout.resume();
      const missing: number[] = [];
      for (const id of requested) {
        const answer = (await c.waitForId(id, 60_000)) as { result?: { isError?: boolean; structuredContent?: { details?: unknown[] } } } | undefined;
        if (answer?.result?.isError !== false || answer.result.structuredContent?.details?.length !== ids.length) missing.push(id);
      }
      assert.deepEqual(missing, [], c.stderr().slice(0, 600));
      assert.equal(c.stderr(), '');
    } finally {
      await stop(c);
    }
  });
});
