// doctor's token-file check: a file at serve's token path that serve refuses to use (torn,
// garbled, a folder, a symlink) is not called ok, and the fix says what to do with it instead of
// a chmod; a file a server wrote is still judged by its mode.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { runMain } from './cliInProcess';

process.env.LANCEDB_LOG ??= 'error';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

async function tokenCheck(store: string): Promise<Check | undefined> {
  const r = await runMain(['doctor', '--store', store, '--project', 'acme/token', '--embedder', 'none', '--json']);
  return (JSON.parse(r.out).checks as Check[]).find((c) => c.name === 'token file');
}

describe('doctor and the token file serve writes', function () {
  this.timeout(120_000);
  let dir: string;
  let store: string;
  let file: string;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-doctor-token-'));
    store = path.join(dir, 'store');
    file = path.join(store, 'server.json');
    const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    await engine.close();
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const refused: Array<[string, (f: string) => void]> = [
    ['torn (cut short mid-write)', (f) => fs.writeFileSync(f, '{"url":"http://127.0.0.1:4', { mode: 0o600 })],
    ['garbage bytes', (f) => fs.writeFileSync(f, Buffer.from([0, 1, 2, 0xff, 0xfe, 10]), { mode: 0o600 })],
    ['a JSON file of other fields (a user\'s settings)', (f) => fs.writeFileSync(f, '{"theme":"dark"}', { mode: 0o600 })],
    ['a folder', (f) => fs.mkdirSync(f, { mode: 0o700 })],
    ['a symlink', (f) => fs.symlinkSync(path.join(dir, 'elsewhere.json'), f)],
  ];
  for (const [what, make] of refused) {
    it(`a token file serve refuses (${what}) fails the check, naming it, with a fix that is no chmod`, async () => {
      make(file);
      const check = await tokenCheck(store);
      assert.ok(check, 'doctor does not check the token file');
      assert.equal(check.ok, false, `doctor calls a token file serve refuses ok: ${JSON.stringify(check)}`);
      assert.match(check.detail, /serve refuses it/);
      assert.ok(check.fix && !/^chmod/.test(check.fix) && /--token-file/.test(check.fix), `fix: ${check.fix}`);
    });
  }

  it("a server's file is judged by its mode: 0600 ok, 0644 a chmod", async () => {
    fs.writeFileSync(file, JSON.stringify({ url: 'http://127.0.0.1:4000/mcp', token: 't', project: 'acme/token', pid: 1 }), { mode: 0o600 });
    fs.chmodSync(file, 0o600);
    assert.equal((await tokenCheck(store))?.ok, true);
    fs.chmodSync(file, 0o644);
    const check = await tokenCheck(store);
    assert.equal(check?.ok, false);
    assert.match(check?.fix ?? '', /^chmod 600 /);
  });

  it('no token file: no check', async () => {
    assert.equal(await tokenCheck(store), undefined);
  });
});
