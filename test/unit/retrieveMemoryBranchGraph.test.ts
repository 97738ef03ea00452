// retrieve_memory's graph (entities, relationships) for a caller scoped to a branch (`serve
// --branch`, `mcp --branch`): the stored graph spans the project's branches, so the graph shown
// there is derived from the observations the caller reads. Another branch's commit, its title,
// author and branch never appear; this branch's do, with their edges.
import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { findTool } from '../../src/core/tools/registry';
import { openTestEngine, removeDir, toolContext } from './mcpFixture';

const TWO = 'feedface0000feedface0000feedface0000feed';
const ONE = 'abcabc0000abcabc0000abcabc0000abcabc0000';

describe('retrieve_memory graph on a branch scope', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  before(async () => {
    ({ engine, dir } = await openTestEngine());
    await engine.observe([{ type: 'commit', title: 'Zanzibarite rewrite on two', narrative: 'author: Trudy Twobranch\nrewrote the shared module', files_modified: ['src/shared.ts', 'src/two_only.ts'], concepts: ['zanzibar'], commit_sha: TWO, branch: 'two' }], { project: 'p' });
    await engine.observe([{ type: 'commit', title: 'Shared module tidy on one', narrative: 'author: Olga Onebranch\ntidied the shared module', files_modified: ['src/shared.ts', 'src/one_only.ts'], commit_sha: ONE, branch: 'one' }], { project: 'p' });
    await engine.flush();
  });
  after(async () => {
    await engine?.close();
    removeDir(dir);
  });

  async function graph(scope: Scope): Promise<{ text: string; entities: Array<{ label: string }>; relationships: Array<{ source: string; target: string; type: string }> }> {
    const r = await findTool('retrieve_memory')!.run(toolContext(engine, scope), { prompt: 'shared module tidy src/shared.ts' });
    const s = r.structured as { retrieval: { facts: unknown[]; entities: Array<{ label: string }>; relationships: Array<{ source: string; target: string; type: string }> } };
    assert.ok(s.retrieval.facts.length > 0, r.text);
    return { text: JSON.stringify(r.structured), entities: s.retrieval.entities, relationships: s.retrieval.relationships };
  }

  it("a caller on branch 'one' gets none of branch 'two' (its commit, title, author, files, concepts, branch)", async () => {
    const { text, entities, relationships } = await graph({ project: 'p', branch: 'one' });
    for (const leak of ['Zanzibarite', 'Trudy', TWO.slice(0, 12), 'two_only', 'zanzibar', 'branch:two']) assert.ok(!text.includes(leak), `${leak} in ${JSON.stringify({ entities, relationships })}`);
    // Its own graph is there: its commit modified the shared file, and is on its branch.
    const labels = new Set(entities.map((e) => e.label));
    for (const label of [ONE.slice(0, 12), 'src/shared.ts', 'src/one_only.ts']) assert.ok(labels.has(label), `${label} missing from ${[...labels].join(', ')}`);
    assert.ok(relationships.some((r) => r.source === ONE.slice(0, 12) && r.target === 'src/shared.ts' && r.type === 'modified'), JSON.stringify(relationships));
    for (const r of relationships) assert.ok(labels.has(r.source) && labels.has(r.target), `edge ${r.source} -> ${r.target} joins an entity not listed`);
  });

  it('a caller of the whole project still gets the stored graph of every branch', async () => {
    const { entities } = await graph({ project: 'p' });
    const labels = new Set(entities.map((e) => e.label));
    for (const label of [ONE.slice(0, 12), TWO.slice(0, 12), 'src/shared.ts']) assert.ok(labels.has(label), `${label} missing from ${[...labels].join(', ')}`);
  });
});
