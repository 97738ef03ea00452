// Freshness of a record whose commit is a short sha (README recall_context "Freshness"): observe
// takes commit shas of 4 hex digits and up, so a record of 4-6 digits is checked as a long one is
// when git resolves it to one commit, and says `unknown` when it names no commit of the clone or
// more than one. Real git repositories in temporary folders.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitFreshness } from '../../src/core/capture/freshness';
import { git, makeRepo, tmp, writeFiles } from './captureHarness';

describe('freshness of a record with a short commit sha', function () {
  this.timeout(120_000);
  let root: string;
  let ws: string;
  /** The commit the records are about; src/a.ts changed since, src/b.ts did not. */
  let sha: string;
  before(() => {
    root = tmp('cm-fresh-short-');
    ws = path.join(root, 'repo');
    makeRepo(ws, { 'src/a.ts': 'export const a = 1;\n', 'src/b.ts': 'export const b = 1;\n' });
    sha = git(ws, 'rev-parse', 'HEAD');
    writeFiles(ws, { 'src/a.ts': 'export const a = 2;\n' });
    git(ws, 'commit', '-q', '-am', 'Change a');
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  for (const digits of [4, 5, 6]) {
    it(`${digits} digits that name one commit: checked as the full sha is`, async () => {
      const short = sha.slice(0, digits);
      const changed = await GitFreshness.forRepository(ws).check(short, ['src/a.ts']);
      assert.equal(changed?.state, 'changed', JSON.stringify(changed));
      assert.deepEqual(changed!.changed_files, ['src/a.ts']);
      assert.equal(changed!.marker, `changed since ${sha.slice(0, 7)}: src/a.ts`);
      const holds = await GitFreshness.forRepository(ws).check(short, ['src/b.ts']);
      assert.equal(holds?.marker, 'still holds', JSON.stringify(holds));
    });
  }

  it('a short sha of no commit of the clone: unknown', async () => {
    const other = ['0000', 'ffff', 'abcd'].find((s) => !sha.startsWith(s) && git(ws, 'rev-parse', 'HEAD').slice(0, 4) !== s)!;
    const f = await GitFreshness.forRepository(ws).check(other, ['src/a.ts']);
    assert.equal(f?.state, 'unknown', JSON.stringify(f));
    assert.match(f!.marker, new RegExp(`^commit ${other} is not in this clone`));
  });

  it('a short sha that names more than one commit: unknown', async () => {
    // Commits of one tree with other messages, until two share their first 4 digits.
    const repo = path.join(root, 'ambiguous');
    makeRepo(repo, { 'x.txt': 'x\n' });
    const tree = git(repo, 'rev-parse', 'HEAD^{tree}');
    const seen = new Set<string>();
    let prefix: string | null = null;
    for (let i = 0; prefix === null; i++) {
      const p = git(repo, 'commit-tree', tree, '-m', `commit ${i}`).slice(0, 4);
      if (seen.has(p)) prefix = p;
      seen.add(p);
    }
    const f = await GitFreshness.forRepository(repo).check(prefix, ['x.txt']);
    assert.equal(f?.state, 'unknown', JSON.stringify(f));
  });
});
