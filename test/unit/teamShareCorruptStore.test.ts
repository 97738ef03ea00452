// `code-memory share` to a team store whose objects are damaged (it answers, but what it holds
// cannot be read) says why the share waits, with the store's error, not that the store is not
// reachable; an endpoint where nothing listens still says not reachable.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { runMain } from './cliInProcess';
import { bucketHolds, teamHarness } from './teamFixture';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';

describe('team share to a damaged team store: the message says it could not be read', function () {
  this.timeout(300_000);
  const team = teamHarness();

  async function seeded(store: string, title: string, text: string): Promise<number> {
    const seed = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      return (await seed.remember({ title, text }, { project: PROJECT })).id;
    } finally {
      await seed.close();
    }
  }

  function cli(args: string[], store: string, env: Record<string, string>) {
    return runMain([...args, '--store', store, '--team-store', 's3://team/acme', '--project', PROJECT], { ...env, CODE_MEMORY_EMBEDDER: 'none' });
  }

  /** Overwrites every manifest and data file of the bucket's Lance tables with garbage. */
  function damage(dir: string): number {
    let n = 0;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const f = path.join(dir, e.name);
      if (e.isDirectory()) n += damage(f);
      else if (/\.(manifest|lance)\._S3rver_object$/.test(e.name)) {
        fs.writeFileSync(f, 'garbage');
        n++;
      }
    }
    return n;
  }

  it('damaged objects: share says the store could not be read and why, is queued, and sends nothing', async () => {
    const s = await team.server();
    const alice = await team.person('Alice', s);
    const seed = await alice.remember({ title: 'Seed', text: 'shared before the damage' }, { project: PROJECT });
    assert.equal((await alice.share('memory', seed.id, { project: PROJECT })).delivery, 'sent');
    await alice.close();
    assert.ok(damage(path.join(s.directory, s.bucket)) > 0);

    const store = path.join(team.dir(), 'cli-store');
    const id = await seeded(store, 'Release checklist', 'tag, build, publish: marker-damaged-tapir');
    const shared = await cli(['share', '--memory', String(id), '--yes'], store, s.env);
    assert.equal(shared.code, 0, shared.err);
    assert.match(shared.out, /^Queued \(the team store could not be read: .*LanceError.*; it goes out once it can\): Release checklist/);
    assert.doesNotMatch(shared.out, /not reachable/);
    assert.match(shared.out, /1 write\(s\) queued/);
    assert.deepEqual(await bucketHolds(s, 'marker-damaged-tapir'), []);
  });

  it('an endpoint where nothing listens still says not reachable', async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const store = path.join(team.dir(), 'cli-store');
    const id = await seeded(store, 'Release checklist', 'tag, build, publish');
    const env = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL: `http://127.0.0.1:${port}` };
    const shared = await cli(['share', '--memory', String(id), '--yes'], store, env);
    assert.equal(shared.code, 0, shared.err);
    assert.match(shared.out, /^Queued \(the team store is not reachable; it goes out when it is\): Release checklist/);
  });
});
