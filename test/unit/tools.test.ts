import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { countTokens } from '../../src/core/tokens';
import { getObservations, getObservationsOutput, getObservationsTool } from '../../src/core/tools/getObservations';
import { recall, recallOutput, recallTool } from '../../src/core/tools/recall';
import { NO_MATCH, recallContext, recallContextOutput, recallContextTool } from '../../src/core/tools/recallContext';
import { retrieveMemory, retrieveMemoryOutput, retrieveMemoryTool } from '../../src/core/tools/retrieveMemory';
import { triage } from '../../src/core/tools/triage';
import { ToolError } from '../../src/core/tools/types';
import { observeTool, rememberTool } from '../../src/core/tools/write';
import { openTestEngine, removeDir, seed, toolContext } from './mcpFixture';

const scope: Scope = { project: 'github.com/acme/app' };
const other: Scope = { project: 'github.com/evil/other' };

async function rejects(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof ToolError && e.code === code);
}

describe('tools (plain functions over a real engine)', () => {
  let engine: MemoryEngine;
  let dir: string;
  let ids: Awaited<ReturnType<typeof seed>>;

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    ids = await seed(engine, scope, other);
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  describe('recall_context', () => {
    it('returns the literal pack: header, Items, one Reference line per item, Context and the body', async () => {
      const out = await recallContext(toolContext(engine, scope), { query: 'which vector store did we pick? LanceDB' });
      recallContextOutput.parse(out);
      const lines = out.text.split('\n');
      assert.equal(lines[0], '### XMemo Context');
      assert.match(lines[1], /^Items: \d+$/);
      const n = Number(lines[1].slice('Items: '.length));
      assert.ok(n >= 2, out.text);
      assert.equal(out.used_items, n);
      const refs = lines.filter((l) => l.startsWith('Reference: '));
      assert.equal(refs.length, n);
      for (const ref of refs) assert.match(ref, /^Reference: [0-9a-f-]{36} \| Type: [^|]+ \| Location: .+$/);
      const contextAt = lines.indexOf('Context:');
      assert.equal(contextAt, lines.lastIndexOf('Context:'));
      assert.ok(contextAt > 1 + n);
      const body = lines.slice(contextAt + 1).join('\n');
      assert.equal(body, out.context_text);
      assert.equal(countTokens(body), out.used_tokens);
      assert.ok(out.used_tokens <= 1500);
      assert.ok(!out.text.includes('Secret plans'), 'another project leaked into the pack');
    });

    it('adds a Budget line and stays within max_tokens when items are dropped or shortened', async () => {
      const out = await recallContext(toolContext(engine, scope), { query: 'LanceDB vector store tokenizer retry', max_items: 1, max_tokens: 20 });
      const lines = out.text.split('\n');
      assert.equal(lines[1], 'Items: 1');
      assert.match(lines[2], /^Budget: used_items=1 used_tokens=\d+ max_items=1 max_tokens=20 dropped=\d+\+? shortened=\d+$/);
      assert.ok(out.used_tokens <= 20 && out.used_tokens > 0);
      assert.ok(out.budget.dropped_items + out.budget.shortened_items > 0);
    });

    it('says so when nothing matches', async () => {
      const out = await recallContext(toolContext(engine, scope), { query: 'zzqxv wombat kumquat' });
      assert.equal(out.text, `### XMemo Context\nItems: 0\n${NO_MATCH}`);
      assert.equal(out.used_items, 0);
      assert.equal(out.used_tokens, 0);
    });

    it('rejects out-of-range limits before reading anything', async () => {
      let searched = 0;
      const counting = Object.create(engine, { search: { value: async () => { searched++; return []; } } }) as MemoryEngine;
      for (const bad of [{ max_items: 0 }, { max_items: 51 }, { max_tokens: 0 }, { max_tokens: 12001 }, { max_items: 2.5 }]) {
        await rejects(recallContext(toolContext(counting, scope), { query: 'x', ...bad }), 'invalid_arguments');
      }
      assert.equal(searched, 0);
      const result = await recallContextTool.run(toolContext(engine, scope), { query: 'x', max_tokens: 99999 });
      assert.equal(result.isError, true);
      assert.match(result.text, /^invalid_arguments: max_tokens/);
    });
  });

  describe('get_observations', () => {
    it('returns memories exactly per MemoryDetailOutput and records the access', async () => {
      const out = await getObservations(toolContext(engine, scope), { ids: [ids.memoryId] });
      getObservationsOutput.parse(out);
      const [detail] = out.details as Record<string, unknown>[];
      assert.equal(detail.id, ids.memoryId);
      assert.equal(detail.memory_type, 'decision');
      for (const key of ['classification', 'classification_reason', 'current_context_eligible', 'scope', 'updated_at_epoch']) assert.ok(key in detail, key);
      const [cell] = (await engine.search('embedded LanceDB decision', { scope, layers: ['L2'], limit: 5 })).filter((h) => h.cell.source_id === ids.memoryId);
      assert.ok(cell.cell.access_count >= 1, 'memory access was not recorded');
    });

    it('returns observations and session summaries with only the published fields, in the order asked', async () => {
      const wanted = [ids.observationIds[2], ids.observationIds[0]];
      const out = await getObservations(toolContext(engine, scope), { ids: wanted, source: 'observation' });
      getObservationsOutput.parse(out);
      assert.deepEqual(out.details.map((d) => (d as { id: number }).id), wanted);
      const first = out.details[0] as Record<string, unknown>;
      assert.equal(first.type, 'read');
      assert.equal(typeof first.last_accessed_epoch, 'number');
      assert.ok(!('vector' in first) && !('search_text' in first) && !('dedupe_key' in first));
      // Observation access times are written in the background, at the latest by flush().
      await engine.flush();
      const [obs] = await engine.getObservations([wanted[0]], scope);
      assert.ok((obs.last_accessed_epoch ?? 0) > 0, 'observation access was not recorded');
    });

    it('fails on a missing id, another project\'s id, an unknown source and hostile ids, changing nothing', async () => {
      await rejects(getObservations(toolContext(engine, scope), { ids: [ids.observationIds[0], 987654], source: 'observation' }), 'not_found');
      await rejects(getObservations(toolContext(engine, scope), { ids: [ids.otherId], source: 'observation' }), 'not_found');
      await rejects(getObservations(toolContext(engine, scope), { ids: [ids.memoryId], project: other.project }), 'not_found');
      await rejects(getObservations(toolContext(engine, scope), { ids: [1], source: 'secrets' }), 'invalid_source');
      for (const bad of [["1 OR 1=1"], [-1], [1.5], 'x', [Number.MAX_SAFE_INTEGER + 2]]) {
        await rejects(getObservations(toolContext(engine, scope), { ids: bad }), 'invalid_arguments');
      }
      const [foreign] = await engine.getObservations([ids.otherId], other);
      assert.equal(foreign.last_accessed_epoch, null, 'a failed call touched another project');
      const result = await getObservationsTool.run(toolContext(engine, scope), { ids: [424242], source: 'session_summary' });
      assert.equal(result.isError, true);
      assert.equal(result.structured, undefined);
    });
  });

  describe('recall', () => {
    it('returns L0 node ids nearest first, scoped, with the filter AND-ed', async () => {
      const out = await recall(toolContext(engine, scope), { text: 'vector store LanceDB', k: 10 });
      recallOutput.parse(out);
      assert.ok(out.nodes.length >= 1);
      const distances = out.nodes.map((n) => n.distance);
      assert.deepEqual(distances, [...distances].sort((a, b) => a - b));
      for (const n of out.nodes) {
        const node = await engine.getNode(n.node_id, scope);
        assert.ok(node, 'recall returned a node outside the scope');
        assert.equal(node.cell.layer, 'L0');
      }
      const filtered = await recall(toolContext(engine, scope), { text: 'vector store LanceDB', filter: { type: 'read' } });
      for (const n of filtered.nodes) assert.equal((await engine.getNode(n.node_id, scope))?.cell.type, 'read');
      assert.deepEqual(await recall(toolContext(engine, scope), { text: 'LanceDB', filter: { layer: 'L2' } }), { nodes: [] });
      const k1 = await recall(toolContext(engine, scope), { text: 'LanceDB', k: 1 });
      assert.equal(k1.nodes.length, 1);
    });

    it('rejects hostile filters as invalid arguments', async () => {
      for (const filter of [{ type: "edit' OR '1'='1" }, { branch: 'y'.repeat(600) }, { files: ['a\u0000b'] }, { project: 'github.com/evil/other' }, { branch: 1 }, { commit_sha: "abc' OR 1=1 --" }, { since_epoch: -5 }]) {
        await rejects(recall(toolContext(engine, scope), { text: 'LanceDB', filter }), 'invalid_arguments');
      }
      // A quote inside an allowed value is data, not SQL: it matches nothing instead of everything.
      const quoted = await recall(toolContext(engine, scope), { text: 'LanceDB', filter: { branch: "main' OR '1'='1" } });
      assert.deepEqual(quoted.nodes, []);
      await rejects(recall(toolContext(engine, scope), { text: 'x', k: 0 }), 'invalid_arguments');
      // The contract sets no upper bound on k: a large one is served, capped, not refused.
      const many = await recall(toolContext(engine, scope), { text: 'LanceDB', k: 100_000 });
      assert.ok(many.nodes.length >= 1 && many.nodes.length <= 200, String(many.nodes.length));
      const result = await recallTool.run(toolContext(engine, scope), { text: 'x', extra: true });
      assert.equal(result.isError, true);
      assert.match(result.text, /unknown argument\(s\) 'extra'/);
    });
  });

  describe('retrieve_memory', () => {
    it('returns the full structuredContent and a markdown report, and logs the call', async () => {
      const out = await retrieveMemory(toolContext(engine, scope), { prompt: 'Why did we switch the vector store to LanceDB?', session_id: 'thread-1' });
      retrieveMemoryOutput.parse(out);
      assert.equal(out.status, 'ok');
      assert.equal(out.memory_ready, true);
      assert.equal(out.triage?.decision, 'retrieve');
      assert.ok(out.retrieval && out.retrieval.facts.length > 0);
      assert.ok(out.retrieval.facts.some((f) => /LanceDB/.test(f.statement)));
      for (const f of out.retrieval.facts) {
        assert.ok(f.relevance_score >= 0 && f.relevance_score <= 1);
        assert.match(f.source_path, /^(observation|session_summary|memory)\/\d+$/);
      }
      assert.equal(out.retrieval.total_items, out.retrieval.facts.length);
      assert.ok(out.phase1 && out.phase1.targeted_sections.length > 0);
      assert.ok(out.diagnostics && /^[0-9a-f-]{36}$/.test(out.diagnostics.request_id));
      assert.match(out.content_text ?? '', /## Relevant Facts\n\n- \[\d+%\] \*\*/);
      assert.match(out.content_text ?? '', /\n---\n\*Retrieved \d+ items \| Avg relevance: \d+% \| Coverage: \w+\*$/);
      assert.ok(!(out.content_text ?? '').includes('Secret plans'));
      const log = await engine.listRequests(scope, 10);
      const entry = log.find((e) => e.request_id === out.diagnostics?.request_id);
      assert.ok(entry, 'the call is not in the request log');
      assert.equal(entry.tool, 'retrieve_memory');
      assert.match(entry.arguments, /switch the vector store/);
    });

    it('keeps the session prompts and rewrites a follow-up with them', async () => {
      const ctx = toolContext(engine, scope);
      await retrieveMemory(ctx, { prompt: 'How does the HTTP client retry failed requests?', session_id: 'thread-2' });
      const out = await retrieveMemory(ctx, { prompt: 'and why was that chosen?', session_id: 'thread-2' });
      assert.match(out.triage?.rewritten_query ?? '', /follow-up to: How does the HTTP client retry/);
      assert.ok(out.retrieval?.facts.some((f) => /retry/i.test(f.statement)), JSON.stringify(out.retrieval?.facts));
      // The newest prompt comes first, as the README says.
      await retrieveMemory(ctx, { prompt: 'Which vector store did we pick?', session_id: 'thread-3' });
      await retrieveMemory(ctx, { prompt: 'How are tokens counted?', session_id: 'thread-3' });
      const third = await retrieveMemory(ctx, { prompt: 'and why?', session_id: 'thread-3' });
      assert.equal(third.triage?.rewritten_query, 'and why? (follow-up to: How are tokens counted? / Which vector store did we pick?)');
      for (let i = 0; i < 6; i++) await retrieveMemory(ctx, { prompt: `question ${i} about LanceDB`, session_id: 'thread-2' });
      const kept = await engine.recentPrompts(scope, 'thread-2', 10);
      assert.equal(kept.length, 5);
      assert.equal(kept[0], 'question 5 about LanceDB');
      // Omitted session_id: the transport's session id is used.
      await retrieveMemory(toolContext(engine, scope, { transportSessionId: 'mcp-session-x' }), { prompt: 'LanceDB store' });
      assert.deepEqual(await engine.recentPrompts(scope, 'mcp-session-x', 3), ['LanceDB store']);
    });

    it('skips small talk', async () => {
      const out = await retrieveMemory(toolContext(engine, scope), { prompt: 'thanks!' });
      assert.equal(out.status, 'ok');
      assert.equal(out.triage?.decision, 'skip');
      assert.equal(out.retrieval?.total_items, 0);
    });

    it('answers invalid_arguments for any other argument or a prompt over 8,000 characters, and logs it', async () => {
      const cases = [{ prompt: 'x', top_k: 5 }, { prompt: 'x'.repeat(8001) }, {}, { prompt: 42 }, { prompt: 'x', session_id: 7 }];
      for (const args of cases) {
        const result = await retrieveMemoryTool.run(toolContext(engine, scope), args);
        assert.equal(result.isError, true);
        const sc = retrieveMemoryOutput.parse(result.structured);
        assert.equal(sc.status, 'error');
        assert.equal(sc.error_code, 'invalid_arguments');
        assert.ok(sc.error_message && sc.error_message.length > 10);
      }
      assert.match(String((await retrieveMemoryTool.run(toolContext(engine, scope), { prompt: 'x', top_k: 5 })).structured?.error_message), /'top_k'/);
      const log = await engine.listRequests(scope, 100);
      assert.ok(log.some((e) => e.status === 'error' && e.arguments.includes('top_k')));
    });

    it('ends with retrieval_timeout when the budget runs out', async () => {
      const slow = Object.create(engine, { search: { value: (t: string, o: never) => new Promise((r) => setTimeout(() => r(engine.search(t, o)), 200)) } }) as MemoryEngine;
      const out = await retrieveMemory(toolContext(slow, scope, { retrieveTimeoutMs: 20 }), { prompt: 'LanceDB vector store' });
      assert.equal(out.status, 'error');
      assert.equal(out.error_code, 'retrieval_timeout');
    });
  });

  describe('triage', () => {
    it('rewrites only follow-ups, from at most the last 3 prompts', () => {
      assert.equal(triage('Explain the import wizard CSV parser', ['a']).rewritten_query, 'Explain the import wizard CSV parser');
      const t = triage('why that?', ['p4', 'p3', 'p2', 'p1']);
      assert.equal(t.rewritten_query, 'why that? (follow-up to: p4 / p3 / p2)');
      assert.equal(triage('why that?', []).rewritten_query, 'why that?');
      assert.equal(triage('hello', []).decision, 'skip');
    });
  });

  describe('remember and observe', () => {
    it('store a memory and observations in the caller scope, and reject unknown fields', async () => {
      const ctx = toolContext(engine, scope);
      const m = await rememberTool.run(ctx, { title: 'Convention: tabs', text: 'We indent with two spaces, never tabs.', memory_type: 'convention' });
      assert.equal(m.isError, false);
      const memoryId = (m.structured as { id: number }).id;
      assert.equal((await engine.getMemories([memoryId], scope))[0].memory_type, 'convention');
      assert.equal((await engine.getMemories([memoryId], other)).length, 0);
      const o = await observeTool.run(ctx, { observations: [{ type: 'note', title: 'Benchmarks run under a lock' }] });
      assert.equal(o.isError, false);
      assert.equal((o.structured as { stored: number }).stored, 1);
      const before = (await engine.stats(scope)).observations;
      const bad = await observeTool.run(ctx, { observations: [{ type: 'note', title: 'ok' }, { type: 'note', project: 'github.com/evil/other' }] });
      assert.equal(bad.isError, true);
      assert.equal((await engine.stats(scope)).observations, before);
    });
  });
});
