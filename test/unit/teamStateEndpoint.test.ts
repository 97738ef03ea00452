// A team store's local state folder (its copy, queue and ledger) is keyed by its server as well
// as its bucket and prefix: another endpoint with the same bucket and prefix is another store.
// What an earlier build kept under bucket and prefix only (or under the prefix as written, before
// prefixes were URL-encoded) is picked up after the upgrade: no queued share is lost.
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { objectEndpointKey } from '../../src/core/store/objectStorage';
import { teamStateDir, teamStateFolder } from '../../src/core/team/teamMemory';
import { startS3Server, until } from './fixtures/s3Server';
import { bucketHolds, teamHarness } from './teamFixture';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';
const scope = { project: PROJECT };
const ALICE = 'Alice <alice@example.com>';
/** How earlier builds named a state folder: the first 16 hex digits of the key's SHA-256. */
const hashed = (key: string): string => createHash('sha256').update(key).digest('hex').slice(0, 16);

describe('team store state folder: keyed by endpoint, bucket and prefix', function () {
  this.timeout(300_000);
  const team = teamHarness();

  function open(store: string, uri: string, env: Record<string, string>): Promise<MemoryEngine> {
    return MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0, team: { uri, author: ALICE, env, refreshMs: 0, retryMs: 200 } });
  }

  /** Queues a share of a new memory while the team store cannot be reached; returns the state folders made. */
  async function queueOffline(store: string, uri: string, env: Record<string, string>, text: string): Promise<string[]> {
    const off = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0, team: { uri, author: ALICE, env: { ...env, AWS_ENDPOINT_URL: 'http://127.0.0.1:1' }, refreshMs: 0, retryMs: 60_000 } });
    try {
      const m = await off.remember({ title: 'Queued before the upgrade', text }, scope);
      assert.equal((await off.share('memory', m.id, scope)).delivery, 'queued');
    } finally {
      await off.close();
    }
    return fs.readdirSync(path.join(store, 'team'));
  }

  it('one endpoint however it is spelled is one folder; another endpoint, or none, is another', () => {
    const base = '/base';
    const key = (endpoint: string): string => objectEndpointKey('s3://team/acme', { AWS_ENDPOINT_URL: endpoint }, {});
    assert.equal(key('HTTP://Minio.example:9000/'), 'http://minio.example:9000');
    assert.equal(objectEndpointKey('s3://team/acme', {}, { endpoint: ' http://minio.example:9000 ' }), 'http://minio.example:9000');
    assert.equal(objectEndpointKey('s3://team/acme', { HOME: os.tmpdir(), AWS_CONFIG_FILE: '/nonexistent' }, {}), '');
    const a = teamStateDir(base, 's3://team/acme', key('http://minio-a:9000'));
    assert.equal(teamStateDir(base, 's3://team/acme/', key('HTTP://MINIO-A:9000/')), a);
    assert.notEqual(teamStateDir(base, 's3://team/acme', key('http://minio-b:9000')), a);
    assert.notEqual(teamStateDir(base, 's3://team/acme', ''), a);
    // No folder is named as an earlier build named one (bucket and prefix only): that one is adopted, never taken for current.
    assert.notEqual(teamStateDir(base, 's3://team/acme', ''), path.join(base, 'team', hashed('s3://team/acme')));
    // A team store in a folder has no endpoint: its folder's name is as it was.
    assert.equal(teamStateDir(base, '/srv/team-store', 'http://ignored:1'), path.join(base, 'team', hashed('/srv/team-store')));
  });

  it('a share queued for one endpoint does not go to another server with the same bucket and prefix, and goes to its own', async () => {
    const a = await team.server();
    const b = await team.server();
    const store = path.join(team.dir(), 'alice-store');
    await a.stop();
    const first = await open(store, 's3://team/acme', a.env);
    await until(async () => (await first.teamStatus())?.state === 'offline', 20_000);
    const m = await first.remember({ title: 'For A only', text: 'meant for server A: marker-endpoint-numbat' }, scope);
    assert.equal((await first.share('memory', m.id, scope)).delivery, 'queued');
    await first.close();

    const onB = team.keep(await open(store, 's3://team/acme', b.env));
    await until(async () => (await onB.teamStatus())?.state === 'online', 20_000);
    await onB.syncTeam();
    assert.deepEqual({ pending: (await onB.teamStatus())?.pending, listed: (await onB.listShared(scope)).length, inB: await bucketHolds(b, 'marker-endpoint-numbat') }, { pending: 0, listed: 0, inB: [] });
    await onB.close();

    const back = team.keep(await startS3Server({ directory: a.directory, port: a.port }));
    const onA = team.keep(await open(store, 's3://team/acme', back.env));
    await until(async () => (await onA.teamStatus())?.state === 'online', 20_000);
    await onA.syncTeam();
    assert.ok((await bucketHolds(back, 'marker-endpoint-numbat')).length > 0, 'the queue made for A went to A');
  });

  it('a queue an earlier build kept under bucket and prefix only goes out after the upgrade', async () => {
    const s = await team.server();
    const store = path.join(team.dir(), 'alice-store');
    const made = await queueOffline(store, 's3://team/acme', s.env, 'queued by the old build: marker-upgrade-quokka');
    assert.equal(made.length, 1);
    fs.renameSync(path.join(store, 'team', made[0]), path.join(store, 'team', hashed('s3://team/acme')));
    const alice = team.keep(await open(store, 's3://team/acme', s.env));
    await until(async () => (await alice.teamStatus())?.state === 'online', 20_000);
    await alice.syncTeam();
    assert.ok((await bucketHolds(s, 'marker-upgrade-quokka')).length > 0, 'the old queue went out');
    assert.deepEqual(fs.readdirSync(path.join(store, 'team')), [path.basename(teamStateDir(store, 's3://team/acme', s.endpoint))]);
  });

  it('a queue an earlier build kept for a prefix with a space and a letter beyond ASCII (named as written) is found', async () => {
    const s = await team.server();
    const store = path.join(team.dir(), 'alice-store');
    const uri = 's3://team/my störe/';
    const made = await queueOffline(store, uri, s.env, 'queued by the old build: marker-space-wallaby');
    assert.equal(made.length, 1);
    fs.renameSync(path.join(store, 'team', made[0]), path.join(store, 'team', hashed('s3://team/my störe')));
    const alice = team.keep(await open(store, uri, s.env));
    await until(async () => (await alice.teamStatus())?.state === 'online', 20_000);
    await alice.syncTeam();
    assert.ok((await bucketHolds(s, 'marker-space-wallaby')).length > 0, 'the old queue went out');
  });

  it('an earlier build\'s folder and the current one both holding entries: the entries are merged', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-state-endpoint-'));
    try {
      const endpoint = 'http://minio:9000';
      const dir = teamStateDir(base, 's3://team/acme', endpoint);
      const legacy = path.join(base, 'team', hashed('s3://team/acme'));
      fs.mkdirSync(path.join(legacy, 'outbox'), { recursive: true });
      fs.writeFileSync(path.join(legacy, 'outbox', '000-unshare.json'), '{"op":"unshare","node_ids":[],"project":"p"}');
      fs.mkdirSync(path.join(dir, 'outbox'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'outbox', '001-share.json'), '{"op":"share","rows":[]}');
      assert.equal(await teamStateFolder(base, 's3://team/acme', undefined, endpoint), dir);
      assert.deepEqual(fs.readdirSync(path.join(dir, 'outbox')).sort(), ['000-unshare.json', '001-share.json']);
      assert.equal(fs.existsSync(legacy), false);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});
