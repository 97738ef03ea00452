// An export made before a forget, imported after it, does not bring the forgotten records back:
// the forget leaves digests (never text) that the import recognises, and it skips those records
// (with what derives from them: the graph entries naming a forgotten memory), counting them as
// forgotten. `includeForgotten` restores them on purpose. Through the CLI too (real processes).
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import type { ImportReport } from '../../src/core/store/portability';
import { TABLES } from '../../src/core/store/schema';
import { CliBundle } from './cliFixture';
import type { CliRun } from './cliFixture';
import { removeDir, tempDir } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

async function* linesOf(lines: string[]): AsyncIterable<string> {
  for (const l of lines) yield l;
}

describe('an import of an export made before a forget', function () {
  this.timeout(180_000);
  const dirs: string[] = [];
  const open = async (): Promise<MemoryEngine> => {
    const dir = tempDir('import-forgotten');
    dirs.push(dir);
    return MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  };
  after(() => dirs.forEach(removeDir));
  const scope = { project: 'acme/app', branch: 'main' };
  const dump = async (e: MemoryEngine): Promise<string[]> => {
    const out: string[] = [];
    await e.exportJsonl((l) => void out.push(l), null);
    return out.slice(1);
  };
  const importReport = async (e: MemoryEngine, lines: string[], options: { includeForgotten?: boolean } = {}): Promise<ImportReport> => {
    let report: ImportReport | undefined;
    await e.importJsonl(linesOf(lines), { ...options, onReport: (r) => (report = r) });
    return report!;
  };

  /** A store with a session (two observations and its summary) and two memories; its export. */
  const seeded = async (e: MemoryEngine) => {
    const session = await e.currentSessionId(scope);
    const [o] = await e.observe([{ type: 'note', title: 'Wombatcache decision', narrative: 'We decided to use wombatcache instead of redis.', concepts: ['wombatcache'] }], scope);
    await e.observe([{ type: 'edit', title: 'Edited the cache layer', files_modified: ['src/cache.ts'] }], scope);
    const summary = await e.endSession(scope, session, 'request');
    assert.match(summary?.decisions ?? '', /wombatcache/, 'control: the summary quotes the observation');
    const kept = await e.remember({ memory_type: 'decision', title: 'Kept decision', text: 'We keep the linter strict.' }, scope);
    const doomed = await e.remember({ memory_type: 'decision', title: 'Okapi launch plan', text: 'The okapi launch is in May.', files: ['ops/okapi.ts'] }, scope);
    const lines: string[] = [];
    await e.exportJsonl((l) => void lines.push(l), null);
    assert.ok(lines.some((l) => l.includes('Okapi launch plan')) && lines.some((l) => l.includes('Wombatcache')), 'control: the export holds both');
    return { o, summary: summary!, kept, doomed, lines };
  };

  it('skips the forgotten observations, summaries and memories, and what names them, counting them', async () => {
    const e = await open();
    try {
      const { o, kept, doomed, lines } = await seeded(e);
      const byObservation = await e.forget({ ids: [o.id] }, scope);
      assert.equal(byObservation.session_summaries, 1, 'control: the summary went with its observation');
      await e.forget({ kind: 'memory', ids: [doomed.id] }, scope);
      const report = await importReport(e, lines);
      assert.equal(report.imported, 0, JSON.stringify(report));
      assert.equal(report.forgotten, 3, JSON.stringify(report));
      const after = await dump(e);
      assert.deepEqual(after.filter((l) => /okapi|wombatcache/i.test(l)), [], 'a forgotten record, or what names it, came back');
      assert.ok(after.some((l) => l.includes(`"id":${kept.id}`) && l.includes('Kept decision')), 'the kept memory is still there');
      assert.equal((await e.getMemories([doomed.id], scope)).length, 0);
      assert.equal((await e.getObservations([o.id], scope)).length, 0);
      // The meta table keeps digests, never the forgotten text.
      const meta = (await e.store.rows(TABLES.meta, null)).map((r) => `${String(r.key)}=${String(r.value)}`).join('\n');
      assert.doesNotMatch(meta, /okapi|wombatcache/i);
    } finally {
      await e.close();
    }
  });

  it('restores them with includeForgotten', async () => {
    const e = await open();
    try {
      const { o, doomed, lines } = await seeded(e);
      await e.forget({ ids: [o.id] }, scope);
      await e.forget({ kind: 'memory', ids: [doomed.id] }, scope);
      const report = await importReport(e, lines, { includeForgotten: true });
      assert.equal(report.forgotten ?? 0, 0, JSON.stringify(report));
      assert.equal(report.imported >= 3, true, JSON.stringify(report));
      // Under fresh ids, maybe: the allocator handed theirs out once.
      assert.ok((await e.listMemories(scope)).some((m) => m.title === 'Okapi launch plan'));
      assert.ok((await e.listObservations(scope)).some((x) => x.title === 'Wombatcache decision'));
      // Restored, they are no longer forgotten: a later import finds them there.
      const again = await importReport(e, lines);
      assert.equal(again.imported, 0, JSON.stringify(again));
      assert.equal(again.forgotten ?? 0, 0, JSON.stringify(again));
    } finally {
      await e.close();
    }
  });

  it('recognises a record renumbered by the import that stored it, edited, then forgotten', async () => {
    const src = await open();
    const dst = await open();
    try {
      const m = await src.remember({ memory_type: 'decision', title: 'Capybara rollout', text: 'Roll out capybara to all regions.' }, scope);
      const lines: string[] = [];
      await src.exportJsonl((l) => void lines.push(l), null);
      // Ids taken in the target: the memory gets a fresh one.
      await dst.observe(Array.from({ length: 20 }, (_, i) => ({ type: 'note', title: `other ${i}` })), { project: 'zzz', branch: 'main' });
      await importReport(dst, lines);
      const [stored] = (await dst.listMemories(scope)).filter((x) => x.title === 'Capybara rollout');
      assert.notEqual(stored.id, m.id, 'control: renumbered');
      await dst.editMemory(scope, stored.id, { text: 'Roll out capybara to the EU first.' });
      await dst.forget({ kind: 'memory', ids: [stored.id] }, scope);
      const report = await importReport(dst, lines);
      assert.equal(report.forgotten, 1, JSON.stringify(report));
      assert.deepEqual((await dump(dst)).filter((l) => /capybara/i.test(l)), []);
    } finally {
      await src.close();
      await dst.close();
    }
  });

  it('a forget of the whole project clears the digests: the export is imported whole again', async () => {
    const e = await open();
    try {
      const { doomed, lines } = await seeded(e);
      await e.forget({ kind: 'memory', ids: [doomed.id] }, scope);
      await e.forget({ project: scope.project }, null);
      const report = await importReport(e, lines);
      assert.equal(report.forgotten ?? 0, 0, JSON.stringify(report));
      assert.ok((await e.listMemories(scope)).some((m) => m.title === 'Okapi launch plan'));
    } finally {
      await e.close();
    }
  });
});

describe('code-memory import of an export made before a forget (CLI)', function () {
  this.timeout(180_000);
  const bundle = new CliBundle('test-import-forgotten');
  const ENV = { CODE_MEMORY_EMBEDDER: 'none' };
  const cli = (args: string[], input?: string): Promise<CliRun> => bundle.run(args, { input, env: ENV });
  let dir: string;
  before(async () => {
    await bundle.build();
    dir = tempDir('cli-import-forgotten');
  });
  after(() => {
    removeDir(dir);
    bundle.remove();
  });

  it('says how many records it left out as forgotten, in text and JSON', async () => {
    const store = path.join(dir, 'store');
    const observed = await cli(['observe', '--store', store, '--project', 'p1'], `${JSON.stringify({ type: 'note', title: 'Marmoset secret plan' })}\n${JSON.stringify({ type: 'note', title: 'kept note' })}\n`);
    assert.equal(observed.code, 0, observed.stderr);
    const file = path.join(dir, 'before.jsonl');
    const exported = await cli(['export', '--store', store, '--project', 'p1', '--out', file]);
    assert.equal(exported.code, 0, exported.stderr);
    const record = fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { kind: string; record: { id: number; title: string } })
      .find((l) => l.kind === 'observation' && l.record.title === 'Marmoset secret plan')!.record;
    const forgot = await cli(['forget', '--store', store, '--project', 'p1', '--ids', String(record.id), '--kind', 'observation', '--json']);
    assert.equal(forgot.code, 0, forgot.stderr);
    // The observation, and the summary of its session if the CLI's close wrote one.
    const report = JSON.parse(forgot.stdout) as { observations: number; session_summaries: number; memories: number };
    const n = report.observations + report.session_summaries + report.memories;
    assert.equal(report.observations, 1, forgot.stdout);
    const imported = await cli(['import', file, '--store', store, '--project', 'p1']);
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stdout, new RegExp(`^Imported 0 record\\(s\\) of 'p1' \\(\\d+ already there, 0 of other projects left out, ${n} forgotten left out\\)\\.\\n$`));
    const json = await cli(['import', file, '--store', store, '--project', 'p1', '--json']);
    assert.equal(json.code, 0, json.stderr);
    assert.equal((JSON.parse(json.stdout) as ImportReport).forgotten, n, json.stdout);
    const again = path.join(dir, 'after.jsonl');
    assert.equal((await cli(['export', '--store', store, '--project', 'p1', '--out', again])).code, 0);
    assert.doesNotMatch(fs.readFileSync(again, 'utf8'), /Marmoset/);
    const stats = await cli(['stats', '--store', store, '--project', 'p1', '--json']);
    assert.equal((JSON.parse(stats.stdout) as { observations: number }).observations, 1, stats.stdout);
    // A restore, asked for.
    const restored = await cli(['import', file, '--store', store, '--project', 'p1', '--include-forgotten', '--json']);
    assert.equal(restored.code, 0, restored.stderr);
    assert.equal((JSON.parse(restored.stdout) as ImportReport).forgotten ?? 0, 0, restored.stdout);
    const after = await cli(['stats', '--store', store, '--project', 'p1', '--json']);
    assert.equal((JSON.parse(after.stdout) as { observations: number }).observations, 2, after.stdout);
  });
});
