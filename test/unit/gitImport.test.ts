import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importGitHistory, readGitCommits } from '../../src/core/capture/gitImport';
import { MemoryEngine } from '../../src/core/engine';
import { REDACTED } from '../../src/core/capture/redact';
import { filesContaining } from './diskFixture';
import { PARSER_HISTORY, commitAll, git, makeRepo } from './gitImportFixture';

describe('git history import', () => {
  let repo: string;
  let shas: string[];
  let storeDir: string;
  let engine: MemoryEngine;
  const scope = { project: 'tinyargs' };

  beforeEach(async () => {
    ({ repo, shas } = makeRepo(PARSER_HISTORY));
    storeDir = mkdtempSync(path.join(os.tmpdir(), 'code-memory-import-'));
    engine = await MemoryEngine.open({ storeUri: storeDir, embedder: 'none' });
  });

  afterEach(async () => {
    await engine.close();
    rmSync(storeDir, { recursive: true, force: true });
    rmSync(repo, { recursive: true, force: true });
  });

  it('records one commit observation per commit with message, files, sha, branch, time and diff text', async () => {
    const progress: Array<[number, number]> = [];
    const result = await importGitHistory(engine, repo, { scope, onProgress: (d, t) => progress.push([d, t]) });
    assert.equal(result.imported, PARSER_HISTORY.length);
    assert.equal(result.skipped, 0);
    assert.deepEqual(progress.at(-1), [PARSER_HISTORY.length, PARSER_HISTORY.length]);

    const observations = await engine.listObservations(scope, { limit: 100 });
    assert.equal(observations.length, PARSER_HISTORY.length);
    const config = observations.find((o) => o.commit_sha === shas[3])!;
    assert.equal(config.type, 'commit');
    assert.equal(config.title, 'Fix crash on empty config file');
    assert.match(config.narrative ?? '', /JSON\.parse throw/);
    assert.deepEqual(JSON.parse(config.files_modified ?? '[]'), ['lib/config.js']);
    assert.equal(config.branch, 'main');
    assert.equal(config.created_at_epoch, PARSER_HISTORY[3].time * 1000);
    assert.match(config.subtitle ?? '', /Grace Hopper/);

    // The diff's identifiers are searchable although the message never names them.
    const hits = await engine.search('loadConfigFile', { scope, limit: 3 });
    assert.equal(hits[0]?.cell.commit_sha, shas[3]);
  });

  it('groups commits into sessions by author and time gaps', async () => {
    const result = await importGitHistory(engine, repo, { scope });
    // T0 and T0+10min are one session; each later commit is a day apart or by another author.
    assert.equal(result.sessions, 4);
    const observations = await engine.listObservations(scope, { limit: 100 });
    const bySha = new Map(observations.map((o) => [o.commit_sha, o.memory_session_id]));
    assert.equal(bySha.get(shas[0]), bySha.get(shas[1]));
    assert.notEqual(bySha.get(shas[1]), bySha.get(shas[2]));
  });

  it('adds nothing on a second run', async () => {
    await importGitHistory(engine, repo, { scope });
    const again = await importGitHistory(engine, repo, { scope });
    assert.deepEqual([again.imported, again.skipped], [0, PARSER_HISTORY.length]);
    assert.equal((await engine.listObservations(scope, { limit: 100 })).length, PARSER_HISTORY.length);
  });

  it('imports only the new commits after the history grew', async () => {
    await importGitHistory(engine, repo, { scope });
    commitAll(repo, { subject: 'Document the verbose flag', files: { 'README.md': '# tinyargs\n\nUse -v for more output.\n' }, time: PARSER_HISTORY[4].time + 100 });
    const again = await importGitHistory(engine, repo, { scope });
    assert.deepEqual([again.imported, again.skipped], [1, PARSER_HISTORY.length]);
  });

  it('keeps a pull request message with the commits it merged, without importing the merge itself', async () => {
    git(repo, ['checkout', '-q', '-b', 'feature']);
    const a = commitAll(repo, { subject: 'Add shell completion script', files: { 'lib/completion.js': 'function completionScript () {}\n' }, time: PARSER_HISTORY[4].time + 100 });
    const b = commitAll(repo, { subject: 'Complete option names', files: { 'lib/completion.js': 'function completionScript () { return optionNames }\n' }, time: PARSER_HISTORY[4].time + 200 });
    git(repo, ['checkout', '-q', 'main']);
    git(repo, ['merge', '-q', '--no-ff', 'feature', '-m', 'Merge pull request #7 from ada/tab-completion', '-m', 'Tab completion for bash and zsh'], {
      GIT_AUTHOR_DATE: `${PARSER_HISTORY[4].time + 300} +0000`,
      GIT_COMMITTER_DATE: `${PARSER_HISTORY[4].time + 300} +0000`,
    });
    const result = await importGitHistory(engine, repo, { scope });
    assert.equal(result.imported, PARSER_HISTORY.length + 2);
    const observations = await engine.listObservations(scope, { limit: 100 });
    for (const sha of [a, b]) assert.match(observations.find((o) => o.commit_sha === sha)?.narrative ?? '', /Tab completion for bash and zsh/);
    const withMerges = await importGitHistory(engine, repo, { scope: { project: 'with-merges' }, includeMerges: true });
    assert.equal(withMerges.imported, PARSER_HISTORY.length + 3);
  });

  it('streams commits oldest first with their diff text', async () => {
    const commits = [];
    for await (const c of readGitCommits(repo)) commits.push(c);
    assert.deepEqual(commits.map((c) => c.sha), shas);
    assert.match(commits[2].diffText, /wrapHelpText/);
    assert.match(commits[2].diffText, /break long lines at the terminal width/);
  });

  describe('secrets in the diff', () => {
    const later = PARSER_HISTORY[4].time + 100;

    /** The last commit of the repository as readGitCommits reads it. */
    async function lastCommit() {
      let last;
      for await (const c of readGitCommits(repo)) last = c;
      return last!;
    }

    it('redacts an assignment before taking the words of its line, and keeps the other words', async () => {
      commitAll(repo, { subject: 'Add database settings', files: { 'settings.py': 'DB_HOST = "db"\nDB_PASSWORD = Zq9hunterTwoValue\n' }, time: later });
      const c = await lastCommit();
      assert.ok(!c.diffText.includes('Zq9hunterTwoValue'), c.diffText);
      assert.ok(!c.touched.includes('Zq9hunterTwoValue'));
      assert.ok(!c.touched.includes('REDACTED'), 'the marker of a redacted secret is no name');
      assert.match(c.diffText, new RegExp(`DB_PASSWORD = ${REDACTED.replace(/[[\]]/g, '\\$&')}`));
      assert.deepEqual(c.touched.filter((n) => n.startsWith('DB_')).sort(), ['DB_HOST', 'DB_PASSWORD']);
      await importGitHistory(engine, repo, { scope });
      await engine.close();
      assert.deepEqual(filesContaining(storeDir, 'Zq9hunterTwoValue'), [], 'the password is stored');
      engine = await MemoryEngine.open({ storeUri: storeDir, embedder: 'none' });
    });

    it('redacts a long line whole before cutting it', async () => {
      const quoted = `const config = { region: "eu-west-1", bucket: "assets-production-bucket", retries: 3, timeoutMs: 30000, endpoint: "https://s3.example.com", password: "Zq9CorrectHorseBatteryStapleSecretValueThatIsLong0123456789" };`;
      const token = `ghp_${'Zq9b2C3d4E'.repeat(4)}`;
      assert.ok(quoted.indexOf('"', quoted.indexOf('Zq9Correct')) > 200, 'the closing quote lies past the cut');
      commitAll(repo, { subject: 'Configure the bucket', files: { 'src/config.js': `${quoted}\n${'x'.repeat(180)} = "${token}"\n` }, time: later });
      const c = await lastCommit();
      for (const piece of ['Zq9CorrectHorse', token.slice(0, 12)]) assert.ok(!c.diffText.includes(piece) && !c.touched.includes(piece), `${piece} in ${c.diffText}`);
      assert.match(c.diffText, /bucket: "assets-production-bucket"/);
    });

    it('leaves out the lines of secret files and of a private key in any file', async () => {
      const key = ['-----BEGIN OPENSSH PRIVATE KEY-----', 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW', 'QyNTUxOQAAACBZq9PrivKeyMaterialXYZw0123456789abcdefghijklmnopqrstuv', '-----END OPENSSH PRIVATE KEY-----', ''].join('\n');
      commitAll(repo, {
        subject: 'Add deployment credentials',
        files: {
          '.env': 'AWS_SECRET_ACCESS_KEY=Zq9EnvFileSecretValue\nREGION=eu-west-1\n',
          'deploy/id_ed25519': key,
          'test/fixtures/keys.js': `const deployKey = \`\n${key}\`\nmodule.exports = deployKey\n`,
        },
        time: later,
      });
      const c = await lastCommit();
      assert.deepEqual([...c.files].sort(), ['.env', 'deploy/id_ed25519', 'test/fixtures/keys.js']);
      for (const piece of ['Zq9EnvFileSecretValue', 'REGION', 'Zq9PrivKeyMaterial', 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ']) assert.ok(!c.diffText.includes(piece) && !c.touched.includes(piece), `${piece} in ${c.diffText}`);
      assert.match(c.diffText, /deployKey/);
      await importGitHistory(engine, repo, { scope });
      await engine.close();
      assert.deepEqual(['Zq9EnvFileSecretValue', 'Zq9PrivKeyMaterial'].filter((p) => filesContaining(storeDir, p).length > 0), [], 'secrets stored');
      engine = await MemoryEngine.open({ storeUri: storeDir, embedder: 'none' });
    });
  });

  it('explains a missing repository, a folder that is not a repository and an unknown revision', async () => {
    await assert.rejects(importGitHistory(engine, path.join(repo, 'nope'), { scope }), /Repository folder not found/);
    const plain = mkdtempSync(path.join(os.tmpdir(), 'code-memory-plain-'));
    try {
      await assert.rejects(importGitHistory(engine, plain, { scope }), /Not a git repository/);
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
    await assert.rejects(importGitHistory(engine, repo, { scope, rev: 'no-such-branch' }), /Revision not found/);
  });

  it('stops when cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(importGitHistory(engine, repo, { scope, signal: controller.signal }), /cancelled/);
  });
});
