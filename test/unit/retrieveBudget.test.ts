// retrieve_memory's budget (the contract's 120 s, here a test's 1 s) is the whole call's: a slow
// read of the session's prompt history runs out of it as the search does, a request-log write
// that outlasts it ends after the answer, and a history that cannot be read leaves the prompt
// taken as it is.
import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { OTHER, SCOPE } from './httpToolHarness';
import { openTestEngine, removeDir, seed, toolContext } from './mcpFixture';

describe("retrieve_memory's budget covers the whole call", function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  before(async () => {
    ({ engine, dir } = await openTestEngine());
    await seed(engine, SCOPE, OTHER);
    // The search warmed, so that only the slowed step can run out of the budget.
    await retrieveMemory(toolContext(engine, SCOPE), { prompt: 'LanceDB vector store' });
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  /** The engine with one method slowed by `ms` (the real one then runs), and whether it has ended. */
  function slowed(name: 'recentPrompts' | 'logRequest', ms: number): { engine: MemoryEngine; ended: () => boolean } {
    let ended = false;
    const real = (engine[name] as (...args: unknown[]) => Promise<unknown>).bind(engine);
    const slow = Object.create(engine, {
      [name]: { value: (...args: unknown[]) => new Promise((r) => setTimeout(r, ms)).then(() => real(...args)).finally(() => (ended = true)) },
    }) as MemoryEngine;
    return { engine: slow, ended: () => ended };
  }

  it('a slow read of the prompt history is a retrieval_timeout, not an answer after the budget', async () => {
    const { engine: slow } = slowed('recentPrompts', 2500);
    const out = await retrieveMemory(toolContext(slow, SCOPE, { retrieveTimeoutMs: 1000 }), { prompt: 'LanceDB vector store', session_id: 'budget-1' });
    assert.equal(out.status, 'error', JSON.stringify(out).slice(0, 300));
    assert.equal(out.error_code, 'retrieval_timeout');
  });

  it('a request-log write that outlasts the budget does not hold the answer back, and is still written', async () => {
    const { engine: slow, ended } = slowed('logRequest', 2500);
    const out = await retrieveMemory(toolContext(slow, SCOPE, { retrieveTimeoutMs: 1000 }), { prompt: 'LanceDB vector store', session_id: 'budget-2' });
    assert.equal(out.status, 'ok', JSON.stringify(out).slice(0, 300));
    assert.equal(ended(), false, 'answered before the log write ended');
    while (!ended()) await new Promise((r) => setTimeout(r, 100));
    const logged = await engine.listRequests(SCOPE, 10);
    assert.ok(logged.some((e) => e.session_id === 'budget-2' && e.status === 'ok'), JSON.stringify(logged.map((e) => e.session_id)));
  });

  it('a call out of time writes no prompt after its answer (a forget that follows the answer would miss it)', async () => {
    const { engine: slow, ended } = slowed('recentPrompts', 2500);
    const out = await retrieveMemory(toolContext(slow, SCOPE, { retrieveTimeoutMs: 500 }), { prompt: 'a question that ran out of time', session_id: 'budget-late' });
    assert.equal(out.error_code, 'retrieval_timeout');
    while (!ended()) await new Promise((r) => setTimeout(r, 100));
    await engine.flush();
    assert.deepEqual(await engine.recentPrompts(SCOPE, 'budget-late', 5), []);
    // Control: the same session's prompt is written when the call answers in time.
    await retrieveMemory(toolContext(engine, SCOPE), { prompt: 'a question in time', session_id: 'budget-late' });
    assert.deepEqual(await engine.recentPrompts(SCOPE, 'budget-late', 5), ['a question in time']);
  });

  it('a prompt history that cannot be read leaves the prompt taken as it is: the call still answers', async () => {
    const broken = Object.create(engine, { recentPrompts: { value: () => Promise.reject(new Error('prompt history unreadable')) } }) as MemoryEngine;
    const out = await retrieveMemory(toolContext(broken, SCOPE), { prompt: 'LanceDB vector store', session_id: 'budget-3' });
    assert.equal(out.status, 'ok', JSON.stringify(out).slice(0, 300));
    assert.equal(out.triage?.rewritten_query, 'LanceDB vector store');
  });
});
