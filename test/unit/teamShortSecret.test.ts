// The team store's keys are redacted from what is shared, short ones (an S3-compatible server's
// 8-character minimum) too.
import { strict as assert } from 'node:assert';
import { teamHarness } from './teamFixture';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';

describe('team store keys redacted whatever their shape', function () {
  this.timeout(120_000);
  const team = teamHarness();

  it('a short secret key (a MinIO-style 12-character key) is redacted from what would be shared', async () => {
    const secret = 'Qz7mK2pV9xLw'; // 12 characters: MinIO accepts secret keys from 8
    const alice = await team.person('Alice', null, {
      env: { AWS_ACCESS_KEY_ID: 'teamaccess', AWS_SECRET_ACCESS_KEY: secret, AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL: 'http://127.0.0.1:9' },
      retryMs: 60_000,
    });
    const scope = { project: PROJECT };
    const m = await alice.remember({ title: 'Team bucket', text: `mc alias set team http://minio:9000 teamaccess ${secret}` }, scope);
    const preview = await alice.previewShare('memory', m.id, scope);
    assert.ok(!preview.text.includes(secret), `README: the team store's keys are redacted whatever their shape; would share: ${preview.text}`);
  });
});
