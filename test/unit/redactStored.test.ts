// Secrets in identifiers and in what spans two fields: session ids, dedupe, topic and grow keys and
// branches keep their identity with the secret digested away (redactKey), and a commit message is
// redacted whole before it is cut into subject and body. Each test reads every file of the store.

import { strict as assert } from 'node:assert';
import { importGitHistory } from '../../src/core/capture/gitImport';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { filesContaining } from './diskFixture';
import { commitAll, git } from './gitImportFixture';
import { openTestEngine, removeDir, tempDir, toolContext } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const AWS = (tag: string): string => `AKIA${tag}QWERTYUIOPAS12`;

describe('secrets in identifiers never reach the disk', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  const scope: Scope = { project: 'acme/probe' };

  beforeEach(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  afterEach(async () => {
    await engine.close();
    removeDir(dir);
  });

  it('observe redacts secrets in branch, memory_session_id, content_session_id and dedupe_key', async () => {
    await engine.observe(
      [
        { type: 'edit', title: 'branch field', branch: `fix/${AWS('BR')}` },
        { type: 'edit', title: 'session field', memory_session_id: `sess-${AWS('MS')}` },
        { type: 'edit', title: 'content session field', content_session_id: `c-${AWS('CS')}` },
        { type: 'edit', title: 'dedupe field', dedupe_key: `bash:curl -H "Authorization: Bearer ${AWS('DK')}"` },
      ],
      scope,
    );
    await engine.close(); // every background write done before the files are read
    const leaked = ['BR', 'MS', 'CS', 'DK'].filter((t) => filesContaining(dir, AWS(t)).length > 0);
    assert.deepEqual(leaked, [], 'raw AWS keys stored from these fields');
  });

  it('remember redacts secrets in topic_key, branch and session_id', async () => {
    await engine.remember({ title: 'topic', text: 'a memory with a topic', topic_key: `deploy-${AWS('TK')}` }, scope);
    await engine.remember({ title: 'branch', text: 'a memory on a branch', branch: `fix/${AWS('MB')}` }, scope);
    await engine.remember({ title: 'session', text: 'a memory of a session', session_id: `s-${AWS('SI')}` }, scope);
    await engine.close(); // every background write done before the files are read
    const leaked = ['TK', 'MB', 'SI'].filter((t) => filesContaining(dir, AWS(t)).length > 0);
    assert.deepEqual(leaked, [], 'raw AWS keys stored from these fields');
  });

  it('refuses what it could only store raw: a project name that holds a secret, a commit SHA that is not hex', async () => {
    await assert.rejects(engine.observe([{ type: 'note', title: 'in a secret project' }], { project: `acme/${AWS('PN')}` }), /a project name must not hold a secret/);
    await assert.rejects(engine.remember({ title: 'memory', text: 'in a secret project' }, { project: `acme/${AWS('PM')}` }), /a project name must not hold a secret/);
    await assert.rejects(engine.observe([{ type: 'commit', title: 'by a hook', commit_sha: AWS('SH') }], scope), /commit_sha must be 4 to 64 hex digits/);
    const [stored] = await engine.observe([{ type: 'commit', title: 'upper-case sha', commit_sha: 'ABCDEF1234' }], scope);
    assert.equal((await engine.getObservations([stored.id], scope))[0]?.commit_sha, 'abcdef1234');
    assert.equal((await engine.stats(scope)).observations, 1);
    await engine.close();
    assert.deepEqual(['PN', 'PM', 'SH'].filter((t) => filesContaining(dir, AWS(t)).length > 0), []);
  });

  it('retrieve_memory redacts a secret in session_id before it reaches session_prompts and request_log', async () => {
    await engine.observe([{ type: 'note', title: 'Something to find' }], scope);
    await engine.flush();
    await retrieveMemory(toolContext(engine, scope), { prompt: 'what did we find?', session_id: `t-${AWS('RS')}` });
    await engine.flush();
    await engine.close();
    ({ engine } = await openTestEngine(dir));
    assert.deepEqual(filesContaining(dir, AWS('RS')), [], 'raw AWS key stored from session_id');
  });

  it('retrieve_memory keeps no secret of its arguments in the request log: a value under a secret name, a secret used as a name', async () => {
    await retrieveMemory(toolContext(engine, scope), { prompt: 'how do we deploy?', db_password: 'Zq9plainArgSecretValue' });
    await retrieveMemory(toolContext(engine, scope), { prompt: 'x', [AWS('AN')]: 1 });
    await engine.flush();
    const log = await engine.listRequests(scope, 10);
    assert.equal(log.length, 2);
    assert.ok(log.some((e) => e.arguments.includes('db_password')), 'the name of the argument is kept');
    await engine.close();
    const leaked = ['Zq9plainArgSecretValue', AWS('AN')].filter((s) => filesContaining(dir, s).length > 0);
    assert.deepEqual(leaked, [], 'secrets stored from the arguments');
  });

  it('import-git redacts a private key block that starts on the commit subject line', async () => {
    const repo = tempDir('probe-repo');
    try {
      git(repo, ['init', '-q', '-b', 'main']);
      git(repo, ['config', 'commit.gpgsign', 'false']);
      commitAll(repo, {
        subject: 'oops pasted -----BEGIN RSA PRIVATE KEY-----',
        body: 'MIIEpQIBAAKCAQEAprobekeybodyQQQ\n-----END RSA PRIVATE KEY-----',
        files: { 'a.txt': 'hello\n' },
        time: 1_700_000_000,
      });
      const result = await importGitHistory(engine, repo, { scope });
      assert.equal(result.imported, 1);
      await engine.close(); // every background write done before the files are read
      assert.deepEqual(filesContaining(dir, 'probekeybodyQQQ'), [], 'the private key body is stored');
    } finally {
      removeDir(repo);
    }
  });

  it('import-git redacts the body lines of a private key rotated in a config file (a diff whose BEGIN and END lines are context)', async () => {
    const repo = tempDir('probe-repo');
    const keyBlock = (body: string[]): string => ['-----BEGIN OPENSSH PRIVATE KEY-----', ...body, '-----END OPENSSH PRIVATE KEY-----'].join('\n');
    const yml = (body: string[]): string => `deploy:\n  host: prod.example.com\n  ssh_key: |\n${keyBlock(body).split('\n').map((l) => `    ${l}`).join('\n')}\n  user: deploy\n`;
    const oldBody = ['b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW', 'QyNTUxOQAAACBoldOLDkeyBODYlineTWOqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq', 'AAAEDoldOLDkeyBODYlineTHREEqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq'];
    const newBody = ['b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZX', 'QyNTUxOQAAACBZq9ROTATEDkeyBodyLineTWOxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'AAAEDZq9ROTATEDkeyBodyLineTHREExxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'];
    try {
      git(repo, ['init', '-q', '-b', 'main']);
      git(repo, ['config', 'commit.gpgsign', 'false']);
      commitAll(repo, { subject: 'Add deploy settings', files: { 'config/deploy.yml': yml(oldBody) }, time: 1_700_000_000 });
      commitAll(repo, { subject: 'Rotate the deploy key', files: { 'config/deploy.yml': yml(newBody) }, time: 1_700_000_600 });
      assert.equal((await importGitHistory(engine, repo, { scope })).imported, 2);
      await engine.close(); // every background write done before the files are read
      const leaked = ['Zq9ROTATEDkeyBodyLineTWO', 'Zq9ROTATEDkeyBodyLineTHREE', 'oldOLDkeyBODYlineTWO'].filter((s) => filesContaining(dir, s).length > 0);
      assert.deepEqual(leaked, [], 'raw private key body lines stored from the rotation commit');
    } finally {
      removeDir(repo);
    }
  });
});
