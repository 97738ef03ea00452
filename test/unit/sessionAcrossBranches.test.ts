// A session that switched branch part-way (an agent naming its own session id across a checkout)
// is summarised once per branch it worked on, each summary from that branch's observations: a
// caller scoped to either branch finds the work done there and not the other branch's, a caller
// on a third branch finds neither, and what the session decided on a branch is promoted as a
// memory of that branch. Ended again, it keeps one summary per branch.
import * as assert from 'node:assert/strict';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import type { Scope } from '../../src/core/model/records';
import { TABLES } from '../../src/core/store/schema';
import { removeDir, tempDir } from './mcpFixture';

describe('a session that worked on two branches', function () {
  this.timeout(120_000);
  const project = 'github.com/acme/branches';
  const on = (branch?: string): Scope => (branch ? { project, branch } : { project });
  let engine: MemoryEngine;
  let dir: string;

  before(async () => {
    dir = tempDir('session-branches');
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false });
    const t = Date.now() - 60_000;
    const s = { memory_session_id: 'agent-1' };
    await engine.observe(
      [
        { ...s, type: 'edit', title: 'Edited the exporter for CSV quoting', files_modified: ['src/exporter.ts'], narrative: 'exporter quoting', branch: 'feature-export', created_at_epoch: t },
        { ...s, type: 'note', title: 'Exporter note without a branch', narrative: 'exporter streams rows', created_at_epoch: t + 1000 },
        { ...s, type: 'edit', title: 'Edited the billing invoice rounding', files_modified: ['src/billing.ts'], narrative: 'billing rounding', branch: 'feature-billing', created_at_epoch: t + 2000 },
        { ...s, type: 'decision', title: 'We decided to use banker rounding for invoices.', narrative: 'We decided to use banker rounding for invoices.', files_modified: ['src/billing.ts'], branch: 'feature-billing', created_at_epoch: t + 3000 },
        { ...s, type: 'note', title: 'Rounding', narrative: 'We decided to use banker rounding for invoices.', files_modified: ['src/billing.ts'], branch: 'feature-billing', created_at_epoch: t + 4000 },
      ],
      on(),
    );
    await engine.endSession(on(), 'agent-1', 'idle');
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  async function summaryRows(): Promise<Array<Record<string, unknown>>> {
    return (await engine.store.rows(TABLES.sessionSummaries, `memory_session_id = 'agent-1'`)).sort((a, b) => String(a.branch).localeCompare(String(b.branch)));
  }

  it('writes one summary per branch, each from that branch\'s observations', async () => {
    const rows = await summaryRows();
    assert.deepEqual(rows.map((r) => r.branch), ['feature-billing', 'feature-export'], JSON.stringify(rows.map((r) => [r.branch, r.completed])));
    const observations = await engine.store.rows(TABLES.observations, `memory_session_id = 'agent-1'`);
    const idsOf = (pred: (o: Record<string, unknown>) => boolean): number[] => observations.filter(pred).map((o) => Number(o.id)).sort((a, b) => a - b);
    const [billing, exporter] = rows;
    // The note with no branch was recorded while the session was on feature-export.
    assert.deepEqual(JSON.parse(String(exporter.source_ids)), idsOf((o) => o.branch === 'feature-export' || o.branch === null));
    assert.deepEqual(JSON.parse(String(billing.source_ids)), idsOf((o) => o.branch === 'feature-billing'));
    assert.match(String(exporter.completed), /exporter/);
    assert.doesNotMatch(String(exporter.completed), /billing/);
    assert.match(String(billing.completed), /billing/);
    assert.doesNotMatch(String(billing.completed), /exporter/);
  });

  it('a caller on each branch finds the summary of the work done there, and only that', async () => {
    for (const [branch, mine, theirs] of [
      ['feature-billing', /billing/, /exporter/],
      ['feature-export', /exporter/, /billing/],
    ] as const) {
      const hits = await engine.search('session summary exporter billing edited', { scope: on(branch), layers: ['L1'], limit: 10 });
      assert.equal(hits.length, 1, `${branch}: ${hits.map((h) => `${h.cell.branch} ${h.cell.text}`).join(' | ')}`);
      assert.equal(hits[0].cell.branch, branch);
      assert.match(hits[0].cell.text, mine);
      assert.doesNotMatch(hits[0].cell.text, theirs);
      const listed = (await engine.listSessions(on(branch))).find((s) => s.memory_session_id === 'agent-1');
      assert.ok(listed?.summary, `${branch}: the session is listed with a summary`);
      assert.match(String(listed.summary.completed), mine);
    }
    const elsewhere = await engine.search('session summary exporter billing edited', { scope: on('feature-other'), layers: ['L1'], limit: 10 });
    assert.deepEqual(elsewhere.map((h) => h.cell.branch), []);
  });

  it('promotes what the session decided on a branch as a memory of that branch', async () => {
    const memories = await engine.listMemories(on(), { includeSuppressed: true });
    const rounding = memories.filter((m) => /banker rounding/.test(m.text));
    assert.deepEqual(rounding.map((m) => m.branch), ['feature-billing'], memories.map((m) => `${m.branch} ${m.text}`).join(' | '));
    assert.deepEqual((await engine.listMemories(on('feature-export'))).filter((m) => /banker rounding/.test(m.text)), []);
  });

  it('ended again, keeps one summary per branch under the same ids', async () => {
    const before = (await summaryRows()).map((r) => [r.branch, Number(r.id)]);
    await engine.observe([{ memory_session_id: 'agent-1', type: 'note', title: 'More billing work', narrative: 'billing totals', branch: 'feature-billing' }], on());
    await engine.endSession(on(), 'agent-1', 'idle');
    const after = await summaryRows();
    assert.deepEqual(after.map((r) => [r.branch, Number(r.id)]), before);
    assert.equal(Number(after[0].observation_count), 4);
    assert.equal((await engine.listMemories(on(), { includeSuppressed: true })).filter((m) => /banker rounding/.test(m.text)).length, 1);
  });
});
