// Share, edit and share again while offline: the team store gets the last version only.
import { strict as assert } from 'node:assert';
import type { MemoryEngine } from '../../src/core/engine';
import { startS3Server, until } from './fixtures/s3Server';
import { bucketHolds, teamHarness } from './teamFixture';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';

describe('re-share while offline', function () {
  this.timeout(300_000);
  const team = teamHarness();

  it('share, edit out a secret, share again while offline: the team gets one item with the new text and the old text is in no object', async () => {
    const s = await team.server();
    const alice: MemoryEngine = await team.person('Alice', s, { online: true });
    const scope = { project: PROJECT };
    const m = await alice.remember({ title: 'Queue choice', text: 'We use RabbitMQ, password marker-v1-secret-oryx' }, scope);
    await s.stop();
    assert.equal((await alice.share('memory', m.id, scope)).delivery, 'queued');
    await alice.editMemory(scope, m.id, { text: 'We use RabbitMQ (password removed) marker-v2-oryx' });
    assert.equal((await alice.share('memory', m.id, scope)).delivery, 'queued');
    const back = team.keep(await startS3Server({ directory: s.directory, port: s.port }));
    await until(async () => (await alice.teamStatus())?.state === 'online' && (await alice.teamStatus())?.pending === 0, 60_000);
    const bob = await team.person('Bob', back, { online: true });
    await bob.syncTeam();
    const items = await bob.listShared(scope);
    assert.equal(items.length, 1, `teammates see ${items.length} copies: ${items.map((i) => i.text).join(' | ')}`);
    assert.match(items[0].text, /marker-v2-oryx/);
    assert.deepEqual(await bucketHolds(back, 'marker-v1-secret-oryx'), [], 'the text the edit took out is still in objects of the bucket');
  });
});
