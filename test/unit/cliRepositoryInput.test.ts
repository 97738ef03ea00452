// import-git and eval name a repository and a revision: one that cannot be one (a path longer
// than the system looks up, a revision of megabytes) is bad input (exit 2) in a message of a
// readable size, before any store or temporary store is made.

import * as assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { runMain } from './cliInProcess';
import { tempDirs } from './mcpFixture';
import { makeRepo } from './gitImportFixture';

process.env.LANCEDB_LOG ??= 'error';

const ENV = { CODE_MEMORY_EMBEDDER: 'none', CODE_MEMORY_STORE: '', CODE_MEMORY_PROJECT: '' };

describe('import-git and eval: a repository or revision that cannot be one', function () {
  this.timeout(120_000);
  const dirs = tempDirs();
  const temp = dirs.make;
  let repo: string;
  let questions: string;

  before(() => {
    const r = makeRepo([{ subject: 'Initial parser', files: { 'parser.js': 'module.exports = (a) => a\n' }, time: 1_700_000_000 }]);
    repo = r.repo;
    dirs.keep(repo);
    questions = path.join(temp('questions'), 'q.jsonl');
    writeFileSync(questions, `${JSON.stringify({ id: 'q1', question: 'where is the parser', gold_commits: [r.shas[0]] })}\n`);
  });

  after(() => dirs.removeAll());

  it('a repository path longer than the system looks up: import-git exits 2 and makes no store', async () => {
    const store = path.join(temp('parent'), 'store');
    const r = await runMain(['import-git', path.join(temp('long'), 'p'.repeat(5000)), '--store', store, '--project', 'long-path'], ENV);
    assert.equal(r.code, 2, r.err.slice(0, 300));
    assert.match(r.err, /ENAMETOOLONG.*give the path of a git repository/);
    assert.deepEqual(readdirSync(path.dirname(store)), []);
  });

  it('a repository path longer than the system looks up: eval exits 2 before a temporary store is made', async () => {
    const tmpdir = temp('tmpdir');
    const r = await runMain(['eval', '--repo', path.join(temp('long'), 'p'.repeat(5000)), '--queries', questions, '--embedder', 'none'], { ...ENV, TMPDIR: tmpdir });
    assert.equal(r.code, 2, r.err.slice(0, 300));
    assert.match(r.err, /ENAMETOOLONG/);
    assert.deepEqual(readdirSync(tmpdir), []);
  });

  it('a revision of 200,000 characters: exit 2, the revision named in at most 200 of them', async () => {
    const rev = `${'a'.repeat(199_990)}TAILMARKER`;
    const r = await runMain(['import-git', repo, `--rev=${rev}`, '--store', temp('store'), '--project', 'huge-rev'], ENV);
    assert.equal(r.code, 2, r.err.slice(0, 300));
    assert.match(r.err, /Revision not found in .*: a{200}\.\.\. \(200,000 characters\)\. Fetch it first/);
    assert.doesNotMatch(r.err, /TAILMARKER/);
    assert.ok(r.err.length < 1000, `${r.err.length} characters`);
  });

  it('a revision that is not there, of a usual length, is named whole', async () => {
    const r = await runMain(['import-git', repo, '--rev', 'release/2026-12', '--store', temp('store'), '--project', 'short-rev'], ENV);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /Revision not found in .*: release\/2026-12\. Fetch it first/);
  });
});
