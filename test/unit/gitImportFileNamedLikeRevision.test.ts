// A repository may track a file whose name is also a revision (HEAD, main, a tag): git refuses
// such a name as ambiguous unless paths are cut off with `--`, which would fail the whole import.

import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { MemoryEngine } from '../../src/core/engine';
import { runMain } from './cliInProcess';
import { commitAll, git, makeRepo } from './gitImportFixture';

process.env.LANCEDB_LOG ??= 'error';

const T0 = 1_700_000_000;

describe('git import of a repository with files named like revisions', function () {
  this.timeout(120_000);
  let repo: string;
  let shas: string[];
  let storeDir: string;
  let engine: MemoryEngine;
  const scope = { project: 'revision-names' };

  beforeEach(async () => {
    ({ repo, shas } = makeRepo([
      { subject: 'Initial layout', files: { 'README.md': '# Refs\n' }, time: T0 },
      // Files named as the default revision, the branch and a tag, at the top of the work tree.
      { subject: 'Track files called HEAD, main and v1', files: { HEAD: 'not a ref\n', main: 'not a branch\n', v1: 'not a tag\n' }, time: T0 + 60 },
    ]));
    git(repo, ['checkout', '-q', '-b', 'feature']);
    shas.push(commitAll(repo, { subject: 'Feature part one', files: { 'one.txt': '1\n' }, time: T0 + 120 }));
    shas.push(commitAll(repo, { subject: 'Feature part two', files: { 'two.txt': '2\n' }, time: T0 + 180 }));
    git(repo, ['checkout', '-q', 'main']);
    git(repo, ['merge', '-q', '--no-ff', 'feature', '-m', 'Merge pull request #4 from acme/feature', '-m', 'Adds both feature parts'], { GIT_AUTHOR_DATE: `${T0 + 240} +0000`, GIT_COMMITTER_DATE: `${T0 + 240} +0000` });
    git(repo, ['tag', 'v1', shas[1]]);
    storeDir = mkdtempSync(path.join(os.tmpdir(), 'code-memory-revnames-'));
    engine = await MemoryEngine.open({ storeUri: storeDir, embedder: 'none', maintenanceIntervalMs: 0 });
  });

  afterEach(async () => {
    await engine.close();
    for (const d of [storeDir, repo]) rmSync(d, { recursive: true, force: true });
  });

  async function commitShas(): Promise<string[]> {
    return (await engine.listObservations(scope, { limit: 100 })).filter((o) => o.type === 'commit').map((o) => o.commit_sha ?? '').sort();
  }

  it('imports HEAD, with the pull request text kept with its commits, and a second run adds nothing', async () => {
    const first = await importGitHistory(engine, repo, { scope });
    assert.equal(first.imported, 4);
    assert.deepEqual(await commitShas(), [...shas].sort());
    const part = (await engine.listObservations(scope, { limit: 100 })).find((o) => o.title === 'Feature part one');
    assert.match(part?.narrative ?? '', /Merged in: Merge pull request #4/);
    assert.equal((await importGitHistory(engine, repo, { scope })).imported, 0);
  });

  it('imports informative merges too (--merges)', async () => {
    const r = await importGitHistory(engine, repo, { scope, includeMerges: true });
    assert.equal(r.imported, 5);
  });

  it('imports a branch and a tag named like tracked files', async () => {
    assert.equal((await importGitHistory(engine, repo, { scope, rev: 'v1' })).imported, 2);
    assert.equal((await importGitHistory(engine, repo, { scope, rev: 'main' })).imported, 2);
    assert.deepEqual(await commitShas(), [...shas].sort());
  });

  it('code-memory import-git of such a repository: exit 0, every commit', async () => {
    const store = mkdtempSync(path.join(os.tmpdir(), 'code-memory-revnames-cli-'));
    try {
      const r = await runMain(['import-git', repo, '--store', store, '--project', 'revision-names', '--json'], { CODE_MEMORY_EMBEDDER: 'none', CODE_MEMORY_STORE: '', CODE_MEMORY_PROJECT: '' });
      assert.equal(r.code, 0, r.err);
      assert.equal(JSON.parse(r.out).imported, 4);
    } finally {
      rmSync(store, { recursive: true, force: true });
    }
  });
});
