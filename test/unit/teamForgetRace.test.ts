// Unshare and forget next to a teammate who shares and unshares on the same team store at the same
// time: once the unshare has settled (both outboxes drained), the unshared text is in no object of
// the bucket (data files, old versions, files a conflicting commit left behind), and nothing the
// teammate shared meanwhile is lost. A few rounds in one test: the race does not show every time.
import { strict as assert } from 'node:assert';
import type { MemoryEngine } from '../../src/core/engine';
import { randomUUID } from 'node:crypto';
import { bucketHolds, teamHarness } from './teamFixture';
import { until } from './fixtures/s3Server';
import type { S3Server } from './fixtures/s3Server';
import { objectClient, objectStorageOptions, parseObjectLocation } from '../../src/core/store/objectStorage';
import { TeamTable } from '../../src/core/team/teamTable';
import type { TeamRow } from '../../src/core/team/teamTable';
import { teamNodeId, teamRow } from '../../src/core/team/shareRows';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';
const ROUNDS = Number(process.env.TEAM_RACE_ROUNDS ?? 2);
const TABLE_ROUNDS = Number(process.env.TEAM_RACE_TABLE_ROUNDS ?? 14);

/** A team row as a share sends it: `who`'s record `id` saying `text`. */
function shared(who: string, id: number, text: string): TeamRow {
  const author = `${who} <${who.toLowerCase()}@example.com>`;
  const nodeId = teamNodeId(PROJECT, author, 'memory', id);
  const title = `${who} ${id}`;
  const cell = { node_id: nodeId, layer: 'L2' as const, source_kind: 'memory' as const, source_id: id, project: PROJECT, branch: null, type: 'decision', title, text, files: null, commit_sha: null, session_id: null, created_at_epoch: Date.now(), last_accessed_epoch: null, access_count: 0, status: 'active' };
  return teamRow({ cell, vector: null, embedModel: '' }, { node_id: nodeId, project: PROJECT, origin: `memory/${id}`, layer: 'L2', type: 'decision', title, text, files: [], branch: null, shared_by: author }, Date.now());
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('team store: unshare and forget racing a teammate', function () {
  this.timeout(180_000);
  const team = teamHarness();

  /**
   * Leaves in the bucket what a teammate's commit that lost its race against the unshare leaves:
   * a data file written from a version before the delete (a rewrite or compaction that read the
   * item), referenced by no version. LanceDB's cleanup keeps such a file for seven days.
   */
  async function abandonedWrite(s: S3Server, marker: string): Promise<string> {
    const object = (await s.files()).find((f) => f.file.includes('/data/') && f.file.endsWith('._S3rver_object') && f.bytes.includes(Buffer.from(marker)));
    assert.ok(object, `control: no data object holds ${marker}`);
    const location = parseObjectLocation('s3://team/acme')!;
    const client = objectClient(location, objectStorageOptions(location, s.env), 10_000)!;
    const key = `acme/team_items.lance/data/${randomUUID()}.lance`;
    const put = await client.send('PUT', key, {}, object.bytes, {});
    assert.equal(put.status, 200);
    return key;
  }

  it("two teammates' unshares of items in one fragment, racing: neither text is left in any object, the kept items stay", async () => {
    const s = await team.server();
    const options = objectStorageOptions(parseObjectLocation('s3://team/acme')!, s.env);
    const alice = await TeamTable.open('s3://team/acme', options, 16);
    const bob = await TeamTable.open('s3://team/acme', options, 16);
    try {
      const leaks: string[] = [];
      const kept: string[] = [];
      for (let round = 0; round < TABLE_ROUNDS; round++) {
        const secret = shared('Alice', round, `pasted by mistake: marker-t${round}-alice-okapi`);
        const keep = shared('Bob', 2 * round, `bob keeps this: marker-t${round}-bob-kept`);
        const gone = shared('Bob', 2 * round + 1, `bob takes this back: marker-t${round}-bob-okapi`);
        await alice.put([secret]);
        await bob.put([keep, gone]);
        kept.push(keep.node_id);
        // A purge compacts: the items end up in one fragment, which each unshare rewrites.
        await alice.table.optimize();
        // Each unshare is retried until it goes, as the outbox does.
        const unshare = async (t: TeamTable, r: TeamRow): Promise<void> => {
          await pause(Math.random() * 150);
          for (let attempt = 0; ; attempt++) {
            try {
              await t.remove(`node_id = '${r.node_id}'`, { purgeAnyway: true, nodeIds: [r.node_id] });
              return;
            } catch (e) {
              if (attempt >= 4) throw e;
            }
          }
        };
        await Promise.all([unshare(alice, secret), unshare(bob, gone)]);
        for (const marker of [`marker-t${round}-alice-okapi`, `marker-t${round}-bob-okapi`]) leaks.push(...(await bucketHolds(s, marker)).map((f) => `round ${round}, ${marker}: ${f}`));
      }
      assert.deepEqual(leaks, [], 'unshared text is still in objects of the bucket');
      const stored = new Set((await alice.rows(null, ['node_id'])).map((r) => String(r.node_id)));
      assert.deepEqual(kept.filter((id) => !stored.has(id)), [], 'items kept shared were lost');
      assert.equal(stored.size, kept.length, 'an unshared item is still stored');
    } finally {
      alice.close();
      bob.close();
    }
  });

  it('unshare and forget leave no abandoned write of the item in the bucket (a racing commit that lost), and the rest stays', async () => {
    const s = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    const bob = await team.person('Bob', s, { online: true });
    const scope = { project: PROJECT };
    const kept = await bob.remember({ title: 'Bob kept', text: 'bob keeps this shared: marker-kept-quokka' }, scope);
    await bob.share('memory', kept.id, scope);
    for (const how of ['unshare', 'forget'] as const) {
      const marker = `marker-${how}-abandoned-tapir`;
      const m = await alice.remember({ title: `Alice ${how}`, text: `pasted by mistake: ${marker}` }, scope);
      assert.equal((await alice.share('memory', m.id, scope)).delivery, 'sent');
      await abandonedWrite(s, marker);
      if (how === 'unshare') await alice.unshare({ kind: 'memory', id: m.id }, scope);
      else await alice.forget({ ids: [m.id], kind: 'memory' }, scope);
      await alice.syncTeam();
      assert.deepEqual(await bucketHolds(s, marker), [], `after ${how}: the text is still in objects of the bucket`);
    }
    await bob.syncTeam();
    assert.deepEqual((await bob.listShared(scope)).map((t) => t.title), ['Bob kept']);
    assert.ok((await bucketHolds(s, 'marker-kept-quokka')).length > 0);
  });

  it('after an unshare or forget settles, no object of the bucket holds its text, and the teammate keeps all he shared', async () => {
    const s = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    const bob = await team.person('Bob', s, { online: true });
    const scope = { project: PROJECT };
    const settle = async (engine: MemoryEngine): Promise<void> => {
      await until(async () => {
        await engine.syncTeam().catch(() => undefined);
        return (await engine.teamStatus())?.pending === 0;
      }, 60_000);
    };
    const bobKept: string[] = [];
    const leaks: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      let stop = false;
      let bobShared = 0;
      // Bob shares, and unshares every third item again (his own purges rewrite and prune too).
      const writer = (async () => {
        for (let i = 0; !stop && i < 80; i++) {
          const title = `Bob ${round}.${i}`;
          const m = await bob.remember({ title, text: `bob item ${round}.${i}` }, scope);
          await bob.share('memory', m.id, scope);
          bobShared++;
          if (i % 3 === 2) await bob.unshare({ kind: 'memory', id: m.id }, scope);
          else bobKept.push(title);
        }
      })();
      // Alice shares and takes back while he writes.
      const secrets: Array<{ id: number; marker: string; how: 'unshare' | 'forget' }> = [];
      for (let i = 0; i < 3; i++) {
        const marker = `marker-r${round}i${i}-pangolin`;
        const m = await alice.remember({ title: `Alice ${round}.${i}`, text: `pasted by mistake: ${marker}` }, scope);
        await alice.share('memory', m.id, scope);
        secrets.push({ id: m.id, marker, how: i === 2 ? 'forget' : 'unshare' });
      }
      for (const secret of secrets) {
        if (secret.how === 'unshare') await alice.unshare({ kind: 'memory', id: secret.id }, scope);
        else await alice.forget({ ids: [secret.id], kind: 'memory' }, scope);
      }
      if (process.env.TEAM_RACE_DEBUG) console.log(`round ${round}: bob shared ${bobShared} during alice's shares and unshares`);
      stop = true;
      await writer;
      await settle(bob);
      await settle(alice);
      for (const secret of secrets) leaks.push(...(await bucketHolds(s, secret.marker)).map((f) => `round ${round}, ${secret.how} ${secret.marker}: ${f}`));
    }
    assert.deepEqual(leaks, [], 'unshared or forgotten text is still in objects of the bucket');
    await settle(alice);
    const titles = new Set((await alice.listShared(scope)).map((t) => t.title));
    assert.deepEqual(bobKept.filter((t) => !titles.has(t)), [], "items Bob shared meanwhile were lost");
    assert.deepEqual([...titles].filter((t) => t.startsWith('Alice')), [], 'an unshared item is still listed');
  });
});
