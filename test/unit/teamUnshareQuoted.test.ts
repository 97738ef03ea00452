// An unshare next to rows that quote the unshared item's node id (a teammate's memory citing
// `team/<node id>`, as retrieve_memory names a team item): the purge tells what is left of the
// item by rows, and the bytes of an id inside a stored row's value are that row's, so the unshare
// finishes, and a data object holding only such a quote is left alone even when no version
// references it (it may be a teammate's write in flight). And an unshare whose purge does not
// finish stays queued without holding back the entries after it or taking the store offline.
import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { holdsBeyond } from '../../src/core/team/tableObjects';
import { objectClient, objectStorageOptions, parseObjectLocation } from '../../src/core/store/objectStorage';
import type { MemoryEngine } from '../../src/core/engine';
import type { TeamTable } from '../../src/core/team/teamTable';
import { bucketHolds, teamHarness } from './teamFixture';
import type { S3Server } from './fixtures/s3Server';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';
const scope = { project: PROJECT };

/** A copy, under a name no version references, of the data object holding `marker` (as a teammate's write in flight, or one that lost its commit, leaves). */
async function unreferencedCopy(s: S3Server, marker: string): Promise<string> {
  const object = (await s.files()).find((f) => f.file.includes('/data/') && f.file.endsWith('._S3rver_object') && f.bytes.includes(Buffer.from(marker)));
  assert.ok(object, `control: no data object holds ${marker}`);
  const location = parseObjectLocation('s3://team/acme')!;
  const client = objectClient(location, objectStorageOptions(location, s.env), 10_000)!;
  const id = randomUUID();
  assert.equal((await client.send('PUT', `acme/team_items.lance/data/${id}.lance`, {}, object.bytes, {})).status, 200);
  return id;
}

/**
 * Makes the engine's unshares of `nodeId` unable to finish until the returned function is called:
 * their purge does nothing (the deleted row stays in a data object a version references) and the
 * row is found again after each delete (as a teammate's commit rebased on a version before the
 * delete writes it again).
 */
function stuck(engine: MemoryEngine, nodeId: string): () => void {
  const remote = (engine as unknown as { sharing: { team: { remote: TeamTable } } }).sharing.team.remote as unknown as { remove: TeamTable['remove']; count: TeamTable['count']; purge: () => Promise<void> };
  const [remove, count, purge] = [remote.remove.bind(remote), remote.count.bind(remote), remote.purge.bind(remote)];
  let on = true;
  const ofItem = (where: string | undefined): boolean => on && !!where?.includes(nodeId);
  remote.count = async (where) => (ofItem(where) ? 1 : count(where));
  remote.remove = async (where, options) => {
    if (!ofItem(where)) return remove(where, options);
    remote.purge = async () => undefined;
    try {
      return await remove(where, options);
    } finally {
      remote.purge = purge;
    }
  };
  return () => (on = false);
}

describe("team store: unshare next to rows quoting the item's node id", function () {
  this.timeout(240_000);
  const team = teamHarness();

  it("an unshare goes out although a teammate's shared memory quotes the item's node id, and so do the shares after it", async () => {
    const s = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    const bob = await team.person('Bob', s, { online: true });
    const m = await alice.remember({ title: 'Quzzleplank cache rule', text: 'marker-quoted-quzzleplank caches for 5 minutes', memory_type: 'decision' }, scope);
    const shared = await alice.share('memory', m.id, scope);
    assert.equal(shared.delivery, 'sent');
    const nodeId = shared.preview.node_id;
    const b = await bob.remember({ title: 'Cache notes', text: `see team/${nodeId} (shared by Alice) for the cache rule, marker-bob-quote` }, scope);
    assert.equal((await bob.share('memory', b.id, scope)).delivery, 'sent');
    const quoteInFlight = await unreferencedCopy(s, 'marker-bob-quote');
    const unshared = await alice.unshare({ node_id: nodeId }, scope);
    const later = await alice.remember({ title: 'Later decision', text: 'marker-later-wibblefrost decision' }, scope);
    const laterShared = await alice.share('memory', later.id, scope);
    const status = await alice.teamStatus();
    assert.deepEqual(
      { unshared: unshared.delivery, later: laterShared.delivery, state: status?.state, pending: status?.pending },
      { unshared: 'sent', later: 'sent', state: 'online', pending: 0 },
      String(status?.message),
    );
    assert.deepEqual(await bucketHolds(s, 'marker-quoted-quzzleplank'), [], 'the unshared text is still in objects of the bucket');
    assert.ok((await bucketHolds(s, 'marker-later-wibblefrost')).length > 0, 'the later share did not reach the bucket');
    assert.ok((await s.files()).some((f) => f.file.includes(quoteInFlight)), "a data object holding only bob's quote, no version referencing it, was deleted");
    await bob.syncTeam();
    assert.deepEqual((await bob.listShared(scope)).map((i) => i.title).sort(), ['Cache notes', 'Later decision']);
  });

  it("a teammate's text quoting an unshared item's node id holds back no later unshare of another item", async () => {
    const s = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    const bob = await team.person('Bob', s, { online: true });
    const x = await alice.remember({ title: 'Quzzleplank cache rule', text: 'quzzleplank caches for 5 minutes' }, scope);
    const y = await alice.remember({ title: 'Staging host', text: 'staging host is marker-dramblewick.internal (should not have shared)' }, scope);
    const sx = await alice.share('memory', x.id, scope);
    assert.equal((await alice.share('memory', y.id, scope)).delivery, 'sent');
    const b = await bob.remember({ title: 'Cache notes', text: `see team/${sx.preview.node_id} for the cache rule` }, scope);
    assert.equal((await bob.share('memory', b.id, scope)).delivery, 'sent');
    await alice.unshare({ node_id: sx.preview.node_id }, scope);
    await alice.unshare({ kind: 'memory', id: y.id }, scope);
    await alice.syncTeam();
    assert.deepEqual(await bucketHolds(s, 'marker-dramblewick'), []);
  });

  it('an unshare whose purge does not finish stays queued, holds back neither later entries nor later syncs, and the store stays online', async () => {
    const s = await team.server();
    const log: string[] = [];
    const alice = await team.person('Alice', s, { online: true, logger: (m) => log.push(m) });
    const [x, y] = [await alice.remember({ title: 'Stuck item', text: 'marker-stuck-okapi' }, scope), await alice.remember({ title: 'Other item', text: 'marker-other-okapi' }, scope)];
    const sx = await alice.share('memory', x.id, scope);
    assert.equal((await alice.share('memory', y.id, scope)).delivery, 'sent');
    const unstick = stuck(alice, sx.preview.node_id);
    const delivery = (await alice.unshare({ node_id: sx.preview.node_id }, scope)).delivery;
    assert.deepEqual(log.filter((l) => /^team store .*: offline/.test(l)), [], 'the store was taken for offline');
    assert.equal(delivery, 'queued');
    await alice.unshare({ kind: 'memory', id: y.id }, scope);
    const z = await alice.remember({ title: 'Later item', text: 'marker-later-okapi' }, scope);
    await alice.share('memory', z.id, scope);
    await alice.syncTeam();
    const status = await alice.teamStatus();
    assert.deepEqual({ state: status?.state, pending: status?.pending }, { state: 'online', pending: 1 }, String(status?.message));
    assert.deepEqual(await bucketHolds(s, 'marker-other-okapi'), [], 'the unshare after the stuck one did not go');
    assert.ok((await bucketHolds(s, 'marker-later-okapi')).length > 0, 'the share after the stuck unshare did not go');
    // Once the purge can finish, the next sync takes the item out.
    unstick();
    await alice.syncTeam();
    assert.equal((await alice.teamStatus())?.pending, 0);
    assert.deepEqual(await bucketHolds(s, 'marker-stuck-okapi'), []);
  });

  it('a share made again of an item whose unshare is still queued goes out after that unshare, not before it', async () => {
    const s = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    const m = await alice.remember({ title: 'Shared again', text: 'marker-again-okapi' }, scope);
    const shared = await alice.share('memory', m.id, scope);
    const unstick = stuck(alice, shared.preview.node_id);
    assert.equal((await alice.unshare({ kind: 'memory', id: m.id }, scope)).delivery, 'queued');
    assert.equal((await alice.share('memory', m.id, scope)).delivery, 'queued');
    assert.equal((await alice.teamStatus())?.pending, 2, 'the share went out before the unshare queued ahead of it');
    unstick();
    await alice.syncTeam();
    assert.equal((await alice.teamStatus())?.pending, 0);
    assert.deepEqual((await alice.listShared(scope)).map((i) => i.title), ['Shared again']);
  });

  it("holdsBeyond: an id counts only outside a stored row's value that contains it", () => {
    const id = '79e998dc-4eb7-5762-8879-f3e9a727be41';
    const quote = `see team/${id} (shared by Alice)`;
    assert.equal(holdsBeyond(`\u0000\u0000${quote}\u0000other text`, id, [quote]), false, 'only the quote');
    assert.equal(holdsBeyond(`\u0000${id}b864b63d\u0000${quote}`, id, [quote]), true, 'the node id and the quote');
    assert.equal(holdsBeyond(`\u0000see team/${id} (shared by Eve)`, id, [quote]), true, 'a quote no stored row has');
    assert.equal(holdsBeyond(`\u0000${id}\u0000`, id, [id]), false, "another project's item under the same id");
    assert.equal(holdsBeyond('nothing here', id, []), false);
  });
});
