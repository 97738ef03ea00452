import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { TABLES } from '../../src/core/store/schema';
import { isCommitConflict, retryConflicts } from '../../src/core/store/store';


describe('store: background compaction and pruning', function () {
  this.timeout(300_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-maint-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('compaction and pruning racing a writer never break it or lose a row', async () => {
    const writer = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    const maintainer = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, logger: () => undefined });
    const scope = { project: 'p' };
    let writing = true;
    let rounds = 0;
    const maintenance = (async () => {
      while (writing) {
        await maintainer.optimize(0);
        rounds++;
      }
    })();
    const written: number[] = [];
    for (let b = 0; b < 30; b++) {
      const batch = Array.from({ length: 50 }, (_, i) => ({ type: 'note', title: `batch ${b} item ${i} marmot` }));
      written.push(...(await writer.observe(batch, scope)).map((o) => o.id));
    }
    writing = false;
    await maintenance;
    assert.ok(rounds > 0);
    const ids = (await writer.store.rows(TABLES.observations, null, { select: ['id'] })).map((r) => Number(r.id));
    assert.equal(ids.length, 1500);
    assert.deepEqual(new Set(ids), new Set(written));
    assert.equal(await writer.store.count(TABLES.cells), 1500);
    assert.equal((await writer.search('batch 29 item 49 marmot', { scope, limit: 1 }))[0].cell.title, 'batch 29 item 49 marmot');
    // Pruning left few versions behind.
    await writer.optimize(0);
    const versions = fs.readdirSync(path.join(dir, 'observations.lance', '_versions')).length;
    assert.ok(versions <= 3, `${versions} versions left`);
    await writer.close();
    await maintainer.close();
  });

  it('retries commit conflicts and passes other errors through', async () => {
    let calls = 0;
    const value = await retryConflicts(async () => {
      calls++;
      if (calls < 3) throw new Error('Retryable commit conflict for version 7: This Rewrite transaction was preempted');
      return 'ok';
    });
    assert.equal(value, 'ok');
    assert.equal(calls, 3);
    assert.ok(!isCommitConflict(new Error('Invalid input, No field named nope')));
    let other = 0;
    await assert.rejects(retryConflicts(async () => {
      other++;
      throw new Error('No field named nope');
    }), /nope/);
    assert.equal(other, 1);
  });
});
