// A process killed (kill -9) while it ends a session, after it wrote a merged observation and
// before it marked the observations it merged: the next open's sweep of sessions left open ends
// the session again, marks those sources merged and merges nothing twice, so search finds the
// merged observation alone, and the session has one summary naming its files.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { TABLES } from '../../src/core/store/schema';
import { REPO, killAtMarker } from './fixtures/killAtMarker';

process.env.LANCEDB_LOG ??= 'error';

describe('a session end killed between a merge and the marking of its sources', function () {
  this.timeout(180_000);
  const scope = { project: 'github.com/acme/ledger', branch: 'main' };
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-merge-killed-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A process that stores four edits of one file and ends their session, stopping (for good) where it would mark the merge's sources. */
  async function killedMidMerge(): Promise<void> {
    const code = `
      const { MemoryEngine } = require(${JSON.stringify(path.join(REPO, 'src/core/engine'))});
      const { HashedEmbedder } = require(${JSON.stringify(path.join(REPO, 'src/core/embed/hashed'))});
      const { ObservationRepository } = require(${JSON.stringify(path.join(REPO, 'src/core/store/repos/observations'))});
      const markMerged = ObservationRepository.prototype.markMerged;
      ObservationRepository.prototype.markMerged = async function (ids) {
        if (ids.length === 0) return markMerged.call(this, ids);
        process.stdout.write('merged, sources not marked\\n');
        await new Promise(() => {});
      };
      (async () => {
        const e = await MemoryEngine.open({ storeUri: ${JSON.stringify(dir)}, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false });
        const edits = [0, 1, 2, 3].map((i) => ({ type: 'edit', title: 'Edit exporter ' + i, files_modified: ['src/exporter.ts'], narrative: 'Step ' + i, memory_session_id: 'killed', created_at_epoch: 1700000000000 + i }));
        await e.observe(edits, ${JSON.stringify(scope)});
        await e.endSession(${JSON.stringify(scope)}, 'killed', 'idle');
      })().catch((err) => { process.stderr.write(String((err && err.stack) || err)); process.exit(3); });
    `;
    await killAtMarker(code, 'merged, sources not marked');
  }

  it('the sweep marks the sources, merges once, and writes one summary', async () => {
    await killedMidMerge();
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false, sessionIdleMs: 1 });
    try {
      assert.equal(await engine.endOrphanSessions(), 1);
      const hits = await engine.search('Edit exporter', { scope, layers: ['L0'], limit: 20 });
      assert.deepEqual(hits.map((h) => h.cell.type), ['merged']);
      const rows = await engine.store.rows(TABLES.observations, null);
      assert.equal(rows.filter((r) => r.type === 'merged').length, 1);
      assert.deepEqual(rows.filter((r) => r.type === 'edit').map((r) => r.status), ['merged', 'merged', 'merged', 'merged']);
      const summaries = await engine.store.rows(TABLES.sessionSummaries, null);
      assert.equal(summaries.length, 1);
      assert.match(String(summaries[0].completed), /src\/exporter\.ts/);
      assert.equal(Number(summaries[0].observation_count), 4);
      // Nothing is left for a later sweep.
      assert.equal(await engine.endOrphanSessions(), 0);
    } finally {
      await engine.close();
    }
  });
});
