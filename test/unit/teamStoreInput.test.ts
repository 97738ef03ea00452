// Hostile input on the team store paths: odd project names, huge records.
import { strict as assert } from 'node:assert';
import type { MemoryEngine } from '../../src/core/engine';
import { teamHarness } from './teamFixture';
import type { S3Server } from './fixtures/s3Server';

process.env.LANCEDB_LOG ??= 'error';

describe('team store: hostile input', function () {
  this.timeout(300_000);
  const team = teamHarness();
  let s: S3Server;
  const person = (name: string): Promise<MemoryEngine> => team.person(name, s, { online: true });

  beforeEach(async () => {
    s = await team.server();
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
    // remember() keeps to the remember tool's 20,000 characters; an edited (or imported) memory may be longer.
    const kept = await alice.remember({ title: 'Huge', text: 'marker-huge-dugong' }, scope);
    const m = await alice.editMemory(scope, kept.id, { text: `marker-huge-dugong ${words}` });
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
