// What the team store holds, who can read and remove it, and that forget, unshare and a re-share
// leave the old text nowhere (the bucket's objects and the personal store's files are read to check).
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { MemoryEngine } from '../../src/core/engine';
import { TeamTable } from '../../src/core/team/teamTable';
import { objectStorageOptions, parseObjectLocation } from '../../src/core/store/objectStorage';
import { startS3Server, until } from './fixtures/s3Server';
import { filesContaining } from './diskFixture';
import { bucketHolds, teamHarness } from './teamFixture';
import type { S3Server } from './fixtures/s3Server';

process.env.LANCEDB_LOG ??= 'error';

const PROJECT = 'github.com/acme/shared';
const OTHER = 'github.com/evil/other';

describe('team store: what is shared and what goes', function () {
  this.timeout(300_000);
  const team = teamHarness();
  const server = (): Promise<S3Server> => team.server();
  const person = (name: string, s: S3Server, env: Record<string, string> = {}): Promise<MemoryEngine> => team.person(name, s, { env, online: true });

  it('isolation: another project sees nothing through search, list, get by (guessed) id, and cannot unshare', async () => {
    const s = await server();
    const alice = await person('Alice', s);
    const mallory = await person('Mallory', s);
    const m = await alice.remember({ title: 'Deploy key rotation', text: 'rotate the deploy keys monthly: marker-tapir' }, { project: PROJECT });
    const shared = await alice.share('memory', m.id, { project: PROJECT });
    assert.equal(shared.delivery, 'sent');
    await mallory.syncTeam();
    const hostile = [OTHER, "x' OR '1'='1", "github.com/acme/shared' OR project <> '", 'github.com/acme/shared ', 'GITHUB.COM/ACME/SHARED', '%', 'github.com/acme/%'];
    for (const project of hostile) {
      const scope = { project };
      const hits = await mallory.search('deploy keys tapir', { scope }).catch((e: Error) => (e.name === 'FilterError' ? [] : Promise.reject(e)));
      assert.equal(hits.filter((h) => h.origin?.store === 'team').length, 0, `search from ${project}`);
      assert.deepEqual(await mallory.listShared(scope).catch(() => []), [], `list from ${project}`);
      assert.equal(await mallory.getNode(shared.preview.node_id, scope).catch(() => null), null, `get by id from ${project}`);
      await mallory.unshare({ node_id: shared.preview.node_id }, scope).catch(() => undefined);
    }
    // hostile filters from the right project never widen to the other project's items either
    await mallory.remember({ title: 'x', text: 'y' }, { project: OTHER });
    for (const filter of [{ session_id: "' OR '1'='1" }, { branch: "' OR project = 'github.com/acme/shared" }, { files: ["%' OR '1'='1"] }]) {
      const hits = await mallory.search('deploy keys tapir', { scope: { project: OTHER }, filter }).catch(() => []);
      assert.equal(hits.filter((h) => h.origin?.store === 'team').length, 0, JSON.stringify(filter));
    }
    await alice.syncTeam();
    assert.equal((await alice.listShared({ project: PROJECT })).length, 1, 'another project\'s unshare removed nothing');
    assert.ok((await bucketHolds(s, 'marker-tapir')).length > 0);
  });

  it('only the shared item goes to the bucket: no prompts, request log, sessions or other memories', async () => {
    const s = await server();
    const alice = await person('Alice', s);
    const scope = { project: PROJECT };
    await alice.addPrompt(scope, 'sess-private', 'private prompt marker-prompt-serval');
    const priv = await alice.remember({ title: 'Private', text: 'never shared marker-private-caracal' }, scope);
    void priv;
    const m = await alice.remember({ title: 'Shared', text: 'shared marker-shared-genet' }, scope);
    await alice.share('memory', m.id, scope);
    await alice.flush?.();
    assert.ok((await bucketHolds(s, 'marker-shared-genet')).length > 0);
    for (const needle of ['marker-prompt-serval', 'marker-private-caracal', 'sess-private']) assert.deepEqual(await bucketHolds(s, needle), [], needle);
    const keys = await s.keys();
    assert.ok(keys.every((k) => k.startsWith('acme/team_items.lance/') || k.startsWith('acme/__manifest/')), keys.join('\n'));
  });

  it('unshare next to a teammate writing at the same time: the text is in no object afterwards', async () => {
    const s = await server();
    const alice = await person('Alice', s);
    const bob = await person('Bob', s);
    const scope = { project: PROJECT };
    const mine: number[] = [];
    for (let i = 0; i < 4; i++) {
      const m = await alice.remember({ title: `Alice ${i}`, text: `alice item ${i}: marker-a${i}-pangolin` }, scope);
      await alice.share('memory', m.id, scope);
      mine.push(m.id);
    }
    let stop = false;
    const writer = (async () => {
      for (let i = 0; !stop && i < 200; i++) {
        const m = await bob.remember({ title: `Bob ${i}`, text: `bob item ${i}` }, scope);
        await bob.share('memory', m.id, scope);
        if (i % 5 === 0) await bob.syncTeam().catch(() => undefined);
      }
    })();
    for (const id of mine) await alice.unshare({ kind: 'memory', id }, scope);
    stop = true;
    await writer;
    await alice.syncTeam();
    const left: string[] = [];
    for (let i = 0; i < 4; i++) left.push(...(await bucketHolds(s, `marker-a${i}-pangolin`)).map((f) => `${i}: ${f}`));
    assert.deepEqual(left, []);
    assert.equal((await alice.listShared(scope)).filter((t) => t.title.startsWith('Alice')).length, 0);
  });

  it('unshare: a teammate cannot remove an item someone else shared (only its sharer can)', async () => {
    const s = await server();
    const alice = await person('Alice', s);
    const bob = await person('Bob', s);
    const m = await alice.remember({ title: 'Alice only', text: 'alice shared this: marker-kudu' }, { project: PROJECT });
    const shared = await alice.share('memory', m.id, { project: PROJECT });
    await bob.syncTeam();
    const r = await bob.unshare({ node_id: shared.preview.node_id }, { project: PROJECT }).catch((e: Error) => e);
    await alice.syncTeam();
    assert.equal((await alice.listShared({ project: PROJECT })).length, 1, `Bob removed Alice's shared item: ${JSON.stringify(r instanceof Error ? r.message : r.delivery)}`);
  });

  it('unshare finishes the purge after an interruption (delete committed, purge not run): the text is in no object', async () => {
    const s = await server();
    const alice = await person('Alice', s);
    const scope = { project: PROJECT };
    const keep = await alice.remember({ title: 'Kept', text: 'stays shared: marker-gnu' }, scope);
    const gone = await alice.remember({ title: 'Removed', text: 'to be unshared: marker-okapi' }, scope);
    await alice.share('memory', keep.id, scope);
    const shared = await alice.share('memory', gone.id, scope);
    assert.ok((await bucketHolds(s, 'marker-okapi')).length > 0);
    // The process that unshares commits its delete and then dies (or the network cuts) before
    // the rewrite / index rebuild / prune: simulated by committing just the delete.
    const remote = await TeamTable.open('s3://team/acme', objectStorageOptions(parseObjectLocation('s3://team/acme')!, s.env), 16);
    await remote.table.delete(`node_id = '${shared.preview.node_id}'`);
    remote.close();
    const dataFiles = async (): Promise<string[]> => (await s.keys()).filter((k) => k.includes('/data/'));
    const before = await dataFiles();
    // The unshare is done again (its outbox entry stays until it succeeds).
    const un = await alice.unshare({ kind: 'memory', id: gone.id }, scope);
    assert.equal(un.delivery, 'sent');
    assert.deepEqual(await bucketHolds(s, 'marker-okapi'), [], 'the unshared text is still in objects of the bucket');
    // Only the fragment that held deleted rows was rewritten: the kept item's is as it was.
    assert.ok((await dataFiles()).some((k) => before.includes(k)), 'every data file of the team table was rewritten');
  });

  it('forget of a shared memory: its text is in no file under the personal store (team cache, outbox)', async () => {
    const s = await server();
    const alice = await person('Alice', s);
    const scope = { project: PROJECT };
    const m = await alice.remember({ title: 'Forget me', text: 'to be forgotten: marker-saola' }, scope);
    await alice.share('memory', m.id, scope);
    await alice.syncTeam();
    await alice.forget({ ids: [m.id], kind: 'memory' } as never, scope);
    const store = path.join(team.dir(), 'Alice-store');
    assert.deepEqual(filesContaining(store, 'marker-saola'), [], 'README: forget leaves the text in no file under the store');
  });

  it('forget of a memory whose share is still queued (offline): it never leaves the machine', async () => {
    const s = await server();
    const alice = await person('Alice', s);
    const scope = { project: PROJECT };
    await s.stop();
    const m = await alice.remember({ title: 'Oops', text: 'pasted by mistake: marker-forgotten-fossa' }, scope);
    assert.equal((await alice.share('memory', m.id, scope)).delivery, 'queued');
    await alice.forget({ ids: [m.id], kind: 'memory' }, scope);
    const back = await startS3Server({ directory: s.directory, port: s.port });
    team.keep(back);
    await until(async () => (await alice.teamStatus())?.state === 'online' && (await alice.teamStatus())?.pending === 0, 30_000);
    assert.deepEqual(await bucketHolds(back, 'marker-forgotten-fossa'), [], 'a forgotten memory was sent to the team store after the forget');
  });

  it('re-sharing an edited memory: the team store holds what the preview showed', async () => {
    const s = await server();
    const alice = await person('Alice', s);
    const bob = await person('Bob', s);
    const scope = { project: PROJECT };
    const m = await alice.remember({ title: 'Queue choice', text: 'We use RabbitMQ for jobs: marker-v1-ibis' }, scope);
    await alice.share('memory', m.id, scope);
    await alice.editMemory(scope, m.id, { text: 'We use SQS for jobs now: marker-v2-ibis' });
    const again = await alice.share('memory', m.id, scope);
    assert.match(again.preview.text, /marker-v2-ibis/);
    assert.equal(again.delivery, 'sent');
    await bob.syncTeam();
    const items = await bob.listShared(scope);
    assert.equal(items.length, 1);
    assert.match(items[0].text, /marker-v2-ibis/, `teammates still get the old text: ${items[0].text}`);
  });

  it('the team store credentials this process holds are redacted from what would be shared', async () => {
    // An endpoint nobody answers on: the engine still holds the credentials it read at open.
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYAUDITKEY0'; // shape of an AWS secret access key
    const token = 'IQoJb3JpZ2luX2VjAuditSessionTokenMarker0123456789';
    const alice = await team.person('Alice', null, {
      env: { AWS_ACCESS_KEY_ID: 'AKIAAUDITLEAKEXAMPL1', AWS_SECRET_ACCESS_KEY: secret, AWS_SESSION_TOKEN: token, AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL: 'http://127.0.0.1:9' },
      retryMs: 60_000,
    });
    const scope = { project: PROJECT };
    const m = await alice.remember({ title: 'Team bucket', text: `aws s3 ls s3://team --profile team (uses ${secret}, session ${token})` }, scope);
    const preview = await alice.previewShare('memory', m.id, scope);
    assert.ok(!preview.text.includes(secret), `the team store's secret key would be shared: ${preview.text}`);
    assert.ok(!preview.text.includes(token), `the team store's session token would be shared: ${preview.text}`);
  });
});
