// --branch narrows what a command reads (search, node, the servers) or names the branch of what
// it writes (observe, import-git). The commands it means nothing to (stats, export, import,
// forget, share, unshare, team, doctor, eval) refuse it (exit 2) instead of ignoring it unseen:
// `forget --whole-project --branch feature` forgot every branch of the project, and `export
// --branch feature` wrote the other branches' records. Run as the CLI's bundle on real stores.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { CliBundle } from './cliFixture';
import type { CliRun } from './cliFixture';
import { removeDir, tempDir } from './mcpFixture';

const bundle = new CliBundle('cli-branch-refused');
const cli = (args: string[], input?: string): Promise<CliRun> => bundle.run(args, { input });

async function observations(store: string, project: string): Promise<number> {
  const r = await cli(['stats', '--store', store, '--project', project, '--json']);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { observations: number }).observations;
}

describe('code-memory --branch where it narrows nothing', function () {
  this.timeout(240_000);
  let dir: string;
  let store: string;
  before(async () => {
    await bundle.build();
    dir = tempDir('cli-branch');
    store = path.join(dir, 'store');
    const input = [
      { type: 'note', title: 'okapi on feature', branch: 'feature' },
      { type: 'note', title: 'okapi on other', branch: 'other' },
      { type: 'note', title: 'okapi on main', branch: 'main' },
    ].map((o) => JSON.stringify(o)).join('\n');
    const o = await cli(['observe', '--store', store, '--project', 'P'], `${input}\n`);
    assert.equal(o.code, 0, o.stderr);
  });
  after(() => {
    removeDir(dir);
    bundle.remove();
  });

  it('forget --whole-project --branch is refused and forgets nothing, not every branch', async () => {
    const r = await cli(['forget', '--whole-project', '--yes', '--branch', 'feature', '--store', store, '--project', 'P']);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /^error: forget does not take --branch/);
    assert.equal(await observations(store, 'P'), 3);
  });

  it('export and stats with --branch are refused rather than answering for every branch', async () => {
    const e = await cli(['export', '--branch', 'feature', '--store', store, '--project', 'P']);
    assert.equal(e.code, 2, e.stderr);
    assert.equal(e.stdout, '');
    assert.match(e.stderr, /^error: export does not take --branch/);
    const s = await cli(['stats', '--branch', 'feature', '--store', store, '--project', 'P', '--json']);
    assert.equal(s.code, 2, s.stderr);
    assert.equal(s.stdout, '');
  });

  it('every other command that narrows nothing to a branch refuses it too', async () => {
    const team = path.join(dir, 'team');
    const runs = [
      ['import', '-'],
      ['forget', '--ids', '1', '--kind', 'observation'],
      ['share', '--memory', '1', '--team-store', team],
      ['unshare', '--memory', '1', '--team-store', team],
      ['team', '--team-store', team],
      ['doctor'],
    ];
    for (const args of runs) {
      const r = await cli([...args, '--branch', 'feature', '--store', store, '--project', 'P'], '');
      assert.equal(r.code, 2, `${args[0]}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, new RegExp(`^error: ${args[0]} does not take --branch`));
    }
    assert.equal(await observations(store, 'P'), 3);
  });

  it('search, node and observe still take --branch, and --help names the commands that do', async () => {
    const s = await cli(['search', 'okapi', '--branch', 'feature', '--store', store, '--project', 'P', '--json']);
    assert.equal(s.code, 0, s.stderr);
    assert.deepEqual((JSON.parse(s.stdout) as Array<{ title: string }>).map((h) => h.title).sort(), ['okapi on feature', 'okapi on main']);
    const n = await cli(['node', (JSON.parse(s.stdout) as Array<{ node_id: string }>)[0].node_id, '--branch', 'feature', '--store', store, '--project', 'P']);
    assert.equal(n.code, 0, n.stderr);
    const o = await cli(['observe', '--branch', 'feature', '--store', store, '--project', 'B'], '{"type":"note","title":"stamped"}\n');
    assert.equal(o.code, 0, o.stderr);
    const help = await cli(['--help']);
    assert.match(help.stdout, /Only mcp, serve, import-git, observe, node, search take it/);
  });
});
