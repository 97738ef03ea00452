// The tools against their contract pages: unicode and odd text, ids across tools, recall as a
// k-nearest read, and get_observations when an access update fails.
import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import { OTHER, SCOPE, httpToolHarness } from './httpToolHarness';
import { seed } from './mcpFixture';

describe('contract: odd text and ids across tools', function () {
  this.timeout(180_000);
  const h = httpToolHarness({
    fill: async (engine) => {
      await seed(engine, SCOPE, OTHER);
      await engine.observe(
        [
          { type: 'edit', title: 'Pipe | in title\nand a newline', narrative: 'Wombat pipeline handles the pipe character.', files_modified: ['src/we|ird\nname.ts'] },
          { type: 'note', title: 'Ünïcödé résumé 日本語 🎉👩‍👩‍👧', narrative: 'Wombat unicode résumé handling with עברית and العربية text.', facts: ['naïve ✓', '日本'], concepts: ['ünï'] },
        ],
        SCOPE,
      );
      await engine.flush();
    },
  });
  const { call } = h;

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

  it('remember and observe count their text limits in characters (code points), as the README says', async () => {
    // 300 emoji are 300 characters, and 600 UTF-16 units.
    const title = '\u{1F600}'.repeat(300);
    const r = await call('remember', { title, text: 'Emoji titles are fine.', branch: '\u{1F600}'.repeat(256) });
    assert.equal(r.isError, false, r.content[0].text);
    assert.equal(r.structuredContent?.title, title);
    const over = await call('remember', { title: `${title}\u{1F600}`, text: 'One emoji too many.' });
    assert.equal(over.isError, true);
    assert.match(over.content[0].text!, /^invalid_arguments: title: .*<=300 characters/);
    const o = await call('observe', { observations: [{ type: 'note', title: '\u{1F600}'.repeat(500), narrative: '\u{1F600}'.repeat(20000) }] });
    assert.equal(o.isError, false, o.content[0].text);
  });

  it('get_observations\' project and recall\'s filter.branch, session_id and files count their 512-character limits in characters', async () => {
    // 300 emoji: 300 characters, 600 UTF-16 units; 513 are one too many.
    const within = '\u{1F600}'.repeat(300);
    const over = '\u{1F600}'.repeat(513);
    const g = await call('get_observations', { ids: [], source: 'observation', project: within });
    assert.equal(g.isError, false, g.content[0].text);
    const gOver = await call('get_observations', { ids: [], source: 'observation', project: over });
    assert.match(gOver.content[0].text!, /^invalid_arguments: project: .*<=512 characters/);
    const r = await call('recall', { text: 'wombat', filter: { branch: within, session_id: within, files: [within] } });
    assert.equal(r.isError, false, r.content[0].text);
    assert.deepEqual(r.structuredContent, { nodes: [] });
    for (const filter of [{ branch: over }, { session_id: over }, { files: [over] }]) {
      const rOver = await call('recall', { text: 'wombat', filter });
      assert.match(rOver.content[0].text!, /^invalid_arguments: filter\.(branch|session_id|files\.0): .*<=512 characters/, JSON.stringify(Object.keys(filter)));
    }
    // The other refusals of a filter key stay.
    const nul = await call('recall', { text: 'wombat', filter: { branch: 'a\u0000b' } });
    assert.match(nul.content[0].text!, /^invalid_arguments: filter\.branch: may not contain NUL/);
  });
});

describe('contract: recall is a k-nearest-neighbour read', function () {
  this.timeout(180_000);
  const h = httpToolHarness({
    fill: async (engine) => {
      await engine.observe(Array.from({ length: 12 }, (_, i) => ({ type: 'note', title: `Gardening note ${i}`, narrative: `Tomatoes need water number ${i}.` })), SCOPE);
      await engine.flush();
    },
  });
  const { call } = h;

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
  let seeded: Awaited<ReturnType<typeof seed>>;
  const h = httpToolHarness({
    fill: async (engine) => {
      seeded = await seed(engine, SCOPE, OTHER);
    },
    // The engine as the tools see it, with every access update failing.
    serve: (engine) =>
      Object.create(engine, {
        touch: {
          value: async () => {
            throw new Error('simulated access update failure');
          },
        },
      }) as MemoryEngine,
  });
  const { call } = h;

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
    const session = await h.engine.currentSessionId(SCOPE);
    await h.engine.observe([{ type: 'note', title: 'Decision', narrative: 'We decided to use async iterators instead of arrays.' }], SCOPE);
    const summary = await h.engine.endSession(SCOPE, session, 'request');
    assert.ok(summary);
    const r = await call('get_observations', { ids: [summary.id], source: 'session_summary' });
    assert.equal(r.isError, false, r.content[0].text);
  });
});
