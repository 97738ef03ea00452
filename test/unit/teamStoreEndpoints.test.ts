// The team store's endpoint failing: wrong credentials, wrong bucket, unreachable, a network that
// answers nothing after connecting (bounded waits), and credentials kept out of every message and log.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { MemoryEngine } from '../../src/core/engine';
import { within as waitAtMost } from '../../src/core/team/teamMemory';
import { until } from './fixtures/s3Server';
import { teamHarness } from './teamFixture';
import type { S3Server } from './fixtures/s3Server';
import { runMain } from './cliInProcess';
import { blackholeProxy } from './fixtures/blackholeProxy';

process.env.LANCEDB_LOG ??= 'error';

const PROJECT = 'github.com/acme/shared';
const ACCESS = 'AKIAAUDITLEAKEXAMPL1';
const SECRET = 'AuditSecretKeyDoNotLeak/Zz9x+ExampleKey0123';
const SESSION = 'AuditSessionTokenIQoJb3JpZ2luX2VjEXAMPLEdonotleak';

/** Rejects when `p` takes longer than `ms`. */
async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t0 = Date.now();
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
    process.stdout.write(`      ${what}: ${Date.now() - t0} ms\n`);
  }
}

describe('team store: endpoints failing', function () {
  this.timeout(600_000);
  const team = teamHarness();
  const logs: string[] = [];
  const server = (): Promise<S3Server> => team.server();
  const person = (name: string, env: Record<string, string>, uri = 's3://team/acme'): Promise<MemoryEngine> => team.person(name, null, { env, uri, logger: (m) => logs.push(m) });

  function assertNoSecret(where: string, text: string): void {
    for (const s of [SECRET, SESSION]) assert.ok(!text.includes(s), `${where} holds a secret: ${text}`);
  }

  beforeEach(() => {
    logs.length = 0;
  });

  it('a wait on the team store ends on time with the fallback, or its error, and otherwise with the answer', async () => {
    const never = new Promise<string>(() => undefined);
    assert.equal(await waitAtMost(never, 20, () => 'fallback'), 'fallback');
    await assert.rejects(waitAtMost(never, 20, () => {
      throw new Error('no answer in time');
    }), /no answer in time/);
    assert.equal(await waitAtMost(Promise.resolve('answer'), 1000, () => 'fallback'), 'answer');
  });

  it('wrong credentials: refused with a message about credentials, no secret anywhere, local memory works', async () => {
    const s = await server();
    const env = { ...s.env, AWS_ACCESS_KEY_ID: ACCESS, AWS_SECRET_ACCESS_KEY: SECRET, AWS_SESSION_TOKEN: SESSION };
    const alice = await person('Alice', env);
    await until(async () => (await alice.teamStatus())?.state === 'refused');
    const status = await alice.teamStatus();
    assert.match(String(status?.message), /credentials/);
    const m = await alice.remember({ title: 'Local decision', text: 'local works: marmot' }, { project: PROJECT });
    const shared = await within(15_000, 'share to a refused store', alice.share('memory', m.id, { project: PROJECT }));
    assert.equal(shared.delivery, 'queued');
    assert.ok((await alice.search('marmot', { scope: { project: PROJECT } })).length > 0);
    assertNoSecret('status', JSON.stringify(await alice.teamStatus()));
    assertNoSecret('logs', logs.join('\n'));
    await assert.rejects(alice.syncTeam(), (e: Error) => (assertNoSecret('sync error', e.message), true));
    // CLI
    const store = path.join(team.dir(), 'cli-store');
    const out = await runMain(['team', '--store', store, '--team-store', 's3://team/acme', '--project', PROJECT], { ...env, CODE_MEMORY_EMBEDDER: 'none' });
    assertNoSecret('cli', out.out + out.err);
    assert.match(out.out + out.err, /credentials/);
  });

  it('wrong bucket: refused naming the bucket', async () => {
    const s = await server();
    const alice = await person('Alice', s.env, 's3://no-such-bucket/acme');
    await until(async () => (await alice.teamStatus())?.state === 'refused');
    assert.match(String((await alice.teamStatus())?.message), /no-such-bucket.*does not exist/);
  });

  it('credentials written into the team store URI are not echoed in errors, status or logs', async () => {
    const s = await server();
    const uri = `s3://${ACCESS}:${SECRET}@team/acme`;
    let engine: MemoryEngine | null = null;
    try {
      engine = await person('Alice', s.env, uri);
      await until(async () => ['refused', 'offline'].includes(String((await engine!.teamStatus())?.state)));
      const st = await engine.teamStatus();
      assertNoSecret('status', JSON.stringify(st));
    } catch (e) {
      assertNoSecret('open error', String((e as Error).message));
    }
    assertNoSecret('logs', logs.join('\n'));
    const out = await runMain(['team', '--store', path.join(team.dir(), 'cli'), '--team-store', uri, '--project', PROJECT], { ...s.env, CODE_MEMORY_EMBEDDER: 'none' });
    assertNoSecret('cli output', out.out + out.err);
  });

  it('a personal store on s3:// with wrong credentials: a clear error without the secret', async () => {
    const s = await server();
    const env = { ...s.env, AWS_ACCESS_KEY_ID: ACCESS, AWS_SECRET_ACCESS_KEY: SECRET, AWS_SESSION_TOKEN: SESSION };
    const t0 = Date.now();
    const out = await runMain(['stats', '--store', 's3://team/personal', '--project', PROJECT], { ...env, CODE_MEMORY_EMBEDDER: 'none' });
    assert.ok(Date.now() - t0 < 30_000);
    assert.notEqual(out.code, 0);
    assert.match(out.err, /credentials/);
    assertNoSecret('cli', out.out + out.err);
  });

  it('an endpoint URL with user info: the secret in it is not echoed in status or logs', async () => {
    const s = await server();
    const alice = await person('Alice', { ...s.env, AWS_ENDPOINT_URL: `http://${ACCESS}:${encodeURIComponent(SECRET)}@127.0.0.1:${s.port}` });
    await until(async () => ['refused', 'offline', 'online'].includes(String((await alice.teamStatus())?.state)) && (await alice.teamStatus())?.state !== 'connecting');
    assertNoSecret('status', decodeURIComponent(JSON.stringify(await alice.teamStatus())));
    assertNoSecret('logs', decodeURIComponent(logs.join('\n')));
  });

  it('unreachable endpoint: offline quickly, shares queue, local search works', async () => {
    const s = await server();
    const port = s.port;
    await s.stop();
    const alice = await person('Alice', { ...s.env, AWS_ENDPOINT_URL: `http://127.0.0.1:${port}` });
    await until(async () => (await alice.teamStatus())?.state === 'offline', 15_000);
    assert.match(String((await alice.teamStatus())?.message), /did not answer|ECONNREFUSED/);
    const m = await alice.remember({ title: 'Offline', text: 'offline: wombat' }, { project: PROJECT });
    assert.equal((await within(15_000, 'share while unreachable', alice.share('memory', m.id, { project: PROJECT }))).delivery, 'queued');
    assert.ok((await within(10_000, 'search while unreachable', alice.search('wombat', { scope: { project: PROJECT } }))).length > 0);
  });

  it('a network that black-holes after connect: share, search and close stay bounded (30 s)', async () => {
    const s = await server();
    const p = await blackholeProxy(s.port);
    try {
      const alice = await person('Alice', { ...s.env, AWS_ENDPOINT_URL: `http://127.0.0.1:${p.port}` });
      await until(async () => (await alice.teamStatus())?.state === 'online');
      await alice.syncTeam();
      const first = await alice.remember({ title: 'Before the hole', text: 'shared before: lynx' }, { project: PROJECT });
      assert.equal((await alice.share('memory', first.id, { project: PROJECT })).delivery, 'sent');
      p.blackhole(true);
      const m = await alice.remember({ title: 'During the hole', text: 'written during: ocelot' }, { project: PROJECT });
      const shared = await within(30_000, 'share into a black hole', alice.share('memory', m.id, { project: PROJECT }));
      assert.equal(shared.delivery, 'queued');
      assert.ok((await within(10_000, 'local search during the hole', alice.search('ocelot', { scope: { project: PROJECT } }))).length > 0);
    } finally {
      p.blackhole(false);
      await p.close();
    }
  });

  it('first run, the network black-holes right after connect: a search (local results) stays bounded (30 s)', async () => {
    const s = await server();
    const seed = await person('Seed', s.env);
    await until(async () => (await seed.teamStatus())?.state === 'online');
    for (let i = 0; i < 3; i++) {
      const m = await seed.remember({ title: `Seed ${i}`, text: `seed text ${i}: heron` }, { project: PROJECT });
      await seed.share('memory', m.id, { project: PROJECT });
    }
    const p = await blackholeProxy(s.port);
    try {
      const bob = await team.person('Bob', s, { env: { AWS_ENDPOINT_URL: `http://127.0.0.1:${p.port}` } });
      await bob.remember({ title: 'Bob local', text: 'bob local heron note' }, { project: PROJECT });
      await until(async () => (await bob.teamStatus())?.state === 'online' || (await bob.teamStatus())?.synced_at_epoch !== null, 20_000);
      p.blackhole(true);
      const hits = await within(30_000, 'first-run search during the hole', bob.search('heron', { scope: { project: PROJECT } }));
      assert.ok(hits.some((h) => h.cell.title === 'Bob local'));
    } finally {
      p.blackhole(false);
      await p.close();
    }
  });
});
