import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';


function tempStore(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'cm-engine-'));
}

describe('MemoryEngine basics', () => {
  let dir: string;
  let engine: MemoryEngine;
  const scope = { project: 'github.com/acme/app', branch: 'main' };

  beforeEach(async () => {
    dir = tempStore();
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0 });
  });
  afterEach(async () => {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('stores observations with ids and finds them by full text at once', async () => {
    const [a, b] = await engine.observe(
      [
        { type: 'edit', title: 'Retry the payment webhook with exponential backoff', files_modified: ['src/payments/webhookRetry.ts'] },
        { type: 'read', title: 'Read the invoice renderer', files_read: ['src/invoices/render.ts'] },
      ],
      scope,
    );
    assert.ok(a.id > 0 && b.id > a.id);
    assert.equal(a.project, scope.project);
    assert.equal(a.branch, 'main');
    const hits = await engine.search('webhook retry backoff', { scope, limit: 5 });
    assert.equal(hits[0].cell.source_id, a.id);
    assert.equal(hits[0].cell.layer, 'L0');
    const [got] = await engine.getObservations([a.id], scope);
    assert.equal(got.title, a.title);
    assert.deepEqual(JSON.parse(got.files_modified ?? '[]'), ['src/payments/webhookRetry.ts']);
    const node = await engine.getNode(hits[0].cell.node_id, scope);
    assert.equal(node?.source.id, a.id);
    assert.equal(await engine.getNode(hits[0].cell.node_id, { project: 'other' }), null);
    const stats = await engine.stats(null);
    assert.equal(stats.observations, 2);
    assert.equal(stats.cells, 2);
    assert.deepEqual(stats.projects, [scope.project]);
  });

  it('keeps projects apart', async () => {
    await engine.observe([{ type: 'note', title: 'zebra migration plan' }], { project: 'p1' });
    await engine.observe([{ type: 'note', title: 'zebra migration plan' }], { project: 'p2' });
    const hits = await engine.search('zebra migration', { scope: { project: 'p1' } });
    assert.equal(hits.length, 1);
    assert.equal(hits[0].cell.project, 'p1');
  });

  it('remembers a memory as an L2 cell', async () => {
    const m = await engine.remember({ title: 'Package manager', text: 'Use pnpm for package management.', memory_type: 'convention' }, scope);
    assert.equal(m.status, 'active');
    const hits = await engine.search('pnpm', { scope, layers: ['L2'] });
    assert.equal(hits[0].cell.source_id, m.id);
    const [got] = await engine.getMemories([m.id], scope);
    assert.equal(got.temporal_facts?.[0].object, 'pnpm');
  });
});
