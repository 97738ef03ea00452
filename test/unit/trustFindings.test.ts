// Findings of the trust review that no other test reproduced: a fork and its upstream imported
// into one store (git-<sha12> session ids and commit dedupe keys are the same in both), and
// the store folder's mode.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { MemoryEngine } from '../../src/core/engine';
import { makeGitRepo, removeDir, tempDir } from './mcpFixture';
import type { TestRepo } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

describe('trust: a fork and its upstream in one store', function () {
  this.timeout(120_000);
  const upstream = { project: 'github.com/acme/app' };
  const fork = { project: 'github.com/ada/app' };
  let dir: string;
  let repo: TestRepo;
  let engine: MemoryEngine;

  before(async () => {
    dir = tempDir('fork');
    repo = makeGitRepo();
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
    removeDir(repo.dir);
  });

  it('imports the shared history into each project: commit keys and git session ids are per project', async () => {
    const first = await importGitHistory(engine, repo.dir, { scope: upstream });
    const second = await importGitHistory(engine, repo.dir, { scope: fork });
    assert.equal(first.imported, 3);
    assert.equal(second.imported, 3, "the fork's import took the upstream's commits for its own");
    const up = await engine.listObservations(upstream);
    const forked = await engine.listObservations(fork);
    assert.deepEqual(forked.map((o) => o.commit_sha).sort(), up.map((o) => o.commit_sha).sort());
    assert.ok(forked.every((o) => !up.some((u) => u.id === o.id)), 'the two projects share a row');
    // The same git-<sha12> session names one session in each project.
    assert.deepEqual(new Set(forked.map((o) => o.memory_session_id)), new Set(up.map((o) => o.memory_session_id)));
  });

  it("ending the fork's git session leaves the upstream's rows and summaries as they were", async () => {
    const snapshot = async () => ({
      observations: (await engine.listObservations(upstream)).map((o) => `${o.id}:${o.status}`).sort(),
      summaries: (await engine.listSessions(upstream)).map((s) => `${s.memory_session_id}:${s.summary?.id ?? '-'}`).sort(),
    });
    const before = await snapshot();
    const [session] = [...new Set((await engine.listObservations(fork)).map((o) => o.memory_session_id as string))];
    const summary = await engine.endSession(fork, session, 'request');
    assert.ok(summary);
    assert.equal(summary.project, fork.project);
    assert.deepEqual(await snapshot(), before);
  });
});

describe('trust: the store folder is private', function () {
  this.timeout(60_000);
  let root: string;
  beforeEach(() => {
    root = tempDir('mode');
  });
  afterEach(() => removeDir(root));

  it('creates the store folder 0700, and narrows an existing one to 0700', async () => {
    const fresh = path.join(root, 'new', 'store');
    const existing = path.join(root, 'shared');
    fs.mkdirSync(existing, { mode: 0o755 });
    fs.chmodSync(existing, 0o755);
    for (const dir of [fresh, existing]) {
      const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      await engine.close();
      assert.equal((fs.statSync(dir).mode & 0o777).toString(8), '700', dir);
    }
  });
});
