// A team item is of one project. An unshare by node id made in another project's scope (a CLI run
// in another repository, `unshare --node <id>`) is refused, whether or not the team store can be
// asked: it neither drops the owner's queued share nor its ledger record, so the owner's item
// still goes out, and a later forget in the owner's project still finds and removes it.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import type { TeamMemory } from '../../src/core/team/teamMemory';
import { until } from './fixtures/s3Server';
import type { S3Server } from './fixtures/s3Server';
import { bucketHolds, teamHarness } from './teamFixture';

process.env.LANCEDB_LOG ??= 'error';

const A = { project: 'github.com/acme/alpha' };
const B = { project: 'github.com/acme/beta' };
const REFUSED = /^no team item [0-9a-f-]{36} in project github\.com\/acme\/beta: nothing was unshared$/;

describe('team: an unshare by node id from another project', function () {
  this.timeout(300_000);
  const team = teamHarness();

  async function reopenAs(s: S3Server, author: string): Promise<MemoryEngine> {
    return team.keep(
      await MemoryEngine.open({
        storeUri: path.join(team.dir(), 'Alice-store'),
        embedder: 'none',
        maintenanceIntervalMs: 0,
        team: { uri: 's3://team/acme', author, env: { ...s.env }, refreshMs: 0, retryMs: 200 },
      }),
    );
  }

  /** Alice's memory holding `marker`, shared in project A while the team store is down: its share waits in her queue. */
  async function queuedShare(marker: string): Promise<{ s: S3Server; alice: MemoryEngine; nodeId: string }> {
    const s = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    await s.stop();
    const m = await alice.remember({ title: 'Alpha queued decision', text: `alpha text ${marker}` }, A);
    const shared = await alice.share('memory', m.id, A);
    assert.equal(shared.delivery, 'queued', 'control: the team store is unreachable');
    return { s, alice, nodeId: shared.preview.node_id };
  }

  /** The team store back where it was: the queue has gone out and the copy is refreshed. */
  async function backOnline(s: S3Server, alice: MemoryEngine): Promise<S3Server> {
    const back = await team.server({ port: s.port, directory: s.directory });
    await until(async () => (await alice.teamStatus())?.pending === 0, 60_000);
    await alice.syncTeam();
    return back;
  }

  it("is refused while the owner's share is still queued (the team store unreachable), and the share goes out once it is back", async () => {
    const { s, alice, nodeId } = await queuedShare('marker-queued-wombat');
    await assert.rejects(alice.unshare({ node_id: nodeId }, B), { name: 'FilterError', message: REFUSED });
    await backOnline(s, alice);
    assert.deepEqual((await alice.listShared(A)).map((i) => i.node_id), [nodeId]);
  });

  it('is refused while the team store is unreachable, and a forget in the owner project after the git author changed still removes the item', async () => {
    const s = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    const m = await alice.remember({ title: 'Alpha decision', text: 'alpha text marker-ledger-quoll' }, A);
    const shared = await alice.share('memory', m.id, A);
    assert.equal(shared.delivery, 'sent');
    await s.stop();
    await assert.rejects(alice.unshare({ node_id: shared.preview.node_id }, B), { name: 'FilterError', message: REFUSED });
    const back = await team.server({ port: s.port, directory: s.directory });
    await until(async () => (await alice.teamStatus())?.pending === 0, 60_000);
    assert.deepEqual(await bucketHolds(back, 'marker-ledger-quoll').then((files) => files.length > 0), true, 'control: the item is in the team store');
    await alice.close();
    const renamed = await reopenAs(back, 'Alice Renamed <alice@new.example.com>');
    await until(async () => (await renamed.teamStatus())?.state === 'online');
    await renamed.forget({ ids: [m.id], kind: 'memory' }, A);
    await renamed.syncTeam().catch(() => undefined);
    await until(async () => (await renamed.teamStatus())?.pending === 0, 60_000);
    assert.deepEqual(await bucketHolds(back, 'marker-ledger-quoll'), []);
  });

  it("the team queue's unshare of project B drops none of project A's queued shares of the same node id", async () => {
    const { s, alice, nodeId } = await queuedShare('marker-queue-dunnart');
    const queue = (alice as unknown as { sharing: { team: TeamMemory } }).sharing.team;
    await queue.unshare(B.project, [nodeId], 'Alice <alice@example.com>', { ifFound: true });
    const back = await backOnline(s, alice);
    assert.deepEqual((await alice.listShared(A)).map((i) => i.node_id), [nodeId]);
    assert.ok((await bucketHolds(back, 'marker-queue-dunnart')).length > 0, "A's share reached the team store");
  });
});
