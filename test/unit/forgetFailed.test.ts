// A forget that fails part-way (one transient error in its purge) in a process that keeps running
// (the extension, a server): asked again, or at the process's next upkeep, it is finished, so its
// text is in no file, though another process may not finish it while its owner runs.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import { filesContaining } from './diskFixture';
import { REPO_ROOT } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

describe('a forget that failed part-way in a running process', function () {
  this.timeout(300_000);
  let dir: string;
  let engine: MemoryEngine;
  const scope = { project: 'acme/fail' };
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-forget-failed-'));
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
  });
  afterEach(async () => {
    await engine.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function failOnce(): Promise<{ m: string; id: number }> {
    const m = `zqxmarker${randomBytes(4).toString('hex')}`;
    await engine.observe(Array.from({ length: 20 }, (_, i) => ({ type: 'note', title: `ordinary note ${i}`, narrative: `routine item ${i}` })), scope);
    const [o] = await engine.observe([{ type: 'note', title: `${m} title`, narrative: `the ${m} narrative` }], scope);
    await engine.flush();
    await engine.waitForVectors();
    await engine.optimize(0);
    // One transient failure in the purge, after the deletes (a listing that failed once: EMFILE, a network blip on object storage).
    const store = engine.store as unknown as { fragmentsWithDeletions: (...a: unknown[]) => Promise<unknown> };
    const real = store.fragmentsWithDeletions.bind(store);
    let failed = false;
    store.fragmentsWithDeletions = async (...a: unknown[]) => {
      if (!failed) {
        failed = true;
        throw new Error('injected: transient I/O error');
      }
      return real(...a);
    };
    await assert.rejects(engine.forget({ kind: 'observation', ids: [o.id] }, scope), /injected/);
    return { m, id: o.id };
  }

  it('the user tries the same forget again: afterwards its text is in no file', async () => {
    const { m, id } = await failOnce();
    await engine.forget({ kind: 'observation', ids: [id] }, scope);
    await engine.optimize(0);
    await engine.close();
    // (The process is still alive in real life; a close is only needed to read the files here.)
    assert.deepEqual(filesContaining(dir, m), [], 'files still holding the forgotten record after the retried forget');
  });

  it('another process (the CLI) opens the store meanwhile, and leaves it to its owner, whose next upkeep finishes it: its text is in no file', async () => {
    const { m } = await failOnce();
    const env = { ...process.env, LANCEDB_LOG: 'error', CODE_MEMORY_EMBEDDER: 'hashed', CODE_MEMORY_STORE: '', CODE_MEMORY_PROJECT: '' };
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'dist', 'cli.js'), 'stats', '--store', dir, '--project', scope.project], { env, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    // The running engine keeps going: its upkeep runs.
    await engine.optimize(0);
    const leaks = filesContaining(dir, m);
    assert.deepEqual(leaks, [], 'files still holding the forgotten record while the process that failed runs on');
  });
});
