// The tools against their contract pages: unicode and odd text, ids across tools, recall as a
// k-nearest read, and get_observations when an access update fails.
import * as assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { openTestEngine, removeDir, seed } from './mcpFixture';

const scope: Scope = { project: 'github.com/acme/app' };
const other: Scope = { project: 'github.com/evil/other' };
type CallResult = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };

describe('contract: odd text and ids across tools', function () {
  this.timeout(180_000);
  let engine: MemoryEngine; let dir: string; let server: RunningHttpServer; let client: Client;
  const call = async (name: string, args?: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallResult;
  before(async () => {
    ({ engine, dir } = await openTestEngine());
    await seed(engine, scope, other);
    await engine.observe([
      { type: 'edit', title: 'Pipe | in title\nand a newline', narrative: 'Wombat pipeline handles the pipe character.', files_modified: ['src/we|ird\nname.ts'] },
      { type: 'note', title: 'Ünïcödé résumé 日本語 🎉👩‍👩‍👧', narrative: 'Wombat unicode résumé handling with עברית and العربية text.', facts: ['naïve ✓', '日本'], concepts: ['ünï'] },
    ], scope);
    await engine.flush();
    server = await startHttpServer({ engine, scope });
    client = new Client({ name: 'contract-odd', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${server.token}` } } }));
  });
  after(async () => { await client?.close(); await server?.close(); await engine?.close(); removeDir(dir); });

  it('odd unicode in prompt/query/text (lone surrogate, NUL, RTL, ZWJ) is served, not internal_error', async () => {
    for (const s of ['wombat \ud800 lone', 'wombat \u0000 nul', 'wombat \u202e rtl עברית', 'wombat 👩‍👩‍👧 zwj']) {
      const rm = await call('retrieve_memory', { prompt: s, session_id: s });
      assert.equal(rm.structuredContent?.status, 'ok', `${JSON.stringify(s)}: ${rm.content[0].text}`);
      const rc = await call('recall_context', { query: s });
      assert.equal(rc.isError, false, `${JSON.stringify(s)}: ${rc.content[0].text}`);
      const r = await call('recall', { text: s });
      assert.equal(r.isError, false, `${JSON.stringify(s)}: ${r.content[0].text}`);
    }
  });

  it('recall_context: each Reference line stays one line of the literal form even when type/location hold | or newlines', async () => {
    const r = await call('recall_context', { query: 'wombat pipeline pipe character', max_items: 10 });
    const text = r.content[0].text!;
    const lines = text.split('\n');
    const n = Number(lines[1].slice('Items: '.length));
    const refs = lines.filter((l) => l.startsWith('Reference: '));
    assert.equal(refs.length, n, text);
    for (const ref of refs) assert.match(ref, /^Reference: [^|]+ \| Type: [^|]+ \| Location: [^|]+$/);
    // The Context: label comes right after the Reference lines.
    assert.equal(lines[lines.findIndex((l) => l.startsWith('Reference: ')) + n], 'Context:');
  });

  it('retrieve_memory: every fact source_path names a record get_observations returns (README: pass kind as source and the id)', async () => {
    const r = await call('retrieve_memory', { prompt: 'wombat unicode résumé handling and the LanceDB vector store decision' });
    const facts = (r.structuredContent!.retrieval as { facts: Array<{ source_path: string }> }).facts;
    assert.ok(facts.length > 0);
    for (const f of facts) {
      const m = /^(observation|session_summary|memory)\/(\d+)$/.exec(f.source_path);
      assert.ok(m, f.source_path);
      const g = await call('get_observations', { ids: [Number(m[2])], source: m[1] });
      assert.equal(g.isError, false, `${f.source_path}: ${g.content[0].text}`);
    }
  });
});

describe('contract: recall is a k-nearest-neighbour read', function () {
  this.timeout(180_000);
  let engine: MemoryEngine; let dir: string; let server: RunningHttpServer; let client: Client;
  const call = async (name: string, args?: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallResult;
  before(async () => {
    ({ engine, dir } = await openTestEngine());
    await engine.observe(Array.from({ length: 12 }, (_, i) => ({ type: 'note', title: `Gardening note ${i}`, narrative: `Tomatoes need water number ${i}.` })), scope);
    await engine.flush();
    server = await startHttpServer({ engine, scope });
    client = new Client({ name: 'contract-knn', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${server.token}` } } }));
  });
  after(async () => { await client?.close(); await server?.close(); await engine?.close(); removeDir(dir); });

  it('with 12 L0 cells, k=5 returns 5 nodes and k=50 returns all 12, whatever the text shares with them', async () => {
    for (const text of ['tomatoes water', 'quantum chromodynamics lattice', 'zzqxv']) {
      const five = (await call('recall', { text, k: 5 })).structuredContent!.nodes as unknown[];
      assert.equal(five.length, 5, `${text}: k=5 gave ${five.length}`);
      const all = (await call('recall', { text, k: 50 })).structuredContent!.nodes as unknown[];
      assert.equal(all.length, 12, `${text}: k=50 gave ${all.length}`);
    }
  });
});

describe('contract: get_observations access-update failures', function () {
  this.timeout(180_000);
  let engine: MemoryEngine; let dir: string; let server: RunningHttpServer; let client: Client;
  let seeded: Awaited<ReturnType<typeof seed>>;
  const call = async (name: string, args?: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallResult;
  before(async () => {
    ({ engine, dir } = await openTestEngine());
    seeded = await seed(engine, scope, other);
    // The engine as the tools see it, with every access update failing.
    const failing = Object.create(engine, { touch: { value: async () => { throw new Error('simulated access update failure'); } } }) as MemoryEngine;
    server = await startHttpServer({ engine: failing, scope });
    client = new Client({ name: 'contract-access', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${server.token}` } } }));
  });
  after(async () => { await client?.close(); await server?.close(); await engine?.close(); removeDir(dir); });

  it("source='memory': a failed access update is a tool error", async () => {
    const r = await call('get_observations', { ids: [seeded.memoryId] });
    assert.equal(r.isError, true, r.content[0].text);
    assert.match(r.content[0].text!, /^access_update_failed/);
  });

  it("source='observation': a failed access update is logged but details still return", async () => {
    const r = await call('get_observations', { ids: [seeded.observationIds[0]], source: 'observation' });
    assert.equal(r.isError, false, r.content[0].text);
    assert.equal((r.structuredContent!.details as unknown[]).length, 1);
  });

  it("source='session_summary' never needs an access update", async () => {
    const session = engine.currentSessionId(scope);
    await engine.observe([{ type: 'note', title: 'Decision', narrative: 'We decided to use async iterators instead of arrays.' }], scope);
    const summary = await engine.endSession(scope, session, 'request');
    assert.ok(summary);
    const r = await call('get_observations', { ids: [summary.id], source: 'session_summary' });
    assert.equal(r.isError, false, r.content[0].text);
  });
});
