// Two projects' HTTP servers on one engine: each server hands out its own project's account
// session id; the server token, wherever a client puts it, is never stored or listed; the same
// question asked by both projects right after each other answers each from its own records; and a
// forgotten project's account session keeps none of its prompts.

import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { accountSessionId } from '../../src/mcp/mcpServer';
import { rawToolCall as call, rest } from './crossProjectFixture';
import type { CallResult } from './crossProjectFixture';
import { openTestEngine, removeDir } from './mcpFixture';

const ALPHA: Scope = { project: 'alpha' };
const BETA: Scope = { project: 'beta' };

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } };

/** The Mcp-Session-Id a server hands out to an initialize. */
async function handedOutSession(server: RunningHttpServer): Promise<string | null> {
  const r = await fetch(server.url, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(INITIALIZE),
  });
  assert.equal(r.status, 200, await r.text());
  return r.headers.get('mcp-session-id');
}

function rewritten(r: CallResult): string {
  return String((r.structuredContent?.triage as { rewritten_query?: string } | undefined)?.rewritten_query ?? '');
}

function nodeIds(r: CallResult): string[] {
  return ((r.structuredContent?.nodes as Array<{ node_id: string }> | undefined) ?? []).map((n) => n.node_id);
}

describe("two projects' HTTP servers on one engine: sessions, the token and forgetting", function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  let alpha: RunningHttpServer;
  let beta: RunningHttpServer;

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    alpha = await startHttpServer({ engine, scope: ALPHA });
    beta = await startHttpServer({ engine, scope: BETA });
    await engine.observe([{ type: 'decision', title: 'Quazzlebrink replaces morvantide', narrative: 'The plexotrundle job now runs through quazzlebrink instead of morvantide.' }], ALPHA);
    await engine.observe([{ type: 'note', title: 'Beta keeps its own notes', narrative: 'Nothing of interest for the other project here.' }], BETA);
    await engine.flush();
  });
  after(async () => {
    await alpha?.close();
    await beta?.close();
    await engine?.close();
    removeDir(dir);
  });

  it("each server hands out its own project's account session id, never the other's", async () => {
    const a = await handedOutSession(alpha);
    const b = await handedOutSession(beta);
    assert.equal(a, accountSessionId(ALPHA.project));
    assert.equal(b, accountSessionId(BETA.project));
    assert.notEqual(a, b);
  });

  it('never stores or lists the token, sent as Mcp-Session-Id, session_id, prompt text or any written field', async () => {
    const before = JSON.stringify(await engine.listRequests(ALPHA, 1000));
    assert.ok(!before.includes(alpha.token));
    await call(alpha, 'retrieve_memory', { prompt: 'where does the plexotrundle job run?' }, { 'mcp-session-id': alpha.token });
    await call(alpha, 'retrieve_memory', { prompt: 'where does the plexotrundle job run?', session_id: alpha.token });
    await call(alpha, 'retrieve_memory', { prompt: `my token is ${alpha.token}, what runs plexotrundle?` });
    await call(alpha, 'remember', { title: 'token note', text: `token ${alpha.token}`, session_id: alpha.token, topic_key: alpha.token });
    await call(alpha, 'observe', { observations: [{ type: 'note', title: `t ${alpha.token}`, memory_session_id: alpha.token, content_session_id: alpha.token, dedupe_key: alpha.token, branch: alpha.token }] });
    const log = await rest(alpha, '/v1/dev/mcp-requests?limit=1000');
    assert.ok(!log.body.includes(alpha.token), 'the request log lists the token');
    const exported: string[] = [];
    await engine.exportJsonl((line) => void exported.push(line), ALPHA);
    const leaked = exported.filter((l) => l.includes(alpha.token));
    assert.deepEqual(leaked.map((l) => l.slice(0, 200)), [], 'stored rows hold the token');
  });

  it("answers the same arguments, asked by alpha and then at once twice by beta, with nothing of alpha's (all read tools)", async () => {
    const leaks: string[] = [];
    for (const [name, args] of [
      ['recall', { text: 'quazzlebrink morvantide plexotrundle', k: 10 }],
      ['recall_context', { query: 'quazzlebrink morvantide plexotrundle', max_items: 10 }],
      ['retrieve_memory', { prompt: 'what replaced morvantide for plexotrundle?', session_id: 'shared-1' }],
    ] as const) {
      const a = await call(alpha, name, args);
      assert.ok(/replaces morvantide|runs through quazzlebrink/i.test(JSON.stringify(a)) || name === 'recall', `control: alpha finds its own record through ${name}: ${JSON.stringify(a).slice(0, 300)}`);
      const aNodes = new Set(nodeIds(a));
      const [b1, b2] = await Promise.all([call(beta, name, args), call(beta, name, args)]);
      for (const b of [b1, b2]) {
        const text = JSON.stringify(b).toLowerCase();
        for (const phrase of ['replaces morvantide', 'runs through quazzlebrink']) if (text.includes(phrase)) leaks.push(`${name}: '${phrase}' in ${text.slice(0, 200)}`);
        for (const n of nodeIds(b)) if (aNodes.has(n)) leaks.push(`${name}: alpha's node ${n}`);
      }
    }
    assert.deepEqual(leaks, []);
  });

  it("keeps none of a forgotten project's prompts in its account session (the handed-out Mcp-Session-Id), its follow-ups or its request log", async () => {
    const session = accountSessionId(ALPHA.project);
    await call(alpha, 'retrieve_memory', { prompt: 'Which quazzlebrink flag controls morvantide?' }, { 'mcp-session-id': session });
    assert.ok((await engine.recentPrompts(ALPHA, session, 5)).length > 0, 'control: the prompt was kept');
    await engine.forget({ project: ALPHA.project }, ALPHA);
    assert.deepEqual(await engine.recentPrompts(ALPHA, session, 5), []);
    const follow = await call(alpha, 'retrieve_memory', { prompt: 'and why was that?' }, { 'mcp-session-id': session });
    assert.doesNotMatch(rewritten(follow), /quazzlebrink|morvantide/i, rewritten(follow));
    const log = await rest(alpha, '/v1/dev/mcp-requests?limit=1000');
    assert.doesNotMatch(log.body, /quazzlebrink|morvantide|plexotrundle/i, 'the request log still quotes the forgotten project');
  });
});
