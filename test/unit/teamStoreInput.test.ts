// Hostile input on the team store paths: odd project names, huge records.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { startS3Server, until } from './fixtures/s3Server';
import type { S3Server } from './fixtures/s3Server';

process.env.LANCEDB_LOG ??= 'error';

describe('team store: hostile input', function () {
  this.timeout(300_000);
  let dir: string;
  let s: S3Server;
  const engines: MemoryEngine[] = [];

  async function person(name: string): Promise<MemoryEngine> {
    const engine = await MemoryEngine.open({
      storeUri: path.join(dir, `${name}-store`),
      embedder: 'none',
      maintenanceIntervalMs: 0,
      team: { uri: 's3://team/acme', author: `${name} <${name.toLowerCase()}@example.com>`, env: { ...s.env }, refreshMs: 0, retryMs: 200 },
    });
    engines.push(engine);
    await until(async () => (await engine.teamStatus())?.state === 'online');
    return engine;
  }

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-team-'));
    s = await startS3Server({ directory: path.join(dir, 's3') });
  });
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.close().catch(() => undefined);
    await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('odd project names round-trip and stay apart', async () => {
    const alice = await person('Alice');
    const bob = await person('Bob');
    const names = ["o'brien/it's", 'a\\b', 'ünïcode/项目', "x'); DROP TABLE team_items; --", 'p'.repeat(500) + "'", 'with\nnewline'];
    for (const [i, project] of names.entries()) {
      const m = await alice.remember({ title: `Item ${i}`, text: `text of project ${i}: marker-${i}-zorilla` }, { project });
      assert.equal((await alice.share('memory', m.id, { project })).delivery, 'sent', project);
    }
    await bob.syncTeam();
    for (const [i, project] of names.entries()) {
      const items = await bob.listShared({ project });
      assert.deepEqual(items.map((t) => t.title), [`Item ${i}`], project);
      const hits = (await bob.search('zorilla', { scope: { project } })).filter((h) => h.origin?.store === 'team');
      assert.deepEqual(hits.map((h) => h.cell.title), [`Item ${i}`], project);
    }
  });

  it('a huge memory (4 MB) shares, is found by a teammate and unshares without a trace', async () => {
    const alice = await person('Alice');
    const bob = await person('Bob');
    const scope = { project: 'github.com/acme/big' };
    const words = Array.from({ length: 400_000 }, (_, i) => `w${i % 5000}x`).join(' ');
    const m = await alice.remember({ title: 'Huge', text: `marker-huge-dugong ${words}` }, scope);
    const t0 = Date.now();
    const r = await alice.share('memory', m.id, scope);
    process.stdout.write(`      share of ${words.length} chars: ${Date.now() - t0} ms, ${r.delivery}\n`);
    assert.equal(r.delivery, 'sent');
    await bob.syncTeam();
    assert.ok((await bob.search('dugong', { scope })).some((h) => h.origin?.store === 'team'));
    assert.equal((await alice.unshare({ kind: 'memory', id: m.id }, scope)).delivery, 'sent');
    const files = (await s.files()).filter((f) => f.bytes.includes(Buffer.from('marker-huge-dugong')));
    assert.deepEqual(files.map((f) => f.file), []);
  });
});
