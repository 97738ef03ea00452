// What the team store promises, checked against a real local S3 API: what leaves with a share is
// made from the preview only (its vector too), shared items are keyed per personal store and
// found again by unshare and forget whatever the author is now, one team store however it is
// spelled has one outbox, reads of a silent store are bounded, a share killed while queued
// leaves no text behind, a team table whose schema changed still takes writes (and a share it
// refuses holds back no unshare), a teammate's log forgets an unshared item, and two writers
// of one item store it once.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { registerSecret } from '../../src/core/capture/redact';
import { rowsToArrow } from '../../src/core/store/arrowRows';
import { objectStorageOptions, parseObjectLocation } from '../../src/core/store/objectStorage';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import type { Outbox } from '../../src/core/team/outbox';
import { teamNodeId, teamRow } from '../../src/core/team/shareRows';
import type { SharePreview } from '../../src/core/team/shareRows';
import { TeamMemory, teamStateDir, teamStateFolder } from '../../src/core/team/teamMemory';
import { TeamTable, teamItemsSchema } from '../../src/core/team/teamTable';
import type { TeamRow } from '../../src/core/team/teamTable';
import { filesContaining } from './diskFixture';
import { blackholeProxy } from './fixtures/blackholeProxy';
import { startS3Server, until } from './fixtures/s3Server';
import type { S3Server } from './fixtures/s3Server';
import { bucketHolds, teamHarness } from './teamFixture';
import { withEnv } from './cliInProcess';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';
const OTHER = 'github.com/evil/other';
const ROOT = path.resolve(__dirname, '../..');
const ALICE = 'Alice <alice@example.com>';

async function remoteOf(s: S3Server, dimension = 16): Promise<TeamTable> {
  return TeamTable.open('s3://team/acme', objectStorageOptions(parseObjectLocation('s3://team/acme')!, s.env), dimension);
}

type Internals = { sharing: { team: TeamMemory & { outbox: Outbox } }; backfill: { idle(): Promise<void> } };
const internals = (e: MemoryEngine): Internals => e as unknown as Internals;

/** Resolves with the value (or the error's message) and how long it took, or with 'no answer' once `cap` ms passed. */
async function timed<T>(cap: number, p: Promise<T>): Promise<{ value: string; ms: number }> {
  const t0 = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const value = await Promise.race([
    p.then((x) => `answered ${JSON.stringify(x)?.slice(0, 80)}`, (e: Error) => `failed: ${e.message.slice(0, 120)}`),
    new Promise<string>((r) => (timer = setTimeout(() => r('no answer'), cap))),
  ]);
  clearTimeout(timer);
  return { value, ms: Date.now() - t0 };
}

/** A team row as another client would write it (for rows put by hand). */
function handRow(over: Partial<TeamRow> & { node_id: string }, dimension = 16): TeamRow {
  const now = Date.now();
  return {
    layer: 'L2', source_kind: 'memory', source_id: 1, project: PROJECT, branch: null, type: 'note', title: 'hand row', text: 'hand row',
    search_text: 'hand row', files: null, commit_sha: null, session_id: null, created_at_epoch: now, last_accessed_epoch: null, access_count: 0,
    status: 'active', embed_model: '', vector: new Array(dimension).fill(0), shared_by: ALICE, shared_at_epoch: now, origin: 'memory/1',
    ...over,
  } as TeamRow;
}

/** The row a version before store identities sent for a record (keyed by project, author and record only), and no ledger entry. */
async function shareAsBefore(engine: MemoryEngine, id: number, author = ALICE): Promise<string> {
  const preview = (await engine.previewShare('memory', id, { project: PROJECT })) as SharePreview;
  const legacy = { ...preview, node_id: teamNodeId(PROJECT, author, 'memory', id), shared_by: author };
  const cell = { source_kind: 'memory', commit_sha: null, created_at_epoch: Date.now() } as never;
  await internals(engine).sharing.team.share([teamRow({ cell, vector: null, embedModel: '' }, legacy, Date.now())]);
  return legacy.node_id;
}

/** Runs `script` in a child (tsx) with args; resolves with how it ended. */
function child(script: string, args: string[]): Promise<{ code: number | null; signal: string | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, ['-r', 'tsx/cjs', '-e', script, ...args], { cwd: ROOT, env: { ...process.env, LANCEDB_LOG: 'error' } });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const guard = setTimeout(() => c.kill('SIGKILL'), 120_000);
    c.on('exit', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, out, err });
    });
  });
}

// Opens the engine on a store, remembers a memory and shares it; SIGKILL when the outbox's
// temporary file is about to be renamed into place (written and synced, not yet an entry).
const KILLED_WHILE_QUEUING = `
const root = process.cwd();
const fs = require('node:fs');
const rename = fs.promises.rename;
fs.promises.rename = async function (from, to) {
  if (String(from).includes('outbox') && String(from).endsWith('.tmp')) {
    process.stdout.write('killing before the rename\\n');
    process.kill(process.pid, 'SIGKILL');
    await new Promise(() => {});
  }
  return rename.apply(this, arguments);
};
const { MemoryEngine } = require(root + '/src/core/engine.ts');
const [store] = process.argv.slice(1);
(async () => {
  const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0, team: { uri: 's3://team/acme', author: ${JSON.stringify(ALICE)}, env: { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL: 'http://127.0.0.1:9' }, refreshMs: 0, retryMs: 60000 } });
  const m = await engine.remember({ title: 'Oops', text: 'pasted by mistake: marker-killed-queue-genet' }, { project: ${JSON.stringify(PROJECT)} });
  process.stdout.write('memory ' + m.id + '\\n');
  await engine.share('memory', m.id, { project: ${JSON.stringify(PROJECT)} });
})().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1); });
setInterval(() => {}, 60000);
`;

describe('team store: what leaves, and what unshare and forget find', function () {
  this.timeout(300_000);
  const team = teamHarness();
  const scope = { project: PROJECT };

  // ------------------------------------------------------------------ 1. the vector

  it('the vector sent with a share is made from the preview: two records with the same preview send the same vector', async () => {
    // A 12-character key (MinIO accepts 8+): no pattern rule matches it, so a memory written
    // before the team store was configured keeps it; the share's preview redacts it (the team
    // store's keys are redacted whatever their shape).
    const key = 'Hq4vT8mZ2rXw';
    const store = path.join(team.dir(), 'alice-store');
    const embedder = new HashedEmbedder(32);
    const before = await MemoryEngine.open({ storeUri: store, embedder, maintenanceIntervalMs: 0 });
    const withKey = await before.remember({ title: 'Team bucket', text: `mc alias set team http://minio:9000 teamaccess ${key}` }, scope);
    const withoutKey = await before.remember({ title: 'Team bucket', text: 'mc alias set team http://minio:9000 teamaccess [REDACTED]' }, scope);
    await internals(before).backfill.idle();
    await before.close();
    const alice = team.keep(
      await MemoryEngine.open({
        storeUri: store,
        embedder,
        maintenanceIntervalMs: 0,
        // Unreachable here: the shares wait in the outbox, where they are read.
        team: { uri: 's3://team/acme', author: ALICE, env: { AWS_ACCESS_KEY_ID: 'teamaccess', AWS_SECRET_ACCESS_KEY: key, AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL: 'http://127.0.0.1:9' }, refreshMs: 0, retryMs: 60_000 },
      }),
    );
    const p1 = await alice.previewShare('memory', withKey.id, scope);
    const p2 = await alice.previewShare('memory', withoutKey.id, scope);
    assert.ok(!p1.text.includes(key), 'control: the preview redacts the key');
    assert.equal(p1.text, p2.text, 'control: both previews show the same text');
    await alice.share('memory', withKey.id, scope, p1);
    await alice.share('memory', withoutKey.id, scope, p2);
    const rows = (await internals(alice).sharing.team.outbox.pending()).flatMap((p) => (p.entry.op === 'share' ? p.entry.rows : []));
    const byOrigin = new Map(rows.map((r) => [r.origin, r]));
    const v1 = byOrigin.get(`memory/${withKey.id}`)!;
    const v2 = byOrigin.get(`memory/${withoutKey.id}`)!;
    assert.ok(v1.embed_model && v2.embed_model, `control: both embedded (${v1.embed_model}, ${v2.embed_model})`);
    const fromKey = embedder.embedOne(key);
    const dot = (a: ArrayLike<number>, b: ArrayLike<number>): number => Array.from(a).reduce((s, x, i) => s + x * b[i], 0);
    assert.deepEqual(v1.vector, v2.vector, `the vector was made from the unredacted text (similarity to the key: ${dot(v1.vector, fromKey).toFixed(3)} vs ${dot(v2.vector, fromKey).toFixed(3)})`);
  });

  it('without an embedder, a share whose text redaction changed sends no vector, and a teammate with an embedder still finds it', async () => {
    const s = await team.server();
    const key = 'Rt7wQ2nXk9Lp';
    const store = path.join(team.dir(), 'alice-store');
    const embedder = new HashedEmbedder(32);
    const before = await MemoryEngine.open({ storeUri: store, embedder, maintenanceIntervalMs: 0 });
    const m = await before.remember({ title: 'Release bucket', text: `the release bucket rotates weekly, upload key ${key} marker-novector-quoll` }, scope);
    assert.ok(m.text.includes(key), 'control: stored as written');
    await internals(before).backfill.idle();
    await before.close();
    // The key becomes one the process redacts (as a team store's keys do) after it was stored.
    const forgetKey = registerSecret(key);
    try {
      const alice = team.keep(await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0, team: { uri: 's3://team/acme', author: ALICE, env: s.env, refreshMs: 0, retryMs: 200 } }));
      await until(async () => (await alice.teamStatus())?.state === 'online');
      const shared = await alice.share('memory', m.id, scope);
      assert.equal(shared.delivery, 'sent');
      assert.ok(!shared.preview.text.includes(key), 'control: redacted');
      const remote = await remoteOf(s, 32);
      const [row] = await remote.rows(`node_id = '${shared.preview.node_id}'`);
      remote.close();
      assert.equal(row.embed_model, '', 'a vector made from the unredacted text left with the share');
      assert.ok(Array.from(row.vector as ArrayLike<number>).every((x) => x === 0), 'the stored vector was sent');
      const bob = team.keep(
        await MemoryEngine.open({ storeUri: path.join(team.dir(), 'bob-store'), embedder, maintenanceIntervalMs: 0, team: { uri: 's3://team/acme', author: 'Bob <bob@example.com>', env: s.env, refreshMs: 0, retryMs: 200 } }),
      );
      await until(async () => (await bob.teamStatus())?.state === 'online');
      await bob.syncTeam();
      const hits = await bob.search('release bucket rotates weekly', { scope });
      assert.ok(hits.some((h) => h.origin?.store === 'team' && h.cell.text.includes('marker-novector-quoll')), 'the teammate does not find the item shared without a vector');
    } finally {
      forgetKey();
    }
  });

  // ------------------------------------------------------------------ 2. keys and what unshare finds

  it('one author on two machines (two personal stores) sharing records with the same id: both items stay in the team store', async () => {
    const s = await team.server();
    const open = async (name: string): Promise<MemoryEngine> => {
      const e = team.keep(
        await MemoryEngine.open({ storeUri: path.join(team.dir(), name), embedder: 'none', maintenanceIntervalMs: 0, team: { uri: 's3://team/acme', author: ALICE, env: s.env, refreshMs: 0, retryMs: 200 } }),
      );
      await until(async () => (await e.teamStatus())?.state === 'online');
      return e;
    };
    const laptop = await open('laptop-store');
    const desktop = await open('desktop-store');
    const a = await laptop.remember({ title: 'Laptop decision', text: 'decided on the laptop: marker-laptop-civet' }, scope);
    const b = await desktop.remember({ title: 'Desktop decision', text: 'decided on the desktop: marker-desktop-civet' }, scope);
    assert.equal(a.id, b.id, 'control: the same local id');
    assert.equal((await laptop.share('memory', a.id, scope)).delivery, 'sent');
    assert.equal((await desktop.share('memory', b.id, scope)).delivery, 'sent');
    const bob = await team.person('Bob', s, { online: true });
    await bob.syncTeam();
    assert.deepEqual((await bob.listShared(scope)).map((i) => i.title).sort(), ['Desktop decision', 'Laptop decision']);
    // Each machine unshares its own item only.
    assert.equal((await desktop.unshare({ kind: 'memory', id: b.id }, scope)).delivery, 'sent');
    await bob.syncTeam();
    assert.deepEqual((await bob.listShared(scope)).map((i) => i.title), ['Laptop decision']);
  });

  it('after the git author changes, unshare --memory and forget still take the shared copies out of the team store', async () => {
    const s = await team.server();
    const store = path.join(team.dir(), 'alice-store');
    const open = (author: string): Promise<MemoryEngine> =>
      MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0, team: { uri: 's3://team/acme', author, env: s.env, refreshMs: 0, retryMs: 200 } });
    const work = await open('Alice <alice@work.example>');
    await until(async () => (await work.teamStatus())?.state === 'online');
    const m = await work.remember({ title: 'Leaked token', text: 'pasted by mistake: marker-author-binturong' }, scope);
    const n = await work.remember({ title: 'Second', text: 'second item: marker-author2-binturong' }, scope);
    assert.equal((await work.share('memory', m.id, scope)).delivery, 'sent');
    assert.equal((await work.share('memory', n.id, scope)).delivery, 'sent');
    await work.close();
    // The same personal store, used from a folder whose git config names the person otherwise.
    const home = team.keep(await open('Alice <alice@home.example>'));
    await until(async () => (await home.teamStatus())?.state === 'online');
    const un = await home.unshare({ kind: 'memory', id: m.id }, scope);
    await home.forget({ ids: [n.id], kind: 'memory' }, scope);
    await home.syncTeam();
    assert.deepEqual(
      { delivery: un.delivery, unshared: await bucketHolds(s, 'marker-author-binturong'), forgotten: await bucketHolds(s, 'marker-author2-binturong') },
      { delivery: 'sent', unshared: [], forgotten: [] },
    );
  });

  it('unshare of something not shared says so instead of "sent"; items shared before store identities are still found by unshare and forget', async () => {
    const s = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    const never = await alice.remember({ title: 'Never shared', text: 'never shared' }, scope);
    await assert.rejects(alice.unshare({ kind: 'memory', id: never.id }, scope), /not shared/);
    await assert.rejects(alice.unshare({ node_id: randomUUID() }, scope), /no team item/);
    // Shared by an earlier version: keyed by project, author and record, and no record of it kept.
    const old1 = await alice.remember({ title: 'Old share one', text: 'shared long ago: marker-legacy1-dhole' }, scope);
    const old2 = await alice.remember({ title: 'Old share two', text: 'shared long ago: marker-legacy2-dhole' }, scope);
    await shareAsBefore(alice, old1.id);
    await shareAsBefore(alice, old2.id);
    await alice.syncTeam();
    assert.ok((await bucketHolds(s, 'marker-legacy1-dhole')).length > 0, 'control: shared');
    assert.equal((await alice.unshare({ kind: 'memory', id: old1.id }, scope)).delivery, 'sent');
    await alice.forget({ ids: [old2.id], kind: 'memory' }, scope);
    await alice.syncTeam();
    assert.deepEqual([...(await bucketHolds(s, 'marker-legacy1-dhole')), ...(await bucketHolds(s, 'marker-legacy2-dhole'))], []);
  });

  // ------------------------------------------------------------------ 3. one team store, two spellings

  it('one team store spelled two ways has one state folder; an earlier version\'s folder for the other spelling is adopted', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-state-'));
    try {
      const dir = teamStateDir(base, 's3://team/acme');
      for (const other of ['s3://team/acme/', ' s3://team//acme/ ', 's3a://team/acme']) assert.equal(teamStateDir(base, other), dir, other);
      assert.notEqual(teamStateDir(base, 's3://team/acme2'), dir);
      assert.equal(teamStateDir(base, path.join(base, 'x') + '/'), teamStateDir(base, path.join(base, 'x')));
      // What an earlier version queued under `s3://team/acme/` (named after the text) is kept.
      const legacy = path.join(base, 'team', createHash('sha256').update('s3://team/acme/').digest('hex').slice(0, 16));
      fs.mkdirSync(path.join(legacy, 'outbox'), { recursive: true });
      fs.writeFileSync(path.join(legacy, 'outbox', '000-unshare.json'), '{"op":"unshare","node_ids":[],"project":"p"}');
      fs.mkdirSync(path.join(dir, 'outbox'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'outbox', '001-share.json'), '{"op":"share","rows":[]}');
      assert.equal(await teamStateFolder(base, 's3://team/acme/'), dir);
      assert.deepEqual(fs.readdirSync(path.join(dir, 'outbox')).sort(), ['000-unshare.json', '001-share.json']);
      assert.equal(fs.existsSync(legacy), false);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });

  it('forget while the team store is unreachable, from a process that spells the team store with a trailing slash: the shared copy goes once it is back', async () => {
    const s = await team.server();
    const store = path.join(team.dir(), 'alice-store');
    const open = (uri: string): Promise<MemoryEngine> =>
      MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0, team: { uri, author: ALICE, env: s.env, refreshMs: 0, retryMs: 200 } });
    const editor = await open('s3://team/acme');
    await until(async () => (await editor.teamStatus())?.state === 'online');
    const m = await editor.remember({ title: 'Oops', text: 'pasted by mistake: marker-slash-cusimanse' }, scope);
    assert.equal((await editor.share('memory', m.id, scope)).delivery, 'sent');
    await editor.close();
    await s.stop();
    const cli = team.keep(await open('s3://team/acme/'));
    await until(async () => (await cli.teamStatus())?.state === 'offline', 20_000);
    await cli.forget({ ids: [m.id], kind: 'memory' }, scope);
    const pending = (await cli.teamStatus())?.pending;
    const back = team.keep(await startS3Server({ directory: s.directory, port: s.port }));
    await until(async () => (await cli.teamStatus())?.state === 'online', 30_000);
    await cli.syncTeam();
    assert.deepEqual({ queuedByForget: pending, inBucket: await bucketHolds(back, 'marker-slash-cusimanse') }, { queuedByForget: 1, inBucket: [] });
  });

  it('a forget queues the unshare of the keys it computed even when neither its copy nor its queue knows the item', async () => {
    const s = await team.server();
    const store = path.join(team.dir(), 'alice-store');
    const alice = team.keep(await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0, team: { uri: 's3://team/acme', author: ALICE, env: s.env, refreshMs: 0, retryMs: 200 } }));
    await until(async () => (await alice.teamStatus())?.state === 'online' && (await alice.teamStatus())?.synced_at_epoch !== null);
    const m = await alice.remember({ title: 'Shared elsewhere', text: 'shared from another state folder: marker-elsewhere-fossa' }, scope);
    // Shared (as an earlier version keyed it) through another state folder: this process's copy is older.
    const other = await withEnv(s.env, () => TeamMemory.open({ uri: 's3://team/acme', stateDir: path.join(team.dir(), 'other-state'), dimension: 16, refreshMs: 0, retryMs: 200 }));
    try {
      const preview = await alice.previewShare('memory', m.id, scope);
      const cell = { source_kind: 'memory', commit_sha: null, created_at_epoch: Date.now() } as never;
      await other.share([teamRow({ cell, vector: null, embedModel: '' }, { ...preview, node_id: teamNodeId(PROJECT, ALICE, 'memory', m.id) }, Date.now())]);
      await other.sync();
    } finally {
      await other.close();
    }
    assert.ok((await bucketHolds(s, 'marker-elsewhere-fossa')).length > 0, 'control: shared');
    assert.equal((await alice.listShared(scope)).length, 0, 'control: not in this copy');
    await s.stop();
    await alice.syncTeam().catch(() => undefined);
    await until(async () => (await alice.teamStatus())?.state === 'offline', 20_000);
    await alice.forget({ ids: [m.id], kind: 'memory' }, scope);
    const pending = (await alice.teamStatus())?.pending;
    const back = team.keep(await startS3Server({ directory: s.directory, port: s.port }));
    await until(async () => (await alice.teamStatus())?.state === 'online', 30_000);
    await alice.syncTeam();
    assert.deepEqual({ pending, inBucket: await bucketHolds(back, 'marker-elsewhere-fossa') }, { pending: 1, inBucket: [] });
  });

  // ------------------------------------------------------------------ 4. bounded reads

  it('a network that black-holes after connect: getNode and unshare of an id not in the local copy answer within 15 s', async () => {
    const s = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    const m = await alice.remember({ title: 'Seed', text: 'seed item: marker-seed-tayra' }, scope);
    await alice.share('memory', m.id, scope);
    const p = await blackholeProxy(s.port);
    try {
      const bob = await team.person('Bob', s, { env: { AWS_ENDPOINT_URL: `http://127.0.0.1:${p.port}` }, online: true });
      await bob.syncTeam();
      assert.equal((await bob.listShared(scope)).length, 1, 'control: bob has a local copy');
      p.blackhole(true);
      // Both while the store is still taken for online (each goes to the store first).
      const [node, un] = await Promise.all([timed(30_000, bob.getNode(randomUUID(), scope)), timed(30_000, bob.unshare({ node_id: randomUUID() }, scope).then((r) => r.delivery))]);
      process.stdout.write(`      getNode: ${node.value} after ${node.ms} ms; unshare: ${un.value} after ${un.ms} ms\n`);
      assert.ok(node.ms < 15_000 && un.ms < 15_000, `getNode: ${node.value} after ${node.ms} ms; unshare: ${un.value} after ${un.ms} ms`);
      // A sync asked for (Show Team Store Status, the CLI's team command) says so in time too.
      const started = Date.now();
      await assert.rejects(bob.syncTeam(), /did not answer within 8 s/);
      assert.ok(Date.now() - started < 15_000, `syncTeam took ${Date.now() - started} ms`);
    } finally {
      p.blackhole(false);
      await p.close();
    }
  });

  it('listShared before the first local copy, network black-holed: answers within 15 s', async () => {
    const s = await team.server();
    const seed = await team.person('Seed', s, { online: true });
    const m = await seed.remember({ title: 'Seed', text: 'seed: marker-seed-kinkajou' }, scope);
    await seed.share('memory', m.id, scope);
    const p = await blackholeProxy(s.port);
    const proto = TeamMemory.prototype as unknown as { refreshCache: (...a: unknown[]) => Promise<void> };
    const original = proto.refreshCache;
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    // The first download of the copy has not finished yet.
    proto.refreshCache = async function (this: unknown, ...a: unknown[]) {
      await held;
      return original.apply(this, a);
    };
    try {
      const bob = await team.person('Bob', s, { env: { AWS_ENDPOINT_URL: `http://127.0.0.1:${p.port}` } });
      await until(async () => (await bob.teamStatus())?.state === 'online');
      p.blackhole(true);
      const r = await timed(60_000, bob.listShared(scope));
      assert.ok(r.ms < 15_000, `listShared: ${r.value} after ${r.ms} ms`);
    } finally {
      proto.refreshCache = original;
      release();
      p.blackhole(false);
      await p.close();
    }
  });

  // ------------------------------------------------------------------ 5. temporary files

  it('a share killed (-9) while its outbox entry was written, then the memory forgotten: the text is in no file under the store', async () => {
    const s = await team.server();
    const store = path.join(team.dir(), 'alice-store');
    const r = await child(KILLED_WHILE_QUEUING, [store]);
    assert.equal(r.signal, 'SIGKILL', `control: killed (${r.code}): ${r.err.slice(0, 400)}`);
    assert.ok(filesContaining(store, 'marker-killed-queue-genet').some((f) => f.endsWith('.tmp')), 'control: the temporary file holds the text');
    const id = Number(/memory (\d+)/.exec(r.out)?.[1]);
    const alice = team.keep(await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0, team: { uri: 's3://team/acme', author: ALICE, env: s.env, refreshMs: 0, retryMs: 200 } }));
    await alice.forget({ ids: [id], kind: 'memory' }, scope);
    await until(async () => (await alice.teamStatus())?.state === 'online');
    await alice.syncTeam();
    assert.deepEqual(await bucketHolds(s, 'marker-killed-queue-genet'), [], 'control: nothing sent');
    assert.deepEqual(filesContaining(store, 'marker-killed-queue-genet'), []);
  });

  it('a forget removes a temporary outbox file holding a share of what it forgets, whoever wrote it; a sweep leaves a live writer\'s other files alone', async () => {
    const s = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    const m = await alice.remember({ title: 'Oops', text: 'pasted by mistake: marker-tmp-zorilla' }, scope);
    const keep = await alice.remember({ title: 'Fine', text: 'nothing secret' }, scope);
    const preview = await alice.previewShare('memory', m.id, scope);
    const other = await alice.previewShare('memory', keep.id, scope);
    const outbox = internals(alice).sharing.team.outbox;
    const cell = { source_kind: 'memory', commit_sha: null, created_at_epoch: Date.now() } as never;
    // Temporary files of a process that still runs (our parent): one with a share of the forgotten memory, one with another.
    const live = process.ppid;
    fs.mkdirSync(outbox.dir, { recursive: true });
    const doomed = path.join(outbox.dir, `.000000000000001-000000001-x.json.${live}.0000000a.tmp`);
    const kept = path.join(outbox.dir, `.000000000000001-000000002-x.json.${live}.0000000b.tmp`);
    fs.writeFileSync(doomed, JSON.stringify({ op: 'share', rows: [teamRow({ cell, vector: null, embedModel: '' }, preview, Date.now())] }));
    fs.writeFileSync(kept, JSON.stringify({ op: 'share', rows: [teamRow({ cell, vector: null, embedModel: '' }, other, Date.now())] }));
    await outbox.sweep();
    assert.ok(fs.existsSync(doomed) && fs.existsSync(kept), 'a sweep removed a running writer\'s temporary files');
    await alice.forget({ ids: [m.id], kind: 'memory' }, scope);
    assert.deepEqual({ doomed: fs.existsSync(doomed), kept: fs.existsSync(kept) }, { doomed: false, kept: true });
    fs.rmSync(kept);
    assert.deepEqual(filesContaining(path.join(team.dir(), 'Alice-store'), 'marker-tmp-zorilla'), []);
  });

  // ------------------------------------------------------------------ 6. a team table whose schema changed

  it('a column dropped from the team table (origin) stops neither later shares nor the unshare of a secret', async () => {
    const s = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    const secret = await alice.remember({ title: 'Oops', text: 'pasted by mistake: marker-hol-fossa' }, scope);
    assert.equal((await alice.share('memory', secret.id, scope)).delivery, 'sent');
    const remote = await remoteOf(s);
    await remote.table.dropColumns(['origin']);
    remote.close();
    const later = await alice.remember({ title: 'Later', text: 'a later note: marker-hol-later' }, scope);
    const sh = await alice.share('memory', later.id, scope).then((r) => r.delivery, (e: Error) => `error: ${e.message}`);
    const un = await alice.unshare({ kind: 'memory', id: secret.id }, scope).then((r) => r.delivery, (e: Error) => `error: ${e.message}`);
    await alice.syncTeam();
    assert.deepEqual(
      { sh, un, secret: await bucketHolds(s, 'marker-hol-fossa'), later: (await bucketHolds(s, 'marker-hol-later')).length > 0, pending: (await alice.teamStatus())?.pending },
      { sh: 'sent', un: 'sent', secret: [], later: true, pending: 0 },
    );
  });

  it('a queued share the team store keeps refusing does not hold back a later unshare of a secret', async () => {
    const s = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    const secret = await alice.remember({ title: 'Oops', text: 'pasted by mistake: marker-stuck-fossa' }, scope);
    assert.equal((await alice.share('memory', secret.id, scope)).delivery, 'sent');
    // A share no team table takes (a time that is no number), queued before the unshare.
    const outbox = internals(alice).sharing.team.outbox;
    await outbox.add({ op: 'share', rows: [handRow({ node_id: 'hand-broken', title: 'broken', created_at_epoch: 'not a time' as unknown as number })] });
    const un = await alice.unshare({ kind: 'memory', id: secret.id }, scope).then((r) => r.delivery, (e: Error) => `error: ${e.message}`);
    await alice.syncTeam().catch(() => undefined);
    const left = (await outbox.pending()).map((p) => p.entry.op);
    assert.deepEqual({ un, secret: await bucketHolds(s, 'marker-stuck-fossa'), left }, { un: 'queued', secret: [], left: ['share'] });
  });

  // ------------------------------------------------------------------ 7. what a teammate's log quotes

  it("a row of another project under an item's node id: after its sharer unshares it, a teammate's request log no longer quotes it", async () => {
    const s = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    const bob = await team.person('Bob', s, { online: true });
    const m = await alice.remember({ title: 'Staging database password', text: 'pasted by mistake: staging db is reached with marker-quoted-dhole' }, scope);
    const shared = await alice.share('memory', m.id, scope);
    const remote = await remoteOf(s);
    await remote.table.add(rowsToArrow(teamItemsSchema(remote.dimension), [handRow({ node_id: shared.preview.node_id, project: OTHER, title: 'other', text: 'other project row', shared_by: 'Mallory <m@example.com>' }, remote.dimension)]));
    remote.close();
    await bob.remember({ title: 'Staging database', text: 'staging runs postgres 15' }, scope);
    await bob.syncTeam();
    const out = await retrieveMemory({ engine: bob, scope }, { prompt: 'how do we reach the staging database?' });
    assert.match(JSON.stringify(out), /marker-quoted-dhole/, 'control: bob got the team item');
    assert.equal((await alice.unshare({ kind: 'memory', id: m.id }, scope)).delivery, 'sent');
    await bob.syncTeam();
    assert.equal((await bob.listShared(scope)).length, 0, 'control: gone from bob\'s copy');
    assert.deepEqual((await bob.listRequests(scope, 50)).filter((r) => r.response.includes('marker-quoted-dhole')).length, 0);
    assert.deepEqual(filesContaining(path.join(team.dir(), 'Bob-store'), 'marker-quoted-dhole'), []);
  });

  // ------------------------------------------------------------------ 8. two writers of one item

  it('the same item put by two writers at once is stored once', async () => {
    const s = await team.server();
    const a = await remoteOf(s);
    const b = await remoteOf(s);
    try {
      let dupes = 0;
      for (let round = 0; round < 6; round++) {
        const node = `00000000-0000-5000-8000-${String(round).padStart(12, '0')}`;
        const row = handRow({ node_id: node, title: `same item ${round}`, text: `same text ${round}`, search_text: `same text ${round}`, origin: `memory/${round + 1}` });
        await Promise.all([a.put([row]), b.put([row])]);
        if ((await a.count(`node_id = '${node}'`)) !== 1) dupes++;
      }
      assert.equal(dupes, 0, `${dupes} of 6 items stored more than once`);
    } finally {
      a.close();
      b.close();
    }
  });
});
