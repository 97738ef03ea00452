// Team memory on object storage, against a local S3 API (s3rver made safe, see
// fixtures/s3ServerProcess.cjs): the conditional-PUT probe, sharing and unsharing between two
// people's engines, a network cut, and two writer processes at once.
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import * as http from 'node:http';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MemoryEngine } from '../../src/core/engine';
import { startHttpServer } from '../../src/mcp/httpServer';
import { TeamMemory } from '../../src/core/team/teamMemory';
import { ObjectStoreUnreachable, probeConditionalPut } from '../../src/core/store/objectStorage';
import { until } from './fixtures/s3Server';
import { bucketHolds, teamHarness } from './teamFixture';
import type { S3Server } from './fixtures/s3Server';
import { runMain, withEnv } from './cliInProcess';
import { textPack } from './textPack';

process.env.LANCEDB_LOG ??= 'error';

const TSX = require.resolve('tsx/cli');
const WRITER = path.join(__dirname, 'fixtures', 'teamWriter.ts');
const PROJECT = 'github.com/acme/shared';

describe('team store on object storage', function () {
  this.timeout(300_000);
  const team = teamHarness();
  const server = team.server;
  const person = (name: string, s: S3Server, extra: { retryMs?: number } = {}): Promise<MemoryEngine> => team.person(name, s, extra);

  it('refuses an endpoint that ignores conditional PUT, as a store and as a team store, and writes nothing there', async () => {
    const unsafe = await server({ conditionalPut: false });
    await withEnv(unsafe.env, async () => {
      await assert.rejects(MemoryEngine.open({ storeUri: 's3://team/personal', embedder: 'none', maintenanceIntervalMs: 0 }), /ignores conditional PUT.*not 412/);
    });
    const alice = await person('Alice', unsafe);
    await until(async () => (await alice.teamStatus())?.state === 'refused');
    assert.match(String((await alice.teamStatus())?.message), /ignores conditional PUT/);
    const m = await alice.remember({ title: 'Use pnpm workspaces', text: 'refusal marker zebra' }, { project: PROJECT });
    const shared = await alice.share('memory', m.id, { project: PROJECT });
    assert.equal(shared.delivery, 'queued');
    assert.deepEqual(await bucketHolds(unsafe, 'zebra'), []);
    assert.deepEqual(await unsafe.keys(), [], 'the probe object is deleted and nothing else is written');
  });

  it('a personal store on s3:// through the safe server', async () => {
    const safe = await server();
    await withEnv(safe.env, async () => {
      const engine = await MemoryEngine.open({ storeUri: 's3://team/personal', embedder: 'none', maintenanceIntervalMs: 0 });
      try {
        await engine.remember({ title: 'Object storage works', text: 'stored in a bucket' }, { project: PROJECT });
        const hits = await engine.search('bucket', { scope: { project: PROJECT } });
        assert.equal(hits[0]?.cell.title, 'Object storage works');
      } finally {
        await engine.close();
      }
    });
    assert.ok((await safe.keys()).some((k) => k.startsWith('personal/memories.lance/')));
  });

  it('share of a confirmed preview: a record edited since is not sent, and goes once its new preview is confirmed', async () => {
    const s = await server();
    const alice = await person('Alice', s);
    const scope = { project: PROJECT };
    const m = await alice.remember({ title: 'Deploy notes', text: 'deploy with make deploy marker-confirmed-eland' }, scope);
    // The dialog shows the preview; the record is edited before the person confirms it.
    const confirmed = await alice.previewShare('memory', m.id, scope);
    await alice.editMemory(scope, m.id, { text: 'internal host db-prod-7.corp.example marker-unconfirmed-eland' });
    await assert.rejects(alice.share('memory', m.id, scope, confirmed), /changed since its preview was shown: nothing was shared/);
    assert.deepEqual(await bucketHolds(s, 'marker-unconfirmed-eland'), []);
    const again = await alice.previewShare('memory', m.id, scope);
    assert.equal((await alice.share('memory', m.id, scope, again)).delivery, 'sent');
    assert.ok((await bucketHolds(s, 'marker-unconfirmed-eland')).length > 0);
  });

  it('share: a teammate finds it ranked with personal results and sees who shared it; unshare leaves its text in no object', async () => {
    const s = await server();
    const alice = await person('Alice', s);
    const bob = await person('Bob', s);
    const scope = { project: PROJECT };
    const m = await alice.remember({ title: 'Retry policy for the payment gateway', text: 'Use exponential backoff with jitter capped at 30 s; api_key=sk-live-abcdef0123456789abcdef marker-quokka' }, scope);
    const preview = await alice.previewShare('memory', m.id, scope);
    assert.equal(preview.shared_by, 'Alice <alice@example.com>');
    assert.ok(!preview.text.includes('sk-live-abcdef0123456789abcdef'), 'the preview is redacted');
    const shared = await alice.share('memory', m.id, scope);
    assert.equal(shared.delivery, 'sent');
    assert.equal(shared.preview.node_id, preview.node_id);
    assert.ok((await bucketHolds(s, 'marker-quokka')).length > 0, 'the shared text is in the bucket');
    assert.deepEqual(await bucketHolds(s, 'sk-live-abcdef0123456789abcdef'), [], 'no secret leaves the machine');
    // Sharing twice stores one item.
    await alice.share('memory', m.id, scope);

    await bob.remember({ title: 'Payment gateway timeout', text: 'the gateway times out after 10 s' }, scope);
    // Bob's local copy of the team store was filled when he opened: refresh it now (in use, a
    // background refresh does this every 30 s).
    await bob.syncTeam();
    const hits = await bob.search('payment gateway backoff', { scope, limit: 5 });
    const team = hits.find((h) => h.origin?.store === 'team');
    assert.ok(team, `bob sees alice's memory: ${JSON.stringify(hits.map((h) => h.cell.title))}`);
    assert.equal(team.origin?.shared_by, 'Alice <alice@example.com>');
    assert.ok(hits.some((h) => h.origin?.store === 'local' && h.cell.title === 'Payment gateway timeout'));
    assert.ok(hits.every((h, i) => i === 0 || hits[i - 1].score >= h.score), 'ranked together by score');
    const node = await bob.getNode(team.cell.node_id, scope);
    assert.equal(node?.source.project, PROJECT);
    assert.match(String((node?.source as { classification_reason: string }).classification_reason), /shared by Alice/);
    assert.equal((await bob.listShared(scope)).length, 1);
    // Another project's caller never sees it.
    assert.equal((await bob.search('payment gateway backoff', { scope: { project: 'github.com/other/repo' } })).length, 0);
    // Alice's own search shows her record once (the local one).
    const own = await alice.search('payment gateway backoff', { scope });
    assert.equal(own.filter((h) => h.cell.title === 'Retry policy for the payment gateway').length, 1);

    const un = await alice.unshare({ kind: 'memory', id: m.id }, scope);
    assert.equal(un.delivery, 'sent');
    assert.equal(un.node_id, preview.node_id);
    assert.deepEqual(await bucketHolds(s, 'marker-quokka'), [], 'the unshared text is in no object of the bucket');
    assert.deepEqual(await bucketHolds(s, 'quokka'), [], 'nor its indexed words');
    await bob.syncTeam();
    assert.equal((await bob.search('payment gateway backoff', { scope })).filter((h) => h.origin?.store === 'team').length, 0);
    // Alice's personal memory stays.
    assert.equal((await alice.getMemories([m.id], scope)).length, 1);
  });

  it('MCP tools: recall_context and retrieve_memory say which results are the team\'s and who shared them; recall stays L0', async () => {
    const s = await server();
    const alice = await person('Alice', s);
    const bob = await person('Bob', s);
    const scope = { project: PROJECT };
    const m = await alice.remember({ title: 'Feature flags live in LaunchDarkly', text: 'Never hard-code feature flags; read them through the flags client. marker-narwhal' }, scope);
    await alice.share('memory', m.id, scope);
    await bob.remember({ title: 'Feature flag naming', text: 'flags are kebab-case' }, scope);
    await bob.syncTeam();
    const http = await startHttpServer({ engine: bob, scope });
    const client = new Client({ name: 'team-test', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers: { Authorization: `Bearer ${http.token}` } } }));
      type Result = { content: Array<{ text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };
      const pack = (await client.callTool({ name: 'recall_context', arguments: { query: 'feature flags' } })) as Result;
      assert.equal(pack.isError, false);
      assert.match(String(pack.content[0].text), /^### XMemo Context\nItems: 2\n/);
      assert.match(String(pack.content[0].text), /Feature flags live in LaunchDarkly \(team memory, shared by Alice <alice@example\.com>/);
      // One item is the team's, shared by Alice; the other is Bob's own.
      const { context_text } = textPack(pack);
      assert.equal(context_text.match(/^\[\d+\] .* \(team memory, shared by Alice <alice@example\.com>, /gm)?.length, 1, context_text);
      assert.equal(context_text.match(/^\[\d+\] Feature flag naming \(memory \d+, /gm)?.length, 1, context_text);
      const report = (await client.callTool({ name: 'retrieve_memory', arguments: { prompt: 'how do we handle feature flags?' } })) as Result;
      const facts = (report.structuredContent as { retrieval: { facts: Array<{ source_path: string }> } }).retrieval.facts;
      assert.ok(facts.some((f) => /^team\/[0-9a-f-]{36} \(shared by Alice <alice@example\.com>\)$/.test(f.source_path)), JSON.stringify(facts));
      const recall = (await client.callTool({ name: 'recall', arguments: { text: 'feature flags' } })) as Result;
      assert.deepEqual(recall.structuredContent, { nodes: [] }, 'recall reads layer L0 only: no memories, personal or shared');
    } finally {
      await client.close();
      await http.close();
    }
  });

  it('network cut: shares wait on disk, go out when the store is back, nothing lost; reads use the cache meanwhile', async () => {
    const s = await server();
    const alice = await person('Alice', s);
    const bob = await person('Bob', s);
    const scope = { project: PROJECT };
    const first = await alice.remember({ title: 'Cache warm-up', text: 'shared before the cut: otter' }, scope);
    assert.equal((await alice.share('memory', first.id, scope)).delivery, 'sent');
    await bob.syncTeam();

    await s.stop();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await alice.remember({ title: `Offline decision ${i}`, text: `written during the cut: badger ${i}` }, scope)).id);
    for (const id of ids) assert.equal((await alice.share('memory', id, scope)).delivery, 'queued');
    const status = await alice.teamStatus();
    assert.equal(status?.state, 'offline');
    assert.equal(status?.pending, 5);
    // Bob is offline too and still finds what his cache holds.
    await assert.rejects(bob.syncTeam());
    assert.equal((await bob.teamStatus())?.state, 'offline');
    assert.ok((await bob.search('otter', { scope })).some((h) => h.origin?.store === 'team'));

    // The store comes back on the same address: the outbox goes out by itself.
    await server({ port: s.port, directory: s.directory });
    await until(async () => (await alice.teamStatus())?.pending === 0);
    assert.equal((await alice.teamStatus())?.state, 'online');
    await until(async () => {
      await bob.syncTeam().catch(() => undefined);
      return (await bob.listShared(scope)).length === 6;
    });
    const titles = (await bob.listShared(scope)).map((t) => t.title).sort();
    assert.deepEqual(titles, ['Cache warm-up', ...ids.map((_, i) => `Offline decision ${i}`)].sort());
  });

  it('CLI: share previews and sends nothing without --yes, shares with it, lists, unshares', async () => {
    const s = await server();
    const store = path.join(team.dir(), 'cli-store');
    const seed = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    const m = await seed.remember({ title: 'Release checklist', text: 'tag, build, publish; token=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB marker-ibex' }, { project: PROJECT });
    await seed.close();
    const run = (...args: string[]) =>
      runMain([...args, '--store', store, '--team-store', 's3://team/acme', '--project', PROJECT], { ...s.env, CODE_MEMORY_EMBEDDER: 'none' });
    const preview = await run('share', '--memory', String(m.id));
    assert.equal(preview.code, 0, preview.err);
    assert.match(preview.out, /This would leave the machine:[\s\S]*Release checklist[\s\S]*marker-ibex[\s\S]*--yes/);
    assert.ok(!preview.out.includes('ghp_0123456789abcdefghijklmnopqrstuvwxyzAB'), 'the preview is redacted');
    assert.deepEqual(await bucketHolds(s, 'marker-ibex'), [], 'a preview sends nothing');
    const shared = await run('share', '--memory', String(m.id), '--yes');
    assert.equal(shared.code, 0, shared.err);
    assert.match(shared.out, /^Shared: Release checklist/);
    assert.ok((await bucketHolds(s, 'marker-ibex')).length > 0);
    const listed = await run('team');
    assert.match(listed.out, /online[\s\S]*1 shared item\(s\)[\s\S]*Release checklist/);
    const found = await run('search', 'release checklist');
    assert.match(found.out, /Release checklist/);
    const un = await run('unshare', '--memory', String(m.id));
    assert.equal(un.code, 0, un.err);
    assert.match(un.out, /^Unshared/);
    assert.deepEqual(await bucketHolds(s, 'marker-ibex'), []);
    const bad = await run('share');
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--memory <id> or --summary <id>/);
  });

  it('two writer processes x 5,000 memories into one team store: exact counts, no duplicates', async () => {
    const s = await server();
    const N = 5000;
    const run = (tag: string): Promise<{ tag: string; ms: number }> =>
      new Promise((resolve, reject) => {
        execFile(process.execPath, [TSX, WRITER, 's3://team/acme', path.join(team.dir(), `writer-${tag}`), tag, String(N)], { env: { ...process.env, ...s.env, LANCEDB_LOG: 'error' }, maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
          if (err) reject(new Error(`writer ${tag} failed: ${stderr || err.message}`));
          else resolve(JSON.parse(stdout.trim().split('\n').pop() as string));
        });
      });
    const results = await Promise.all([run('a'), run('b')]);
    const reader = await withEnv(s.env, () => TeamMemory.open({ uri: 's3://team/acme', stateDir: path.join(team.dir(), 'reader'), dimension: 16, refreshMs: 0 }));
    try {
      await reader.sync();
      const rows = await reader.list(PROJECT);
      assert.equal(rows.length, 2 * N, `expected ${2 * N} team items, found ${rows.length}`);
      assert.equal(new Set(rows.map((r) => r.node_id)).size, 2 * N, 'duplicate node ids');
      const titles = new Set(rows.map((r) => r.title));
      for (const tag of ['a', 'b']) for (let i = 0; i < N; i++) assert.ok(titles.has(`writer ${tag} memory ${i}`), `lost ${tag} ${i}`);
      assert.equal(await reader.remoteCount(), 2 * N);
      process.stdout.write(`      two team writers: ${JSON.stringify(results)}\n`);
    } finally {
      await reader.close();
    }
  });
});

describe('the conditional PUT probe', () => {
  /** A local endpoint that answers `failures` PUTs with `status`, then honours If-None-Match. */
  async function flakyEndpoint(status: number, failures: number): Promise<{ endpoint: string; requests: string[]; close(): Promise<void> }> {
    const keys = new Set<string>();
    const requests: string[] = [];
    let failed = 0;
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        requests.push(req.method as string);
        if (req.method === 'PUT' && failed < failures) {
          failed++;
          res.writeHead(status).end();
        } else if (req.method === 'PUT') {
          const exists = keys.has(req.url as string);
          keys.add(req.url as string);
          res.writeHead(exists && req.headers['if-none-match'] === '*' ? 412 : 200).end();
        } else {
          keys.delete(req.url as string);
          res.writeHead(204).end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return { endpoint: `http://127.0.0.1:${port}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
  }
  const options = (endpoint: string) => ({ aws_access_key_id: 'k', aws_secret_access_key: 's', region: 'us-east-1', endpoint });

  it('retries a busy endpoint (HTTP 503, then 500) and passes once it answers', async () => {
    for (const status of [503, 500]) {
      const s = await flakyEndpoint(status, 2);
      try {
        await probeConditionalPut('s3://team/acme', options(s.endpoint));
        assert.deepEqual(s.requests, ['PUT', 'PUT', 'PUT', 'PUT', 'DELETE']);
      } finally {
        await s.close();
      }
    }
  });

  it('calls an endpoint that keeps failing unreachable, to be tried again, not refused', async () => {
    const s = await flakyEndpoint(500, Infinity);
    try {
      await assert.rejects(probeConditionalPut('s3://team/acme', options(s.endpoint)), (e: Error) => {
        assert.ok(e instanceof ObjectStoreUnreachable, `${e.constructor.name}: ${e.message}`);
        assert.match(e.message, /HTTP 500/);
        return true;
      });
    } finally {
      await s.close();
    }
  });
});
