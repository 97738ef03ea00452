// A session summarised while it had named no branch, then given observations on a branch and ended
// again, keeps its summary's id: the earlier observations now belong to that branch's part (the
// branch the session was on when they were recorded), and the id a caller holds (from a search, the
// Sessions listing, a team share) still names the session's summary.
import * as assert from 'node:assert/strict';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import type { Scope } from '../../src/core/model/records';
import { TABLES } from '../../src/core/store/schema';
import { removeDir, tempDir } from './mcpFixture';

describe('a session summarised with no branch, then ended again on a branch', function () {
  this.timeout(120_000);
  const scope: Scope = { project: 'github.com/acme/branch-named' };
  let engine: MemoryEngine;
  let dir: string;

  before(async () => {
    dir = tempDir('summary-id-branch');
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false });
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  const summaries = async (): Promise<Array<Record<string, unknown>>> => engine.store.rows(TABLES.sessionSummaries, `memory_session_id = 'agent-1'`);

  it('keeps the summary id, now on that branch, from both parts of the work', async () => {
    const t = Date.now() - 60_000;
    await engine.observe([{ memory_session_id: 'agent-1', type: 'note', title: 'Started without a branch', narrative: 'the parser first', created_at_epoch: t }], scope);
    await engine.endSession(scope, 'agent-1', 'idle');
    const first = await summaries();
    assert.deepEqual(first.map((r) => r.branch), [null]);

    await engine.observe([{ memory_session_id: 'agent-1', type: 'note', title: 'Then on a branch', narrative: 'the lexer next', branch: 'feature-a', created_at_epoch: t + 1000 }], scope);
    await engine.endSession(scope, 'agent-1', 'idle');
    const second = await summaries();
    assert.deepEqual(
      second.map((r) => [Number(r.id), r.branch]),
      [[Number(first[0].id), 'feature-a']],
    );
    assert.equal(Number(second[0].observation_count), 2);
    const [held] = await engine.getSessionSummaries([Number(first[0].id)], { ...scope, branch: 'feature-a' });
    assert.equal(held?.memory_session_id, 'agent-1');
  });
});
