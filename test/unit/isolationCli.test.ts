// The CLI run for project beta on a store that also holds project alpha.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Scope } from '../../src/core/model/records';
import { runCli } from './crossProjectFixture';
import { openTestEngine, removeDir, tempDir } from './mcpFixture';

const ALPHA = 'alpha';
const BETA = 'beta';
const alphaScope: Scope = { project: ALPHA };
const betaScope: Scope = { project: BETA };
const ALPHA_WORDS = ['zorblaxquint', 'flimwobble', 'quoffelmorph', 'snarfidex'];

function canaries(text: string): string[] {
  const lower = text.toLowerCase();
  return ALPHA_WORDS.filter((w) => lower.includes(w));
}

describe('isolation: the CLI under beta on a store with alpha', function () {
  this.timeout(180_000);
  let store: string;
  let work: string;
  let alphaObs: number[] = [];
  let alphaMem = 0;
  let alphaStats = '';
  const common = () => ['--store', store, '--embedder', 'hashed'];

  before(async () => {
    work = tempDir('isolation-cli');
    store = path.join(work, 'store');
    const { engine } = await openTestEngine(store);
    alphaObs = (
      await engine.observe(
        [
          { type: 'edit', title: 'Zorblaxquint scheduler uses flimwobble', narrative: 'quoffelmorph jobs starve without it', files_modified: ['src/z.ts'], memory_session_id: 'shared-session', dedupe_key: 'k1' },
          { type: 'note', title: 'Snarfidex cache', narrative: 'snarfidex evicts hourly', memory_session_id: 'shared-session' },
        ],
        alphaScope,
      )
    ).map((o) => o.id);
    alphaMem = (await engine.remember({ title: 'Zorblaxquint decision', text: 'We use flimwobble for zorblaxquint.', memory_type: 'decision' }, alphaScope)).id;
    await engine.observe([{ type: 'note', title: 'Beta own note', narrative: 'vantrelliq', memory_session_id: 'shared-session' }], betaScope);
    await engine.flush();
    alphaStats = JSON.stringify(await engine.stats(alphaScope));
    await engine.close();
  });
  after(() => {
    if (work) removeDir(work);
  });

  async function alphaNow(): Promise<string> {
    const r = await runCli(['stats', ...common(), '--project', ALPHA, '--json']);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  }

  it('search, stats and export for beta show nothing of alpha', async () => {
    const out: string[] = [];
    for (const args of [
      ['search', 'zorblaxquint', 'flimwobble', '--json'],
      ['search', 'snarfidex', '--layer', 'L0', '--json'],
      ['search', 'zorblaxquint', '--layer', 'L2'],
      ['stats', '--json'],
      ['export'],
    ]) {
      const r = await runCli([...args, ...common(), '--project', BETA]);
      const found = canaries(r.stdout + r.stderr);
      if (found.length > 0) out.push(`${args.join(' ')} -> ${found.join(',')}`);
    }
    assert.deepEqual(out, []);
  });

  it("forget --ids of alpha's records under --project beta forgets nothing of alpha's", async () => {
    const before = await alphaNow();
    const r1 = await runCli(['forget', '--ids', alphaObs.join(','), '--kind', 'observation', ...common(), '--project', BETA, '--json']);
    const r2 = await runCli(['forget', '--ids', String(alphaMem), '--kind', 'memory', ...common(), '--project', BETA, '--json']);
    assert.deepEqual(canaries(r1.stdout + r1.stderr + r2.stdout + r2.stderr), []);
    assert.equal(await alphaNow(), before);
  });

  it("import --project beta of alpha's export imports nothing into beta and leaves alpha as it was", async () => {
    const file = path.join(work, 'alpha.jsonl');
    const exp = await runCli(['export', ...common(), '--project', ALPHA, '--out', file]);
    assert.equal(exp.code, 0, exp.stderr);
    assert.ok(canaries(readFileSync(file, 'utf8')).length > 0, 'control: the export holds alpha');
    const before = await alphaNow();
    const imp = await runCli(['import', file, ...common(), '--project', BETA, '--json']);
    assert.equal(imp.code, 0, imp.stderr);
    const report = JSON.parse(imp.stdout) as { imported: number };
    assert.equal(report.imported, 0, imp.stdout);
    const beta = await runCli(['export', ...common(), '--project', BETA]);
    assert.deepEqual(canaries(beta.stdout), []);
    assert.equal(await alphaNow(), before);
    void alphaStats;
  });

  it("observe on stdin under --project beta with alpha's dedupe_key is stored in beta", async () => {
    const { spawnSync } = await import('node:child_process');
    const TSX = require.resolve('tsx/cjs');
    const CLI = path.join(__dirname, '..', '..', 'src', 'cli', 'main.ts');
    const env: Record<string, string> = { ...(process.env as Record<string, string>), LANCEDB_LOG: 'error' };
    delete env.CODE_MEMORY_PROJECT;
    const r = spawnSync(process.execPath, ['--require', TSX, CLI, 'observe', ...common(), '--project', BETA, '--json'], { input: JSON.stringify({ type: 'note', title: 'Beta hook line', dedupe_key: 'k1' }) + '\n', env, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /"stored":\s*1/, r.stdout);
    assert.deepEqual(canaries(r.stdout + r.stderr), []);
  });
});
