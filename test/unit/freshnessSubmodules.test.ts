// Freshness of a record about files inside a submodule (README recall_context "Freshness"). The
// superproject's diff sees a submodule as one entry, its commit, never the files in it: a record
// naming `sub/a.ts` at a superproject commit was told "still holds" after the submodule moved to a
// commit that changed a.ts. Real git repositories (a library and a superproject that adds it as a
// submodule) in temporary folders.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitFreshness } from '../../src/core/capture/freshness';
import { git, makeRepo, tmp, writeFiles } from './captureHarness';

describe('freshness of a record about files in a submodule', function () {
  this.timeout(120_000);
  let root: string;
  before(() => {
    root = tmp('cm-fresh-submodule-');
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  /** A superproject with `sub` (a library with a.ts and b.ts) and top.ts; the sha of its first commit. */
  function superproject(name: string): { ws: string; sha: string } {
    const lib = path.join(root, `${name}-lib`);
    makeRepo(lib, { 'a.ts': 'export const a = 1;\n', 'b.ts': 'export const b = 1;\n' });
    const ws = path.join(root, name);
    makeRepo(ws, { 'top.ts': 'export const top = 1;\n' });
    git(ws, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'sub');
    git(ws, 'commit', '-q', '-m', 'Add the library as a submodule');
    return { ws, sha: git(ws, 'rev-parse', 'HEAD') };
  }

  /** Commits `files` in the submodule's checkout and the moved submodule in the superproject. */
  function moveSubmodule(ws: string, files: Record<string, string>): void {
    const sub = path.join(ws, 'sub');
    git(sub, 'config', 'commit.gpgsign', 'false');
    writeFiles(sub, files);
    git(sub, 'commit', '-q', '-am', 'Change the library');
    git(ws, 'commit', '-q', '-am', 'Move the submodule');
  }

  it('a file changed in the submodule, the submodule moved: changed since <sha7>: sub/a.ts', async () => {
    const { ws, sha } = superproject('changed');
    moveSubmodule(ws, { 'a.ts': 'export const a = 2;\n' });
    const f = await GitFreshness.forRepository(ws).check(sha, ['sub/a.ts', 'top.ts']);
    assert.equal(f?.state, 'changed', JSON.stringify(f));
    assert.deepEqual(f!.changed_files, ['sub/a.ts']);
    assert.equal(f!.marker, `changed since ${sha.slice(0, 7)}: sub/a.ts`);
  });

  it('the submodule moved but the named file did not change in it: still holds', async () => {
    const { ws, sha } = superproject('other');
    moveSubmodule(ws, { 'b.ts': 'export const b = 2;\n' });
    const f = await GitFreshness.forRepository(ws).check(sha, ['sub/a.ts']);
    assert.equal(f?.state, 'current', JSON.stringify(f));
  });

  it('a clone whose submodule is not checked out cannot read it: the moved submodule counts as changed', async () => {
    const { ws, sha } = superproject('bare');
    moveSubmodule(ws, { 'b.ts': 'export const b = 2;\n' });
    const clone = path.join(root, 'bare-clone');
    git(root, 'clone', '-q', ws, clone);
    const f = await GitFreshness.forRepository(clone).check(sha, ['sub/a.ts']);
    assert.equal(f?.state, 'changed', JSON.stringify(f));
    assert.deepEqual(f!.changed_files, ['sub/a.ts']);
  });

  it('controls: the submodule not moved, a file of the superproject changed', async () => {
    const { ws, sha } = superproject('control');
    writeFiles(ws, { 'top.ts': 'export const top = 2;\n' });
    git(ws, 'commit', '-q', '-am', 'Change top');
    const fresh = GitFreshness.forRepository(ws);
    assert.equal((await fresh.check(sha, ['sub/a.ts']))?.state, 'current');
    const f = await fresh.check(sha, ['sub/a.ts', 'top.ts']);
    assert.deepEqual(f?.changed_files, ['top.ts'], JSON.stringify(f));
  });
});
