// Two processes forgetting at once each keep a journal of their own: one finishing does not erase
// the other's, which the next open finishes if its process crashed.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { TABLES } from '../../src/core/store/schema';
import { filesContaining } from './diskFixture';

process.env.LANCEDB_LOG ??= 'error';

describe('forget journal with two processes', function () {
  this.timeout(120_000);
  let dir: string;
  let engine: MemoryEngine;
  const scope = { project: 'acme/app', branch: 'main' };
  const other = { project: 'acme/other', branch: 'main' };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-probe-forget-'));
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  });
  afterEach(async () => {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a forget in one process does not drop another running process's journal (that process then crashes: its forget is still finished)", async () => {
    const filler = Array.from({ length: 100 }, (_, i) => ({ type: 'note', title: `ordinary note number ${i}`, narrative: `routine work item ${i}` }));
    await engine.observe(filler, scope);
    const [secret] = await engine.observe([{ type: 'decision', title: 'The wombatmigration', narrative: 'We decided to use wombatmigration for the ledger.' }], scope);
    await engine.flush();
    await engine.optimize(0);
    const [mine] = await engine.observe([{ type: 'note', title: 'Other project note', narrative: 'a note in the other project' }], other);
    await engine.flush();
    assert.ok(filesContaining(dir, 'wombatmigration').length > 0, 'control');

    // Process B (still running) journalled its forget of `secret` and deleted the rows; its purge is to come.
    const b = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      const journal = {
        request: { kind: 'observation', ids: [secret.id] },
        scope,
        owner: { pid: b.pid as number, host: os.hostname() },
        closure: { doomed: { observation: [secret.id], session_summary: [], memory: [] }, entities: [], restore: [] },
      };
      await engine.store.setMeta({ pending_forget: JSON.stringify(journal) });
      await engine.store.delete(TABLES.observations, `project = 'acme/app' AND id IN (${secret.id})`);
      await engine.store.delete(TABLES.cells, `project = 'acme/app' AND source_kind = 'observation' AND source_id IN (${secret.id})`);
      // Meanwhile this process (A) forgets something else.
      await engine.forget({ kind: 'observation', ids: [mine.id] } as never, other);
      await engine.close();
    } finally {
      // B crashes before its purge.
      b.kill('SIGKILL');
      await new Promise((resolve) => b.once('exit', resolve));
    }
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    assert.deepEqual(filesContaining(dir, 'wombatmigration'), [], "README: a forget a crash interrupted is finished by the next open; B's journal was overwritten/removed by A's forget");
  });
});
