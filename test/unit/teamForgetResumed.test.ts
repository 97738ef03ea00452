// A forget a crash interrupted, finished by the next open, reaches the team store too: a queued
// share of what it forgot never leaves.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as os from 'node:os';
import { TABLES } from '../../src/core/store/schema';
import { startS3Server, until } from './fixtures/s3Server';
import { bucketHolds, teamHarness } from './teamFixture';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';

describe('a forget a crash interrupted, with a team store', function () {
  this.timeout(300_000);
  const team = teamHarness();

  it('the queued share of a memory whose forget a crash interrupted never leaves the machine once the next open finishes the forget', async () => {
    const s = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    const scope = { project: PROJECT };
    await s.stop();
    const m = await alice.remember({ title: 'Oops', text: 'pasted by mistake: marker-crash-fossa' }, scope);
    assert.equal((await alice.share('memory', m.id, scope)).delivery, 'queued');
    // forget journalled (closure and all) and its deletes done, then the process died before its purge and its unshare.
    const dead = spawnSync(process.execPath, ['-e', '']).pid as number;
    const journal = {
      request: { kind: 'memory', ids: [m.id] },
      scope,
      owner: { pid: dead, host: os.hostname() },
      closure: { doomed: { observation: [], session_summary: [], memory: [m.id] }, entities: [`memory:${m.id}`], restore: [] },
    };
    await alice.store.setMeta({ pending_forget: JSON.stringify(journal) });
    await alice.store.delete(TABLES.memories, `project = '${PROJECT}' AND id IN (${m.id})`);
    await alice.store.delete(TABLES.cells, `project = '${PROJECT}' AND source_kind = 'memory' AND source_id IN (${m.id})`);
    await alice.close();

    const back = team.keep(await startS3Server({ directory: s.directory, port: s.port }));
    const again = await team.person('Alice', back);
    assert.equal(await again.store.getMeta('pending_forget'), null, 'control: the next open finished the forget');
    await until(async () => (await again.teamStatus())?.state === 'online', 30_000);
    await again.syncTeam().catch(() => undefined);
    assert.deepEqual(await bucketHolds(back, 'marker-crash-fossa'), [], 'README: queued shares of what a forget forgot never leave; the resumed forget let it go out');
  });
});
