import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { sqlString } from '../../src/core/store/filters';
import { TABLES } from '../../src/core/store/schema';
import { Store, prefixWhere } from '../../src/core/store/store';

process.env.LANCEDB_LOG ??= 'error';

const WRITER = path.join(__dirname, 'fixtures', 'metaWriter.ts');
const TSX = require.resolve('tsx/cli');

function runWriter(dir: string, count: number, tag: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [TSX, WRITER, dir, String(count), tag], { env: { ...process.env, LANCEDB_LOG: 'error' } }, (err, stdout, stderr) => {
      if (err || !stdout.includes('done')) reject(new Error(`meta writer ${tag} failed: ${stderr || err?.message}`));
      else resolve();
    });
  });
}

/** The columns of the meta table's indexes, and the type of the one on `key`. */
async function keyIndex(store: Store): Promise<string | undefined> {
  return (await store.table(TABLES.meta).listIndices()).find((i) => i.columns.length === 1 && i.columns[0] === 'key')?.indexType;
}

/** How the read of `where` is planned: through the key's index or by a scan. */
async function plan(store: Store, where: string): Promise<string> {
  return store.table(TABLES.meta).query().where(where).explainPlan();
}

describe('store: the meta table is read by key through a BTREE index', function () {
  this.timeout(300_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-meta-index-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a key lookup and a prefix read are index probes, not scans', async () => {
    const store = await Store.open({ uri: dir, dimension: 8 });
    try {
      assert.equal(await keyIndex(store), 'BTree');
      await store.setMeta(Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`forgot_import:p${i % 4}:${i}`, String(i)])));
      await store.optimize(0, [TABLES.meta]);
      assert.match(await plan(store, `key = 'forgot_import:p1:5'`), /ScalarIndexQuery.*key_idx/);
      // metaEntries' read of a prefix.
      assert.match(await plan(store, prefixWhere('key', 'forgot_import:p1:')), /ScalarIndexQuery.*key_idx/);
    } finally {
      store.close();
    }
  });

  it('setMeta on an indexed key replaces its value (one row per key), before and after optimize; deleteMeta removes it', async () => {
    const store = await Store.open({ uri: dir, dimension: 8 });
    try {
      const keys = Array.from({ length: 300 }, (_, i) => `forgot_record:p${i % 3}:${String(i).padStart(4, '0')}`);
      await store.setMeta(Object.fromEntries(keys.map((k) => [k, 'first'])));
      await store.optimize(0, [TABLES.meta]); // the rows are in the index now
      // New keys, not in the index yet (read by scanning their fragment).
      await store.setMeta({ 'forgot_at:new': 'unindexed', 'forgot_record:p1:9999': 'unindexed' });
      assert.equal(await store.getMeta('forgot_at:new'), 'unindexed');
      assert.equal(await store.getMeta('forgot_record:p1:9999'), 'unindexed');
      // Updates of keys in the index and of keys not in it yet.
      await store.setMeta({ [keys[7]]: 'second', 'forgot_at:new': 'second' });
      await store.setMeta({ [keys[7]]: 'third', 'forgot_at:new': 'third' });
      const check = async (when: string): Promise<void> => {
        assert.equal(await store.getMeta(keys[7]), 'third', when);
        assert.equal(await store.getMeta('forgot_at:new'), 'third', when);
        assert.equal(await store.count(TABLES.meta, `key = ${sqlString(keys[7])}`), 1, `${when}: one row per key`);
        assert.equal(await store.count(TABLES.meta, `key = 'forgot_at:new'`), 1, `${when}: one row per key`);
        assert.equal(await store.getMeta('forgot_record:p1:9999'), 'unindexed', when);
        assert.equal(await store.getMeta('forgot_record:p1:99'), null, when);
        const all = await store.rows(TABLES.meta, null, { select: ['key'] });
        assert.equal(all.length, new Set(all.map((r) => r.key)).size, `${when}: no key stored twice`);
        // A project's prefix: exactly its keys, whether indexed or not.
        const p1 = (await store.metaEntries('forgot_record:p1:')).map(([k]) => k).sort();
        assert.deepEqual(p1, [...keys.filter((k) => k.startsWith('forgot_record:p1:')), 'forgot_record:p1:9999'].sort(), when);
        assert.deepEqual(new Map(await store.metaEntries('forgot_record:p1:')).get(keys[7]), 'third', when);
      };
      await check('before optimize');
      await store.optimize(0, [TABLES.meta]);
      await check('after optimize');
      await store.deleteMeta(keys[7]);
      await store.deleteMeta('forgot_at:new');
      assert.equal(await store.getMeta(keys[7]), null);
      assert.equal(await store.getMeta('forgot_at:new'), null);
      assert.equal((await store.metaEntries('forgot_record:p1:')).length, 100); // 100 of p1, plus 9999, less the deleted one
      await store.optimize(0, [TABLES.meta]);
      assert.equal(await store.getMeta(keys[7]), null);
      assert.equal(await store.getMeta(keys[8]), 'first');
    } finally {
      store.close();
    }
  });

  it('a prefix read through the index is exact: _, % and \\ in the prefix match only themselves', async () => {
    const store = await Store.open({ uri: dir, dimension: 8 });
    try {
      const keys = ['forgot_record:p1:a', 'forgotXrecord:p1:b', 'forgot_record:pX:c', 'a%b', 'axb', 'a\\b', 'a\\\\c', "it's:1", 'z\u{10FFFF}\u{10FFFF}', 'z\u{10FFFF}'];
      await store.setMeta(Object.fromEntries(keys.map((k, i) => [k, String(i)])));
      const check = async (when: string): Promise<void> => {
        const read = async (prefix: string): Promise<string[]> => (await store.metaEntries(prefix)).map(([k]) => k).sort();
        const want = (prefix: string): string[] => keys.filter((k) => k.startsWith(prefix)).sort();
        for (const prefix of ['forgot_record:', 'forgot%record', 'forgot_record:p_:', 'forgot_', 'a%', 'a_', 'a\\', 'a\\\\', "it's", 'z\u{10FFFF}', 'z', '']) {
          const all = prefix === '' ? (await store.rows(TABLES.meta, null, { select: ['key'] })).map((r) => String(r.key)).sort() : want(prefix);
          assert.deepEqual(await read(prefix), all, `${when}: prefix ${JSON.stringify(prefix)}`);
        }
      };
      await check('new rows');
      await store.optimize(0, [TABLES.meta]);
      await check('indexed rows');
    } finally {
      store.close();
    }
  });

  it('a forget by id (its purge rebuilds the indexes and prunes old versions) leaves the key index in place, and its tombstones read through it', async () => {
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      const scope = { project: 'meta/index' };
      const stored = await engine.observe(Array.from({ length: 3 }, (_, i) => ({ type: 'commit', title: `commit ${i}`, dedupe_key: `commit:${String(i).repeat(40)}` })), scope);
      await engine.forget({ kind: 'observation', ids: [stored[0].id, stored[1].id] }, scope);
      assert.equal(await keyIndex(engine.store), 'BTree');
      const stones = await engine.store.metaEntries('forgot_import:');
      assert.equal(stones.length, 2, JSON.stringify(stones));
      assert.match(await plan(engine.store, prefixWhere('key', 'forgot_import:')), /ScalarIndexQuery.*key_idx/);
      for (const [key, value] of stones) assert.equal(await engine.store.getMeta(key), value);
      assert.deepEqual((await engine.listObservations(scope, { limit: 10 })).map((o) => o.title), ['commit 2']);
    } finally {
      await engine.close();
    }
  });

  it('two processes writing meta at once (new keys, and updates of the same stored keys): nothing is lost, no key stored twice', async () => {
    // The shared keys are stored before: these are updates of stored keys (two processes inserting
    // one key not stored yet at once: metaConcurrentKeys.test.ts).
    const first = await Store.open({ uri: dir, dimension: 8 });
    await first.setMeta(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`shared:${i}`, 'before'])));
    first.close();
    const N = 60;
    await Promise.all([runWriter(dir, N, 'a'), runWriter(dir, N, 'b')]);
    const store = await Store.open({ uri: dir, dimension: 8 });
    try {
      for (const tag of ['a', 'b']) {
        const entries = new Map(await store.metaEntries(`${tag}:`));
        assert.equal(entries.size, N, `writer ${tag}: ${N - entries.size} keys lost`);
        for (let i = 0; i < N; i++) assert.equal(entries.get(`${tag}:${i}`), `${tag} ${i}`);
      }
      const shared = await store.rows(TABLES.meta, `starts_with(key, 'shared:')`, { select: ['key', 'value'] });
      assert.equal(shared.length, 10, `shared keys: ${JSON.stringify(shared)}`);
      for (const r of shared) assert.match(String(r.value), Number(String(r.key).slice(7)) < 6 ? /^[ab] \d+$/ : /^before$/);
      const all = await store.rows(TABLES.meta, null, { select: ['key'] });
      assert.equal(all.length, new Set(all.map((r) => r.key)).size, 'no key stored twice');
    } finally {
      store.close();
    }
  });

  it('a store whose meta table has no key index (made before it) gets one at open and reads the same', async () => {
    const first = await Store.open({ uri: dir, dimension: 8 });
    await first.setMeta(Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`import_alias:p${i % 2}:${i}`, String(i)])));
    const meta = first.table(TABLES.meta);
    for (const index of await meta.listIndices()) await meta.dropIndex(index.name);
    assert.equal(await keyIndex(first), undefined);
    const before = { one: await first.getMeta('import_alias:p1:7'), prefix: (await first.metaEntries('import_alias:p0:')).sort(), version: await first.getMeta('schema_version') };
    first.close();
    const store = await Store.open({ uri: dir, dimension: 8 });
    try {
      assert.equal(await keyIndex(store), 'BTree');
      assert.equal(before.one, '7');
      assert.equal(before.prefix.length, 25);
      assert.equal(await store.getMeta('import_alias:p1:7'), before.one);
      assert.deepEqual((await store.metaEntries('import_alias:p0:')).sort(), before.prefix);
      assert.equal(await store.getMeta('schema_version'), before.version);
      await store.setMeta({ 'import_alias:p1:7': 'moved' });
      assert.equal(await store.getMeta('import_alias:p1:7'), 'moved');
      assert.equal(await store.count(TABLES.meta, `key = 'import_alias:p1:7'`), 1);
    } finally {
      store.close();
    }
  });
});
