// The team store after a forget or an edit: a forget by an id that names nothing leaves the shares
// alone, a teammate's store keeps no quote of a forgotten share, nor of what an edit shared again
// took out, a forget finished by the next open reaches the team store, a share edited and shared again
// while offline goes out as its last version, and the store's keys, short ones too, are redacted.
import { strict as assert } from 'node:assert';
import type { MemoryEngine } from '../../src/core/engine';
import { bucketHolds, teamHarness } from './teamFixture';
import type { S3Server } from './fixtures/s3Server';
import { startS3Server, until } from './fixtures/s3Server';
import { spawnSync } from 'node:child_process';
import * as os from 'node:os';
import { TABLES } from '../../src/core/store/schema';
import * as path from 'node:path';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { filesContaining } from './diskFixture';

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

  it("a shared memory its sharer forgets leaves a teammate's store too: his request log quoted it", async () => {
    const s = await team.server();
    const alice = await person('Alice', s);
    const bob = await person('Bob', s);
    const scope = { project: PROJECT };
    const m = await alice.remember({ title: 'Staging database password', text: 'pasted by mistake: staging db is reached with marker-pasted-jerboa' }, scope);
    await alice.share('memory', m.id, scope);
    await bob.remember({ title: 'Staging database', text: 'staging runs postgres 15' }, scope);
    await bob.syncTeam();
    const out = await retrieveMemory({ engine: bob, scope }, { prompt: 'how do we reach the staging database?' });
    assert.match(JSON.stringify(out), /marker-pasted-jerboa/, 'control: bob got the team item');
    await alice.forget({ ids: [m.id], kind: 'memory' }, scope);
    await alice.syncTeam();
    assert.deepEqual(await bucketHolds(s, 'marker-pasted-jerboa'), [], 'control: gone from the bucket');
    // Bob's next refresh finds it gone: what his own store quotes of it goes too.
    await bob.syncTeam();
    assert.deepEqual((await bob.listRequests(scope, 50)).filter((r) => r.response.includes('marker-pasted-jerboa')), []);
    assert.deepEqual(filesContaining(path.join(team.dir(), 'Bob-store'), 'marker-pasted-jerboa'), []);
  });

  it("a shared memory its sharer edits and shares again: a teammate's request log no longer quotes the old text", async () => {
    const s = await team.server();
    const alice = await person('Alice', s);
    const bob = await person('Bob', s);
    const scope = { project: PROJECT };
    const m = await alice.remember({ title: 'Launch codename', text: 'the launch codename is marker-edited-out-civet (internal only)', memory_type: 'decision' }, scope);
    assert.equal((await alice.share('memory', m.id, scope)).delivery, 'sent');
    await bob.syncTeam();
    const out = await retrieveMemory({ engine: bob, scope }, { prompt: 'what is the launch codename?' });
    assert.match(JSON.stringify(out), /marker-edited-out-civet/, 'control: bob got the team item');
    await alice.editMemory(scope, m.id, { text: 'the launch codename is internal' });
    assert.equal((await alice.share('memory', m.id, scope)).delivery, 'sent');
    assert.deepEqual(await bucketHolds(s, 'marker-edited-out-civet'), [], 'control: gone from the bucket');
    // Bob's next refresh finds the item changed (same node id, same sharer): his request log's quotes of it go.
    await bob.syncTeam();
    await bob.settled();
    assert.equal((await bob.listRequests(scope, 50)).filter((r) => r.response.includes('marker-edited-out-civet')).length, 0, 'a request log entry quotes the text the edit took out');
    assert.deepEqual(filesContaining(path.join(team.dir(), 'Bob-store'), 'marker-edited-out-civet'), []);
  });
});

describe('re-share while offline', function () {
  this.timeout(300_000);
  const team = teamHarness();

  it('share, edit out a secret, share again while offline: the team gets one item with the new text and the old text is in no object', async () => {
    const s = await team.server();
    const alice: MemoryEngine = await team.person('Alice', s, { online: true });
    const scope = { project: PROJECT };
    const m = await alice.remember({ title: 'Queue choice', text: 'We use RabbitMQ, the host is marker-v1-secret-oryx' }, scope);
    await s.stop();
    assert.equal((await alice.share('memory', m.id, scope)).delivery, 'queued');
    await alice.editMemory(scope, m.id, { text: 'We use RabbitMQ (host removed) marker-v2-oryx' });
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
