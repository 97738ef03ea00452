// Memories that stay true when a successor is suppressed (README "Memories that stay true",
// Suppress in the Memories view): a memory is never told "superseded by memory B" while B is
// hidden from every reader. Suppressing B makes what B replaced hold again (or history of the
// next memory that holds, in a chain A -> B -> C), as forgetting B would; Unsuppress gives B back
// as it was, retiring again what it replaced; a memory superseded while (or before being)
// suppressed comes back as history, never as current.

import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Memory, Scope } from '../../src/core/model/records';
import { getObservations } from '../../src/core/tools/getObservations';
import { recallContext } from '../../src/core/tools/recallContext';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow, registerQuietCommands } from './extensionWindow';
import { openTestEngine, removeDir, scopeMaker, storedMemory, toolContext } from './mcpFixture';
import { withVscodeStub } from './vscodeStub';

const memory = storedMemory;
const factStates = (m: Memory): string[] => (m.temporal_facts ?? []).map((f) => f.status);

/** The bracketed marks recall_context prints after memory `id`'s head line, or null when it is not in the pack. */
async function markOf(engine: MemoryEngine, scope: Scope, query: string, id: number): Promise<string | null> {
  const out = await recallContext(toolContext(engine, scope), { query });
  if (!out.items.some((i) => i.source_kind === 'memory' && i.source_id === id)) return null;
  return new RegExp(`\\(memory ${id}, [^)]*\\)( \\[[^\\n]*\\])?`).exec(out.text)?.[1] ?? '';
}

describe('a suppressed successor: what it replaced is not history of a memory nobody can read (real engine)', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  const fresh = scopeMaker('suppressed-successor');

  before(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  const remember = (scope: Scope, text: string): Promise<Memory> => engine.remember({ memory_type: 'decision', title: 'Session cache', text, topic_key: 'cache' }, scope);

  it('A superseded by B, B suppressed: A holds again for every tool (status, facts, no HISTORY mark naming B)', async () => {
    const scope = fresh();
    const ctx = toolContext(engine, scope);
    const a = await remember(scope, 'We use Memcached for the session cache');
    const b = await remember(scope, 'We moved the session cache to Redis');
    assert.equal((await memory(engine, scope, a.id)).superseded_by, b.id, 'control: A is history of B');
    await engine.setStatus('memory', b.id, 'suppressed', scope);

    const a2 = await memory(engine, scope, a.id);
    assert.equal(a2.status, 'active');
    assert.equal(a2.superseded_by, null);
    assert.equal(a2.valid_to_epoch, null);
    assert.deepEqual(factStates(a2), ['current']);
    const [detail] = (await getObservations(ctx, { ids: [a.id] })).details;
    assert.equal((detail as { status: string }).status, 'active');
    await assert.rejects(getObservations(ctx, { ids: [b.id] }), /not_found|suppressed|No memory/i, 'control: B is hidden');
    // What holds now, and for a history question: A is current, never "superseded by memory B".
    assert.equal(await markOf(engine, scope, 'which session cache do we use', a.id), '');
    const past = await markOf(engine, scope, 'what did we use before for the session cache', a.id);
    assert.ok(past !== null && !/HISTORY|superseded by memory/.test(past), String(past));
    const facts = (await retrieveMemory(ctx, { prompt: 'what did we use before for the session cache' })).retrieval!.facts;
    assert.ok(!facts.some((f) => new RegExp(`superseded by memory ${b.id}\\b`).test(f.statement)), JSON.stringify(facts));
    // The sidebar's list (Memories view) says the same.
    const listed = (await engine.listMemories(scope)).find((m) => m.id === a.id);
    assert.equal(listed?.status, 'active');
  });

  it('B unsuppressed: it is current again and A history of it, as before', async () => {
    const scope = fresh();
    const a = await remember(scope, 'We use Memcached for the session cache');
    const b = await remember(scope, 'We moved the session cache to Redis');
    await engine.setStatus('memory', b.id, 'suppressed', scope);
    await engine.setStatus('memory', b.id, 'active', scope);
    const [a2, b2] = [await memory(engine, scope, a.id), await memory(engine, scope, b.id)];
    assert.equal(b2.status, 'active');
    assert.equal(a2.status, 'superseded');
    assert.equal(a2.superseded_by, b.id);
    assert.deepEqual(factStates(a2), ['closed']);
    assert.deepEqual(b2.supersedes, [a.id]);
    assert.equal(await markOf(engine, scope, 'which session cache do we use', a.id), null);
  });

  it('A -> B -> C, B suppressed: A is history of C (a memory it can read); B back, the chain is as it was', async () => {
    const scope = fresh();
    const a = await remember(scope, 'We use Memcached for the session cache');
    const b = await remember(scope, 'We moved the session cache to Redis');
    const c = await remember(scope, 'We moved the session cache to Valkey');
    await engine.setStatus('memory', b.id, 'suppressed', scope);
    const a2 = await memory(engine, scope, a.id);
    assert.equal(a2.status, 'superseded');
    assert.equal(a2.superseded_by, c.id);
    const mark = await markOf(engine, scope, 'what did we use before for the session cache', a.id);
    assert.match(String(mark), new RegExp(`HISTORY: superseded by memory ${c.id} `));
    await engine.setStatus('memory', b.id, 'active', scope);
    const b2 = await memory(engine, scope, b.id);
    assert.equal(b2.status, 'superseded', 'B was superseded by C before it was suppressed');
    assert.equal(b2.superseded_by, c.id);
    // The chain is as it was: A history of B, B of C; forgetting C then leaves B alone current.
    assert.equal((await memory(engine, scope, a.id)).superseded_by, b.id);
    await engine.forget({ kind: 'memory', ids: [c.id] }, scope);
    const current = (await engine.listMemories(scope)).filter((m) => m.status === 'active').map((m) => m.id);
    assert.deepEqual(current, [b.id]);
  });

  it('A -> B -> C, B suppressed and back: C lists B alone in supersedes again, not A (history of B again)', async () => {
    const scope = fresh();
    const a = await remember(scope, 'We use Memcached for the session cache');
    const b = await remember(scope, 'We moved the session cache to Redis');
    const c = await remember(scope, 'We moved the session cache to Valkey');
    await engine.setStatus('memory', b.id, 'suppressed', scope);
    assert.deepEqual([...((await memory(engine, scope, c.id)).supersedes ?? [])].sort((x, y) => x - y), [a.id, b.id], 'control: A relinked to C');
    await engine.setStatus('memory', b.id, 'active', scope);
    assert.equal((await memory(engine, scope, a.id)).superseded_by, b.id);
    assert.deepEqual((await memory(engine, scope, c.id)).supersedes, [b.id]);
  });

  it('a superseded memory suppressed then unsuppressed comes back as history, not as current', async () => {
    const scope = fresh();
    const a = await remember(scope, 'We use Memcached for the session cache');
    const b = await remember(scope, 'We moved the session cache to Redis');
    await engine.setStatus('memory', a.id, 'suppressed', scope);
    await engine.setStatus('memory', a.id, 'active', scope);
    const a2 = await memory(engine, scope, a.id);
    assert.equal(a2.status, 'superseded');
    assert.equal(a2.superseded_by, b.id);
    assert.equal(await markOf(engine, scope, 'which session cache do we use', a.id), null);
  });

  it('a memory of the topic suppressed while a newer one was written comes back as history of it, not current next to it', async () => {
    const scope = fresh();
    const a = await remember(scope, 'We use Memcached for the session cache');
    await engine.setStatus('memory', a.id, 'suppressed', scope);
    const b = await remember(scope, 'We moved the session cache to Redis');
    assert.equal((await memory(engine, scope, a.id)).status, 'suppressed', 'control');
    await engine.setStatus('memory', a.id, 'active', scope);
    const a2 = await memory(engine, scope, a.id);
    assert.equal(a2.status, 'superseded');
    assert.equal((await memory(engine, scope, b.id)).status, 'active');
  });
});

describe('a suppressed successor in the Memories view (Suppress run as VS Code runs it, real engine)', function () {
  this.timeout(60_000);
  let w: TwoProjectWindow;
  let run: (id: string, ...args: unknown[]) => Promise<Any>;
  before(async () => {
    w = await openTwoProjectWindow();
    run = registerQuietCommands(w);
  });
  after(() => w.close());

  /** Each memory the view lists, by label, with how it stands. */
  async function listed(): Promise<Map<string, string>> {
    const view = withVscodeStub(w.stub, () => new w.mods.memoriesView.MemoriesView(w.engines, w.scopes));
    const tree = await view.snapshot();
    view.dispose();
    const out = new Map<string, string>();
    const walk = (nodes: Any[]): void => nodes.forEach((n) => (n.id?.includes('memory:') && out.set(n.label, String(n.description)), walk(n.children)));
    walk(tree);
    return out;
  }

  it('A superseded by B, B suppressed from the view: A is listed as current, not as history of a memory not shown', async () => {
    const a = await w.engine.remember({ memory_type: 'decision', title: 'Memcached cache', text: 'We use Memcached for the session cache', topic_key: 'cache' }, w.alpha);
    const b = await w.engine.remember({ memory_type: 'decision', title: 'Redis cache', text: 'We moved the session cache to Redis', topic_key: 'cache' }, w.alpha);
    assert.match(String((await listed()).get('Memcached cache')), /^history/, 'control: A is history under B');
    await run('codeMemory.suppress', { kind: 'memory', id: b.id, scope: w.alpha });
    const after = await listed();
    assert.equal(after.has('Redis cache'), false, 'control: B is not shown');
    assert.match(String(after.get('Memcached cache')), /^current/);
    assert.equal((await w.engine.getMemories([a.id], w.alpha))[0].superseded_by, null);
  });
});
