// A suppressed memory is hidden from search (reversibly): a decision about files is an entity of
// the graph labelled with its title, and retrieve_memory's entities and relationships must not
// show it while it is suppressed, for a caller of the whole project (the stored graph) as for
// one on a branch (the graph derived from what it reads). Unsuppressed, it shows again.
import { strict as assert } from 'node:assert';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { findTool } from '../../src/core/tools/registry';
import { removeDir, tempDir, toolContext } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const P: Scope = { project: 'github.com/acme/graph-suppressed' };
const SHA = 'abcdef012345abcdef012345abcdef012345abcd';

describe('the graph of a suppressed memory', function () {
  this.timeout(120_000);
  let dir: string;
  let engine: MemoryEngine;
  let memoryId: number;
  before(async () => {
    dir = tempDir('graph-suppressed');
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, summariseOrphanSessions: false });
    await engine.observe([{ type: 'edit', title: 'Tuned the quasar pool size', narrative: 'quasar pool tuning in the pool module', files_modified: ['src/quasar/pool.ts'], commit_sha: SHA, branch: 'main' }], P);
    memoryId = (await engine.remember({ title: 'Decision: Vexillium pool policy', text: 'We keep the pool at 8.', memory_type: 'decision', files: ['src/quasar/pool.ts'] }, P)).id;
    await engine.flush();
    await engine.drainGraph();
  });
  after(async () => {
    await engine?.close();
    removeDir(dir);
  });

  async function graph(scope: Scope): Promise<{ text: string; labels: string[]; relationships: Array<{ source: string; target: string; type: string }> }> {
    const r = await findTool('retrieve_memory')!.run(toolContext(engine, scope), { prompt: 'quasar pool tuning' });
    const s = r.structured as { retrieval: { facts: unknown[]; entities: Array<{ label: string }>; relationships: Array<{ source: string; target: string; type: string }> } };
    assert.ok(s.retrieval.facts.length > 0, r.text);
    return { text: `${r.text}${JSON.stringify(r.structured)}`, labels: s.retrieval.entities.map((e) => e.label), relationships: s.retrieval.relationships };
  }

  for (const scope of [P, { ...P, branch: 'main' }]) {
    const who = scope.branch ? 'a caller on a branch' : 'a caller of the whole project';
    it(`${who}: the decision shows while current, not while suppressed, and again once unsuppressed`, async () => {
      const shown = await graph(scope);
      assert.ok(shown.relationships.some((r) => r.source === 'Decision: Vexillium pool policy' && r.target === 'src/quasar/pool.ts' && r.type === 'decided'), JSON.stringify(shown.relationships));
      await engine.setStatus('memory', memoryId, 'suppressed', P);
      try {
        const hidden = await graph(scope);
        assert.ok(!hidden.text.includes('Vexillium'), JSON.stringify(hidden.relationships));
        // The rest of the graph stays: the commit modified the file.
        assert.ok(hidden.relationships.some((r) => r.source === SHA.slice(0, 12) && r.target === 'src/quasar/pool.ts' && r.type === 'modified'), JSON.stringify(hidden.relationships));
        for (const r of hidden.relationships) assert.ok(hidden.labels.includes(r.source) && hidden.labels.includes(r.target), `edge ${r.source} -> ${r.target} joins an entity not listed`);
      } finally {
        await engine.setStatus('memory', memoryId, 'active', P);
      }
      assert.ok((await graph(scope)).text.includes('Vexillium'), 'unsuppressed, the decision shows again');
    });
  }
});
