// `code-memory eval --out <file> --html <file>`: a report is never written over the question file
// (a slip of the shell's completion would lose the questions), nor the JSON report and the page
// over each other: either is refused before the run (exit 2), every file as it was.
import * as assert from 'node:assert/strict';
import { linkSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { runMain } from './cliInProcess';
import { makeGitRepo, removeDir, tempDir } from './mcpFixture';
import type { TestRepo } from './mcpFixture';

describe('eval: --out and --html never overwrite the questions or each other', function () {
  this.timeout(240_000);
  let work: string;
  let repo: TestRepo;
  let questions: string;
  let text: string;
  before(() => {
    work = tempDir('evalfiles');
    repo = makeGitRepo();
    questions = path.join(work, 'q.jsonl');
    text = `${JSON.stringify({ id: 'q1', question: 'csv parser', gold_commits: [repo.shas.parser] })}\n`;
    writeFileSync(questions, text);
  });
  after(() => {
    removeDir(work);
    removeDir(repo.dir);
  });
  const evalWith = (...extra: string[]) => runMain(['eval', '--repo', repo.dir, '--queries', questions, '--embedder', 'none', ...extra]);

  it('--html naming the question file is refused before the run, the questions kept', async () => {
    const r = await evalWith('--html', questions);
    assert.equal(r.code, 2, r.err.slice(-400));
    assert.match(r.err, /--html .*q\.jsonl is the file of --queries: give another file/);
    assert.doesNotMatch(r.err, /import: \d+\/\d+ commits/, 'the evaluation ran first');
    assert.equal(readFileSync(questions, 'utf8'), text);
  });

  it('--out naming the question file through another path or a hard link is refused too', async () => {
    const relative = await evalWith('--out', path.join(work, '.', 'x', '..', 'q.jsonl'));
    assert.equal(relative.code, 2, relative.err.slice(-400));
    const link = path.join(work, 'link.jsonl');
    linkSync(questions, link);
    const linked = await evalWith('--out', link);
    assert.equal(linked.code, 2, linked.err.slice(-400));
    assert.match(linked.err, /--out .*link\.jsonl is the file of --queries/);
    assert.equal(readFileSync(questions, 'utf8'), text);
  });

  it('--out and --html naming one file is refused; different files are both written', async () => {
    const same = path.join(work, 'report');
    const r = await evalWith('--out', same, '--html', same);
    assert.equal(r.code, 2, r.err.slice(-400));
    assert.match(r.err, /--html .*report is the file of --out/);
    const ok = await evalWith('--out', path.join(work, 'r.json'), '--html', path.join(work, 'r.html'));
    assert.equal(ok.code, 0, ok.err.slice(-400));
    assert.equal(JSON.parse(readFileSync(path.join(work, 'r.json'), 'utf8')).questions, 1);
    assert.match(readFileSync(path.join(work, 'r.html'), 'utf8'), /^<!DOCTYPE html>/);
  });
});
