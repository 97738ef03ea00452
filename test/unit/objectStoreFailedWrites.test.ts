// observe on a store on s3:// whose endpoint commits a write and answers it with an error: the
// command fails (exit 1, one line), takes back what it stored, and run again once the fault is gone
// stores each record exactly once.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CliBundle } from './cliFixture';
import type { CliRun } from './cliFixture';
import { startS3Server } from './fixtures/s3Server';
import type { S3Server } from './fixtures/s3Server';
import { startProxy } from './fixtures/faultProxy';
import type { Proxy } from './fixtures/faultProxy';

const bundle = new CliBundle('test-failed-writes');

function runRaw(args: string[], input: string, env: Record<string, string>, ms = 150_000): Promise<CliRun & { timedOut: boolean; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const child = bundle.spawn(args, { env });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, ms);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.stdin.on('error', () => undefined);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr, timedOut, ms: Date.now() - t0 });
    });
    child.stdin.end(input);
  });
}

const noStack = (s: string): boolean => !/\n\s+at .+\(.*:\d+:\d+\)|\.rs:\d+|Caused by/.test(s);
const lines = (titles: string[]): string => titles.map((t) => JSON.stringify({ type: 'note', title: t, narrative: `${t} narrative` })).join('\n') + '\n';

describe('observe on an s3:// store whose commits are answered with errors', function () {
  this.timeout(600_000);
  let dir: string;
  let server: S3Server;
  let proxy: Proxy;
  let env: Record<string, string>;

  before(async () => {
    await bundle.build();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-failed-writes-'));
    server = await startS3Server({ directory: path.join(dir, 's3'), bucket: 'personal' });
    proxy = await startProxy(server.endpoint);
    env = { ...server.env, AWS_ENDPOINT_URL: proxy.endpoint, CODE_MEMORY_STORE_TIMEOUT: '2', HOME: dir };
  });
  after(async () => {
    await proxy?.close();
    await server?.stop();
    bundle.remove();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => (proxy.hook = () => ({ kind: 'forward' })));

  async function count(store: string, project: string): Promise<number> {
    const r = await runRaw(['stats', '--store', store, '--project', project, '--json'], '', env);
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { observations: number }).observations;
  }

  for (const [name, match, action] of [
    ['a commit of the observations table that went through but was answered 500', /\/observations\.lance\/_versions\//, { kind: 'forwardThenFail', status: 500 }],
    ['a commit of the cells table that went through but was answered 500', /\/cells\.lance\/_versions\//, { kind: 'forwardThenFail', status: 500 }],
  ] as const) {
    it(`${name}: observe fails (exit 1, one line, no stack), and re-running it after stores each record exactly once`, async () => {
      const store = `s3://personal/f-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 40)}`;
      const prep = await runRaw(['observe', '--store', store, '--project', 'F', '--embedder', 'none'], lines(['seed']), env);
      assert.equal(prep.code, 0, prep.stderr);
      proxy.hook = (s) => (s.method === 'PUT' && match.test(s.url) ? action : { kind: 'forward' });
      const titles = ['alpha one', 'beta two', 'gamma three'];
      const r = await runRaw(['observe', '--store', store, '--project', 'F', '--embedder', 'none'], lines(titles), env);
      proxy.hook = () => ({ kind: 'forward' });
      const failed = r.code !== 0;
      if (failed) {
        assert.equal(r.code, 1, r.stderr);
        assert.ok(noStack(r.stderr), r.stderr);
        const again = await runRaw(['observe', '--store', store, '--project', 'F', '--embedder', 'none'], lines(titles), env);
        assert.equal(again.code, 0, again.stderr);
      }
      assert.equal(await count(store, 'F'), 1 + titles.length, `exit ${r.code} (${r.stderr.trim().slice(0, 300)}); after ${failed ? 'a re-run' : 'no re-run'}`);
    });
  }

  it('observe of 1,200 lines whose store fails after the first 500 are committed: the stored ones are taken back (never the observation stored before that a line repeats), and re-running it stores each line once', async () => {
    const store = 's3://personal/chunks';
    const seed = `${JSON.stringify({ type: 'note', title: 'seed', narrative: 'seed narrative', dedupe_key: 'seed-key' })}\n`;
    const prep = await runRaw(['observe', '--store', store, '--project', 'K', '--embedder', 'none'], seed, env);
    assert.equal(prep.code, 0, prep.stderr);
    let commits = 0;
    proxy.hook = (s) => {
      if (s.method === 'PUT' && /\/observations\.lance\/_versions\//.test(s.url)) {
        commits++;
        if (commits > 1) return { kind: 'fail', status: 503 };
      }
      return { kind: 'forward' };
    };
    // The first line repeats the seed's dedupe key: the run answers the seed's id for it, and must not take it back.
    const titles = Array.from({ length: 1200 }, (_, i) => `line ${i}`);
    const input = seed + lines(titles);
    const r = await runRaw(['observe', '--store', store, '--project', 'K', '--embedder', 'none'], input, env);
    proxy.hook = () => ({ kind: 'forward' });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(await count(store, 'K'), 1, 'the first 500 were taken back, and the seed stored before the run kept');
    const again = await runRaw(['observe', '--store', store, '--project', 'K', '--embedder', 'none'], input, env);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await count(store, 'K'), 1 + titles.length);
  });

  it('observe whose records commit and whose store then fails every request (the take-back too): the error says which records stay stored, so that they are not written again blindly', async () => {
    const store = 's3://personal/left-stored';
    const prep = await runRaw(['observe', '--store', store, '--project', 'L', '--embedder', 'none'], lines(['seed']), env);
    assert.equal(prep.code, 0, prep.stderr);
    let committed = false;
    proxy.hook = (s) => {
      if (committed) return { kind: 'fail', status: 503 };
      committed = s.method === 'PUT' && /\/observations\.lance\/_versions\//.test(s.url);
      return { kind: 'forward' };
    };
    const r = await runRaw(['observe', '--store', store, '--project', 'L', '--embedder', 'none'], lines(['left behind']), env);
    proxy.hook = () => ({ kind: 'forward' });
    assert.equal(r.code, 1, r.stdout);
    assert.ok(noStack(r.stderr), r.stderr);
    assert.equal(await count(store, 'L'), 2, `control: the record stayed stored (${r.stderr.trim()})`);
    assert.match(r.stderr, /^This call's observation record \(id \d+\) could not be taken back and (stays|may be) stored: look before writing it again\.$/m, r.stderr);
  });
});
