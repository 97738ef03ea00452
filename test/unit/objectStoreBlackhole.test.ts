// A personal store on object storage whose endpoint takes connections and then never answers (a
// "black hole": a dropped VPN, a firewall that drops packets): a read and a write each end with a
// clear error in bounded time, and once the network is back the store works and holds everything
// written before.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { errorMessage, looksDamaged, looksLikeNetwork } from '../../src/core/errorText';
import { ToolError, errorResult } from '../../src/core/tools/types';
import { requestBounds, s3Credentials } from '../../src/core/store/objectStorage';
import { TABLES } from '../../src/core/store/schema';
import { UNANSWERED_HOLD } from '../../src/core/store/unanswered';
import { TEST_SECRET_KEY, setEnv, startS3Server } from './fixtures/s3Server';
import type { S3Server } from './fixtures/s3Server';
import { blackholeProxy } from './fixtures/blackholeProxy';
import type { BlackholeProxy } from './fixtures/blackholeProxy';
import { startProxy } from './fixtures/faultProxy';

process.env.LANCEDB_LOG ??= 'error';

const PROJECT = 'github.com/acme/blackhole';
/** Each request bounded at 2 s here (CODE_MEMORY_STORE_TIMEOUT; the default is 10 s, see requestBounds): a call must end within 30 s. */
const REQUEST_TIMEOUT_S = 2;
const BOUND_MS = 30_000;

/** How `p` settled within `ms` (a test that cannot hang): its value or error, and how long it took. */
async function settle<T>(what: string, ms: number, p: Promise<T>): Promise<{ value?: T; error?: Error; ms: number }> {
  let timer: NodeJS.Timeout | undefined;
  const t0 = Date.now();
  try {
    const value = await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`TIMEOUT: ${what} took more than ${ms} ms`)), ms)))]);
    return { value, ms: Date.now() - t0 };
  } catch (error) {
    if (/^TIMEOUT: /.test((error as Error).message)) throw error;
    return { error: error as Error, ms: Date.now() - t0 };
  } finally {
    clearTimeout(timer);
    process.stdout.write(`      ${what}: ${Date.now() - t0} ms\n`);
  }
}

describe('a personal store on s3:// whose endpoint black-holes requests', function () {
  this.timeout(600_000);
  let dir: string;
  let server: S3Server;
  let hole: BlackholeProxy;
  let restoreEnv: () => void;
  let engine: MemoryEngine | null = null;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-blackhole-'));
    server = await startS3Server({ directory: path.join(dir, 's3'), bucket: 'personal' });
    hole = await blackholeProxy(server.port);
    restoreEnv = setEnv({ ...server.env, AWS_ENDPOINT_URL: `http://127.0.0.1:${hole.port}`, CODE_MEMORY_STORE_TIMEOUT: String(REQUEST_TIMEOUT_S) });
  });

  afterEach(async () => {
    hole.blackhole(false);
    await engine?.close().catch(() => undefined);
    engine = null;
    restoreEnv();
    await hole.close();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a read and a write each fail in bounded time naming the endpoint, and nothing written before is lost', async () => {
    const endpoint = `127.0.0.1:${hole.port}`;
    const open = (): Promise<MemoryEngine> => MemoryEngine.open({ storeUri: 's3://personal/me', maintenanceIntervalMs: 0 });
    engine = await open();
    const scope = { project: PROJECT };
    const before: string[] = [];
    for (let i = 0; i < 3; i++) before.push((await engine.remember({ title: `Before ${i}`, text: `written before the hole ${i}: aardvark` }, scope)).title);
    const [observed] = await engine.observe([{ type: 'edit', title: 'Edited src/hole.ts', narrative: 'observed before the hole: aardvark' }], scope);
    const seen = { title: String(observed.title) };
    await engine.flush();
    await engine.waitForVectors();
    assert.equal((await engine.search('aardvark', { scope })).length, 4);

    hole.blackhole(true);
    const checkError = (what: string, r: { error?: Error; ms: number }): void => {
      assert.ok(r.error, `${what} answered during the black hole`);
      assert.ok(r.ms < BOUND_MS, `${what} took ${r.ms} ms`);
      const shown = errorMessage(r.error);
      assert.ok(shown.includes(endpoint) && /did not answer/.test(shown), `${what}: ${shown}`);
      for (const text of [shown, r.error.message]) assert.ok(!text.includes(TEST_SECRET_KEY), `${what} holds the secret key: ${text}`);
    };
    checkError('search', await settle('search during the hole', BOUND_MS + 15_000, engine.search('aardvark', { scope })));
    checkError('remember', await settle('remember during the hole', BOUND_MS + 15_000, engine.remember({ title: 'During', text: 'written during the hole: zebra' }, scope)));
    checkError('observe', await settle('observe during the hole', BOUND_MS + 15_000, engine.observe([{ type: 'edit', title: 'Edited src/during.ts', narrative: 'during: zebra' }], scope)));

    hole.blackhole(false);
    // The store asks again once the calls after the last unanswered request have failed at once for their while.
    await new Promise((resolve) => setTimeout(resolve, UNANSWERED_HOLD * REQUEST_TIMEOUT_S * 1000));
    const after = await settle('search after the hole', 30_000, engine.search('aardvark', { scope }));
    assert.equal(after.error, undefined, String(after.error?.message));
    assert.equal(after.value?.length, 4);
    const later = await engine.remember({ title: 'After', text: 'written after the hole: aardvark' }, scope);
    assert.equal(later.title, 'After');
    await engine.close();
    engine = null;

    // Everything written before (and after) is there for a process opening the store anew, whole.
    engine = await open();
    const titles = (await engine.store.rows(TABLES.memories, null, { select: ['title'] })).map((r) => String(r.title)).sort();
    for (const t of [...before, 'After']) assert.ok(titles.includes(t), `${t} is missing: ${titles.join(', ')}`);
    assert.deepEqual(titles.filter((t) => !['During', ...before, 'After'].includes(t)), []);
    const observations = (await engine.store.rows(TABLES.observations, null, { select: ['id', 'title'] })).map((r) => String(r.title));
    assert.ok(observations.includes(seen.title));
    // A memory is written with its search cell: none half-written (a record without its cell or the other way round).
    const cells = await engine.store.count(TABLES.cells, `source_kind = 'memory'`);
    assert.equal(cells, titles.length);
    const hits = (await engine.search('aardvark', { scope })).map((h) => h.cell.title);
    for (const t of [...before, 'After', seen.title]) assert.ok(hits.includes(t), `${t} not found: ${hits.join(' / ')}`);
  });

  it('fails the calls right after a request that got no answer at once, naming the endpoint, and asks again after a while', async () => {
    engine = await MemoryEngine.open({ storeUri: 's3://personal/latch', embedder: 'none', maintenanceIntervalMs: 0 });
    const scope = { project: PROJECT };
    await engine.remember({ title: 'Before', text: 'written before the hole: aardvark' }, scope);
    hole.blackhole(true);
    const first = await settle('search during the hole', BOUND_MS + 15_000, engine.search('aardvark', { scope }));
    assert.match(errorMessage(first.error), /did not answer: a GET of .* got no answer in 2 s/);
    // Each of these asked again and waited its own bound: a command's close, which ends its session,
    // writes its graph and renews its lease, took 35 bounds to exit.
    const endpoint = `127.0.0.1:${hole.port}`;
    for (const [what, call] of [
      ['remember', () => engine!.remember({ title: 'During', text: 'written during the hole: zebra' }, scope)],
      ['observe', () => engine!.observe([{ type: 'edit', title: 'Edited src/during.ts', narrative: 'during: zebra' }], scope)],
      ['search', () => engine!.search('aardvark', { scope })],
    ] as const) {
      const r = await settle(`${what} right after`, BOUND_MS, (call as () => Promise<unknown>)());
      const shown = errorMessage(r.error);
      assert.ok(r.error, `${what} answered during the black hole`);
      assert.match(shown, /did not answer [\d.]+ s ago; not asked again for [\d.]+ s/, `${what}: ${shown}`);
      assert.ok(shown.includes(endpoint), shown);
      assert.equal(looksLikeNetwork(shown), true, shown);
      assert.equal(looksDamaged(shown), false, shown);
    }
    hole.blackhole(false);
    await new Promise((resolve) => setTimeout(resolve, UNANSWERED_HOLD * REQUEST_TIMEOUT_S * 1000));
    assert.deepEqual((await engine.search('aardvark', { scope })).map((h) => h.cell.title), ['Before']);
    assert.deepEqual((await engine.store.rows(TABLES.memories, null, { select: ['title'] })).map((r) => String(r.title)), ['Before']);
  });

  it('bounds every request at 10 s unless CODE_MEMORY_STORE_TIMEOUT says otherwise, and refuses a value that says nothing', () => {
    assert.deepEqual(requestBounds({}), { timeout: '10000ms', connect_timeout: '10000ms', client_retry_timeout: '10', lance_aimd_max_retries: '0' });
    assert.equal(requestBounds({ CODE_MEMORY_STORE_TIMEOUT: '30' }).timeout, '30000ms');
    assert.equal(requestBounds({ CODE_MEMORY_STORE_TIMEOUT: ' ' }).timeout, '10000ms');
    // It was ignored: the default stayed in force unnoticed.
    for (const junk of ['soon', '0', '-5']) assert.throws(() => requestBounds({ CODE_MEMORY_STORE_TIMEOUT: junk }), /CODE_MEMORY_STORE_TIMEOUT must be a number of seconds greater than 0/);
  });

  it('refuses an S3 endpoint that is no URL by its value, where the request would fail with a bare "Invalid URL"', () => {
    const env = { AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b', AWS_REGION: 'us-east-1' };
    for (const endpoint of ['http://[', 'http://a b']) {
      assert.throws(() => s3Credentials({ ...env, AWS_ENDPOINT_URL: endpoint }), (e: Error) => e.message.includes(`the S3 endpoint '${endpoint}' is not an http(s)://host[:port] URL`));
    }
    assert.equal(s3Credentials({ ...env, AWS_ENDPOINT_URL: 'http://127.0.0.1:9000' }).endpoint, 'http://127.0.0.1:9000');
  });

  it('names the endpoint in what the CLI shows for a Lance request that got no answer, without the query', () => {
    const lance = new Error(
      'lance error: LanceError(IO): Generic S3 error: Error performing list request: Error performing GET http://127.0.0.1:4566/personal?list-type=2&sig=SAS in 5.001167215s - HTTP error: error sending request, /usr/local/cargo/registry/src/x.rs:849:92  Caused by: error sending request  Caused by: operation timed out',
    );
    const shown = errorMessage(lance);
    assert.match(shown, /^the object store at http:\/\/127\.0\.0\.1:4566 did not answer: a GET of \/personal got no answer in 5 s/);
    assert.ok(!shown.includes('sig='));
    // Other Lance errors read as before.
    assert.equal(errorMessage(new Error('Not found: x.lance, /a/b.rs:1:2  Caused by: y')), 'Not found: x.lance');
  });

  it('answers a tool call that object storage failed as the CLI says it: no Rust lines or causes, a missing bucket named, not taken for damage', () => {
    const silent = errorResult(
      new Error(
        'lance error: LanceError(IO): Generic S3 error: Error performing list request: Error performing GET http://127.0.0.1:4566/personal?list-type=2&prefix=me%2Fmeta.lance%2F_versions%2F in 2.00s - HTTP error: error sending request, /usr/local/cargo/registry/src/lance-io-8.0.0/src/object_store.rs:849:92  Caused by: error sending request  Caused by: operation timed out',
      ),
    ).text;
    assert.match(silent, /^internal_error: the object store at http:\/\/127\.0\.0\.1:4566 did not answer: a GET of \/personal got no answer in 2 s/);
    assert.doesNotMatch(silent, /\.rs:\d|Caused by|prefix=/);
    const gone = errorResult(
      new Error(
        'lance error: LanceError(IO): Generic S3 error: Error performing list request: Error performing GET http://127.0.0.1:4566/personal?list-type=2&prefix=me%2Fmeta.lance%2F_versions%2F in 2.49ms - Server returned non-2XX status code: 404 Not Found: <?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message><BucketName>personal</BucketName></Error>, /usr/local/cargo/registry/src/x.rs:1:2  Caused by: y',
      ),
    ).text;
    assert.equal(gone, 'internal_error: the object store at http://127.0.0.1:4566 refused a GET of /personal: NoSuchBucket (The specified bucket does not exist): the bucket does not exist (any more)');
    // A damaged file still says so, and what to run.
    assert.match(errorResult(new Error('lance error: LanceError(IO): does not have sufficient data, len: 4, /x.rs:1:2')).text, /^internal_error: the store's files look damaged \(lance error: LanceError\(IO\): does not have sufficient data, len: 4\); run `code-memory doctor`/);
    // The caller's own mistakes read as they were said.
    assert.equal(errorResult(new ToolError('invalid_arguments', 'k: must be at least 1')).text, 'invalid_arguments: k: must be at least 1');
  });
});

describe('a personal store on s3:// whose manifest downloads are cut off mid-body', function () {
  this.timeout(300_000);
  it('an open that cannot read a whole manifest fails as a network failure, never as damage, and the store opens once the network is back', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-cutbody-'));
    const server = await startS3Server({ directory: path.join(dir, 's3'), bucket: 'personal' });
    const proxy = await startProxy(server.endpoint);
    const restoreEnv = setEnv({ ...server.env, AWS_ENDPOINT_URL: proxy.endpoint, CODE_MEMORY_STORE_TIMEOUT: String(REQUEST_TIMEOUT_S) });
    const open = () => MemoryEngine.open({ storeUri: 's3://personal/cut', embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      const seeded = await open();
      await seeded.observe([{ type: 'note', title: 'seeded before the cut' }], { project: PROJECT });
      await seeded.close();
      proxy.hook = (seen) => (seen.method === 'GET' && /_versions\/[^/?]+\.manifest/.test(seen.url) ? { kind: 'cutBody' } : { kind: 'forward' });
      const cut = await settle('open with manifests cut off', 120_000, open());
      await cut.value?.close();
      assert.ok(cut.error, 'the open read no whole manifest and still opened');
      assert.ok(proxy.log.some((s) => /\.manifest/.test(s.url)), 'control: manifests were asked for');
      assert.doesNotMatch(cut.error.message, /damaged|corrupt/i, cut.error.message);
      assert.equal(looksDamaged(errorMessage(cut.error)), false, cut.error.message);
      assert.equal(looksLikeNetwork(errorMessage(cut.error)), true, cut.error.message);
      proxy.hook = () => ({ kind: 'forward' });
      const back = await open();
      assert.equal((await back.store.rows(TABLES.observations, null, { select: ['title'] })).length, 1);
      await back.close();
    } finally {
      restoreEnv();
      await proxy.close();
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
