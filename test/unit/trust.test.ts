// The store's trust promises, each reproduced from a finding: a project's memory stays in its
// project (sessions, prompts), forget leaves no copy (request log, prompts, graph, topic
// traces), a record without its cell is repaired, a failed capture batch is retried, imported
// ids never meet ids another writer holds, and the request log is bounded.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WriteQueue } from '../../src/core/capture/writeQueue';
import { MemoryEngine } from '../../src/core/engine';
import { observationToRow } from '../../src/core/store/mapping';
import { pruneRequestLog } from '../../src/core/store/repos/requestLog';
import { TABLES } from '../../src/core/store/schema';
import { Store } from '../../src/core/store/store';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { filesContaining } from './diskFixture';

process.env.LANCEDB_LOG ??= 'error';

describe('trust: scope, forget, repair', function () {
  this.timeout(120_000);
  let dir: string;
  let engine: MemoryEngine;
  const alpha = { project: 'github.com/acme/alpha' };
  const beta = { project: 'github.com/acme/beta' };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-trust-'));
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  });
  afterEach(async () => {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps follow-up prompts per project even when two clients pick the same session id', async () => {
    const run = (scope: { project: string }, prompt: string) =>
      retrieveMemory({ engine, scope, log: () => undefined }, { prompt, session_id: 'shared-1' });
    await run(alpha, 'alpha payroll migration plan for the ledger service');
    const out = await run(beta, 'and why was that?');
    const rewritten = String(out.triage?.rewritten_query);
    assert.ok(!/payroll/.test(rewritten), `beta saw alpha's prompt: ${rewritten}`);
    assert.deepEqual(await engine.recentPrompts(beta, 'shared-1', 5), ['and why was that?']);
    assert.deepEqual(await engine.recentPrompts(alpha, 'shared-1', 5), ['alpha payroll migration plan for the ledger service']);
  });

  it('a session id shared by two projects is two sessions: compression never crosses', async () => {
    const sid = 'git-0123456789ab';
    await engine.observe([{ type: 'note', title: 'alpha only: vendored the kiwi parser', memory_session_id: sid }], alpha);
    await engine.observe([{ type: 'note', title: 'beta only: rewrote the mango cache', memory_session_id: sid }], beta);
    const summary = await engine.endSession(beta, sid, 'request');
    assert.ok(summary);
    assert.equal(summary.project, beta.project);
    assert.ok(!JSON.stringify(summary).includes('kiwi'), 'beta summary quotes alpha');
    const [alphaObs] = await engine.listObservations(alpha);
    assert.equal(alphaObs.status, 'active');
    // alpha's session is still unsummarised, so the orphan sweep (store-wide before) must end it.
    assert.equal((await engine.listSessions(alpha))[0].summary, null);
    await engine.endSession(alpha, sid, 'request');
    const alphaSummary = (await engine.listSessions(alpha))[0].summary;
    assert.ok(alphaSummary && !JSON.stringify(alphaSummary).includes('mango'));
  });

  it('forget leaves no copy in the request log, session prompts, graph or topic traces', async () => {
    const canary = 'zebracanary';
    const [obs] = await engine.observe(
      [{ type: 'note', title: `Notes on ${canary} rollout`, narrative: `The ${canary} flag ships next week.`, concepts: [canary], files_modified: [`src/${canary}.ts`] }],
      alpha,
    );
    const first = await engine.remember({ title: 'Flag policy', text: `Use the ${canary} flag for payments`, memory_type: 'decision', topic_key: 'flags', files: [`src/${canary}.ts`] }, alpha);
    const second = await engine.remember({ title: 'Flag policy v2', text: 'Use the plain flag service for payments', memory_type: 'decision', topic_key: 'flags' }, alpha);
    await retrieveMemory({ engine, scope: alpha, log: () => undefined, transportSessionId: 'sess-a' }, { prompt: `what about ${canary}?` });
    await engine.logRequest({ request_id: 'r1', tool: 'retrieve_memory', project: alpha.project, session_id: 'sess-a', arguments: canary, response: canary, status: 'ok', duration_ms: 1, created_at_epoch: Date.now() });
    await engine.drainGraph();
    await engine.optimize(0);
    assert.ok(filesContaining(dir, canary).length > 0, 'control: the canary is on disk before forget');

    await engine.forget({ kind: 'observation', ids: [obs.id] }, alpha);
    await engine.forget({ kind: 'memory', ids: [first.id] }, alpha);
    assert.deepEqual(filesContaining(dir, canary), []);
    // The successor memory is intact, without the forgotten segment of its topic trace.
    const [kept] = await engine.getMemories([second.id], alpha);
    assert.equal(kept.title, 'Flag policy v2');
    assert.ok((kept.topic_trace ?? []).every((t) => t.id !== first.id));
  });

  it('gives a record its cell at open when a crash came between the two writes', async () => {
    const [o] = await engine.observe([{ type: 'note', title: 'the cell was written' }], alpha);
    await engine.close();
    const store = await Store.open({ uri: dir, dimension: 512 });
    const orphan = { ...o, id: o.id + 1000, title: 'lonely walrus row', created_at_epoch: Date.now() };
    await store.add(TABLES.observations, [observationToRow(orphan, {})]);
    store.close();
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    const hits = await engine.search('walrus', { scope: alpha });
    assert.equal(hits.length, 1);
    assert.equal(hits[0].cell.source_id, orphan.id);
  });

  it('never hands out an id an import kept, and renumbers imported ids inside a claimed block', async () => {
    const [a] = await engine.observe([{ type: 'note', title: 'claims a block' }], alpha);
    // This process holds the block that starts at a.id; a file with ids inside it arrives.
    const lines = [
      JSON.stringify({ kind: 'code-memory-export', schema_version: 3 }),
      JSON.stringify({ kind: 'observation', record: { id: a.id + 1, memory_session_id: 's', project: beta.project, type: 'note', title: 'imported one', status: 'active', created_at: new Date().toISOString(), created_at_epoch: Date.now() } }),
      JSON.stringify({ kind: 'memory', record: { id: a.id + 2, project: beta.project, title: 't', text: 'imported memory', memory_type: 'note', created_at_epoch: 1, updated_at_epoch: 1, status: 'active', scope: 'project', classification: 'note', classification_reason: 'x', current_context_eligible: false, source_ids: JSON.stringify([a.id + 1]) } }),
    ];
    async function* gen() {
      for (const l of lines) yield l;
    }
    assert.equal(await engine.importJsonl(gen()), 2);
    const fresh = await engine.observe(Array.from({ length: 5 }, (_, i) => ({ type: 'note', title: `after import ${i}` })), alpha);
    const ids = [
      ...(await engine.listObservations(alpha, { limit: 100 })).map((o) => o.id),
      ...(await engine.listObservations(beta, { limit: 100 })).map((o) => o.id),
      ...(await engine.listMemories(beta)).map((m) => m.id),
    ];
    assert.equal(new Set(ids).size, ids.length, `duplicate ids: ${ids.join(',')}`);
    assert.ok(fresh.every((o) => o.id > a.id));
    // The memory's evidence follows its renumbered observation.
    const [imported] = await engine.listObservations(beta);
    const [memory] = await engine.listMemories(beta);
    const row = await engine.store.rows(TABLES.memories, `id = ${memory.id}`, { select: ['source_ids'] });
    assert.deepEqual(JSON.parse(String(row[0].source_ids)), [imported.id]);
  });

  it('bounds the request log by age and by count', async () => {
    const now = Date.now();
    const entry = (i: number, at: number) => ({ request_id: `r${i}`, tool: 'retrieve_memory', project: alpha.project, session_id: null, arguments: '{}', response: '{}', status: 'ok', duration_ms: 1, created_at_epoch: at });
    for (let i = 0; i < 5; i++) await engine.logRequest(entry(i, now - 40 * 24 * 3600_000 + i));
    for (let i = 5; i < 20; i++) await engine.logRequest(entry(i, now - (20 - i) * 1000));
    // Another project's few entries, older than all of alpha's: the count is per project.
    for (let i = 0; i < 3; i++) await engine.logRequest({ ...entry(100 + i, now - 60_000 + i), project: beta.project });
    const removed = await pruneRequestLog(engine.store, { maxAgeMs: 30 * 24 * 3600_000, maxRows: 10 }, now);
    assert.equal(removed, 10);
    const left = await engine.listRequests(alpha, 100);
    assert.deepEqual(left.map((r) => r.request_id).sort(), Array.from({ length: 10 }, (_, i) => `r${i + 10}`).sort());
    assert.equal((await engine.listRequests(beta, 100)).length, 3, "a busy project does not push out another's entries");
  });
});

describe('trust: capture queue', () => {
  it('retries a failed batch, bounded, and counts what it gives up', async () => {
    const written: number[][] = [];
    let failures = 2;
    const logs: string[] = [];
    const queue = new WriteQueue<number>({
      write: async (batch) => {
        if (failures-- > 0) throw new Error('disk full');
        written.push(batch);
      },
      batchSize: 10,
      delayMs: 10_000,
      log: (m) => logs.push(m),
    });
    for (let i = 0; i < 3; i++) queue.push(i);
    await queue.flush();
    assert.deepEqual(written, [[0, 1, 2]]);
    assert.equal(queue.dropped, 0);
    assert.equal(logs.length, 2);

    const never = new WriteQueue<number>({ write: async () => Promise.reject(new Error('read-only store')), batchSize: 10, delayMs: 10_000, attempts: 2, log: () => undefined });
    never.push(1);
    never.push(2);
    await never.flush();
    assert.equal(never.dropped, 2);
    assert.equal(never.size, 0);
  });
});
