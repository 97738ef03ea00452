// An import of an export made before a forget, running while another process forgets records of
// it: the import checks what is stored chunk by chunk, kind by kind, and the digests a forget
// leaves (forgetKeys.ts) read once at its start missed a forget that ran after; the record it
// deleted was then not stored, not known as forgotten, and written back.

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { ProjectTable } from '../../src/core/store/projectTable';
import { TABLES } from '../../src/core/store/schema';
import type { TableName } from '../../src/core/store/schema';
import { filesContaining } from './diskFixture';
import { REPO_ROOT, removeDir, tempDir } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const scope = { project: 'acme/race' };

/** Forgets records by id in a process of its own, as the CLI or another window would. */
function forgetInChild(dir: string, kind: string, ids: number[]): Promise<void> {
  const code = `
    const { MemoryEngine } = require(${JSON.stringify(path.join(REPO_ROOT, 'src/core/engine'))});
    (async () => {
      const engine = await MemoryEngine.open({ storeUri: ${JSON.stringify(dir)}, embedder: 'none', maintenanceIntervalMs: 0 });
      await engine.forget({ kind: ${JSON.stringify(kind)}, ids: ${JSON.stringify(ids)} }, ${JSON.stringify(scope)});
      await engine.close();
    })().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1); });`;
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', '-e', code], { cwd: REPO_ROOT, env: { ...process.env, LANCEDB_LOG: 'error' } });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => child.on('exit', (c) => (c === 0 ? resolve() : reject(new Error(`the forget failed: ${stderr}`)))));
}

/** Runs `during` once, right before the import's first check of `table`'s stored rows. */
async function importWith(engine: MemoryEngine, lines: string[], table: TableName, during: () => Promise<void>): Promise<boolean> {
  const original = ProjectTable.prototype.rows;
  let armed = true;
  ProjectTable.prototype.rows = async function (this: ProjectTable, clause, options) {
    if (armed && this.name === table && String(clause).includes('created_at_epoch IN')) {
      armed = false;
      await during();
    }
    return original.call(this, clause, options);
  };
  try {
    await engine.importJsonl(
      (async function* () {
        yield* lines;
      })(),
    );
  } finally {
    ProjectTable.prototype.rows = original;
  }
  return !armed;
}

describe('an import running while another process forgets a record it holds', function () {
  this.timeout(180_000);
  let dir: string;
  let engine: MemoryEngine;
  let lines: string[];
  let observationId: number;
  let memoryId: number;

  beforeEach(async () => {
    dir = tempDir('import-during-forget');
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    await engine.observe(Array.from({ length: 20 }, (_, i) => ({ type: 'note', title: `race note ${i}`, narrative: `race payload ${i}` })), scope);
    [{ id: observationId }] = await engine.observe([{ type: 'decision', title: 'The badgerledger decision', narrative: 'We keep badgerledger for the books.' }], scope);
    memoryId = (await engine.remember({ title: 'The wolverinekey decision', text: 'We keep wolverinekey in the vault.', memory_type: 'decision' }, scope)).id;
    await engine.flush();
    const out: string[] = [];
    await engine.exportJsonl((l) => out.push(l), null);
    lines = out.flatMap((l) => l.split('\n')).filter((l) => l.trim());
  });
  afterEach(async () => {
    await engine.close().catch(() => undefined);
    removeDir(dir);
  });

  it('a memory forgotten after the import checked the observations, before it checked the memories, does not come back', async () => {
    assert.ok(await importWith(engine, lines, TABLES.memories, () => forgetInChild(dir, 'memory', [memoryId])), 'control: the forget ran during the import');
    await engine.flush();
    assert.equal(await engine.store.count(TABLES.memories, `title LIKE '%wolverinekey%'`), 0, 'the forgotten memory came back');
    assert.equal(await engine.store.count(TABLES.observations, `project = 'acme/race'`), 21);
    await engine.close();
    assert.deepEqual(filesContaining(dir, 'wolverinekey'), []);
  });

  it('an observation forgotten before the import checked the observations (its digests read already) does not come back', async () => {
    assert.ok(await importWith(engine, lines, TABLES.observations, () => forgetInChild(dir, 'observation', [observationId])), 'control: the forget ran during the import');
    await engine.flush();
    assert.equal(await engine.store.count(TABLES.observations, `title LIKE '%badgerledger%'`), 0, 'the forgotten observation came back');
    assert.equal(await engine.store.count(TABLES.memories, `project = 'acme/race'`), 1);
    await engine.close();
    assert.deepEqual(filesContaining(dir, 'badgerledger'), []);
  });
});
