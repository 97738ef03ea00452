// The environment git runs in for an import: a caller inside another repository (a git hook,
// `git --git-dir`, GIT_DIR exported) must not make the import read that repository, and a git
// that cannot be run is said as such, never blamed on the repository named.

import * as assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { GitImportError, importGitHistory } from '../../src/core/capture/gitImport';
import { MemoryEngine } from '../../src/core/engine';
import { runMain } from './cliInProcess';
import { tempDirs } from './mcpFixture';
import { git, makeRepo } from './gitImportFixture';

process.env.LANCEDB_LOG ??= 'error';

const T0 = 1_700_000_000;
const ENV = { CODE_MEMORY_EMBEDDER: 'none', CODE_MEMORY_STORE: '', CODE_MEMORY_PROJECT: '' };

describe('git import: the environment git runs in', function () {
  this.timeout(120_000);
  const dirs = tempDirs();
  const temp = dirs.make;
  const repoOf = (subject: string, remote: string): { repo: string; shas: string[] } => {
    const r = makeRepo([
      { subject: `${subject} one`, files: { 'a.txt': 'a\n' }, time: T0 },
      { subject: `${subject} two`, files: { 'b.txt': 'b\n' }, time: T0 + 60 },
    ]);
    dirs.keep(r.repo);
    git(r.repo, ['remote', 'add', 'origin', remote]);
    return r;
  };

  after(() => dirs.removeAll());

  async function commitsOf(store: string, project: string): Promise<string[]> {
    const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      return (await engine.listObservations({ project }, { limit: 100 })).filter((o) => o.type === 'commit').map((o) => o.commit_sha ?? '');
    } finally {
      await engine.close();
    }
  }

  it("GIT_DIR and GIT_WORK_TREE of another repository (a git hook's): import-git stores the repository named, under its own project", async () => {
    const other = repoOf('Other repository', 'https://github.com/acme/other.git');
    const named = repoOf('Named repository', 'https://github.com/acme/named.git');
    const store = temp('store');
    const r = await runMain(['import-git', named.repo, '--store', store, '--json'], { ...ENV, GIT_DIR: path.join(other.repo, '.git'), GIT_WORK_TREE: other.repo, GIT_INDEX_FILE: path.join(other.repo, '.git', 'index') });
    assert.equal(r.code, 0, r.err);
    assert.equal(JSON.parse(r.out).project, 'github.com/acme/named');
    assert.deepEqual((await commitsOf(store, 'github.com/acme/named')).sort(), [...named.shas].sort());
    assert.deepEqual(await commitsOf(store, 'github.com/acme/other'), []);
  });

  it('git not on PATH: import-git says to install git (exit 1), not that the folder is no repository', async () => {
    const { repo } = repoOf('Some', 'https://github.com/acme/some.git');
    const r = await runMain(['import-git', repo, '--store', temp('store'), '--project', 'nogit'], { ...ENV, PATH: temp('empty-bin') });
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /Could not run git: .*Install git and make sure it is on PATH/);
    assert.doesNotMatch(r.err, /Not a git repository/);
  });

  it('git not on PATH: importGitHistory rejects with the install advice; eval fails (exit 1) with it too', async () => {
    const { repo, shas } = repoOf('Eval', 'https://github.com/acme/eval.git');
    const store = temp('store');
    const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    const savedPath = process.env.PATH;
    process.env.PATH = temp('empty-bin');
    try {
      await assert.rejects(importGitHistory(engine, repo, { scope: { project: 'nogit' } }), (e: unknown) => e instanceof GitImportError && /Install git/.test(e.message));
    } finally {
      process.env.PATH = savedPath;
      await engine.close();
    }
    const questions = path.join(temp('questions'), 'q.jsonl');
    writeFileSync(questions, `${JSON.stringify({ id: 'q1', question: 'which change came first', gold_commits: [shas[0]] })}\n`);
    const r = await runMain(['eval', '--repo', repo, '--queries', questions, '--embedder', 'none'], { ...ENV, PATH: temp('empty-bin') });
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /Install git/);
  });
});
