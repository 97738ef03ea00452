// Forget and the team store, on the sharer's disk and in the bucket: the sharer's own store folder
// (team cache, outbox, share ledger under team/<hash>/) keeps nothing of a forgotten shared record,
// also when the forget is made by a process not configured with that team store (the CLI without
// --team-store, a setting removed since): its unshare waits in that store's folder for the next open.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { bucketHolds, teamHarness } from './teamFixture';
import type { S3Server } from './fixtures/s3Server';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { filesContaining } from './diskFixture';

process.env.LANCEDB_LOG ??= 'error';

describe('team store: forget on the sharer\'s disk', function () {
  this.timeout(300_000);
  const team = teamHarness();
  const person = (name: string, s: S3Server): Promise<MemoryEngine> => team.person(name, s, { online: true });

  it("forgetting a shared memory leaves nothing of it in the sharer's own store folder (team cache, ledger, outbox)", async () => {
    const s = await team.server();
    const alice = await person('Alice', s);
    const scope = { project: 'github.com/acme/shared' };
    const m = await alice.remember({ title: 'Staging password marker-title-gerenuk', text: 'staging db is reached with marker-text-gerenuk' }, scope);
    await alice.remember({ title: 'keep', text: 'kept marker-keep-okapi' }, scope);
    await alice.share('memory', m.id, scope);
    await alice.syncTeam();
    const out = await retrieveMemory({ engine: alice, scope }, { prompt: 'how do we reach the staging db?' });
    assert.match(JSON.stringify(out), /gerenuk/);
    await alice.forget({ ids: [m.id], kind: 'memory' }, scope);
    await alice.syncTeam();
    assert.deepEqual(await bucketHolds(s, 'marker-text-gerenuk'), [], 'control: gone from the bucket');
    await alice.close();
    const dir = path.join(team.dir(), 'Alice-store');
    assert.deepEqual([...filesContaining(dir, 'marker-text-gerenuk'), ...filesContaining(dir, 'marker-title-gerenuk')], []);
  });

  it("forgetting a memory whose share is still queued (team store down) leaves no outbox copy", async () => {
    const s = await team.server();
    const alice = await person('Alice', s);
    const scope = { project: 'github.com/acme/shared' };
    await s.stop();
    const m = await alice.remember({ title: 'Oops', text: 'pasted by mistake marker-text-tayra' }, scope);
    assert.equal((await alice.share('memory', m.id, scope)).delivery, 'queued');
    await alice.forget({ ids: [m.id], kind: 'memory' }, scope);
    await alice.close();
    const dir = path.join(team.dir(), 'Alice-store');
    assert.deepEqual(filesContaining(dir, 'marker-text-tayra'), []);
  });

  it("forgetting a shared memory after the team store setting was removed leaves nothing of it in that team store's folder under the store", async () => {
    const s = await team.server();
    const alice = await person('Alice', s);
    const scope = { project: 'github.com/acme/shared' };
    const m = await alice.remember({ title: 'Oops', text: 'pasted by mistake marker-text-binturong' }, scope);
    await alice.share('memory', m.id, scope);
    await alice.syncTeam();
    await alice.close();
    // The same personal store opened without a team store (the setting cleared, or the CLI without --team-store).
    const dir = path.join(team.dir(), 'Alice-store');
    const solo = team.keep(await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 }));
    await solo.forget({ kind: 'memory', ids: [m.id] }, scope);
    await solo.close();
    assert.deepEqual(filesContaining(dir, 'marker-text-binturong'), []);
  });

  it("a shared memory forgotten by an engine opened without the team store (the CLI without --team-store) is unshared at the next open with it", async () => {
    const s = await team.server();
    const alice = await person('Alice', s);
    const scope = { project: 'github.com/acme/shared' };
    const m = await alice.remember({ title: 'Oops', text: 'pasted by mistake marker-text-fennec' }, scope);
    await alice.share('memory', m.id, scope);
    await alice.syncTeam();
    await alice.close();
    const dir = path.join(team.dir(), 'Alice-store');
    const solo = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    await solo.forget({ kind: 'memory', ids: [m.id] }, scope);
    await solo.close();
    // The editor opens the store again with its team store setting.
    const again = await person('Alice', s);
    await again.syncTeam();
    const shared = (await again.listShared(scope)).map((i) => i.text);
    assert.deepEqual({ bucket: await bucketHolds(s, 'marker-text-fennec'), shared }, { bucket: [], shared: [] });
  });
});
