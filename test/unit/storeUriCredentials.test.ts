// Credentials written into a store URI: refused, never shown, whatever characters the secret holds;
// an '@' in the key prefix is the prefix's.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseObjectLocation } from '../../src/core/store/objectStorage';

const TSX = path.resolve(__dirname, '../../node_modules/.bin/tsx');
const MAIN = path.resolve(__dirname, '../../src/cli/main.ts');

function cli(cwd: string, args: string[]): { code: number | null; out: string } {
  const r = spawnSync(TSX, [MAIN, ...args], { cwd, env: { ...process.env, HOME: cwd, CODE_MEMORY_STORE: '', AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' }, encoding: 'utf8', timeout: 110_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('credentials written into a store URI', function () {
  this.timeout(240_000);
  let dir = '';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-probe-cred-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('doctor never shows a store URI with the credentials written into it', () => {
    const secret = 'wJalrAUDITSECRETmarker/abc';
    const r = cli(dir, ['doctor', '--store', `s3://AKIAAUDITKEY:${secret}@bucket/x`, '--embedder', 'none']);
    assert.ok(!r.out.includes('AUDITSECRETmarker'), `README: a URI with credentials is never shown with them; doctor printed:\n${r.out}`);
  });

  it("a URI whose secret holds '#' or '?' is refused too (not opened as a local folder named after the secret)", () => {
    for (const uri of ['s3://AKIAAUDITKEY:wJalrSECRET#marker@bucket/x', 's3://AKIAAUDITKEY:wJalr?SECRETmarker@bucket/x']) {
      assert.throws(() => parseObjectLocation(uri), /carries credentials/, `parseObjectLocation(${uri}) did not refuse it`);
    }
  });

  it("the CLI refuses a store URI whose secret holds '#' and writes nothing named after it", () => {
    const r = cli(dir, ['doctor', '--store', 's3://AKIAAUDITKEY:wJalrSECRET#marker@bucket/x', '--embedder', 'none']);
    const written = fs.readdirSync(dir, { recursive: true }).map(String).filter((f) => f.includes('SECRET'));
    assert.deepEqual(written, [], `files named after the secret were created under the cwd; doctor said:\n${r.out}`);
  });

  it('a URI with a query or fragment is refused (options come from the environment), and doctor never shows it', () => {
    for (const uri of ['s3://bucket/x?region=us-east-1', 'az://container/x#frag', 'gs://bucket?x=1']) {
      assert.throws(() => parseObjectLocation(uri), /has a query or fragment/, uri);
    }
    const r = cli(dir, ['doctor', '--store', 's3://bucket/x?aws_access_key_id=AKIAAUDIT&aws_secret_access_key=wJalrQUERYSECRETmarker', '--embedder', 'none']);
    assert.ok(!r.out.includes('QUERYSECRETmarker'), `doctor printed the secret from the URI's query:\n${r.out}`);
    assert.match(r.out, /has a query or fragment/);
    assert.deepEqual(fs.readdirSync(dir, { recursive: true }).map(String).filter((f) => f.includes('SECRET')), []);
  });

  it("a prefix holding '@' (a legal S3 key character) is not refused as credentials", () => {
    const loc = parseObjectLocation('s3://team-bucket/teams/web@acme/code-memory');
    assert.equal(loc?.bucket, 'team-bucket');
  });
});
