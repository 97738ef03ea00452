// Freshness of a record about a file that is gone though the diff lists nothing (README
// recall_context "Freshness"). A record made while a file was new and not yet committed names it
// with a commit that does not hold it (an edit is captured with the HEAD it was made on); once the
// file is deleted, neither that commit nor HEAD holds it, `git diff <sha>..HEAD -- <file>` lists
// nothing, and the record was told "still holds" about a file that is not there. Likewise a file
// renamed in the working tree, then deleted. Real git repositories in temporary folders.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitFreshness } from '../../src/core/capture/freshness';
import { git, makeRepo, tmp, writeFiles } from './captureHarness';

describe('freshness of a record about a file gone from HEAD and from the working tree', function () {
  this.timeout(120_000);
  let root: string;
  before(() => {
    root = tmp('cm-fresh-gone-');
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  /** A repository with src/a.ts, and a new src/new.ts written (not committed): the record's commit. */
  function withNewFile(name: string): { ws: string; sha: string } {
    const ws = path.join(root, name);
    makeRepo(ws, { 'src/a.ts': 'export const a = 1;\n' });
    writeFiles(ws, { 'src/new.ts': 'export const n = 1;\n' });
    return { ws, sha: git(ws, 'rev-parse', 'HEAD') };
  }

  it('a new file, committed after the record, then deleted: changed since <sha7>: src/new.ts', async () => {
    const { ws, sha } = withNewFile('committed-deleted');
    git(ws, 'add', '-A');
    git(ws, 'commit', '-q', '-m', 'Add new.ts');
    git(ws, 'rm', '-q', 'src/new.ts');
    git(ws, 'commit', '-q', '-m', 'Remove new.ts');
    const f = await GitFreshness.forRepository(ws).check(sha, ['src/new.ts', 'src/a.ts']);
    assert.equal(f?.state, 'changed', JSON.stringify(f));
    assert.deepEqual(f!.changed_files, ['src/new.ts']);
    assert.equal(f!.marker, `changed since ${sha.slice(0, 7)}: src/new.ts`);
  });

  it('a new file never committed, deleted from the working tree: changed, also after an answer was given', async () => {
    const { ws, sha } = withNewFile('never-committed');
    const fresh = GitFreshness.forRepository(ws);
    assert.equal((await fresh.check(sha, ['src/new.ts']))?.state, 'current', 'control: the file is there');
    fs.rmSync(path.join(ws, 'src/new.ts'));
    const f = await fresh.check(sha, ['src/new.ts']);
    assert.equal(f?.state, 'changed', JSON.stringify(f));
    assert.deepEqual(f!.changed_files, ['src/new.ts']);
  });

  it('a file renamed in the working tree (the record names the new name), the rename committed, then deleted: changed', async () => {
    const ws = path.join(root, 'renamed-deleted');
    makeRepo(ws, { 'src/a.ts': 'export const a = 1;\n' });
    const sha = git(ws, 'rev-parse', 'HEAD');
    git(ws, 'mv', 'src/a.ts', 'src/b.ts');
    git(ws, 'commit', '-q', '-m', 'Rename a.ts to b.ts');
    git(ws, 'rm', '-q', 'src/b.ts');
    git(ws, 'commit', '-q', '-m', 'Remove b.ts');
    const f = await GitFreshness.forRepository(ws).check(sha, ['src/b.ts']);
    assert.equal(f?.state, 'changed', JSON.stringify(f));
    assert.deepEqual(f!.changed_files, ['src/b.ts']);
  });

  it('controls: the new file committed and still there, or still only in the working tree: still holds', async () => {
    const { ws, sha } = withNewFile('still-there');
    const fresh = GitFreshness.forRepository(ws);
    assert.equal((await fresh.check(sha, ['src/new.ts', 'src/a.ts']))?.state, 'current');
    git(ws, 'add', '-A');
    git(ws, 'commit', '-q', '-m', 'Add new.ts');
    const f = await fresh.check(sha, ['src/new.ts']);
    assert.deepEqual(f?.changed_files, ['src/new.ts'], 'added since the commit: changed, as before');
  });

  it('control: a file of a submodule that is not checked out and did not move is not called gone', async () => {
    const lib = path.join(root, 'gone-lib');
    makeRepo(lib, { 'a.ts': 'export const a = 1;\n' });
    const ws = path.join(root, 'gone-super');
    makeRepo(ws, { 'top.ts': 'export const top = 1;\n' });
    git(ws, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'sub');
    git(ws, 'commit', '-q', '-m', 'Add the library as a submodule');
    const sha = git(ws, 'rev-parse', 'HEAD');
    const clone = path.join(root, 'gone-clone');
    git(root, 'clone', '-q', ws, clone);
    assert.equal((await GitFreshness.forRepository(clone).check(sha, ['sub/a.ts']))?.state, 'current');
  });
});
