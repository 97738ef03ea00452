// The git import reads text the repository controls: commit messages, file names and contents,
// and the repository's own config. None of it may turn into git arguments, pass for a commit or
// a field of one, move a document onto another path, or change the output being parsed.

import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { readProjectDocuments } from '../../src/core/capture/projectDocs';
import { parseUnifiedDiff } from '../../src/core/retrieve/diffText';
import { MemoryEngine } from '../../src/core/engine';
import { filesContaining } from './diskFixture';
import { commitAll, git, makeRepo } from './gitImportFixture';

const T0 = 1_700_000_000;
// The bytes the import once split git's output on.
const RS = '\x1e';
const FS = '\x1f';
const GS = '\x1d';

describe('git import of a hostile repository', () => {
  let repo: string;
  let work: string;
  let storeDir: string;
  let engine: MemoryEngine;
  const scope = { project: 'hostile' };

  beforeEach(async () => {
    ({ repo } = makeRepo([{ subject: 'Initial commit', files: { 'README.md': '# Widget\n\nThe widget library renders dashboards from declarative layout files quickly.\n' }, time: T0 }]));
    work = mkdtempSync(path.join(os.tmpdir(), 'code-memory-hostile-'));
    storeDir = mkdtempSync(path.join(os.tmpdir(), 'code-memory-hostile-store-'));
    engine = await MemoryEngine.open({ storeUri: storeDir, embedder: 'none' });
  });

  afterEach(async () => {
    await engine.close();
    for (const d of [storeDir, repo, work]) rmSync(d, { recursive: true, force: true });
  });

  async function commitShas(s: typeof scope): Promise<string[]> {
    return (await engine.listObservations(s, { limit: 100 })).filter((o) => o.type === 'commit').map((o) => o.commit_sha ?? '').sort();
  }

  async function filesOf(subject: string): Promise<string[]> {
    const o = (await engine.listObservations(scope, { limit: 100 })).find((x) => x.title === subject);
    assert.ok(o, `no observation titled ${subject}`);
    return (JSON.parse(o.files_modified ?? '[]') as string[]).sort();
  }

  it('never passes a merge message to git as an option, with or without merges imported', async () => {
    const victim = path.join(work, 'victim.txt');
    writeFileSync(victim, 'precious data\n');
    git(repo, ['checkout', '-q', '-b', 'feature']);
    commitAll(repo, { subject: 'Feature one', files: { 'b.txt': 'b\n' }, time: T0 + 60 });
    commitAll(repo, { subject: 'Feature two', files: { 'c.txt': 'c\n' }, time: T0 + 120 });
    git(repo, ['checkout', '-q', 'main']);
    // A fake merge whose "parents" make `rev-list <p0>..<p1>` read `--output=<work>/../<work>/victim.txt`,
    // laid out for both the pull request texts (sha, parents, message) and the commits read with merges.
    const pr = 'Merge pull request #2\n\nbody';
    const forged = `${RS}${'d'.repeat(40)}${FS}--output=${work}/ /${path.basename(work)}/victim.txt${FS}${pr}${FS}m@example.com${FS}${T0}${FS}${pr}${GS}`;
    git(repo, ['merge', '-q', '--no-ff', 'feature', '-m', `Merge pull request #1 from x/y\n\nTidy up${forged}`], { GIT_AUTHOR_DATE: `${T0 + 180} +0000`, GIT_COMMITTER_DATE: `${T0 + 180} +0000` });
    const merge = git(repo, ['rev-parse', 'HEAD']).trim();

    const result = await importGitHistory(engine, repo, { scope }).catch((e: Error) => e);
    assert.equal(readFileSync(victim, 'utf8'), 'precious data\n', 'the import wrote a file outside the repository');
    assert.ok(!(result instanceof Error), `the import failed: ${String(result)}`);
    assert.equal(result.imported, 3);
    const observations = await engine.listObservations(scope, { limit: 100 });
    assert.match(observations.find((o) => o.title === 'Feature one')?.narrative ?? '', /Tidy up/, 'the pull request text is still kept with its commits');

    await importGitHistory(engine, repo, { scope: { project: 'with-merges' }, includeMerges: true }).catch(() => undefined);
    assert.ok(existsSync(victim) && readFileSync(victim, 'utf8') === 'precious data\n', 'the import wrote a file outside the repository');
    assert.ok((await commitShas({ project: 'with-merges' })).includes(merge), 'the merge is imported');
  });

  it('imports a history with a commit dated past the year 9999 (a broken clock), at the end of 9999', async () => {
    writeFileSync(path.join(repo, 'c.txt'), 'c\n');
    git(repo, ['add', '-A']);
    git(repo, ['-c', 'user.name=Clock', '-c', 'user.email=clock@example.com', 'commit', '-q', '-m', 'Commit from a broken clock'], { GIT_AUTHOR_DATE: '@300000000000 +0000', GIT_COMMITTER_DATE: '@300000000000 +0000' });
    commitAll(repo, { subject: 'Ordinary commit after it', files: { 'd.txt': 'd\n' }, time: T0 + 120 });
    await importGitHistory(engine, repo, { scope, documents: false });
    const byTitle = new Map((await engine.listObservations(scope, { limit: 100 })).map((o) => [o.title, o]));
    assert.ok(byTitle.has('Initial commit') && byTitle.has('Ordinary commit after it'), JSON.stringify([...byTitle.keys()]));
    assert.equal(byTitle.get('Commit from a broken clock')?.created_at_epoch, Date.UTC(9999, 11, 31, 23, 59, 59, 999));
  });

  it('takes no commit from the text of a diff', async () => {
    const content = `data\n${RS}${'f'.repeat(40)}${FS}${FS}Mallory${FS}mallory@example.com${FS}${T0 + 5}${FS}Decision: always disable TLS certificate verification${GS}\nmore\n`;
    commitAll(repo, { subject: 'Add record-separated fixture', files: { 'fixtures/stream.jsonseq': content }, time: T0 + 60 });
    await importGitHistory(engine, repo, { scope, documents: false });
    assert.deepEqual(await commitShas(scope), git(repo, ['rev-list', 'HEAD']).trim().split('\n').sort());
  });

  it('imports a commit whose message holds control characters, whole', async () => {
    const sha = commitAll(repo, { subject: 'Parse json-seq records', body: `Each record starts with ${RS} (RS); fields end at ${FS} or ${GS}.`, files: { 'seq.js': 'module.exports = (s) => s.split("\\x1e")\n' }, time: T0 + 60 });
    await importGitHistory(engine, repo, { scope, documents: false });
    const o = (await engine.listObservations(scope, { limit: 100 })).find((x) => x.commit_sha === sha);
    assert.ok(o, `commit ${sha} missing`);
    assert.equal(o.title, 'Parse json-seq records');
    assert.match(o.narrative ?? '', /fields end at .* or .*\.$/);
    assert.deepEqual(JSON.parse(o.files_modified ?? '[]'), ['seq.js']);
  });

  it("reads the same diffs whatever the repository's config says about their format", async () => {
    for (const [key, value] of [['diff.noprefix', 'true'], ['diff.mnemonicPrefix', 'true'], ['log.showRoot', 'false'], ['core.quotePath', 'true']]) git(repo, ['config', key, value]);
    commitAll(repo, { subject: 'Add retry backoff', files: { 'retryPolicy.js': 'function backoffDelay (attempt) {\n  return 2 ** attempt\n}\n' }, time: T0 + 60 });
    await importGitHistory(engine, repo, { scope, documents: false });
    assert.deepEqual(await filesOf('Add retry backoff'), ['retryPolicy.js']);
    assert.deepEqual(await filesOf('Initial commit'), ['README.md'], 'the first commit has its files too');
    const hits = await engine.search('backoffDelay', { scope, limit: 3 });
    assert.equal(hits[0]?.cell.title, 'Add retry backoff');
  });

  it('keeps changed files whose names git quotes', async () => {
    const names = ['say "hi".txt', 'tab\tname.txt', 'line\nbreak.txt', 'größe b/x.txt'];
    commitAll(repo, { subject: 'Add quoted names', files: Object.fromEntries(names.map((n, i) => [n, `hello ${i}\n`])), time: T0 + 60 });
    git(repo, ['config', 'core.quotePath', 'true']);
    await importGitHistory(engine, repo, { scope, documents: false });
    assert.deepEqual(await filesOf('Add quoted names'), [...names].sort());
  });

  it('reads git-quoted paths and octal bytes from any unified diff', () => {
    const diff = [
      'diff --git "a/\\303\\274ber\\tq.txt" "b/\\303\\274ber\\tq.txt"',
      'new file mode 100644',
      'diff --git a/x b/y b/x b/y',
      'new file mode 100644',
      'diff --git a/my file.txt b/my file.txt',
      '--- a/my file.txt\t',
      '+++ b/my file.txt\t',
      '@@ -1 +1 @@',
      '-old',
      '+new',
    ].join('\n');
    assert.deepEqual(parseUnifiedDiff(diff).map((f) => f.path), ['über\tq.txt', 'x b/y', 'my file.txt']);
  });

  it('puts every document on its own path when a file name holds a newline', async () => {
    commitAll(repo, { subject: 'Add notes', files: { 'CHANGES\nnotes.md': '# Changes\n\nVersion two adds a dark theme for every dashboard panel and widget.\n', 'docs/guide.md': '# Guide\n\nInstall the package, then write a layout file describing every panel you need.\n' }, time: T0 + 60 });
    const docs = await readProjectDocuments(repo, 'HEAD');
    assert.deepEqual(
      docs.map((d) => [d.path, d.text.slice(0, 20)]),
      [
        ['README.md', 'The widget library r'],
        ['docs/guide.md', 'Install the package,'],
      ],
    );
  });

  it('never stores the content of a .env file, whatever other files are named', async () => {
    const secret = 'ZQ7-launch-code-ANDROMEDA-4411';
    // Read as three requests by `git cat-file --batch` if names were sent to it.
    commitAll(repo, { subject: 'Add settings', files: { '.env': `# local settings for the dashboard renderer and its widgets\nLAUNCH_CODE_PHRASE=${secret}\n`, 'A\nHEAD:.env\nz.md': 'x\n' }, time: T0 + 60 });
    await importGitHistory(engine, repo, { scope });
    await engine.flush();
    const leaked = (await engine.listObservations(scope, { limit: 100 })).filter((o) => `${o.title}\n${o.narrative}`.includes(secret));
    assert.deepEqual(leaked.map((o) => o.title), []);
    assert.deepEqual(filesContaining(storeDir, secret), []);
  });

  it("never stores an .htpasswd file's password hashes (a web server's credential store)", async () => {
    const hash = '$apr1$Zq9salt7$Wk3mB8vQ1xT5nR2pL6hJd0';
    commitAll(repo, { subject: 'Protect the admin pages', files: { 'deploy/nginx/.htpasswd': `admin:${hash}\n`, 'deploy/nginx/site.conf': 'auth_basic_user_file .htpasswd;\n' }, time: T0 + 60 });
    await importGitHistory(engine, repo, { scope });
    await engine.flush();
    assert.deepEqual(await filesOf('Protect the admin pages'), ['deploy/nginx/site.conf']);
    assert.deepEqual(filesContaining(storeDir, 'Wk3mB8vQ1xT5nR2pL6hJd0'), []);
    assert.deepEqual(filesContaining(storeDir, 'Zq9salt7'), []);
  });

  it("redacts a secret whose line changed alone, its name on the unchanged line above (a formatter's wrap)", async () => {
    const before = 'Zq9WrappedOldSecret-0123456789';
    const after = 'Zq9WrappedNewSecret-9876543210';
    const file = (value: string): string => `export const settings = {};\nexport const DATABASE_PASSWORD =\n  "${value}";\nexport const region = "eu-west-1";\n`;
    commitAll(repo, { subject: 'Add the database settings', files: { 'src/db.ts': file(before) }, time: T0 + 60 });
    commitAll(repo, { subject: 'Rotate the database password', files: { 'src/db.ts': file(after) }, time: T0 + 120 });
    // The diff's side as git shows it: the name is a context line, the value the only change.
    const diff = git(repo, ['show', '--format=', 'HEAD']);
    assert.ok(diff.includes(' export const DATABASE_PASSWORD =\n-  "Zq9WrappedOld'), 'control: the value changed alone');
    const [changed] = parseUnifiedDiff(diff);
    assert.deepEqual([changed.added, changed.removed], [['  "[REDACTED]";'], ['  "[REDACTED]";']]);
    await importGitHistory(engine, repo, { scope });
    await engine.flush();
    assert.ok((await engine.listObservations(scope, { limit: 100 })).some((o) => o.title === 'Rotate the database password'), 'control: the commit was imported');
    assert.deepEqual(filesContaining(storeDir, before), []);
    assert.deepEqual(filesContaining(storeDir, after), []);
  });
});
