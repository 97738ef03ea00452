// What a session summary keeps must be true to the session: a decision an agent stored by title
// is a decision, a long session keeps its failures and decisions whatever else it held, and the
// things "learned" are not the lines of a diff. Real engines in temporary folders.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { ExtractiveSummariser } from '../../src/core/compress/summariser';
import type { Summariser, SummaryContext, SummaryResult } from '../../src/core/compress/summariser';
import type { Observation, SessionSummary } from '../../src/core/model/records';
import type { ObservationInput } from '../../src/core/api';
import { countTokens } from '../../src/core/tokens';

process.env.LANCEDB_LOG ??= 'error';

/** The extractive summariser, keeping what it was given. */
class Recording implements Summariser {
  readonly name = 'recording';
  readonly inner = new ExtractiveSummariser();
  inputs: Observation[][] = [];
  async summarise(observations: Observation[], budgetTokens: number, context?: SummaryContext): Promise<SummaryResult> {
    this.inputs.push(observations);
    return this.inner.summarise(observations, budgetTokens, context);
  }
}

/** A diff listing of about 1,900 characters, as capture stores for an edit (editDiff.ts). */
function codeNarrative(i: number): string {
  const lines = [`@@ line 10 in export function handler${i}(req: Request, res: Response) {`];
  for (let k = 0; lines.join('\n').length < 1900; k++) lines.push(`+ const value${i}_${k} = await repository${i}.loadRecordById(req.params.id${k}, { includeDeleted: false });`);
  return lines.join('\n');
}

describe('session summaries tell the truth about the session', function () {
  this.timeout(120_000);
  const scope = { project: 'acme/ledger', branch: 'main' };
  let dir: string;
  let engine: MemoryEngine;
  let recording: Recording;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-summary-truth-'));
    recording = new Recording();
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, batchDelayMs: 20, summariseOrphanSessions: false, summariser: recording });
  });
  afterEach(async () => {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function endSession(): Promise<SessionSummary> {
    await engine.flush();
    const summary = await engine.endSession(scope, await engine.currentSessionId(scope), 'request');
    assert.ok(summary, 'no summary');
    return summary;
  }

  const text = (s: SessionSummary): string => (['request', 'completed', 'learned', 'decisions', 'next_steps', 'preferences'] as const).map((k) => `${k}: ${s[k] ?? ''}`).join('\n');

  it("puts a decision an agent stored by its title only (observe type 'decision') in the summary's decisions", async () => {
    await engine.observe([{ type: 'decision', title: 'Postgres advisory locks for the job queue, not Redis' }], scope);
    await engine.observe([{ type: 'edit', title: 'Edited src/queue.ts', files_modified: ['src/queue.ts'], facts: ['changed enqueue in src/queue.ts'] }], scope);
    const s = await endSession();
    // The title says no decision word: it is a decision because the agent stored it as one.
    assert.match(s.decisions ?? '', /Postgres advisory locks for the job queue, not Redis/, text(s));
    assert.doesNotMatch(s.learned ?? '', /advisory locks/, text(s));
  });

  it('keeps an early failing test and an early decision when fifteen large edits follow', async () => {
    const t0 = Date.now() - 60 * 60_000;
    await engine.observe(
      [
        {
          type: 'task',
          title: "Test task 'test' failed (exit 1)",
          subtitle: 'first failing test: invoices rounds totals to cents',
          narrative: 'invoices rounds totals to cents\nAssertionError [ERR_ASSERTION]: 10.005 !== 10.01',
          concepts: ['test'],
          facts: ['test task test failed (exit 1)', 'test failed: invoices rounds totals to cents (AssertionError [ERR_ASSERTION]: 10.005 !== 10.01)'],
          created_at_epoch: t0,
        },
        { type: 'decision', title: 'Money as integer cents', narrative: 'We decided to store money as integer cents instead of floats.', created_at_epoch: t0 + 1000 },
      ],
      scope,
    );
    const edits: ObservationInput[] = Array.from({ length: 15 }, (_, i) => ({
      type: 'edit',
      title: `Edited src/routes/r${i}.ts (handler${i})`,
      subtitle: '1 save · 1 hunk, +12 −0 lines',
      narrative: codeNarrative(i),
      files_modified: [`src/routes/r${i}.ts`],
      facts: [`changed handler${i} in src/routes/r${i}.ts`],
      grow_key: `edit:src/routes/r${i}.ts`,
      created_at_epoch: t0 + 10_000 + i * 60_000,
    }));
    await engine.observe(edits, scope);
    const s = await endSession();
    assert.match(s.next_steps ?? '', /still failing: invoices rounds totals to cents/, text(s));
    assert.match(s.decisions ?? '', /integer cents/, text(s));
    // Every file edited reached the summariser: ten named, the other five counted.
    assert.match(s.completed ?? '', /src\/routes\/r0\.ts .*and 5 more files/, text(s));

    // What the summariser was given: every observation, within eight times the budget, the
    // edits' narratives shortened rather than the edits dropped.
    const [input] = recording.inputs;
    assert.equal(input.length, 17);
    const tokens = input.reduce((n, o) => n + countTokens([o.title, o.narrative, o.facts].filter(Boolean).join('\n')), 0);
    assert.ok(tokens <= engine.summaryBudgetTokens * 8 + input.length * 2, `${tokens} tokens`);
    for (const o of input.filter((x) => x.type === 'edit')) {
      assert.ok(o.narrative && o.narrative.startsWith('@@ line 10 in export function handler'), o.title ?? '');
      assert.ok(o.narrative.length < 1900, `${o.title}: ${o.narrative.length} characters`);
    }
  });

  it('passes a short session to the summariser whole', async () => {
    await engine.observe([{ type: 'edit', title: 'Edited src/a.ts', narrative: '@@ line 1\n- const a = 1;\n+ const a = 2;', files_modified: ['src/a.ts'] }], scope);
    await engine.observe([{ type: 'note', title: 'Note', narrative: 'The ledger rounds half to even, as the bank does.' }], scope);
    await endSession();
    const [input] = recording.inputs;
    assert.deepEqual(input.map((o) => o.narrative).sort(), ['@@ line 1\n- const a = 1;\n+ const a = 2;', 'The ledger rounds half to even, as the bank does.']);
  });

  it('does not give the lines of an edit\'s diff listing as things learned, and keeps a note\'s list items', async () => {
    await engine.observe(
      [
        {
          type: 'edit',
          title: 'Edited src/cart.ts (total)',
          subtitle: '1 save · 1 hunk, +1 −1 lines',
          narrative: '@@ line 2 in export function total(items: number[]) {\n- return items.length;\n+ return items.reduce((sum, x) => sum + x, 0);\n…',
          files_modified: ['src/cart.ts'],
          facts: ['changed total in src/cart.ts', 'comment in src/cart.ts: totals are sums of prices, not counts'],
          grow_key: 'edit:src/cart.ts',
        },
        { type: 'note', title: 'Cart findings', narrative: '- The cart total counted the items rather than summing their prices.\n- Prices arrive as numbers, never strings.' },
      ],
      scope,
    );
    const s = await endSession();
    const learned = s.learned ?? '';
    assert.doesNotMatch(learned, /@@ line|return items|^- [+-] /m, text(s));
    assert.match(learned, /Noted in src\/cart\.ts: totals are sums of prices, not counts/, text(s));
    assert.match(learned, /The cart total counted the items rather than summing their prices/, text(s));
  });
});
