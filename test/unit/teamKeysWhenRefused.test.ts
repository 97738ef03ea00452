// The team store's keys are redacted from what is shared also when the store is refused for its
// settings (an endpoint that is no URL, a CODE_MEMORY_STORE_TIMEOUT that says nothing): shares
// wait in the queue meanwhile, and go out as they were queued once the settings are fixed.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { filesContaining } from './diskFixture';
import { bucketHolds, teamHarness } from './teamFixture';
import { until } from './fixtures/s3Server';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';
const scope = { project: PROJECT };

describe('team store keys redacted while the store is refused for its settings', function () {
  this.timeout(120_000);
  const team = teamHarness();

  it('an endpoint setting that is no URL: the secret key is not in the share preview', async () => {
    const secret = 'Hq4wZ8rT2nVb6'; // no known key shape: redacted only as a key this process holds
    const alice = team.keep(
      await MemoryEngine.open({
        storeUri: path.join(team.dir(), 'alice-store'),
        embedder: 'none',
        maintenanceIntervalMs: 0,
        objectStore: { endpoint: 'minio.internal:9000' },
        team: { uri: 's3://team/acme', author: 'Alice <alice@example.com>', env: { AWS_ACCESS_KEY_ID: 'teamaccess', AWS_SECRET_ACCESS_KEY: secret, AWS_REGION: 'us-east-1' }, refreshMs: 0, retryMs: 60_000 },
      }),
    );
    await until(async () => (await alice.teamStatus())?.state === 'refused');
    const m = await alice.remember({ title: 'Team bucket', text: `mc alias set team http://minio:9000 teamaccess ${secret}` }, scope);
    const preview = await alice.previewShare('memory', m.id, scope);
    assert.ok(!preview.text.includes(secret), `would share: ${preview.text}`);
  });

  it('a CODE_MEMORY_STORE_TIMEOUT that says nothing: the share queued holds no key, nor does the bucket once the setting is fixed', async () => {
    const s = await team.server();
    const secret = 'Pk3sW9dLm2Qx7';
    const env = { ...s.env, AWS_SECRET_ACCESS_KEY: secret };
    const refused = await team.person('Alice', s, { env: { ...env, CODE_MEMORY_STORE_TIMEOUT: 'soon' }, retryMs: 60_000 });
    await until(async () => (await refused.teamStatus())?.state === 'refused');
    const m = await refused.remember({ title: 'Team bucket', text: `the team bucket's key marker-quoll ${secret}` }, scope);
    const shared = await refused.share('memory', m.id, scope);
    assert.equal(shared.delivery, 'queued');
    assert.ok(!shared.preview.text.includes(secret), `queued: ${shared.preview.text}`);
    await refused.close();
    assert.deepEqual(filesContaining(path.join(team.dir(), 'Alice-store', 'team'), secret), []);

    const fixed = await team.person('Alice', s, { env, online: true });
    await fixed.syncTeam();
    assert.ok((await bucketHolds(s, 'marker-quoll')).length > 0, 'the queued share went out');
    assert.deepEqual(await bucketHolds(s, secret), []);
  });
});
