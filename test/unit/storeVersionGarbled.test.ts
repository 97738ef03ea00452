// A meta table whose schema_version is not a version number (garbled by hand or by a damaged
// disk): the open refuses the store, naming the value, and writes nothing. Taken for a number,
// "abc" skipped every migration and was written back as the version "NaN"; "0" or "2.5" failed
// with "No migration from schema version 0".

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { MemoryEngine } from '../../src/core/engine';
import { SCHEMA_VERSION } from '../../src/core/store/schema';

process.env.LANCEDB_LOG ??= 'error';

async function tableVersions(dir: string): Promise<Record<string, number>> {
  const db = await lancedb.connect(dir);
  const out: Record<string, number> = {};
  for (const name of await db.tableNames()) {
    const table = await db.openTable(name);
    out[name] = await table.version();
    table.close();
  }
  db.close();
  return out;
}

async function storedVersion(dir: string): Promise<string> {
  const db = await lancedb.connect(dir);
  const rows = await (await db.openTable('meta')).query().where(`key = 'schema_version'`).toArray();
  db.close();
  return String(rows[0].value);
}

describe('store: a garbled schema version', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-version-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  for (const garbled of ['abc', '', '2.5', '-1', '0', 'Infinity']) {
    it(`refuses a store whose schema_version is ${JSON.stringify(garbled)}, naming it, and changes nothing`, async () => {
      const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      await engine.observe([{ type: 'note', title: 'Kept ocelot note' }], { project: 'p' });
      await engine.store.setMeta({ schema_version: garbled });
      await engine.close();
      const before = await tableVersions(dir);
      await assert.rejects(
        MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 }),
        (e: Error) => /the store is corrupt/.test(e.message) && e.message.includes(`schema_version is ${JSON.stringify(garbled)}, not a version number`) && e.message.includes(dir) && /nothing was changed/.test(e.message),
      );
      assert.deepEqual(await tableVersions(dir), before);
      assert.equal(await storedVersion(dir), garbled);
    });
  }

  it('still opens a store of every version it knows, written with spaces as Number reads it', async () => {
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    await engine.observe([{ type: 'note', title: 'Kept ocelot note' }], { project: 'p' });
    await engine.store.setMeta({ schema_version: ` ${SCHEMA_VERSION} ` });
    await engine.close();
    const reopened = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      assert.equal((await reopened.stats({ project: 'p' })).observations, 1);
    } finally {
      await reopened.close();
    }
  });
});
