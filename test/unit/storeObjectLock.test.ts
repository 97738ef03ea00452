import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { MemoryEngine } from '../../src/core/engine';
import { azureCall, s3Call } from '../../src/core/store/objectRequests';
import { objectLock } from '../../src/core/store/objectLock';
import type { ObjectLock, ObjectLockOptions } from '../../src/core/store/objectLock';
import { azureCredentials, credentialsOf, objectStorageOptions, parseObjectLocation, probeConditionalPut } from '../../src/core/store/objectStorage';
import { processStarted } from '../../src/core/store/processRef';
import { TABLES } from '../../src/core/store/schema';
import { runMain } from './cliInProcess';
import { startAzurite } from './fixtures/azurite';
import { startProxy } from './fixtures/faultProxy';
import { setEnv, startS3Server } from './fixtures/s3Server';

process.env.LANCEDB_LOG ??= 'error';

const WRITER = path.join(__dirname, 'fixtures', 'storeWriter.ts');
const TSX = require.resolve('tsx/cli');

function runWriter(uri: string, env: Record<string, string>, count: number, tag: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [TSX, WRITER, uri, String(count), tag, 'dedupe'], { env: { ...process.env, ...env, LANCEDB_LOG: 'error' }, maxBuffer: 1 << 24 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`writer ${tag} failed: ${stderr || err.message}`));
      else resolve();
    });
  });
}

/** A local object store for the tests: the S3 API (s3rver) or Azure Blob Storage (Azurite), with a bucket or container 'personal'. */
interface Backend {
  scheme: 's3' | 'az';
  endpoint: string;
  /** What a user of the store has in the environment: credentials and endpoint. */
  env: Record<string, string>;
  keys(): Promise<string[]>;
  /** Writes an object, as another process would. */
  put(key: string, body: string): Promise<unknown>;
  /** Deletes an object, as a lifecycle rule or a hand would. */
  del(key: string): Promise<unknown>;
  stop(): Promise<void>;
}

const BACKENDS: Record<'s3' | 'az', (dir: string) => Promise<Backend>> = {
  async s3(dir) {
    const s = await startS3Server({ directory: path.join(dir, 's3'), bucket: 'personal' });
    const c = credentialsOf(objectStorageOptions(parseObjectLocation('s3://personal')!, s.env));
    return { scheme: 's3', endpoint: s.endpoint, env: s.env, keys: () => s.keys(), put: (key, body) => s3Call(c, 'PUT', 'personal', key, {}, Buffer.from(body), 5000), del: (key) => s3Call(c, 'DELETE', 'personal', key, {}, Buffer.alloc(0), 5000), stop: () => s.stop() };
  },
  async az(dir) {
    const a = await startAzurite({ directory: path.join(dir, 'az'), container: 'personal' });
    const c = azureCredentials(a.env)!;
    return { scheme: 'az', endpoint: a.endpoint, env: a.env, keys: () => a.keys(), put: (key, body) => azureCall(c, 'PUT', 'personal', key, {}, Buffer.from(body), 5000), del: (key) => azureCall(c, 'DELETE', 'personal', key, {}, Buffer.alloc(0), 5000), stop: () => a.stop() };
  },
};

/**
 * A fresh local object store for each test of the suite, its client environment in process.env
 * (the store's credentials and endpoint come from the environment, as a user's do).
 */
function useBackend(scheme: 's3' | 'az'): () => Backend {
  let dir: string;
  let backend: Backend;
  let restoreEnv: () => void;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), `cm-${scheme}-store-`));
    backend = await BACKENDS[scheme](dir);
    restoreEnv = setEnv(backend.env);
  });
  afterEach(async () => {
    restoreEnv();
    await backend.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return () => backend;
}

for (const scheme of ['s3', 'az'] as const) {
  describe(`store on object storage (${scheme}://): two processes writing one store`, function () {
    this.timeout(600_000);
    const current = useBackend(scheme);
    let backend: Backend;
    beforeEach(() => (backend = current()));

    it('two imports of one repository at once store each commit once, as on disk', async () => {
      const N = 150;
      const uri = `${backend.scheme}://personal/me`;
      let engine: MemoryEngine | undefined;
      try {
        const open = (): Promise<MemoryEngine> => MemoryEngine.open({ storeUri: uri, embedder: 'none', maintenanceIntervalMs: 0 });
        await (await open()).close();
        await Promise.all([runWriter(uri, backend.env, N, 'a'), runWriter(uri, backend.env, N, 'b')]);
        engine = await open();
        const titles = (await engine.store.rows(TABLES.observations, null, { select: ['title'] })).map((r) => String(r.title));
        assert.equal(new Set(titles).size, N);
        assert.equal(titles.length, N, `${titles.length - new Set(titles).size} commits stored twice`);
        // The lock took turns: its generations are cleaned up as they go, the newest released.
        const locks = (await backend.keys()).filter((k) => k.startsWith('me/.locks/observations/')).sort();
        assert.ok(locks.length >= 1 && locks.length <= 3, `lock generations left: ${locks.join(', ')}`);
      } finally {
        await engine?.close();
      }
    });

    it('refuses to open a store whose records table lost its versions (listed by its data objects), naming it, and writes nothing', async () => {
      const uri = `${backend.scheme}://personal/me`;
      const open = (): Promise<MemoryEngine> => MemoryEngine.open({ storeUri: uri, embedder: 'none', maintenanceIntervalMs: 0 });
      const engine = await open();
      await engine.observe([{ type: 'note', title: 'the only copy', narrative: 'kept in the observations table' }], { project: 'p' });
      await engine.close();
      for (const key of (await backend.keys()).filter((k) => k.startsWith('me/observations.lance/_versions/'))) await backend.del(key);
      const before = (await backend.keys()).sort();
      await assert.rejects(open(), /the store is corrupt: table observations has data and no version manifest/);
      assert.deepEqual((await backend.keys()).filter((k) => !k.startsWith('me/.locks/')).sort(), before.filter((k) => !k.startsWith('me/.locks/')), 'the open wrote or deleted objects');
    });

    it('refuses to open a prefix holding only a damaged table (no meta table), naming it, and writes nothing', async () => {
      const uri = `${backend.scheme}://personal/mine`;
      await backend.put('mine/observations.lance/_versions/1.manifest', 'not a manifest at all');
      const before = (await backend.keys()).sort();
      await assert.rejects(MemoryEngine.open({ storeUri: uri, embedder: 'none', maintenanceIntervalMs: 0 }), /the store is damaged: table observations cannot be opened/);
      // LanceDB's connect itself writes its namespace table (__manifest) under a prefix without one.
      assert.deepEqual((await backend.keys()).filter((k) => !k.startsWith('mine/.locks/') && !k.startsWith('mine/__manifest/')).sort(), before, 'the open wrote or deleted objects');
    });

    it('names the table whose manifest is damaged, when the open stops and in doctor, and writes nothing', async () => {
      const uri = `${backend.scheme}://personal/me`;
      const open = (): Promise<MemoryEngine> => MemoryEngine.open({ storeUri: uri, embedder: 'none', maintenanceIntervalMs: 0 });
      const engine = await open();
      await engine.remember({ title: 'Kept decision', text: 'we keep this' }, { project: 'p' });
      await engine.close();
      for (const key of (await backend.keys()).filter((k) => k.startsWith('me/memories.lance/_versions/'))) await backend.put(key, 'not a manifest at all');
      const before = (await backend.keys()).filter((k) => !k.startsWith('me/.locks/')).sort();
      const started = Date.now();
      await assert.rejects(open(), /the store is damaged: table memories cannot be opened/);
      assert.ok(Date.now() - started < 8_000, `the open waited ${Date.now() - started} ms for a table that will never open`);
      const doctor = await runMain(['doctor', '--store', uri, '--embedder', 'none', '--json']);
      assert.notEqual(doctor.code, 0);
      const check = (JSON.parse(doctor.out).checks as Array<{ name: string; ok: boolean; detail: string }>).find((c) => c.name === 'store');
      assert.equal(check?.ok, false);
      assert.match(check?.detail ?? '', /memories/, check?.detail);
      assert.deepEqual((await backend.keys()).filter((k) => !k.startsWith('me/.locks/')).sort(), before, 'the open or doctor wrote or deleted objects');
    });

    it('opens a store whose probe was written but answered busy (the retry finds it), and leaves no probe behind', async () => {
      const proxy = await startProxy(backend.endpoint);
      try {
        let creates = 0;
        proxy.hook = (q) => (q.method === 'PUT' && q.headers['if-none-match'] === '*' && creates++ === 0 ? { kind: 'forwardThenFail', status: 503 } : { kind: 'forward' });
        const via = scheme === 's3' ? { AWS_ENDPOINT_URL: proxy.endpoint } : { AZURITE_BLOB_STORAGE_URL: proxy.endpoint };
        const uri = `${scheme}://personal/me`;
        await probeConditionalPut(uri, objectStorageOptions(parseObjectLocation(uri)!, { ...backend.env, ...via }));
        assert.equal(creates, 3, 'the first create, its retry, and the second create');
        assert.deepEqual((await backend.keys()).filter((k) => k.includes('.code-memory-probe')), []);
      } finally {
        await proxy.close();
      }
    });

    describe('the lock', () => {
      const uri = (): string => `${backend.scheme}://personal/me`;
      const holder = (h: object, generation = 1): Promise<unknown> => backend.put(`me/.locks/test/${String(generation).padStart(12, '0')}`, JSON.stringify({ token: 'other', ...h }));
      const lock = (o: ObjectLockOptions, at = uri()): ObjectLock => objectLock(at, objectStorageOptions(parseObjectLocation(at)!, process.env), 'test', o)!;

      it('counts only the generations right under its folder: an object put further down by hand is none', async () => {
        await backend.put('me/.locks/test/old/000000000009', '{}');
        await backend.put('me/.locks/test/000000000002.bak', '{}');
        assert.equal(await lock({ waitMs: 5000 }).withLock(async () => 'taken'), 'taken');
        const keys = (await backend.keys()).filter((k) => k.startsWith('me/.locks/test/'));
        assert.ok(keys.includes('me/.locks/test/000000000001'), `the first generation was taken: ${keys.join(', ')}`);
      });

      it('waits for a running process of this host while its generation is fresh, takes it once untouched (a failed release), and at once when it ended', async () => {
        const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
        try {
          await once(other, 'spawn');
          const named = { pid: other.pid, host: os.hostname(), started: processStarted(other.pid as number) };
          await holder(named, 1);
          await assert.rejects(lock({ waitMs: 1500 }).withLock(async () => 'taken'), new RegExp(`held by process ${other.pid} on`));
          // Its release failed (the network): the process lives on, the generation is no longer touched.
          assert.equal(await lock({ staleMs: 1500, waitMs: 10_000 }).withLock(async () => 'taken'), 'taken');
          await holder(named, 3);
        } finally {
          other.kill('SIGKILL');
          await once(other, 'exit');
        }
        assert.equal(await lock({ waitMs: 1500 }).withLock(async () => 'taken'), 'taken');
        const keys = (await backend.keys()).filter((k) => k.startsWith('me/.locks/test/'));
        assert.ok(keys.includes('me/.locks/test/000000000004'), `the generation after the ended holder's was taken: ${keys.join(', ')}`);
      });

      it("takes a lock once it went untouched for the stale time (another host's, or a release that failed), and a released one at once", async () => {
        await holder({ pid: 1, host: `not-${os.hostname()}` });
        let waits = 0;
        await assert.rejects(lock({ staleMs: 60_000, waitMs: 1500, onWait: () => waits++ }).withLock(async () => 'taken'), /Timed out waiting for the lock/);
        assert.ok(waits > 0, 'the waiter was not told the lock is held');
        // Touched again, then left: taken once the server's clock says it is 2 s old.
        await holder({ pid: 1, host: `not-${os.hostname()}` });
        assert.equal(await lock({ staleMs: 2000, waitMs: 10_000 }).withLock(async () => 'taken'), 'taken');
        // Released by its holder (generation 2 above): the next one goes at once, whoever held it.
        let waitsForReleased = 0;
        assert.equal(await lock({ staleMs: 60_000, waitMs: 1500, onWait: () => waitsForReleased++ }).withLock(async () => 'again'), 'again');
        assert.equal(waitsForReleased, 0, 'told to wait for a released lock');
      });

      it('runs one holder at a time in one process and across calls, releasing on errors', async () => {
        const order: string[] = [];
        const run = (tag: string, ms: number, fail = false): Promise<void> =>
          lock({}).withLock(async () => {
            order.push(`${tag}+`);
            await new Promise((resolve) => setTimeout(resolve, ms));
            order.push(`${tag}-`);
            if (fail) throw new Error(`${tag} failed`);
          });
        const results = await Promise.allSettled([run('a', 300, true), run('b', 100), run('c', 100)]);
        assert.equal(results[0].status, 'rejected');
        for (let i = 0; i < order.length; i += 2) assert.equal(order[i].slice(0, -1), order[i + 1].slice(0, -1), `interleaved: ${order.join(' ')}`);
        assert.equal(order.length, 6);
      });

      it('says the store cannot be reached when its endpoint does not answer', async () => {
        const gone = lock({ waitMs: 1500 });
        await backend.stop();
        await assert.rejects(gone.withLock(async () => 'taken'), /did not answer/);
      });

      it('works under a store prefix that its listings escape (an apostrophe, an ampersand)', async () => {
        for (const prefix of ["tom's store", 'a&b']) {
          for (let i = 0; i < 3; i++) assert.equal(await lock({ waitMs: 5000 }, `${backend.scheme}://personal/${prefix}`).withLock(async () => i), i);
        }
      });
    });
  });
}

describe('store on object storage (s3://): the lock through a faulty network', function () {
  this.timeout(120_000);
  const current = useBackend('s3');
  let backend: Backend;
  beforeEach(() => (backend = current()));

  describe('the lock on S3 through a network that fails now and then', () => {
    const uri = 's3://personal/me';
    const holder = (h: object, generation = 1): Promise<unknown> => backend.put(`me/.locks/test/${String(generation).padStart(12, '0')}`, JSON.stringify({ token: 'other', ...h }));
    const lock = (o: { staleMs?: number; waitMs?: number }): ObjectLock => objectLock(uri, objectStorageOptions(parseObjectLocation(uri)!, backend.env), 'test', o)!;
    const viaProxy = async (): Promise<{ options: Record<string, string>; proxy: Awaited<ReturnType<typeof startProxy>> }> => {
      const proxy = await startProxy(backend.endpoint);
      return { proxy, options: objectStorageOptions(parseObjectLocation(uri)!, { ...backend.env, AWS_ENDPOINT_URL: proxy.endpoint }) };
    };

    it('retries a busy answer to a listing, a read or a release, and the next taker goes at once', async () => {
      const { proxy, options: via } = await viaProxy();
      try {
        const failed = new Set<string>();
        const once = (what: string, status: number) => {
          if (failed.has(what)) return { kind: 'forward' as const };
          failed.add(what);
          return { kind: 'fail' as const, status };
        };
        proxy.hook = (q) =>
          q.method === 'GET' && q.url.includes('list-type=2')
            ? once('list', 503)
            : q.method === 'PUT' && q.body.includes('"released":true')
              ? once('release', 503)
              : q.method === 'GET'
                ? once('read', 500)
                : { kind: 'forward' };
        await holder({ pid: 1, host: `not-${os.hostname()}`, released: true });
        assert.equal(await objectLock(uri, via, 'test', { waitMs: 5000 })!.withLock(async () => 'taken'), 'taken');
        assert.deepEqual([...failed].sort(), ['list', 'read', 'release'], 'each fault was met once');
        // The release went out on its second try: another taker does not wait for the stale time.
        assert.equal(await lock({ waitMs: 1500 }).withLock(async () => 'again'), 'again');
      } finally {
        await proxy.close();
      }
    });

    it('gives a generation back when what follows its creation fails, and takes one whose creation answered an error', async () => {
      const { proxy, options: via } = await viaProxy();
      try {
        // Created on the server, the answer lost: sent again, 412; the generation is recognised as ours.
        let lost = 0;
        proxy.hook = (q) => (q.method === 'PUT' && q.headers['if-none-match'] === '*' && lost++ === 0 ? { kind: 'forwardThenFail', status: 500 } : { kind: 'forward' });
        assert.equal(await objectLock(uri, via, 'test', { waitMs: 5000 })!.withLock(async () => 'taken'), 'taken');
        assert.equal(await lock({ waitMs: 1500 }).withLock(async () => 'again'), 'again');
      } finally {
        await proxy.close();
      }
    });
  });
});

describe('store on object storage (az://): credentials and errors', function () {
  this.timeout(120_000);
  const current = useBackend('az');

  it("redacts the account key Lance reads from the environment from what the store keeps", async () => {
    const key = current().env.AZURE_STORAGE_ACCOUNT_KEY;
    let engine: MemoryEngine | undefined;
    try {
      engine = await MemoryEngine.open({ storeUri: 'az://personal/me', embedder: 'none', maintenanceIntervalMs: 0 });
      const m = await engine.remember({ title: 'Storage access', text: `the account key is ${key} for now` }, { project: 'p' });
      const stored = await engine.store.rows(TABLES.memories, `id = ${m.id}`, { select: ['text'] });
      assert.equal(stored.length, 1);
      assert.ok(!String(stored[0].text).includes(key), `stored: ${String(stored[0].text)}`);
    } finally {
      await engine?.close();
    }
  });

  const open = (uri = 'az://personal/me'): Promise<void> =>
    MemoryEngine.open({ storeUri: uri, embedder: 'none', maintenanceIntervalMs: 0 }).then((engine) => engine.close());

  it('refuses a wrong key and a missing container with their own words, without the key, and reopens with the right key', async () => {
    const wrong = Buffer.from('not the key of this account, 64 bytes long, for the test only!!').toString('base64');
    await open();
    process.env.AZURE_STORAGE_ACCOUNT_KEY = wrong;
    await assert.rejects(open(), (e: Error) => /refused the credentials \(HTTP 403\): check the account name \(devstoreaccount1\) and its key/.test(e.message) && !e.message.includes(wrong));
    process.env.AZURE_STORAGE_ACCOUNT_KEY = current().env.AZURE_STORAGE_ACCOUNT_KEY;
    await open();
    await assert.rejects(open('az://nosuchcontainer/me'), /container 'nosuchcontainer' does not exist \(HTTP 404\)/);
  });

  it('says an endpoint that takes connections and answers nothing did not answer, instead of waiting for it', async () => {
    const sockets: net.Socket[] = [];
    const hole = net.createServer((socket) => sockets.push(socket)).listen(0, '127.0.0.1');
    await once(hole, 'listening');
    process.env.AZURITE_BLOB_STORAGE_URL = `http://127.0.0.1:${(hole.address() as net.AddressInfo).port}`;
    try {
      await assert.rejects(open(), /did not answer/);
    } finally {
      for (const socket of sockets) socket.destroy();
      hole.close();
    }
  });

  it('refuses an endpoint with a SAS or credentials written into it, without printing them', async () => {
    for (const endpoint of [`${current().endpoint}/devstoreaccount1?sv=2021-08-06&sig=SECRETSIGNATURE%3D`, 'http://user:SECRETPASSWORD@127.0.0.1:1/devstoreaccount1']) {
      process.env.AZURE_STORAGE_ENDPOINT = endpoint;
      try {
        await assert.rejects(open(), (e: Error) => /the Azure endpoint .* is not an http\(s\):\/\/host/.test(e.message) && !/SECRET/.test(e.message));
      } finally {
        delete process.env.AZURE_STORAGE_ENDPOINT;
      }
    }
  });

  describe('doctor', () => {
    const doctor = async (): Promise<{ detail: string; fix?: string }> => {
      const r = await runMain(['doctor', '--store', 'az://personal/me', '--embedder', 'none', '--json']);
      return (JSON.parse(r.out) as { checks: Array<{ name: string; detail: string; fix?: string }> }).checks.find((c) => c.name === 'store')!;
    };
    beforeEach(async () => {
      const engine = await MemoryEngine.open({ storeUri: 'az://personal/me', embedder: 'none', maintenanceIntervalMs: 0 });
      await engine.observe([{ type: 'note', title: 'one', narrative: 'first' }], { project: 'p', branch: 'main' });
      await engine.close();
    });

    it('calls a store whose data files are gone damaged', async () => {
      const c = azureCredentials(current().env)!;
      for (const key of (await current().keys()).filter((k) => k.includes('/data/'))) await azureCall(c, 'DELETE', 'personal', key, {}, Buffer.alloc(0), 5000);
      assert.match((await doctor()).detail, /damaged/);
    });

    it('does not call a store damaged that stopped answering after it opened, and says to check the network', async () => {
      const verify = MemoryEngine.prototype.verifyStore;
      MemoryEngine.prototype.verifyStore = async function (this: MemoryEngine) {
        await current().stop();
        return verify.call(this);
      };
      try {
        const check = await doctor();
        assert.doesNotMatch(check.detail, /damaged/);
        assert.match(check.fix ?? '', /reachable/);
      } finally {
        MemoryEngine.prototype.verifyStore = verify;
      }
    });
  });

  it('has no lock of its own when the store is reached through another sign-in (no key or SAS)', () => {
    const env = { AZURE_STORAGE_ACCOUNT_NAME: 'someaccount', AZURE_CLIENT_ID: 'x', AZURE_TENANT_ID: 'y', AZURE_FEDERATED_TOKEN_FILE: '/tmp/token' };
    assert.equal(azureCredentials(env), null);
    assert.ok(azureCredentials({ ...env, AZURE_STORAGE_SAS_TOKEN: '?sv=2021&sig=abc' }));
    assert.equal(azureCredentials({ ...env, AZURE_STORAGE_SAS_TOKEN: '?sv=2021&sig=abc' })?.sas, 'sv=2021&sig=abc');
    assert.equal(azureCredentials({ ...env, AZURE_STORAGE_ACCOUNT_KEY: 'a2V5' })?.endpoint, 'https://someaccount.blob.core.windows.net');
  });
});
