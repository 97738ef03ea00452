// Protects the meta table's one row per key when processes write it at once: two processes (two
// windows, the CLI and a window, an MCP stdio server) setting the same keys not stored yet, on
// disk and on object storage, leave one row per key; and a store that already holds a key twice
// (written by a version before setMeta took the meta lock) reads one value per key, the same
// whatever order its rows are in, and its next setMeta of that key leaves one row. Two processes
// making the store's team identity at once both get the one stored.
import { strict as assert } from 'node:assert';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { sqlString } from '../../src/core/store/filters';
import { TABLES } from '../../src/core/store/schema';
import { Store } from '../../src/core/store/store';
import type { Row } from '../../src/core/store/store';
import { STORE_IDENTITY_KEY } from '../../src/core/team/shareRows';
import { raceAtOnce } from './fixtures/racers';
import { setEnv, startS3Server } from './fixtures/s3Server';
import type { S3Server } from './fixtures/s3Server';

process.env.LANCEDB_LOG ??= 'error';

const RACER = path.join(__dirname, 'fixtures', 'metaKeyRacer.ts');

/** Two racer processes on the store at `uri`, started at once; their outputs. */
async function runRacers(uri: string, count: number, dir: string, children: ChildProcess[], mode = 'keys'): Promise<string[]> {
  const first = await Store.open({ uri, dimension: 8 });
  first.close();
  const go = path.join(dir, 'go');
  return raceAtOnce(RACER, ['a', 'b'].map((tag) => [uri, String(count), tag, go, mode]), go, children, 'meta racer');
}

/** Two processes set the keys race:0 .. race:<count-1> at once: one row per key, holding one of their values, read as stored. */
async function race(uri: string, count: number, dir: string, children: ChildProcess[]): Promise<void> {
  await runRacers(uri, count, dir, children);
  const store = await Store.open({ uri, dimension: 8 });
  try {
    const perKey = new Map<string, string[]>();
    for (const r of await store.rows(TABLES.meta, `key >= 'race:' AND key < 'race;'`, { select: ['key', 'value'] })) {
      perKey.set(String(r.key), [...(perKey.get(String(r.key)) ?? []), String(r.value)]);
    }
    const twice = [...perKey].filter(([, values]) => values.length > 1);
    assert.deepEqual(twice, [], `${twice.length} of ${count} keys stored more than once`);
    assert.equal(perKey.size, count);
    for (let i = 0; i < count; i++) assert.match((perKey.get(`race:${i}`) ?? [])[0] ?? '', new RegExp(`^[ab] ${i}$`));
    // The readers say what the one row holds.
    const entries = await store.metaEntries('race:');
    assert.deepEqual(new Map(entries), new Map([...perKey].map(([k, [v]]) => [k, v])));
    assert.equal(entries.length, count);
    for (const [key, value] of entries) assert.equal(await store.getMeta(key), value);
  } finally {
    store.close();
  }
}

describe('store: two processes setting the same new meta keys at once', function () {
  this.timeout(600_000);
  let dir: string;
  let children: ChildProcess[];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-meta-race-'));
    children = [];
  });
  afterEach(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('on disk: one row per key, holding one of the two values', async () => {
    const N = 40;
    await race(path.join(dir, 'store'), N, dir, children);
  });

  it("two processes making the store's team identity at once both get the one stored", async () => {
    const uri = path.join(dir, 'store');
    const got = (await runRacers(uri, 0, dir, children, 'identity')).map((out) => /identity (\S+)/.exec(out)?.[1]);
    const store = await Store.open({ uri, dimension: 8 });
    try {
      const stored = await store.getMeta(STORE_IDENTITY_KEY);
      assert.match(stored ?? '', /^[0-9a-f-]{36}$/);
      assert.deepEqual(got, [stored, stored], 'a process went on with an identity the store does not keep');
      assert.equal(await store.count(TABLES.meta, `key = ${sqlString(STORE_IDENTITY_KEY)}`), 1);
    } finally {
      store.close();
    }
  });

  describe('on object storage (s3://)', () => {
    let server: S3Server;
    let restoreEnv: () => void;
    beforeEach(async () => {
      server = await startS3Server({ directory: path.join(dir, 's3'), bucket: 'personal' });
      restoreEnv = setEnv(server.env);
    });
    afterEach(async () => {
      restoreEnv();
      await server.stop();
    });

    it('one row per key, holding one of the two values', async () => {
      const N = 12;
      await race('s3://personal/me', N, dir, children);
    });
  });
});

describe('store: a meta key already stored twice', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-meta-twice-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A store holding `twice:k` (and `twice:m`) once per value, in this order, as two racing writers of an earlier version left it. */
  async function storeWithCopies(name: string, values: string[]): Promise<Store> {
    const store = await Store.open({ uri: path.join(dir, name), dimension: 8 });
    await store.setMeta({ 'twice:a': 'single', 'twice:z': 'single' });
    for (const value of values) await store.add(TABLES.meta, [{ key: 'twice:k', value }, { key: 'twice:m', value: `m ${value}` }]);
    assert.equal(await store.count(TABLES.meta, `key = 'twice:k'`), values.length);
    return store;
  }

  it('reads one value per key, the same whichever copy was stored first, before and after compaction', async () => {
    const one = await storeWithCopies('one', ['from a', 'from b']);
    const other = await storeWithCopies('other', ['from b', 'from a']);
    try {
      const read = async (store: Store): Promise<{ k: string | null; m: string | null; entries: Array<[string, string]> }> => ({
        k: await store.getMeta('twice:k'),
        m: await store.getMeta('twice:m'),
        entries: (await store.metaEntries('twice:')).sort(([a], [b]) => (a < b ? -1 : 1)),
      });
      for (const when of ['as written', 'compacted']) {
        const [a, b] = [await read(one), await read(other)];
        assert.deepEqual(a, b, `${when}: the two stores read differently`);
        assert.ok(a.k === 'from a' || a.k === 'from b', `${when}: ${a.k}`);
        assert.deepEqual(
          a.entries.map(([k]) => k),
          ['twice:a', 'twice:k', 'twice:m', 'twice:z'],
          `${when}: one entry per key`,
        );
        assert.equal(new Map(a.entries).get('twice:k'), a.k, `${when}: metaEntries and getMeta agree`);
        assert.equal(new Map(a.entries).get('twice:m'), a.m, `${when}: metaEntries and getMeta agree`);
        await one.optimize(0, [TABLES.meta]);
        await other.optimize(0, [TABLES.meta]);
      }
    } finally {
      one.close();
      other.close();
    }
  });

  it('the next setMeta of the key leaves one row holding its value, before and after compaction; a key stored twice and not written keeps reading the same', async () => {
    const store = await storeWithCopies('store', ['from a', 'from b', 'from c']);
    const stored = async (s: Store, key: string): Promise<Row[]> => s.rows(TABLES.meta, `key = ${sqlString(key)}`, { select: ['key', 'value'] });
    try {
      const m = await store.getMeta('twice:m');
      await store.setMeta({ 'twice:k': 'set after', 'twice:new': 'new' });
      assert.deepEqual(await stored(store, 'twice:k'), [{ key: 'twice:k', value: 'set after' }]);
      assert.equal(await store.getMeta('twice:k'), 'set after');
      assert.equal(await store.count(TABLES.meta, `key = 'twice:new'`), 1);
      assert.equal(await store.getMeta('twice:m'), m);
      // Its copies compacted into one fragment and read through the key index.
      await store.optimize(0, [TABLES.meta]);
      assert.equal(await store.count(TABLES.meta, `key = 'twice:m'`), 3);
      await store.setMeta({ 'twice:m': 'set after compaction' });
      assert.deepEqual(await stored(store, 'twice:m'), [{ key: 'twice:m', value: 'set after compaction' }]);
      // A store reopened reads the same.
      store.close();
      const again = await Store.open({ uri: path.join(dir, 'store'), dimension: 8 });
      try {
        assert.equal(await again.getMeta('twice:k'), 'set after');
        assert.equal(await again.getMeta('twice:m'), 'set after compaction');
        assert.equal(await again.getMeta('twice:a'), 'single');
        await again.deleteMeta('twice:m');
        assert.equal(await again.getMeta('twice:m'), null);
      } finally {
        again.close();
      }
    } finally {
      store.close();
    }
  });
});
