// Freshness of a record that names a path outside the repository (README recall_context
// "Freshness"): an absolute path elsewhere or a `../` path is no file of the working tree. One
// such name among a record's files must not hide that its other files changed (git refuses the
// whole diff, and an empty answer is no "still holds"), and a record's names are never looked up
// outside the repository, nor through a symlink in it that points outside. Real git repositories
// in temporary folders, the real HTTP server with the repository it serves, and a real MCP client.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitFreshness } from '../../src/core/capture/freshness';
import { git, makeRepo, tmp, writeFiles } from './captureHarness';
import { httpToolHarness } from './httpToolHarness';
import { textPack } from './textPack';

describe('freshness of a record that names a path outside the repository', function () {
  this.timeout(120_000);
  let root: string;
  let ws: string;
  /** The commit the records are about; src/a.ts changed since, src/b.ts did not. */
  let sha: string;
  /** A file that exists, outside the repository. */
  let outside: string;
  before(() => {
    root = tmp('cm-fresh-outside-');
    ws = path.join(root, 'repo');
    makeRepo(ws, { 'src/a.ts': 'export const a = 1;\n', 'src/b.ts': 'export const b = 1;\n' });
    sha = git(ws, 'rev-parse', 'HEAD');
    writeFiles(ws, { 'src/a.ts': 'export const a = 2;\n' });
    git(ws, 'commit', '-q', '-am', 'Change a');
    outside = path.join(root, 'elsewhere.txt');
    fs.writeFileSync(outside, 'not in the repository\n');
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  for (const [label, name] of [
    ['an absolute path elsewhere', () => outside],
    ['a ../ path', () => '../elsewhere.txt'],
    ['the system password file', () => (os.platform() === 'win32' ? 'C:\\Windows\\win.ini' : '/etc/passwd')],
  ] as const) {
    it(`a commit's record naming a changed file and ${label}: changed since <sha7>, the changed file named`, async () => {
      const f = await GitFreshness.forRepository(ws).check(sha, ['src/a.ts', name()]);
      assert.equal(f?.state, 'changed', JSON.stringify(f));
      assert.deepEqual(f!.changed_files, ['src/a.ts']);
      assert.equal(f!.marker, `changed since ${sha.slice(0, 7)}: src/a.ts`);
    });
  }

  it('a commit\'s record naming an unchanged file and a path elsewhere: still holds (control)', async () => {
    const f = await GitFreshness.forRepository(ws).check(sha, ['src/b.ts', outside]);
    assert.equal(f?.marker, 'still holds', JSON.stringify(f));
  });

  it('an absolute path inside the repository is checked as the file it names', async () => {
    const f = await GitFreshness.forRepository(ws).check(sha, [path.join(ws, 'src/a.ts')]);
    assert.equal(f?.state, 'changed', JSON.stringify(f));
  });

  it('a commit\'s record naming only paths elsewhere says nothing, rather than "still holds"', async () => {
    assert.equal(await GitFreshness.forRepository(ws).check(sha, [outside, '../elsewhere.txt']), null);
  });

  it('a record without a commit: a file elsewhere is not looked up, whether it exists or not', async () => {
    const fresh = GitFreshness.forRepository(ws);
    // Both answers alike: the tools do not tell whether a file outside the repository exists.
    assert.equal(await fresh.check(null, [outside]), null);
    assert.equal(await fresh.check(null, [path.join(root, 'no-such-file.txt')]), null);
    assert.equal(await fresh.check(null, ['../no-such-file.txt']), null);
    // A file of the repository that is gone is still said to be gone, next to such a name.
    const gone = await fresh.check(null, ['src/gone.ts', path.join(root, 'no-such-file.txt')]);
    assert.equal(gone?.marker, 'no longer in the working tree: src/gone.ts', JSON.stringify(gone));
  });

  it('a record without a commit: a path through a symlink to outside the repository is not looked up', async function () {
    const link = path.join(ws, 'out');
    try {
      fs.symlinkSync(root, link, 'dir');
    } catch {
      this.skip(); // no symlinks here (Windows without the right)
    }
    try {
      const fresh = GitFreshness.forRepository(ws);
      // Both answers alike: the link does not tell whether a file outside the repository exists.
      assert.equal(await fresh.check(null, ['out/elsewhere.txt']), null);
      assert.equal(await fresh.check(null, ['out/no-such-file.txt']), null);
      assert.equal(await fresh.check(null, [path.join(link, 'no-such-file.txt')]), null);
      const gone = await fresh.check(null, ['src/gone.ts', 'out/no-such-file.txt']);
      assert.equal(gone?.marker, 'no longer in the working tree: src/gone.ts', JSON.stringify(gone));
    } finally {
      fs.unlinkSync(link);
    }
  });

  describe('over recall_context and retrieve_memory, on the server of the repository', () => {
    const scope = { project: 'github.com/acme/fresh-outside' };
    const h = httpToolHarness({
      scope,
      repoRoot: () => ws,
      fill: async (engine) => {
        await engine.observe([{ type: 'commit', title: 'Tune the quokka exporter constants', files_modified: ['src/a.ts', '/etc/passwd'], commit_sha: sha, branch: 'main' }], scope);
        await engine.settled();
      },
    });

    it('the item says what changed, never "still holds"', async () => {
      const pack = await h.call('recall_context', { query: 'quokka exporter constants' });
      const { text } = textPack(pack);
      assert.match(text, new RegExp(`\\[changed since ${sha.slice(0, 7)}: src/a\\.ts\\]`));
      assert.doesNotMatch(text, /still holds/);
      const report = await h.call('retrieve_memory', { prompt: 'quokka exporter constants' });
      const facts = (report.structuredContent!.retrieval as { facts: Array<{ statement: string }> }).facts;
      assert.match(facts[0]?.statement ?? '', new RegExp(`^\\[changed since ${sha.slice(0, 7)}: src/a\\.ts\\]`), JSON.stringify(facts));
    });
  });
});
