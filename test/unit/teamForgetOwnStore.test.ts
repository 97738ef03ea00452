// A forget of a whole project (or of everything) takes back the shares made from this personal
// store: the same git author on another machine (another personal store) shares items of their
// own, and this forget is not theirs. (It took back every item of the author in the project.)
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import type { ForgetRequest } from '../../src/core/api';
import { bucketHolds, teamHarness } from './teamFixture';
import { until } from './fixtures/s3Server';
import type { S3Server } from './fixtures/s3Server';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';
const OTHER = 'github.com/acme/other';
const scope = { project: PROJECT };

describe("team store: a forget of whole projects takes back this store's shares only", function () {
  this.timeout(120_000);
  const team = teamHarness();

  /** Alice's second machine: another personal store, the same git author. */
  async function desktop(s: S3Server): Promise<MemoryEngine> {
    const engine = team.keep(
      await MemoryEngine.open({
        storeUri: path.join(team.dir(), 'desktop-store'),
        embedder: 'none',
        maintenanceIntervalMs: 0,
        team: { uri: 's3://team/acme', author: 'Alice <alice@example.com>', env: s.env, refreshMs: 0, retryMs: 200 },
      }),
    );
    await until(async () => (await engine.teamStatus())?.state === 'online');
    return engine;
  }

  for (const [label, request] of [
    ['a forget of the project', { project: PROJECT }],
    ['a forget of everything', { all: true }],
  ] as Array<[string, ForgetRequest]>) {
    it(`${label} on the laptop unshares the laptop's items, not the desktop's`, async () => {
      const s = await team.server();
      const laptop = await team.person('Alice', s, { online: true });
      const other = await desktop(s);
      const l = await laptop.remember({ title: 'Laptop note', text: 'marker-laptop-kinkajou' }, scope);
      assert.equal((await laptop.share('memory', l.id, scope)).delivery, 'sent');
      const d = await other.remember({ title: 'Desktop note', text: 'marker-desktop-kinkajou' }, scope);
      assert.equal((await other.share('memory', d.id, scope)).delivery, 'sent');
      const elsewhere = await other.remember({ title: 'Desktop note, other project', text: 'marker-desktop-other-kinkajou' }, { project: OTHER });
      assert.equal((await other.share('memory', elsewhere.id, { project: OTHER })).delivery, 'sent');
      // The laptop's copy of the team store holds the desktop's items too.
      await laptop.syncTeam();
      assert.equal((await laptop.listShared(scope)).length, 2);

      await laptop.forget(request, null);
      await laptop.syncTeam();
      assert.deepEqual(await bucketHolds(s, 'marker-laptop-kinkajou'), []);
      assert.ok((await bucketHolds(s, 'marker-desktop-kinkajou')).length > 0, "the desktop's share stays");
      assert.ok((await bucketHolds(s, 'marker-desktop-other-kinkajou')).length > 0, "the desktop's share in another project stays");
      assert.deepEqual((await laptop.listShared(scope)).map((i) => i.title), ['Desktop note']);
    });
  }

  it('a forget of the project still takes back a share of this store that its ledger does not hold (shared by an earlier version)', async () => {
    const s = await team.server();
    const laptop = await team.person('Alice', s, { online: true });
    const other = await desktop(s);
    const l = await laptop.remember({ title: 'Laptop note', text: 'marker-unrecorded-kinkajou' }, scope);
    const shared = await laptop.share('memory', l.id, scope);
    const d = await other.remember({ title: 'Desktop note', text: 'marker-desktop-kinkajou' }, scope);
    await other.share('memory', d.id, scope);
    // As an earlier version left it: shared, but not in the ledger.
    await laptop['sharing']!.team.ledger.remove([shared.preview.node_id]);
    await laptop.syncTeam();
    await laptop.forget({ project: PROJECT }, null);
    await laptop.syncTeam();
    assert.deepEqual(await bucketHolds(s, 'marker-unrecorded-kinkajou'), []);
    assert.ok((await bucketHolds(s, 'marker-desktop-kinkajou')).length > 0);
  });
});
