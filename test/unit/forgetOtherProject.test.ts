// A forget in one project takes back what writers wrote meanwhile in that project only: a
// forget in project beta that runs while project alpha's retrieve_memory searches, or while
// alpha's prompt is written, leaves alpha's request-log entry and prompt (it removed nothing
// they quote). Both were taken back before, on any forget anywhere in the store.
import * as assert from 'node:assert/strict';
import type { MemoryEngineApi } from '../../src/core/api';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { TABLES } from '../../src/core/store/schema';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { httpSide } from './crossProjectFixture';
import type { Side } from './crossProjectFixture';
import { openTestEngine, removeDir } from './mcpFixture';

const alphaScope: Scope = { project: 'alpha' };
const betaScope: Scope = { project: 'beta' };

describe('a forget in another project leaves the writes made meanwhile', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  let server: RunningHttpServer;
  let side: Side;
  let betaIds: number[] = [];
  let forgetDuringSearch = false;

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    await engine.observe([{ type: 'note', title: 'Zorblaxquint scheduler design', narrative: 'alpha uses the flimwobble queue' }], alphaScope);
    betaIds = (await engine.observe([{ type: 'note', title: 'Beta note to forget', narrative: 'vantrelliq secret' }], betaScope)).map((o) => o.id);
    await engine.flush();
    // alpha's server, on the real engine; its first search lets beta's forget run (another
    // window, the CLI) before the search answers.
    const api = new Proxy(engine as unknown as MemoryEngineApi, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (prop === 'search' && typeof value === 'function') {
          return async (...args: unknown[]) => {
            if (forgetDuringSearch) {
              forgetDuringSearch = false;
              await engine.forget({ ids: betaIds, kind: 'observation' }, betaScope);
            }
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    server = await startHttpServer({ engine: api, scope: alphaScope });
    side = await httpSide('alpha', server);
  });
  after(async () => {
    await side?.client.close();
    await server?.close();
    await engine?.close();
    if (dir) removeDir(dir);
  });

  it("alpha's call is still in alpha's request log after beta's forget ran during it", async () => {
    // control: without a forget the call is logged
    const first = await side.call('retrieve_memory', { prompt: 'how is the zorblaxquint scheduler designed?', session_id: 'chat-1' });
    assert.equal(first.structuredContent?.status, 'ok');
    const id1 = (first.structuredContent?.diagnostics as { request_id: string }).request_id;
    assert.ok((await engine.listRequests(alphaScope, 100)).some((r) => r.request_id === id1), 'control: the call is logged');

    forgetDuringSearch = true;
    const second = await side.call('retrieve_memory', { prompt: 'which queue does the zorblaxquint scheduler use?', session_id: 'chat-1' });
    assert.equal(second.structuredContent?.status, 'ok');
    assert.equal(forgetDuringSearch, false, 'the forget ran during the search');
    assert.equal((await engine.stats(betaScope)).observations, 0, "beta's record was forgotten");
    const id2 = (second.structuredContent?.diagnostics as { request_id: string }).request_id;
    const logged = (await engine.listRequests(alphaScope, 100)).map((r) => r.request_id);
    assert.ok(logged.includes(id1), "alpha's earlier entry stays");
    assert.ok(logged.includes(id2), `alpha's call made during beta's forget is missing from alpha's request log (${logged.join(', ')})`);
  });

  it("alpha's prompt history keeps a prompt written while another process forgot something of beta", async () => {
    const other = (await openTestEngine(dir)).engine;
    try {
      const betaMore = (await engine.observe([{ type: 'note', title: 'Another beta note', narrative: 'vantrelliq again' }], betaScope)).map((o) => o.id);
      await engine.flush();
      // control: with the second engine open and no forget, a prompt is kept
      await engine.addPrompt(alphaScope, 'chat-3', 'zorblaxquint control question');
      assert.deepEqual(await engine.recentPrompts(alphaScope, 'chat-3', 5), ['zorblaxquint control question']);
      const store = engine.store as unknown as { add: (...a: unknown[]) => Promise<void> };
      const add = store.add.bind(store);
      let armed = true;
      store.add = async (...args: unknown[]) => {
        await add(...args);
        if (armed && args[0] === TABLES.sessionPrompts) {
          armed = false;
          // another process (the CLI, another window) forgets beta's record right now
          await other.forget({ ids: betaMore, kind: 'observation' }, betaScope);
        }
      };
      try {
        await engine.addPrompt(alphaScope, 'chat-2', 'zorblaxquint first question about the flimwobble queue');
      } finally {
        store.add = add;
      }
      assert.equal(armed, false, 'the forget ran during the prompt write');
      const prompts = await engine.recentPrompts(alphaScope, 'chat-2', 5);
      assert.deepEqual(prompts, ['zorblaxquint first question about the flimwobble queue'], "alpha's prompt was taken back because beta forgot something");
    } finally {
      await other.close();
    }
  });
});
