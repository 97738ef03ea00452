// Freshness of a record about files inside a submodule (README recall_context "Freshness"). The
// superproject's diff sees a submodule as one entry, its commit, never the files in it: a record
// naming `sub/a.ts` at a superproject commit was told "still holds" after the submodule moved to a
// commit that changed a.ts. Real git repositories (a library and a superproject that adds it as a
// submodule) in temporary folders.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitFreshness, MAX_SUBMODULE_DEPTH } from '../../src/core/capture/freshness';
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

// Nested submodules: a submodule's own diff sees a submodule inside it as one entry too, so a record
// about `outer/inner/x.ts` was told "still holds" after both moved to commits that changed x.ts.
// Submodules inside submodules are followed down to MAX_SUBMODULE_DEPTH levels; below that, a
// moved submodule counts every named file in it as changed (it is not read).
describe('freshness of a record about files in a nested submodule', function () {
  this.timeout(120_000);
  let root: string;
  before(() => {
    root = tmp('cm-fresh-nested-');
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  const add = (into: string, lib: string, at: string): void => {
    git(into, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, at);
    git(into, 'commit', '-q', '-m', `Add ${at}`);
  };

  /**
   * A superproject whose submodule `levels[0]` holds `levels[1]`, and so on; the deepest holds x.ts
   * and y.ts, all checked out (`submodule update --init --recursive`).
   */
  function nested(name: string, levels: string[]): { ws: string; sha: string } {
    const libs = levels.map((l, i) => path.join(root, `${name}-lib${i}-${l}`));
    makeRepo(libs[libs.length - 1]!, { 'x.ts': 'export const x = 1;\n', 'y.ts': 'export const y = 1;\n' });
    for (let i = libs.length - 2; i >= 0; i--) {
      makeRepo(libs[i]!, { [`level${i}.ts`]: 'export {};\n' });
      add(libs[i]!, libs[i + 1]!, levels[i + 1]!);
    }
    const ws = path.join(root, name);
    makeRepo(ws, { 'top.ts': 'export const top = 1;\n' });
    add(ws, libs[0]!, levels[0]!);
    git(ws, '-c', 'protocol.file.allow=always', 'submodule', 'update', '-q', '--init', '--recursive');
    return { ws, sha: git(ws, 'rev-parse', 'HEAD') };
  }

  /** Commits `files` in the deepest checkout, then each moved submodule up to the superproject. */
  function moveDeepest(ws: string, levels: string[], files: Record<string, string>): void {
    const dirs = levels.map((_, i) => path.join(ws, ...levels.slice(0, i + 1)));
    const deepest = dirs[dirs.length - 1]!;
    for (const d of dirs) git(d, 'config', 'commit.gpgsign', 'false');
    writeFiles(deepest, files);
    for (const d of [...dirs].reverse()) git(d, 'commit', '-q', '-am', 'Move');
    git(ws, 'commit', '-q', '-am', 'Move the submodules');
  }

  it('a file changed in a submodule of a submodule, both moved: changed since <sha7>: outer/inner/x.ts', async () => {
    const levels = ['outer', 'inner'];
    const { ws, sha } = nested('two', levels);
    moveDeepest(ws, levels, { 'x.ts': 'export const x = 2;\n' });
    const f = await GitFreshness.forRepository(ws).check(sha, ['outer/inner/x.ts', 'top.ts']);
    assert.equal(f?.state, 'changed', JSON.stringify(f));
    assert.deepEqual(f!.changed_files, ['outer/inner/x.ts']);
    assert.equal(f!.marker, `changed since ${sha.slice(0, 7)}: outer/inner/x.ts`);
  });

  it('both moved but the named file did not change: still holds (control)', async () => {
    const levels = ['outer', 'inner'];
    const { ws, sha } = nested('two-other', levels);
    moveDeepest(ws, levels, { 'y.ts': 'export const y = 2;\n' });
    assert.equal((await GitFreshness.forRepository(ws).check(sha, ['outer/inner/x.ts']))?.state, 'current');
  });

  it('three levels down, within the bound: a changed file is found, an unchanged one still holds', async () => {
    const levels = ['a', 'b', 'c'];
    const { ws, sha } = nested('three', levels);
    moveDeepest(ws, levels, { 'x.ts': 'export const x = 2;\n' });
    const fresh = GitFreshness.forRepository(ws);
    assert.deepEqual((await fresh.check(sha, ['a/b/c/x.ts', 'a/b/c/y.ts']))?.changed_files, ['a/b/c/x.ts']);
  });

  it('the inner submodule not checked out: it cannot be read, and counts as changed', async () => {
    const levels = ['outer', 'inner'];
    const { ws, sha } = nested('deinit', levels);
    moveDeepest(ws, levels, { 'y.ts': 'export const y = 2;\n' });
    git(path.join(ws, 'outer'), 'submodule', 'deinit', '-q', '-f', 'inner');
    const f = await GitFreshness.forRepository(ws).check(sha, ['outer/inner/x.ts']);
    assert.equal(f?.state, 'changed', JSON.stringify(f));
    assert.deepEqual(f!.changed_files, ['outer/inner/x.ts']);
  });

  it(`below ${MAX_SUBMODULE_DEPTH} levels a moved submodule is not read: its named files count as changed`, async () => {
    const levels = Array.from({ length: MAX_SUBMODULE_DEPTH + 1 }, (_, i) => `s${i}`);
    const { ws, sha } = nested('deep', levels);
    moveDeepest(ws, levels, { 'y.ts': 'export const y = 2;\n' });
    const f = await GitFreshness.forRepository(ws).check(sha, [`${levels.join('/')}/x.ts`]);
    assert.equal(f?.state, 'changed', JSON.stringify(f));
  });
});
