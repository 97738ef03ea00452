// The graph after a forget: a forget run by another process (the CLI, another window) leaves this
// process's graph cache (known entities, edge weights) naming what it removed, so the next
// observation of the same files must count afresh; and a kept decision memory's edge to a file
// goes with the memory, not with the forgotten observations that touched the file.
import { strict as assert } from 'node:assert';
import * as lancedb from '@lancedb/lancedb';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import { removeDir, tempDir } from './mcpFixture';

const P = { project: 'acme/graphprobe', branch: 'main' };

describe('the graph after a forget', function () {
  this.timeout(180_000);
  let dir: string;
  const engines: MemoryEngine[] = [];
  beforeEach(() => {
    dir = tempDir('forget-graph');
  });
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.close().catch(() => undefined);
    removeDir(dir);
  });
  async function open(): Promise<MemoryEngine> {
    const e = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, batchDelayMs: 20, summariseOrphanSessions: false, lexiconMinDelta: 1 });
    engines.push(e);
    return e;
  }
  const input = (title: string) => ({
    type: 'edit',
    title,
    narrative: `${title} narrative`,
    files_modified: ['src/zorbpath/alpha.ts', 'src/zorbpath/beta.ts'],
    concepts: ['zorbconcept'],
    branch: 'main',
  });

  for (const how of ['by id', 'of the whole project'] as const) {
    it(`after another engine forgets ${how}, this engine's next observation on the same files has its entities and weights counted afresh`, async () => {
      const x = await open();
      const [first] = await x.observe([input('first edit of the zorb files')], P);
      await x.drainGraph();
      const before = await x.entities(P, ['src/zorbpath/alpha.ts']);
      assert.equal(before.entities.length, 1, 'control: the entity is written');
      const y = await open();
      if (how === 'by id') await y.forget({ kind: 'observation', ids: [first.id] }, P);
      else await y.forget({ project: P.project }, P);
      const gone = await y.entities(P, ['src/zorbpath/alpha.ts']);
      assert.equal(gone.entities.length, 0, 'control: the forget removed the entity');
      await x.observe([input('second edit of the zorb files')], P);
      await x.drainGraph();
      const db = await lancedb.connect(dir);
      const ents = (await (await db.openTable('entities')).query().where(`project = '${P.project}'`).toArray()).map((r) => String(r.id));
      const rels = (await (await db.openTable('relationships')).query().where(`project = '${P.project}'`).toArray()).map((r) => `${r.source}->${r.target}:${r.type}=${Number(r.weight)}`);
      db.close();
      assert.deepEqual(
        { entities: ents.filter((x) => x.includes('zorbpath/alpha')).length, weights: rels.filter((r) => !r.endsWith('=1')) },
        { entities: 1, weights: [] },
        `entities ${JSON.stringify(ents)}; relationships ${JSON.stringify(rels)}`,
      );
    });
  }


  it("forgetting an observation that modified a file keeps a kept decision memory's 'decided' edge to that file", async () => {
    const e = await open();
    const m = await e.remember({ title: 'Decision about the zorb files', text: 'The zorb files keep their layout.', memory_type: 'decision', files: ['src/zorbpath/alpha.ts'] }, P);
    const [o] = await e.observe([input('an edit of the zorb files to forget')], P);
    await e.drainGraph();
    const rels = async (): Promise<string[]> => {
      const db = await lancedb.connect(dir);
      const out = (await (await db.openTable('relationships')).query().where(`project = '${P.project}' AND type = 'decided'`).toArray()).map((r) => `${r.source}->${r.target}`);
      db.close();
      return out;
    };
    assert.deepEqual(await rels(), [`memory:${m.id}->file:src/zorbpath/alpha.ts`], 'control: the decided edge is written');
    await e.forget({ kind: 'observation', ids: [o.id] }, P);
    assert.ok((await e.getMemories([m.id], P)).length === 1, 'the memory is kept');
    assert.deepEqual(await rels(), [`memory:${m.id}->file:src/zorbpath/alpha.ts`], "the kept memory's decided edge was deleted with the forgotten observation's file entity");
  });
});
