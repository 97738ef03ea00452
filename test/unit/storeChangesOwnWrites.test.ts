// The window's own writes (StoreChanges.own) hide only the commits they made themselves: another
// process's write, or a write of this engine the window did not ask for (an agent's through the
// MCP server), that commits while one of the window's own writes runs is still a change, so the
// window's views are brought up to date (captures run every couple of seconds: such a write
// otherwise went unseen until the next change from elsewhere). Real engines on one store on disk;
// the other process is a real one.
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { MemoryEngine } from '../../src/core/engine';
import { StoreChanges } from '../../src/extension/engineWorker/storeChanges';
import { removeDir, tempDir } from './mcpFixture';

const WRITER = path.join(__dirname, 'fixtures', 'storeWriter.ts');
const TSX = require.resolve('tsx/cli');
const scope = { project: 'shared/project', branch: 'main' };

/** Another process observes `count` notes into the store (project shared/project). */
async function otherProcessObserves(dir: string, tag: string, count = 1): Promise<void> {
  await promisify(execFile)(process.execPath, [TSX, WRITER, dir, String(count), tag], { env: { ...process.env, LANCEDB_LOG: 'error' } });
}

describe('store changes: what commits during the window\'s own write is still a change', function () {
  this.timeout(180_000);
  let dir: string;
  let engine: MemoryEngine;
  let changes: StoreChanges;

  beforeEach(async () => {
    dir = tempDir('own-writes');
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    changes = StoreChanges.of(engine.store);
    assert.equal(await changes.changed(), false, 'the first look only takes note');
  });
  afterEach(async () => {
    await engine.close();
    removeDir(dir);
  });

  it('own writes alone are no change', async () => {
    await changes.own(() => engine.remember({ title: 'kept by this window', text: 'kept by this window' }, scope));
    await changes.own(() => engine.observe([{ type: 'note', title: 'seen in this window', narrative: 'seen here' }], scope));
    await changes.own(() => engine.capture([{ type: 'note', title: 'captured in this window', narrative: 'captured here', created_at_epoch: Date.now() }], scope));
    engine.enqueue({ type: 'note', title: 'queued in this window', narrative: 'queued here' }, scope);
    await changes.own(() => engine.flush());
    // Own writes at once take each other's commits as the window's.
    await Promise.all([1, 2, 3].map((n) => changes.own(() => engine.remember({ title: `kept ${n}`, text: `kept by this window, ${n}` }, scope))));
    assert.equal(await changes.changed(), false);
  });

  it("another process's observe while the window remembers is a change", async () => {
    await changes.own(async () => {
      await engine.remember({ title: 'kept by this window', text: 'kept by this window' }, scope);
      await otherProcessObserves(dir, 'elsewhere');
    });
    assert.equal(await changes.changed(), true);
  });

  it("another process's observe while the window observes too (one table, both writing) is a change", async () => {
    await changes.own(async () => {
      await engine.observe([{ type: 'note', title: 'seen in this window', narrative: 'seen here' }], scope);
      await otherProcessObserves(dir, 'elsewhere');
      await engine.observe([{ type: 'note', title: 'seen in this window again', narrative: 'seen here again' }], scope);
    });
    assert.equal(await changes.changed(), true);
  });

  it("this engine's write the window did not ask for, made while an own write runs, is a change", async () => {
    // An agent's remember through the MCP server: begun outside the window's write, it commits while that runs.
    let begin: () => void = () => undefined;
    const agent = new Promise<void>((resolve) => (begin = resolve)).then(() => engine.remember({ title: 'an agent said', text: 'an agent said so' }, scope));
    await changes.own(async () => {
      await engine.observe([{ type: 'note', title: 'seen in this window', narrative: 'seen here' }], scope);
      begin();
      await agent;
    });
    assert.equal(await changes.changed(), true);
  });
});
