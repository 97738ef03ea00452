// retrieve_memory's report as its contract page writes it (the literal heading), and its facts
// ranked as their relevance scores say, for a history question too.
import * as assert from 'node:assert/strict';
import { OTHER, SCOPE, httpToolHarness } from './httpToolHarness';
import { seed } from './mcpFixture';

describe('contract: retrieve_memory report and fact ranks', function () {
  this.timeout(180_000);
  const h = httpToolHarness({
    fill: async (engine) => {
      await seed(engine, SCOPE, OTHER);
      await engine.remember({ title: 'Package manager', text: 'We use npm for packages in the monorepo.', memory_type: 'decision', topic_key: 'pkg' }, SCOPE);
      await engine.remember({ title: 'Package manager change', text: 'We switched from npm to pnpm for packages from now on.', memory_type: 'decision', topic_key: 'pkg' }, SCOPE);
      await engine.flush();
    },
  });

  it('content[].text follows the page\'s report layout literally (# Retrieved Company Context, **Query:**, ...)', async () => {
    const r = await h.call('retrieve_memory', { prompt: 'Which vector store did we pick?' });
    const text = r.content[0].text!;
    assert.ok(text.startsWith('# Retrieved Company Context\n\n**Query:** '), text.slice(0, 80));
  });

  it('retrieval.facts are ranked by relevance_score (history question too)', async () => {
    const r = await h.call('retrieve_memory', { prompt: 'What package manager did we use before for packages?' });
    const facts = (r.structuredContent!.retrieval as { facts: Array<{ statement: string; relevance_score: number }> }).facts;
    assert.ok(facts.some((f) => /from npm to pnpm/.test(f.statement)) && facts.some((f) => /We use npm/.test(f.statement)), JSON.stringify(facts));
    const paths = facts.map((f) => f.statement);
    assert.ok(paths.findIndex((f) => /from npm to pnpm/.test(f)) < paths.findIndex((f) => /We use npm/.test(f)), 'what replaced a memory ranks above it');
    for (let i = 1; i < facts.length; i++) assert.ok(facts[i - 1].relevance_score >= facts[i].relevance_score, JSON.stringify(facts.map((f) => f.relevance_score)));
  });
});

describe('contract: get_observations takes any list of ids up to its limit', function () {
  this.timeout(180_000);
  let ids: number[] = [];
  const h = httpToolHarness({
    fill: async (engine) => {
      ids = (await engine.observe([{ type: 'note', title: 'Gardening note one', narrative: 'Tomatoes need water.' }, { type: 'note', title: 'Gardening note two', narrative: 'Basil needs sun.' }], SCOPE)).map((o) => o.id);
      await engine.flush();
    },
  });

  it('an empty list is an empty answer, not an error', async () => {
    const r = await h.call('get_observations', { ids: [] });
    assert.equal(r.isError, false, r.content[0].text?.slice(0, 200));
    assert.deepEqual(r.structuredContent, { details: [] });
  });

  it('an id asked twice is answered twice, in the order asked; a missing one is named once', async () => {
    const r = await h.call('get_observations', { ids: [ids[1], ids[0], ids[1]], source: 'observation' });
    assert.equal(r.isError, false, r.content[0].text?.slice(0, 200));
    assert.deepEqual((r.structuredContent!.details as Array<{ id: number }>).map((d) => d.id), [ids[1], ids[0], ids[1]]);
    const missing = await h.call('get_observations', { ids: [ids[0], 999_999, 999_999], source: 'observation' });
    assert.equal(missing.isError, true);
    assert.match(missing.content[0].text ?? '', /with id 999999 in this scope/);
  });
});
