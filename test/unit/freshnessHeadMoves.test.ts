// Freshness right after HEAD moves (README recall_context "Freshness": answers are cached per
// state of HEAD and every branch). A commit, a checkout or a reset made just before a tool call
// must be seen by that call: an agent that commits a change and asks at once must not be told the
// record about the old code "still holds" because HEAD was read a moment earlier. Real git
// repositories in temporary folders.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitFreshness } from '../../src/core/capture/freshness';
import type { MemoryEngine } from '../../src/core/engine';
import { recallContext } from '../../src/core/tools/recallContext';
import { git, makeRepo, tmp, writeFiles } from './captureHarness';
import { openTestEngine, removeDir, toolContext } from './mcpFixture';

describe('freshness right after HEAD moves', function () {
  this.timeout(120_000);
  let root: string;
  before(() => {
    root = tmp('cm-fresh-head-');
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  function repo(name: string): { ws: string; sha: string } {
    const ws = path.join(root, name);
    makeRepo(ws, { 'src/a.ts': 'export const a = 1;\n', 'src/other.ts': 'export const o = 1;\n' });
    return { ws, sha: git(ws, 'rev-parse', 'HEAD') };
  }

  it('a commit that changes the file, made after a check, is seen by the next check', async () => {
    const { ws, sha } = repo('commit');
    const fresh = GitFreshness.forRepository(ws);
    assert.equal((await fresh.check(sha, ['src/a.ts']))?.state, 'current');
    writeFiles(ws, { 'src/a.ts': 'export const a = 2;\n' });
    git(ws, 'commit', '-q', '-am', 'Change a');
    const f = await fresh.check(sha, ['src/a.ts']);
    assert.equal(f?.state, 'changed', JSON.stringify(f));
    assert.equal(f!.marker, `changed since ${sha.slice(0, 7)}: src/a.ts`);
  });

  it('a checkout of a branch without the commit, made after a check, is seen by the next check', async () => {
    const { ws } = repo('checkout');
    git(ws, 'checkout', '-q', '-b', 'feature');
    writeFiles(ws, { 'src/a.ts': 'export const a = 3;\n' });
    git(ws, 'commit', '-q', '-am', 'Feature change');
    const sha = git(ws, 'rev-parse', 'HEAD');
    const fresh = GitFreshness.forRepository(ws);
    assert.equal((await fresh.check(sha, ['src/a.ts']))?.state, 'current');
    git(ws, 'checkout', '-q', 'main');
    const f = await fresh.check(sha, ['src/a.ts']);
    assert.equal(f?.state, 'off_branch', JSON.stringify(f));
    assert.deepEqual(f!.branches, ['feature']);
  });

  it('a reset that takes the change back, made after a check, gives "still holds" again', async () => {
    const { ws, sha } = repo('reset');
    writeFiles(ws, { 'src/a.ts': 'export const a = 2;\n' });
    git(ws, 'commit', '-q', '-am', 'Change a');
    const fresh = GitFreshness.forRepository(ws);
    assert.equal((await fresh.check(sha, ['src/a.ts']))?.state, 'changed');
    git(ws, 'reset', '-q', '--hard', sha);
    const f = await fresh.check(sha, ['src/a.ts']);
    assert.equal(f?.state, 'current', JSON.stringify(f));
  });

  it('checks asked together (one tool call) still answer alike, about one HEAD (control)', async () => {
    const { ws, sha } = repo('together');
    writeFiles(ws, { 'src/a.ts': 'export const a = 2;\n' });
    git(ws, 'commit', '-q', '-am', 'Change a');
    const fresh = GitFreshness.forRepository(ws);
    const all = await Promise.all([fresh.check(sha, ['src/a.ts']), fresh.check(sha, ['src/other.ts']), fresh.check(sha, ['src/a.ts'])]);
    assert.deepEqual(all.map((f) => f?.state), ['changed', 'current', 'changed']);
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

    it('a pack asked right after a commit that changed the file says it changed', async () => {
      const { ws, sha } = repo('tool');
      const scope = { project: 'github.com/acme/fresh-head' };
      await engine.observe([{ type: 'commit', title: 'Set the answer constant in a.ts', files_modified: ['src/a.ts'], commit_sha: sha, branch: 'main' }], scope);
      await engine.settled();
      const ctx = toolContext(engine, scope, { freshness: GitFreshness.forRepository(ws) });
      const before = await recallContext(ctx, { query: 'answer constant in a.ts' });
      assert.equal(before.items[0]?.freshness, 'current', before.text);
      writeFiles(ws, { 'src/a.ts': 'export const a = 42;\n' });
      git(ws, 'commit', '-q', '-am', 'Change the answer');
      const after = await recallContext(ctx, { query: 'answer constant in a.ts' });
      assert.equal(after.items[0]?.freshness, 'changed', after.text);
      assert.doesNotMatch(after.text, /\[still holds\]/);
    });
  });
});
