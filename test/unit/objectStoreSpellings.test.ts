// A personal store on s3:// reached however its location and endpoint are written: a URI with a
// doubled or trailing slash names the same store, an endpoint spelled `HTTP://` is plain http, and
// a request bound that rounds to no time at all is refused instead of failing every request, and a
// prefix with a space or a non-ASCII letter is one place for Lance's objects and our own requests
// (the lock, the listings a forget reads), so a forget finds every object that holds its record.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import { parseObjectLocation, requestBounds } from '../../src/core/store/objectStorage';
import { runMain } from './cliInProcess';
import { setEnv, startS3Server } from './fixtures/s3Server';
import type { S3Server } from './fixtures/s3Server';

process.env.LANCEDB_LOG ??= 'error';

describe('a personal store on s3:// however its location is written', function () {
  this.timeout(300_000);
  let dir: string;
  let s: S3Server;
  let restoreEnv: () => void;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-s3-spellings-'));
    s = await startS3Server({ directory: path.join(dir, 's3'), bucket: 'personal' });
    restoreEnv = setEnv({ ...s.env, HOME: dir });
  });
  afterEach(async () => {
    restoreEnv();
    await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const remember = async (uri: string): Promise<void> => {
    const engine = await MemoryEngine.open({ storeUri: uri, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      await engine.remember({ title: 'Kept decision', text: 'one store' }, { project: 'p' });
      await engine.flush();
    } finally {
      await engine.close();
    }
  };

  it('a doubled or trailing slash names the same store (not a lance error)', async () => {
    await remember('s3://personal/me/');
    for (const uri of ['s3://personal/me', 's3://personal//me', 's3://personal/me//', 's3://personal//me/']) {
      const r = await runMain(['stats', '--store', uri, '--project', 'p', '--embedder', 'none', '--json']);
      assert.equal(r.code, 0, `${uri}: ${r.err}`);
      assert.equal(JSON.parse(r.out).memories, 1, `${uri}: ${r.out}`);
    }
    assert.deepEqual((await s.keys()).filter((k) => !k.startsWith('me/')), [], 'objects written outside the prefix');
  });

  it('an endpoint spelled HTTP:// (upper case) is plain http', async () => {
    const restore = setEnv({ AWS_ENDPOINT_URL: s.endpoint.replace('http://', 'HTTP://') });
    try {
      await remember('s3://personal/me');
    } finally {
      restore();
    }
    const r = await runMain(['stats', '--store', 's3://personal/me', '--project', 'p', '--embedder', 'none', '--json']);
    assert.equal(JSON.parse(r.out).memories, 1, r.out + r.err);
  });

  it('CODE_MEMORY_STORE_TIMEOUT that rounds to 0 ms is refused, naming it', async () => {
    assert.throws(() => requestBounds({ CODE_MEMORY_STORE_TIMEOUT: '0.0001' }), /CODE_MEMORY_STORE_TIMEOUT must be a number of seconds greater than 0/);
    assert.equal(requestBounds({ CODE_MEMORY_STORE_TIMEOUT: '0.001' }).timeout, '1ms');
    const r = await runMain(['stats', '--store', 's3://personal/me', '--project', 'p', '--embedder', 'none'], { CODE_MEMORY_STORE_TIMEOUT: '0.0004' });
    assert.equal(r.code, 2, r.out + r.err);
    assert.match(r.err, /CODE_MEMORY_STORE_TIMEOUT/);
  });

  it('a prefix with a space and a non-ASCII letter: the lock sits with the tables, and a forget leaves its text in no object', async () => {
    assert.equal(parseObjectLocation('s3://personal/my store+ü/x')?.prefix, 'my%20store+%C3%BC/x');
    const marker = `zqxspelled${randomBytes(5).toString('hex')}`;
    const scope = { project: 'p' };
    const engine = await MemoryEngine.open({ storeUri: 's3://personal/my store+ü/x', embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    try {
      await engine.observe(Array.from({ length: 10 }, (_, i) => ({ type: 'note', title: `routine ${i}`, narrative: `note ${i}` })), scope);
      const [o] = await engine.observe([{ type: 'note', title: `Title ${marker}`, narrative: `the ${marker} narrative` }], scope);
      await engine.flush();
      // Access counts racing the forget leave data objects no version references: found by listing the table.
      for (let k = 0; k < 5; k++) await engine.touch('observation', [o.id], scope, { background: true });
      await engine.forget({ kind: 'observation', ids: [o.id] }, scope);
    } finally {
      await engine.close();
    }
    const held = (await s.files()).filter((f) => f.bytes.includes(marker)).map((f) => f.file);
    assert.deepEqual(held, [], 'objects still holding the forgotten record');
    const keys = await s.keys();
    assert.deepEqual(keys.filter((k) => !k.startsWith('my%20store+%C3%BC/x/')), [], 'objects outside the prefix Lance writes under');
  });
});
