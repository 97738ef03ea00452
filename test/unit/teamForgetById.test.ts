// A forget by an id that names no record leaves the caller's shares alone.
import { strict as assert } from 'node:assert';
import type { MemoryEngine } from '../../src/core/engine';
import { bucketHolds, teamHarness } from './teamFixture';
import type { S3Server } from './fixtures/s3Server';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';

describe('team store after forget', function () {
  this.timeout(300_000);
  const team = teamHarness();
  const person = (name: string, s: S3Server): Promise<MemoryEngine> => team.person(name, s, { online: true });

  it('forget by an id that names no record leaves the other shares alone', async () => {
    const s = await team.server();
    const alice = await person('Alice', s);
    const scope = { project: PROJECT };
    const keep = await alice.remember({ title: 'Keep me shared', text: 'team should keep this: marker-keep-kudu' }, scope);
    assert.equal((await alice.share('memory', keep.id, scope)).delivery, 'sent');
    await alice.syncTeam();
    // A forget of a memory that does not exist (already forgotten, or a typo)
    await alice.forget({ ids: [987654], kind: 'memory' } as never, scope);
    await alice.syncTeam().catch(() => undefined);
    assert.equal((await alice.listShared(scope)).length, 1, 'the unrelated shared memory was unshared by a forget that deleted nothing');
    assert.ok((await bucketHolds(s, 'marker-keep-kudu')).length > 0, 'the unrelated shared memory is gone from the bucket');
  });
});
