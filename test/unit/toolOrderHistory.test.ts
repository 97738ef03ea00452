// recall_context and retrieve_memory rank a history question's items one way: by relevance, what
// holds now and what it replaced together, a replaced memory never above the memory that replaced
// it, also when freshness weighs the replacement down (README, "Time" and "Freshness").
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { MemoryEngine } from '../../src/core/engine';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { OTHER, SCOPE, connectClient, httpToolHarness } from './httpToolHarness';
import type { CallResult } from './httpToolHarness';
import { makeGitRepo, openTestEngine, removeDir, seed, toolContext } from './mcpFixture';
import { textPack } from './textPack';
import { GitFreshness } from '../../src/core/capture/freshness';
import { findTool } from '../../src/core/tools/registry';
import type { ToolContext } from '../../src/core/tools/types';
import type { TestRepo } from './mcpFixture';

type Item = { source_kind: string; source_id: number; relevance: number };
type Fact = { statement: string; relevance_score: number; source_path: string };

/**
 * recall_context's items with their relevance. Over MCP the answer is the text alone (textPack
 * asserts it), so the same call is made in process too, for the structured pack behind that text:
 * its text must be the one the MCP client got.
 */
async function items(mcp: Promise<CallResult>, ctx: ToolContext, args: Record<string, unknown>): Promise<Item[]> {
  const { text } = textPack(await mcp);
  const local = await findTool('recall_context')!.run(ctx, args);
  assert.equal(local.text, text, 'the pack behind the MCP text');
  return (local.structured as { items: Item[] }).items;
}
function facts(r: CallResult): Fact[] {
  return (r.structuredContent as { retrieval: { facts: Fact[] } }).retrieval.facts;
}
const rows = (list: Item[]): string => JSON.stringify(list.map((i) => [`${i.source_kind}/${i.source_id}`, i.relevance]));

describe('tools: history questions are ranked by relevance with the current items', function () {
  this.timeout(180_000);
  let oldId: number;
  let newId: number;
  const h = httpToolHarness({
    fill: async (engine) => {
      await seed(engine, SCOPE, OTHER);
      oldId = (await engine.remember({ title: 'Wombat cache backend choice', text: 'We use Memcached as the wombat cache backend.', memory_type: 'decision', topic_key: 'wombat-cache' }, SCOPE)).id;
      newId = (await engine.remember({ title: 'Wombat cache backend choice', text: 'We moved the wombat cache backend to Redis Cluster.', memory_type: 'decision', topic_key: 'wombat-cache' }, SCOPE)).id;
      // Current items that share a word or two with the question: less relevant than the replaced memory.
      await engine.observe(
        [
          { type: 'note', title: 'Cache hit ratio alert', narrative: 'An alert fires when the hit ratio of a cache drops under eighty percent.' },
          { type: 'note', title: 'Backend dashboards', narrative: 'Grafana dashboards exist for every backend service we run.' },
        ],
        SCOPE,
      );
      await engine.flush();
    },
  });
  const { call } = h;
  const pack = (args: Record<string, unknown>): Promise<Item[]> => items(call('recall_context', args), toolContext(h.engine, SCOPE), args);
  const prompt = 'which wombat cache backend did we use before, Memcached?';

  it('recall_context: items are in non-increasing relevance, the replaced memory right after the one that replaced it', async () => {
    const list = await pack({ query: prompt, max_items: 20 });
    const iNew = list.findIndex((i) => i.source_kind === 'memory' && i.source_id === newId);
    const iOld = list.findIndex((i) => i.source_kind === 'memory' && i.source_id === oldId);
    assert.ok(iNew >= 0 && iOld === iNew + 1, rows(list));
    for (let i = 1; i < list.length; i++) assert.ok(list[i - 1].relevance >= list[i].relevance, `ranks and scores disagree: ${rows(list)}`);
  });

  it('retrieve_memory: the facts come in the order of recall_context\'s items, with the same scores', async () => {
    const list = await pack({ query: prompt, max_items: 12, max_tokens: 12000 });
    const found = facts(await call('retrieve_memory', { prompt, session_id: `order-${Date.now()}` }));
    assert.ok(found.length > 2, JSON.stringify(found));
    assert.deepEqual(
      found.map((f) => f.source_path),
      list.slice(0, found.length).map((i) => `${i.source_kind}/${i.source_id}`),
    );
    found.forEach((f, i) => assert.ok(Math.abs(f.relevance_score - list[i].relevance) < 0.006, `${f.source_path}: ${f.relevance_score} vs ${list[i].relevance}`));
  });

  it('a present-tense question leaves the replaced memory out of both tools', async () => {
    const now = 'which wombat cache backend do we use?';
    const list = await pack({ query: now, max_items: 20 });
    assert.ok(list.some((i) => i.source_kind === 'memory' && i.source_id === newId), rows(list));
    assert.ok(!list.some((i) => i.source_kind === 'memory' && i.source_id === oldId), rows(list));
    const found = facts(await call('retrieve_memory', { prompt: now, session_id: `now-${Date.now()}` }));
    assert.ok(!found.some((f) => f.source_path === `memory/${oldId}`), JSON.stringify(found));
  });
});

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd } });
}

describe('tools: a replaced memory stays below its replacement when freshness weighs the replacement down', function () {
  this.timeout(180_000);
  let engine: MemoryEngine;
  let dir: string;
  let repo: TestRepo;
  let server: RunningHttpServer;
  let client: Client;
  let oldId: number;
  let newId: number;
  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallResult;
  // In process as the server runs it: the same repository's freshness.
  const pack = (args: Record<string, unknown>): Promise<Item[]> => items(call('recall_context', args), toolContext(engine, SCOPE, { freshness: GitFreshness.forRepository(repo.dir) }), args);

  before(async () => {
    repo = makeGitRepo();
    ({ engine, dir } = await openTestEngine());
    oldId = (await engine.remember({ title: 'Ibis message queue choice', text: 'We use Kafka as the ibis message queue.', memory_type: 'decision', topic_key: 'ibis-queue', files: ['src/net/retryPolicy.ts'] }, SCOPE)).id;
    newId = (await engine.remember({ title: 'Ibis message queue choice', text: 'We moved the ibis message queue to Amazon SQS.', memory_type: 'decision', topic_key: 'ibis-queue', files: ['src/ui/themeToggle.ts'] }, SCOPE)).id;
    await engine.flush();
    // The replacement's file is gone since: it ranks a little lower, but never below what it replaced.
    rmSync(path.join(repo.dir, 'src/ui/themeToggle.ts'));
    git(repo.dir, ['commit', '-q', '-am', 'Remove the theme toggle']);
    server = await startHttpServer({ engine, scope: SCOPE, repoRoot: repo.dir } as never);
    client = await connectClient(server);
  });
  after(async () => {
    await client?.close();
    await server?.close();
    await engine?.close();
    if (dir) removeDir(dir);
    if (repo) removeDir(repo.dir);
  });

  const prompt = 'which ibis message queue did we use before?';

  it('retrieve_memory: the replaced memory\'s fact is after its replacement\'s and scored no higher', async () => {
    const found = facts(await call('retrieve_memory', { prompt }));
    const scores = JSON.stringify(found.map((f) => [f.source_path, f.relevance_score]));
    const iNew = found.findIndex((f) => f.source_path === `memory/${newId}`);
    const iOld = found.findIndex((f) => f.source_path === `memory/${oldId}`);
    assert.ok(iNew >= 0 && iOld >= 0, scores);
    assert.ok(found[iNew].statement.includes('[no longer in the working tree: src/ui/themeToggle.ts]'), found[iNew].statement);
    assert.ok(found[iOld].statement.startsWith('[HISTORY: '), found[iOld].statement);
    assert.ok(iOld > iNew, scores);
    assert.ok(found[iOld].relevance_score <= found[iNew].relevance_score, scores);
  });

  it('recall_context: the same order, and scores that agree with it', async () => {
    const list = await pack({ query: prompt, max_items: 20 });
    const iNew = list.findIndex((i) => i.source_kind === 'memory' && i.source_id === newId);
    const iOld = list.findIndex((i) => i.source_kind === 'memory' && i.source_id === oldId);
    assert.ok(iNew >= 0 && iOld > iNew, rows(list));
    for (let i = 1; i < list.length; i++) assert.ok(list[i - 1].relevance >= list[i].relevance, rows(list));
    const found = facts(await call('retrieve_memory', { prompt }));
    assert.deepEqual(found.map((f) => f.source_path), list.slice(0, found.length).map((i) => `${i.source_kind}/${i.source_id}`));
  });
});
