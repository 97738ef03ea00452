// Freshness of a record about a commit whose file was renamed since (README recall_context
// "Freshness": `[changed since <sha7>: a.ts, b.ts]`, the files of the record changed between
// that commit and HEAD). Git's rename detection must not turn the record's file names into a
// rename pair ("src/{a.ts => b.ts}"). Real git repositories in temporary folders.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitFreshness } from '../../src/core/capture/freshness';
import type { MemoryEngine } from '../../src/core/engine';
import { recallContext } from '../../src/core/tools/recallContext';
import { git, makeRepo, tmp } from './captureHarness';
import { openTestEngine, removeDir, toolContext } from './mcpFixture';

describe('freshness of a record whose file was renamed since', function () {
  this.timeout(120_000);
  let root: string;
  before(() => {
    root = tmp('cm-fresh-rename-');
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  function renamedRepo(name: string): { ws: string; sha: string } {
    const ws = path.join(root, name);
    makeRepo(ws, { 'src/a.ts': 'export const a = 1;\nexport const b = 2;\nexport const c = 3;\n' });
    const sha = git(ws, 'rev-parse', 'HEAD');
    git(ws, 'mv', 'src/a.ts', 'src/b.ts');
    git(ws, 'commit', '-q', '-m', 'Rename a.ts to b.ts');
    return { ws, sha };
  }

  it('a record naming the old and the new name lists them by their own names, not as a rename pair', async () => {
    const { ws, sha } = renamedRepo('both');
    const f = await GitFreshness.forRepository(ws).check(sha, ['src/a.ts', 'src/b.ts']);
    assert.equal(f?.state, 'changed', JSON.stringify(f));
    assert.deepEqual([...f!.changed_files].sort(), ['src/a.ts', 'src/b.ts']);
    assert.equal(f!.marker, `changed since ${sha.slice(0, 7)}: src/a.ts, src/b.ts`);
  });

  it('also where the repository asks for copy detection (diff.renames = copies)', async () => {
    const { ws, sha } = renamedRepo('copies');
    git(ws, 'config', 'diff.renames', 'copies');
    const f = await GitFreshness.forRepository(ws).check(sha, ['src/a.ts', 'src/b.ts']);
    assert.deepEqual([...f!.changed_files].sort(), ['src/a.ts', 'src/b.ts'], JSON.stringify(f));
  });

  it('a record naming only the old name: changed since <sha7>: the old name (control)', async () => {
    const { ws, sha } = renamedRepo('old');
    const f = await GitFreshness.forRepository(ws).check(sha, ['src/a.ts']);
    assert.equal(f?.marker, `changed since ${sha.slice(0, 7)}: src/a.ts`);
  });

  describe('over recall_context', () => {
    let engine: MemoryEngine;
    let dir: string;
    before(async () => {
      ({ engine, dir } = await openTestEngine());
    });
    after(async () => {
      await engine.close();
      removeDir(dir);
    });

    it('the item of a commit that touched both names says which of its files changed, by name', async () => {
      const { ws, sha } = renamedRepo('tool');
      const scope = { project: 'github.com/acme/fresh-rename' };
      await engine.observe([{ type: 'commit', title: 'Split the constants module into a.ts and b.ts', files_modified: ['src/a.ts', 'src/b.ts'], commit_sha: sha, branch: 'main' }], scope);
      await engine.settled();
      const pack = await recallContext(toolContext(engine, scope, { freshness: GitFreshness.forRepository(ws) }), { query: 'constants module split' });
      assert.equal(pack.items[0]?.freshness, 'changed', pack.text);
      assert.match(pack.text, new RegExp(`\\[changed since ${sha.slice(0, 7)}: src/a\\.ts, src/b\\.ts\\]`));
      assert.doesNotMatch(pack.text, /=>/);
    });
  });
});
