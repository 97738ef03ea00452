// Writes and derived data of one project must never touch or reveal another's.
import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { TABLES } from '../../src/core/store/schema';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { everything, httpSide, rest } from './crossProjectFixture';
import type { CallResult, Side } from './crossProjectFixture';
import { openTestEngine, removeDir } from './mcpFixture';

const ALPHA = 'alpha';
const BETA = 'beta';
const alphaScope: Scope = { project: ALPHA };
const betaScope: Scope = { project: BETA };
const ALPHA_WORDS = ['zorblaxquint', 'flimwobble', 'quoffelmorph', 'snarfidex', 'plonkvertu'];
const SHARED_FILE = 'src/orders/service.ts';
const SHA = 'c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00';

function structured<T>(result: CallResult): T {
  assert.equal(result.isError, false, result.content[0]?.text);
  return result.structuredContent as T;
}

function canariesIn(result: CallResult | string): string[] {
  const text = (typeof result === 'string' ? result : everything(result)).toLowerCase();
  return ALPHA_WORDS.filter((w) => text.includes(w));
}

describe('isolation: cross-project writes and derived data', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  let alphaHttp: RunningHttpServer;
  let betaHttp: RunningHttpServer;
  let a: Side;
  let b: Side;
  let alphaTopicMemory: number;
  let alphaFactMemory: number;
  let alphaPlainMemory: number;

  const alphaMemory = async (id: number) => (await engine.getMemories([id], alphaScope, { includeSuppressed: true } as never))[0];

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    alphaHttp = await startHttpServer({ engine, scope: alphaScope });
    betaHttp = await startHttpServer({ engine, scope: betaScope });
    a = await httpSide(ALPHA, alphaHttp);
    b = await httpSide(BETA, betaHttp);
    alphaTopicMemory = structured<{ id: number }>(await a.call('remember', { title: 'Zorblaxquint scheduling convention', text: 'Zorblaxquint jobs run on the flimwobble queue.', memory_type: 'convention', topic_key: 'scheduling' })).id;
    alphaFactMemory = structured<{ id: number }>(
      await a.call('remember', { title: 'Orders database', text: 'We use PostgreSQL 14 for the orders service. Quoffelmorph tables live there.', memory_type: 'decision', files: [SHARED_FILE] }),
    ).id;
    alphaPlainMemory = structured<{ id: number }>(await a.call('remember', { title: 'Snarfidex note', text: 'Snarfidex caches evict after an hour in plonkvertu.', memory_type: 'note' })).id;
    structured(
      await a.call('observe', {
        observations: [
          { type: 'edit', title: 'Zorblaxquint commit touching the orders service', narrative: 'flimwobble changes', files_modified: [SHARED_FILE], commit_sha: SHA, branch: 'main', concepts: ['zorblaxquint'], dedupe_key: 'hook-1' },
        ],
      }),
    );
    await engine.flush();
  });

  after(async () => {
    await a?.client.close();
    await b?.client.close();
    await alphaHttp?.close();
    await betaHttp?.close();
    await engine?.close();
    if (dir) removeDir(dir);
  });

  it("remember with supersedes naming alpha's memory id is invalid_arguments for beta, and alpha's memory stays active", async () => {
    const result = await b.call('remember', { title: 'Beta replaces it', text: 'Vantrelliq owns scheduling now.', supersedes: [alphaPlainMemory] });
    assert.equal(result.isError, true, `beta could supersede alpha's memory: ${result.content[0]?.text}`);
    assert.match(result.content[0].text ?? '', /^invalid_arguments:/);
    assert.deepEqual(canariesIn(result), []);
    const m = await alphaMemory(alphaPlainMemory);
    assert.equal(m.status, 'active');
    assert.equal(m.superseded_by ?? null, null);
  });

  it("remember with alpha's topic_key supersedes nothing of alpha's", async () => {
    const out = structured<{ superseded: number[]; possible_conflicts: number[] }>(
      await b.call('remember', { title: 'Beta scheduling convention', text: 'Vantrelliq jobs run on the mobbleguff queue.', memory_type: 'convention', topic_key: 'scheduling' }),
    );
    assert.deepEqual(out.superseded, []);
    assert.deepEqual(out.possible_conflicts, []);
    const m = await alphaMemory(alphaTopicMemory);
    assert.equal(m.status, 'active');
  });

  it("remember contradicting alpha's fact about the same file neither supersedes nor conflicts with alpha's memory", async () => {
    const result = await b.call('remember', { title: 'Orders database moved', text: 'We moved the orders service to SQLite.', memory_type: 'decision', files: [SHARED_FILE] });
    const out = structured<{ superseded: number[]; possible_conflicts: number[] }>(result);
    assert.deepEqual(out.superseded, []);
    assert.deepEqual(out.possible_conflicts, []);
    assert.doesNotMatch(result.content[0].text ?? '', new RegExp(`memory ${alphaFactMemory}\\b`));
    const m = await alphaMemory(alphaFactMemory);
    assert.equal(m.status, 'active');
    assert.deepEqual((m.conflicts ?? []).filter((c: { resolution: string }) => c.resolution === 'open'), []);
  });

  it("observe with alpha's dedupe_key is stored in beta (dedupe keys are keys within a project)", async () => {
    const out = structured<{ stored: number; ids: number[] }>(await b.call('observe', { observations: [{ type: 'note', title: 'Beta hook event', dedupe_key: 'hook-1' }] }));
    assert.equal(out.stored, 1);
    const rest1 = await rest(betaHttp, '/v1/observations', { method: 'POST', body: { type: 'note', title: 'Beta hook event 2', dedupe_key: 'hook-1' } });
    // second time within beta: skipped is fine; the point is beta's first one was stored.
    assert.ok(rest1.status === 201, rest1.body);
  });

  it("beta's observation of the same commit and file does not surface alpha's commit title or concepts (graph entities)", async () => {
    structured(await b.call('observe', { observations: [{ type: 'edit', title: 'Vantrelliq commit on orders', narrative: 'mobbleguff tweak', files_modified: [SHARED_FILE], commit_sha: SHA, branch: 'main' }] }));
    await engine.flush();
    for (const prompt of [`what changed in ${SHARED_FILE}?`, `commit ${SHA.slice(0, 12)} orders service`, 'orders service database']) {
      const r = await b.call('retrieve_memory', { prompt });
      assert.deepEqual(canariesIn(r), [], `retrieve_memory(${prompt})`);
      const c = await b.call('recall_context', { query: prompt });
      assert.deepEqual(canariesIn(c), [], `recall_context(${prompt})`);
    }
  });

  it("a misspelling of alpha's unique word, asked by beta, is not corrected into alpha's word", async () => {
    for (const prompt of ['how does zorblaxqint scheduling work?', 'what is snarfidx?', 'flimwoble queue', 'where is quofelmorph stored?']) {
      const r = await b.call('retrieve_memory', { prompt });
      assert.deepEqual(canariesIn(r), [], `retrieve_memory(${prompt})`);
      const c = await b.call('recall_context', { query: prompt });
      assert.deepEqual(canariesIn(c), [], `recall_context(${prompt})`);
    }
  });

  it("retrieve_memory: a long (hashed) or NUL-holding session id alpha used gives beta none of alpha's prompts as follow-up context", async () => {
    const longId = 'L'.repeat(300);
    const nulId = 'sess\u0000ion';
    for (const sid of [longId, nulId, ' ', 'x'.repeat(256)]) {
      for (const p of ['zorblaxquint scheduler flimwobble queue design', 'why snarfidex eviction in plonkvertu']) {
        const r = await a.call('retrieve_memory', { prompt: p, session_id: sid });
        assert.equal(r.structuredContent?.status, 'ok', r.content[0]?.text);
      }
      const r = await b.call('retrieve_memory', { prompt: 'and why was that?', session_id: sid });
      const rewritten = String((r.structuredContent?.triage as { rewritten_query?: string } | undefined)?.rewritten_query ?? '');
      assert.deepEqual(canariesIn(rewritten), [], `session ${JSON.stringify(sid.slice(0, 10))}: ${rewritten}`);
      assert.deepEqual(canariesIn(r), [], `session ${JSON.stringify(sid.slice(0, 10))}`);
      // control: the same follow-up from alpha is rewritten with alpha's prompts
      const control = await a.call('retrieve_memory', { prompt: 'and why was that?', session_id: sid });
      const ctext = String((control.structuredContent?.triage as { rewritten_query?: string } | undefined)?.rewritten_query ?? '');
      assert.ok(canariesIn(ctext).length > 0, `control for ${JSON.stringify(sid.slice(0, 10))}: ${ctext}`);
    }
  });

  it("beta forgetting alpha's ids (engine.forget with beta's scope) deletes nothing of alpha's", async () => {
    const before = await engine.stats(alphaScope);
    const ids = [alphaPlainMemory, alphaTopicMemory, alphaFactMemory];
    const report = await engine.forget({ ids, kind: 'memory' }, betaScope);
    assert.equal(report.memories ?? 0, 0);
    assert.deepEqual(await engine.stats(alphaScope), before);
    // alpha's request log and prompts stay too
    const log = await engine.store.rows(TABLES.memories, `project = 'alpha'`, { select: ['id'] });
    assert.equal(log.length, 3);
  });

  it("the ids beta is handed do not count alpha's writes in between (both served by one engine)", async () => {
    const one = async (title: string): Promise<number> => structured<{ ids: number[] }>(await b.call('observe', { observations: [{ type: 'note', title }] })).ids[0];
    const [b1, b2] = [await one('beta id probe one'), await one('beta id probe two')];
    structured(await a.call('observe', { observations: Array.from({ length: 25 }, (_, i) => ({ type: 'note', title: `alpha burst ${i}` })) }));
    for (let i = 0; i < 3; i++) await engine.remember({ title: `alpha burst memory ${i}`, text: 'kept for the id probe', memory_type: 'note' }, alphaScope);
    const b3 = await one('beta id probe three');
    assert.equal(b3 - b2, b2 - b1, `beta's ids ${b1}, ${b2}, ${b3}: the gap says how many records alpha wrote meanwhile`);
  });
});
