// A plugged-in summariser (the extension's language model) is asked for a summary within the
// token budget; what it answers beyond it is cut before it is stored, after redaction.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import type { Summariser, SummaryFields, SummaryResult } from '../../src/core/compress/summariser';
import { TABLES } from '../../src/core/store/schema';
import { countTokens } from '../../src/core/tokens';

process.env.LANCEDB_LOG ??= 'error';

const FIELDS = ['request', 'completed', 'learned', 'decisions', 'next_steps', 'preferences'] as const;

describe('a summary stays within its token budget whatever the summariser answers', function () {
  this.timeout(120_000);
  const scope = { project: 'github.com/acme/ledger', branch: 'main' };
  let dir: string;
  let engine: MemoryEngine | null = null;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-summary-budget-'));
  });
  afterEach(async () => {
    await engine?.close().catch(() => undefined);
    engine = null;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function summarise(answer: Partial<SummaryFields>, budget: number): Promise<Record<string, unknown>> {
    const plugged: Summariser = {
      name: 'plugged',
      async summarise(): Promise<SummaryResult> {
        return { request: null, learned: null, completed: null, decisions: null, next_steps: null, preferences: null, ...answer, summariser: 'language-model:test/model' };
      },
    };
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false, summariser: plugged, summaryBudgetTokens: budget });
    await engine.observe([{ type: 'note', title: 'a note', memory_session_id: 's-1' }], scope);
    assert.ok(await engine.endSession(scope, 's-1', 'request'));
    const [row] = await engine.store.rows(TABLES.sessionSummaries, null);
    return row;
  }

  const tokens = (row: Record<string, unknown>): number => FIELDS.reduce((n, k) => n + countTokens(String(row[k] ?? '')), 0);

  it('cuts an answer of a million characters to the budget', async () => {
    const row = await summarise({ request: 'word '.repeat(200_000) }, 600);
    assert.ok(tokens(row) <= 600, `${tokens(row)} tokens`);
    assert.ok(tokens(row) > 500, 'the budget is used, not emptied');
    assert.match(String(row.request), /^word word/);
    assert.equal(row.summariser, 'language-model:test/model');
  });

  it('shares the budget: short fields stay whole, long ones are cut', async () => {
    const row = await summarise({ request: 'Make the exporter stream rows.', completed: 'Changed a lot. '.repeat(5000), learned: 'Learned that batching matters. '.repeat(5000) }, 300);
    assert.equal(row.request, 'Make the exporter stream rows.');
    assert.ok(tokens(row) <= 300, `${tokens(row)} tokens`);
    assert.ok(String(row.completed).length > 0 && String(row.learned).length > 0);
  });

  it('keeps an answer within the budget as it is', async () => {
    const answer = { request: 'Stream rows.', completed: '- Changed src/exporter.ts', decisions: '- Use async iterators instead of arrays.' };
    const row = await summarise(answer, 600);
    for (const [k, v] of Object.entries(answer)) assert.equal(row[k], v);
  });

  it('redacts a secret before cutting, so no part of it is stored', async () => {
    const secret = 'AKIAZQ9BUDGETCUT1234';
    const row = await summarise({ request: `${'pad '.repeat(40)}key ${secret} ${'more '.repeat(5000)}` }, 60);
    assert.ok(!String(row.request).includes('AKIAZQ9'), String(row.request));
  });
});
