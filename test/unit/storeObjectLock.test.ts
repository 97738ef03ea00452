import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { MemoryEngine } from '../../src/core/engine';
import { ObjectLock } from '../../src/core/store/objectLock';
import { credentialsOf, objectStorageOptions, parseObjectLocation, s3Call } from '../../src/core/store/objectStorage';
import { processStarted } from '../../src/core/store/processRef';
import { TABLES } from '../../src/core/store/schema';
import { startProxy } from './fixtures/faultProxy';
import { startS3Server } from './fixtures/s3Server';
import type { S3Server } from './fixtures/s3Server';

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

describe('store on object storage: two processes writing one store', function () {
  this.timeout(600_000);
  let dir: string;
  let server: S3Server;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-s3-concurrent-'));
    server = await startS3Server({ directory: path.join(dir, 's3'), bucket: 'personal' });
  });
  afterEach(async () => {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('two imports of one repository at once store each commit once, as on disk', async () => {
    const N = 150;
    const uri = 's3://personal/me';
    // The personal store's credentials and endpoint come from the environment, as a user's do.
    const saved = Object.fromEntries(Object.keys(server.env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, server.env);
    let engine: MemoryEngine | undefined;
    try {
      const open = (): Promise<MemoryEngine> => MemoryEngine.open({ storeUri: uri, embedder: 'none', maintenanceIntervalMs: 0 });
      await (await open()).close();
      await Promise.all([runWriter(uri, server.env, N, 'a'), runWriter(uri, server.env, N, 'b')]);
      engine = await open();
      const titles = (await engine.store.rows(TABLES.observations, null, { select: ['title'] })).map((r) => String(r.title));
      assert.equal(new Set(titles).size, N);
      assert.equal(titles.length, N, `${titles.length - new Set(titles).size} commits stored twice`);
      // The lock took turns: its generations are cleaned up as they go, the newest released.
      const locks = (await server.keys()).filter((k) => k.startsWith('me/.locks/observations/')).sort();
      assert.ok(locks.length >= 1 && locks.length <= 3, `lock generations left: ${locks.join(', ')}`);
    } finally {
      await engine?.close();
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  describe('the lock', () => {
    const uri = 's3://personal/me';
    const options = (): Record<string, string> => objectStorageOptions(parseObjectLocation(uri)!, server.env);
    const holder = (h: object, generation = 1): Promise<unknown> =>
      s3Call(credentialsOf(options()), 'PUT', 'personal', `me/.locks/test/${String(generation).padStart(12, '0')}`, {}, Buffer.from(JSON.stringify({ token: 'other', ...h })), 5000);
    const lock = (o: { staleMs?: number; waitMs?: number }): ObjectLock => new ObjectLock(uri, options(), 'test', o);

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
      const keys = (await server.keys()).filter((k) => k.startsWith('me/.locks/test/'));
      assert.ok(keys.includes('me/.locks/test/000000000004'), `the generation after the ended holder's was taken: ${keys.join(', ')}`);
    });

    it("takes a lock once it went untouched for the stale time (another host's, or a release that failed), and a released one at once", async () => {
      await holder({ pid: 1, host: `not-${os.hostname()}` });
      await assert.rejects(lock({ staleMs: 60_000, waitMs: 1500 }).withLock(async () => 'taken'), /Timed out waiting for the lock/);
      // Touched again, then left: taken once the server's clock says it is 2 s old.
      await holder({ pid: 1, host: `not-${os.hostname()}` });
      assert.equal(await lock({ staleMs: 2000, waitMs: 10_000 }).withLock(async () => 'taken'), 'taken');
      // Released by its holder (generation 2 above): the next one goes at once, whoever held it.
      assert.equal(await lock({ staleMs: 60_000, waitMs: 1500 }).withLock(async () => 'again'), 'again');
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
      await server.stop();
      await assert.rejects(gone.withLock(async () => 'taken'), /did not answer/);
      server = await startS3Server({ directory: path.join(dir, 's3'), bucket: 'personal' });
    });

    describe('through a network that fails now and then', () => {
      const viaProxy = async (): Promise<{ options: Record<string, string>; proxy: Awaited<ReturnType<typeof startProxy>> }> => {
        const proxy = await startProxy(server.endpoint);
        return { proxy, options: objectStorageOptions(parseObjectLocation(uri)!, { ...server.env, AWS_ENDPOINT_URL: proxy.endpoint }) };
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
          assert.equal(await new ObjectLock(uri, via, 'test', { waitMs: 5000 }).withLock(async () => 'taken'), 'taken');
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
          assert.equal(await new ObjectLock(uri, via, 'test', { waitMs: 5000 }).withLock(async () => 'taken'), 'taken');
          assert.equal(await lock({ waitMs: 1500 }).withLock(async () => 'again'), 'again');
        } finally {
          await proxy.close();
        }
      });
    });

    it("works under a store prefix that S3 escapes in its listings (an apostrophe, an ampersand)", async () => {
      for (const prefix of ["tom's store", 'a&b']) {
        const at = `s3://personal/${prefix}`;
        const o = objectStorageOptions(parseObjectLocation(at)!, server.env);
        for (let i = 0; i < 3; i++) assert.equal(await new ObjectLock(at, o, 'observations', { waitMs: 5000 }).withLock(async () => i), i);
      }
    });
  });
});

