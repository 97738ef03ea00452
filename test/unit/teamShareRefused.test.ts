// `code-memory share` and `unshare` to a team store that answered and refused (a missing
// bucket, keys refused, a 403 on the write itself) say it was refused, and why, not that the
// store is unreachable; one that does not answer still says so.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { runMain } from './cliInProcess';
import { startProxy } from './fixtures/faultProxy';
import { until } from './fixtures/s3Server';
import { bucketHolds, teamHarness } from './teamFixture';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';

describe('team share refused: the message names the refusal', function () {
  this.timeout(300_000);
  const team = teamHarness();

  async function seeded(store: string, title = 'Release checklist', text = 'tag, build, publish: marker-refused-tapir'): Promise<number> {
    const seed = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      return (await seed.remember({ title, text }, { project: PROJECT })).id;
    } finally {
      await seed.close();
    }
  }

  function cli(args: string[], store: string, uri: string, env: Record<string, string>) {
    return runMain([...args, '--store', store, '--team-store', uri, '--project', PROJECT], { ...env, CODE_MEMORY_EMBEDDER: 'none' });
  }

  it('a missing bucket: share and unshare say refused, with the reason', async () => {
    const s = await team.server();
    const store = path.join(team.dir(), 'cli-store');
    const id = await seeded(store);
    const shared = await cli(['share', '--memory', String(id), '--yes'], store, 's3://no-such-bucket/acme', s.env);
    assert.equal(shared.code, 0, shared.err);
    assert.match(shared.out, /^Queued \(the team store refused it: .*no-such-bucket.*does not exist.*\): Release checklist/);
    assert.doesNotMatch(shared.out, /not reachable/);
    const un = await cli(['unshare', '--memory', String(id)], store, 's3://no-such-bucket/acme', s.env);
    assert.equal(un.code, 0, un.err);
    assert.match(un.out, /^Unshare queued \(the team store refused it: .*no-such-bucket/);
  });

  it('keys refused: share says refused, about the credentials', async () => {
    const s = await team.server();
    const store = path.join(team.dir(), 'cli-store');
    const id = await seeded(store);
    const shared = await cli(['share', '--memory', String(id), '--yes'], store, 's3://team/acme', { ...s.env, AWS_ACCESS_KEY_ID: 'WRONGKEYREFUSED', AWS_SECRET_ACCESS_KEY: 'WrongSecretRefused123' });
    assert.equal(shared.code, 0, shared.err);
    assert.match(shared.out, /^Queued \(the team store refused it: .*credentials/);
    assert.doesNotMatch(shared.out, /WrongSecretRefused123/);
  });

  it('a store that passes the probe and answers the write 403: refused, first write and later ones alike', async () => {
    const s = await team.server();
    const proxy = await startProxy(s.endpoint);
    try {
      const store = path.join(team.dir(), 'cli-store');
      const env = { ...s.env, AWS_ENDPOINT_URL: proxy.endpoint };
      // The team store's first write (it creates the table) refused.
      const first = await seeded(store);
      proxy.hook = (seen) => (seen.method === 'PUT' && seen.url.includes('team_items.lance/') ? { kind: 'fail', status: 403 } : { kind: 'forward' });
      const refused = await cli(['share', '--memory', String(first), '--yes'], store, 's3://team/acme', env);
      assert.equal(refused.code, 0, refused.err);
      assert.match(refused.out, /^Queued \(the team store refused it: .*HTTP 403/);
      assert.match(refused.out, /: refused, 1 write\(s\) queued/);
      // Accepted again: the queue goes out.
      proxy.hook = () => ({ kind: 'forward' });
      const sent = await cli(['team'], store, 's3://team/acme', env);
      assert.equal(sent.code, 0, sent.out + sent.err);
      assert.ok((await bucketHolds(s, 'marker-refused-tapir')).length > 0, 'the queued share went out');
      // A write to the table that exists refused: the engine says refused, not offline.
      const second = await seeded(store, 'Second', 'second: marker-refused-second-tapir');
      proxy.hook = (seen) => (seen.method === 'PUT' && seen.url.includes('team_items.lance/') ? { kind: 'fail', status: 403 } : { kind: 'forward' });
      const again = await cli(['share', '--memory', String(second), '--yes'], store, 's3://team/acme', env);
      assert.equal(again.code, 0, again.err);
      assert.match(again.out, /^Queued \(the team store refused it: .*HTTP 403/);
    } finally {
      await proxy.close();
    }
  });

  it('an engine whose write is refused reports refused, and online again once the store accepts', async () => {
    const s = await team.server();
    const proxy = await startProxy(s.endpoint);
    try {
      const alice = await team.person('Alice', s, { env: { AWS_ENDPOINT_URL: proxy.endpoint }, online: true });
      const ok = await alice.remember({ title: 'Accepted', text: 'accepted: marker-accepted-tapir' }, { project: PROJECT });
      assert.equal((await alice.share('memory', ok.id, { project: PROJECT })).delivery, 'sent');
      proxy.hook = (seen) => (seen.method === 'PUT' && seen.url.includes('team_items.lance/') ? { kind: 'fail', status: 403 } : { kind: 'forward' });
      const m = await alice.remember({ title: 'Refused', text: 'refused: marker-refused-later-tapir' }, { project: PROJECT });
      const r = await alice.share('memory', m.id, { project: PROJECT });
      assert.deepEqual({ delivery: r.delivery, state: r.status.state }, { delivery: 'queued', state: 'refused' });
      assert.match(String(r.status.message), /HTTP 403/);
      proxy.hook = () => ({ kind: 'forward' });
      await alice.syncTeam();
      await until(async () => (await alice.teamStatus())?.state === 'online' && (await alice.teamStatus())?.pending === 0);
      assert.ok((await bucketHolds(s, 'marker-refused-later-tapir')).length > 0);
    } finally {
      await proxy.close();
    }
  });

  it('a store that does not answer still says not reachable', async () => {
    const s = await team.server();
    const store = path.join(team.dir(), 'cli-store');
    const id = await seeded(store);
    await s.stop();
    const shared = await cli(['share', '--memory', String(id), '--yes'], store, 's3://team/acme', s.env);
    assert.equal(shared.code, 0, shared.err);
    assert.match(shared.out, /^Queued \(the team store is not reachable; it goes out when it is\)/);
  });
});
