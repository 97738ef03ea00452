import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { SymbolDocs, documentSections, isDocumentPath, isDocumentedCodePath, readProjectDocuments, symbolDocs } from '../../src/core/capture/projectDocs';
import { parseUnifiedDiff, touchedNames } from '../../src/core/retrieve/diffText';
import { MemoryEngine } from '../../src/core/engine';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { commitAll, makeRepo } from './gitImportFixture';
import type { FixtureCommit } from './gitImportFixture';

const T0 = 1_700_000_000;

const GUIDE = [
  'Sessions',
  '========',
  '',
  'The session object keeps per-user state between visits in a cookie that is signed, so',
  'users can read it but cannot change it.',
  '',
  'Signing key',
  '-----------',
  '',
  'To use sessions you have to set a SECRET_KEY in the configuration; without a secret key',
  'the session refuses to store anything.',
  '',
].join('\n');

const README = [
  '# tinyweb',
  '',
  'A tiny web framework for people who like small things and short documentation pages.',
  '',
  '```sh',
  '# install it first',
  'npm install tinyweb',
  '```',
  '',
  '## Teardown',
  '',
  'Functions registered with teardown_request run at the end of every request, even when the view raised an error.',
  '',
].join('\n');

const APP_PY = [
  'class App:',
  '    """The central object: it routes requests to views and holds the configuration."""',
  '',
  '    def teardown_request(self, f):',
  '        """Register a function to run at the end of each request, whether or not an',
  '        exception occurred. Cleanup such as closing a database connection goes here.',
  '        """',
  '        self.teardown_funcs.append(f)',
  '',
  '    def _private(self):',
  "        '''x'''",
  '',
].join('\n');

const HISTORY: FixtureCommit[] = [
  { subject: 'Initial framework', files: { 'README.md': README, 'tinyweb/app.py': APP_PY, 'docs/sessions.rst': GUIDE }, time: T0 },
  { subject: 'run all teardown funcs despite errors', files: { 'tinyweb/app.py': `${APP_PY}\n# loop over funcs and log each failure\n` }, time: T0 + 3600 },
  { subject: 'null session when the key is missing', files: { 'tinyweb/sessions.py': 'class NullSession:\n    pass\n' }, time: T0 + 7200 },
];

describe('project documents', () => {
  it('cuts Markdown and reStructuredText at their headings, titled by the heading path, ignoring code fences', () => {
    const md = documentSections('README.md', README);
    assert.deepEqual(
      md.map((d) => d.title),
      ['tinyweb', 'tinyweb > Teardown'],
    );
    assert.match(md[0].text, /# install it first/, 'a comment in a code fence stays in its section');
    const rst = documentSections('docs/sessions.rst', GUIDE);
    assert.deepEqual(
      rst.map((d) => d.title),
      ['Sessions', 'Sessions > Signing key'],
    );
    assert.match(rst[1].text, /SECRET_KEY/);
    const long = documentSections('docs/long.md', `# Long\n\n${'word '.repeat(200)}\n\n${'more '.repeat(200)}\n`, 1200);
    assert.ok(long.length >= 2 && long.every((d) => d.text.length <= 1200));
  });

  it("reads Python docstrings and JSDoc blocks titled by their symbol, skipping ones that say nothing", () => {
    const py = symbolDocs('tinyweb/app.py', APP_PY);
    assert.deepEqual(
      py.map((d) => d.title),
      ['App', 'App.teardown_request'],
    );
    assert.match(py[1].text, /closing a database connection/);
    const ts = symbolDocs('lib/parse.ts', '/**\n * Parses the command line into options,\n * applying defaults.\n */\nexport function parseArgs(argv: string[]) {}\n');
    assert.deepEqual(ts, [{ path: 'lib/parse.ts', title: 'parseArgs', text: 'Parses the command line into options,\napplying defaults.' }]);
  });

  it('redacts sections, headings and doc comments before cutting them', () => {
    // Each key straddles a cut: 5 of its 20 characters before it, the rest after.
    const key = 'AKIAZZAUDITQQ7WERTYU';
    const para = `${'word '.repeat(299)}${key} and more words after it.`;
    assert.equal(para.indexOf(key), 1495);
    const sections = documentSections('README.md', `# Title\n\n${para}\n`);
    assert.ok(sections.length >= 2, 'the paragraph is cut');
    assert.ok(!sections.some((d) => d.text.includes(key.slice(5))), sections.map((d) => d.text.slice(-40)).join(' | '));
    const heading = documentSections('README.md', `# ${'h'.repeat(110)} ${key}\n\n${'word '.repeat(20)}\n`);
    assert.ok(!heading[0].title.includes(key.slice(0, 9)), heading[0].title);
    const doc = symbolDocs('lib/aws.ts', `/**\n * ${'Reads the credentials of the account. '.repeat(2)}Example: ${key}\n */\nexport function readCredentials() {}\n`, 90);
    assert.equal(doc.length, 1);
    assert.ok(!doc[0].text.includes(key.slice(0, 5)), doc[0].text);
  });

  it('reads no document or doc comment under a secret path', () => {
    for (const p of ['secrets/README.md', 'config/.secrets/notes.md', '.env.md']) assert.ok(!isDocumentPath(p), p);
    for (const p of ['secrets/loader.ts', '.secret/keys.py']) assert.ok(!isDocumentedCodePath(p), p);
  });

  it('knows documents and documented code from tests, vendored code and licences', () => {
    for (const p of ['README.md', 'CHANGES.rst', 'docs/guide/intro.md', 'CHANGELOG', 'doc/adr/0001-store.md']) assert.ok(isDocumentPath(p), p);
    for (const p of ['LICENSE', 'LICENSE.md', 'node_modules/x/README.md', 'src/notes.txt', 'package-lock.json']) assert.ok(!isDocumentPath(p), p);
    for (const p of ['src/app.py', 'lib/index.ts']) assert.ok(isDocumentedCodePath(p), p);
    for (const p of ['tests/test_app.py', 'lib/index.test.ts', 'dist/index.js', 'types/index.d.ts', 'vendor/x.js']) assert.ok(!isDocumentedCodePath(p), p);
  });

  it("links a commit to the doc comments of the symbols its code touches", () => {
    const diff = [
      'diff --git a/tinyweb/app.py b/tinyweb/app.py',
      '--- a/tinyweb/app.py',
      '+++ b/tinyweb/app.py',
      '@@ -4,3 +4,6 @@ class App:',
      '     def teardown_request(self, f):',
      '-        self.teardown_funcs.append(f)',
      '+        # keep the order of registration',
      '+        self.teardown_funcs.append(f)',
      '+        return teardown_request_hook(f)',
    ].join('\n');
    const names = touchedNames(parseUnifiedDiff(diff));
    assert.equal(names[0], 'App', 'the class named by the hunk header counts twice');
    assert.ok(names.includes('teardown_funcs') && !names.includes('keep'), 'comment lines are not code');
    const docs = new SymbolDocs([...symbolDocs('tinyweb/app.py', APP_PY), { path: 'docs/x.md', title: 'teardown_funcs', text: 'a document section is not a symbol' }]);
    const linked = docs.textFor(['App', 'teardown_funcs', 'teardown_request']);
    assert.doesNotMatch(linked, /central object/, "'App' is too short a name to say which symbol is meant");
    assert.match(linked, /closing a database connection/);
    assert.doesNotMatch(linked, /document section/);
    const one = new SymbolDocs([...symbolDocs('tinyweb/app.py', APP_PY), { path: 'tinyweb/x.py', title: 'handle_teardown', text: 'Handles the teardown of everything.' }], 1);
    assert.equal(one.textFor(['handle_teardown', 'teardown_request']), 'Handles the teardown of everything.', 'at most perCommit doc comments, most touched first');
  });

  describe('read from git', () => {
    let repo: string;
    afterEach(() => rmSync(repo, { recursive: true, force: true }));

    it("reads regular files only: a symbolic link's blob (the path it points to) is no document", async () => {
      ({ repo } = makeRepo([{ subject: 'Guide', files: { 'docs/guide.md': '# Guide\n\nThe retry policy waits longer after each failed upload attempt, at most five times.\n' }, time: T0 }]));
      symlinkSync('../../shared/handbook/engineering/onboarding/the-complete-guide-to-our-release-process.md', path.join(repo, 'docs', 'release.md'));
      symlinkSync('guide.md', path.join(repo, 'docs', 'README.md'));
      commitAll(repo, { subject: 'Link the release guide', files: {}, time: T0 + 60 });
      const docs = await readProjectDocuments(repo, 'HEAD');
      assert.ok(docs.some((d) => d.path === 'docs/guide.md'), 'the real document is read');
      assert.deepEqual(docs.filter((d) => d.path !== 'docs/guide.md'), [], 'a link was stored as a document');
    });

    it('never reads a blob over maxFileBytes: the listing gives its size, so a huge README is not held in memory', async () => {
      const guide = '# Guide\n\nThe retry policy waits longer after each failed upload attempt, at most five times.\n';
      ({ repo } = makeRepo([{ subject: 'Guide', files: { 'GUIDE.md': guide }, time: T0 }]));
      // 48 MB of prose; git stores it compressed to well under a megabyte.
      writeFileSync(path.join(repo, 'README.md'), 'The parser reads each line of the file and splits it at commas.\n'.repeat(750_000));
      commitAll(repo, { subject: 'A long readme', files: {}, time: T0 + 60 });
      rmSync(path.join(repo, 'README.md'));
      global.gc?.();
      const base = process.memoryUsage().arrayBuffers;
      let peak = base;
      const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 2);
      let docs;
      try {
        docs = await readProjectDocuments(repo, 'HEAD');
      } finally {
        clearInterval(timer);
      }
      assert.deepEqual(docs.map((d) => d.path), ['GUIDE.md']);
      const grewMb = (peak - base) / 1024 / 1024;
      assert.ok(grewMb < 16, `reading the documents buffered ${grewMb.toFixed(0)} MB for a 48 MB README it skips`);
    });
  });

  describe('imported with the history', () => {
    let repo: string;
    let shas: string[];
    let storeDir: string;
    let engine: MemoryEngine;
    const scope = { project: 'tinyweb' };

    beforeEach(async () => {
      ({ repo, shas } = makeRepo(HISTORY));
      storeDir = mkdtempSync(path.join(os.tmpdir(), 'code-memory-docs-'));
      engine = await MemoryEngine.open({ storeUri: storeDir, embedder: 'none' });
    });

    afterEach(async () => {
      await engine.close();
      rmSync(storeDir, { recursive: true, force: true });
      rmSync(repo, { recursive: true, force: true });
    });

    it('keeps the documents at the imported revision as a layer of their own, never among the facts', async () => {
      const result = await importGitHistory(engine, repo, { scope });
      assert.equal(result.imported, HISTORY.length);
      const expected = await readProjectDocuments(repo, 'HEAD');
      assert.deepEqual(result.documents, { kept: expected.length, removed: 0 });
      const docs = (await engine.listObservations(scope, { limit: 100 })).filter((o) => o.type === 'document');
      assert.equal(docs.length, expected.length);
      assert.ok(docs.some((d) => d.title === 'App.teardown_request (tinyweb/app.py)'));
      const sessions = await engine.listSessions(scope, 50);
      assert.ok(sessions.length > 0 && sessions.every((s) => !s.memory_session_id.startsWith('docs-')), 'not listed as a session');

      // A search for facts returns commits only; asking for the type returns the documents.
      const facts = await engine.search('teardown request end of each request', { scope, limit: 10 });
      assert.ok(facts.some((h) => h.cell.type === 'commit') && facts.every((h) => h.cell.type !== 'document'));
      const found = await engine.search('teardown request end of each request', { scope, limit: 10, filter: { type: 'document' } });
      assert.ok(found.length > 0 && found.every((h) => h.cell.type === 'document'));
      // A second import of the same revision adds nothing and removes nothing.
      assert.deepEqual((await importGitHistory(engine, repo, { scope })).documents, { kept: expected.length, removed: 0 });
    });

    it("puts the matching sections in retrieve_memory's documents, ahead of the facts' excerpts", async () => {
      await importGitHistory(engine, repo, { scope });
      const out = await retrieveMemory({ engine, scope, transportSessionId: 'docs' }, { prompt: 'How do teardown functions behave at the end of each request?' });
      assert.equal(out.status, 'ok');
      const documents = out.retrieval!.documents;
      assert.ok(/teardown/i.test(documents[0].title), documents[0].title);
      assert.ok(documents.some((d) => d.title === 'App.teardown_request (tinyweb/app.py)' && /closing a database connection/.test(d.excerpt)));
      assert.ok(out.retrieval!.facts.length > 0 && out.retrieval!.facts.every((f) => !/App\.teardown_request/.test(f.statement)), 'documents are not facts');
      assert.match(out.content_text ?? '', /## Documents[\s\S]*App\.teardown_request/);
    });

    it('replaces the sections that changed or went away when a later revision is imported', async () => {
      await importGitHistory(engine, repo, { scope });
      commitAll(repo, { subject: 'Rewrite the session guide', files: { 'docs/sessions.rst': GUIDE.replace('Signing key\n-----------\n\nTo use sessions you have to set a SECRET_KEY in the configuration; without a secret key\nthe session refuses to store anything.\n', 'Storage\n-------\n\nSessions are kept in a signed cookie that lives until the browser closes.\n') }, time: T0 + 9000 });
      const again = await importGitHistory(engine, repo, { scope });
      assert.equal(again.imported, 1);
      assert.equal(again.documents?.removed, 1);
      const docs = (await engine.listObservations(scope, { limit: 100 })).filter((o) => o.type === 'document');
      assert.ok(!docs.some((d) => /SECRET_KEY/.test(d.narrative ?? '')), 'the removed section is forgotten');
      assert.ok(docs.some((d) => /until the browser closes/.test(d.narrative ?? '')));
      assert.equal((await engine.search('SECRET_KEY', { scope, limit: 5, filter: { type: 'document' } })).length, 0);
    });

    it('lends the documents\' terms to a question that uses none of the commit\'s words', async () => {
      await importGitHistory(engine, repo, { scope });
      // "signing" and "per-user state" are the guide's words; the commit says "key" and "session".
      // The first commit, which added the guide, is left out: its diff holds the guide's words.
      const question = 'what happened when no signing credential was configured and per-user state was touched';
      const filter = { type: 'commit', since_epoch: (T0 + 1) * 1000 };
      const rank = async (): Promise<number> => {
        const hits = await engine.search(question, { scope, limit: 10, filter });
        const i = hits.findIndex((h) => h.cell.commit_sha === shas[2]);
        return i < 0 ? Infinity : i;
      };
      const withSettings = async (settings: string): Promise<number> => {
        process.env.CODE_MEMORY_RETRIEVAL = settings;
        try {
          return await rank();
        } finally {
          delete process.env.CODE_MEMORY_RETRIEVAL;
        }
      };
      const withDocs = await withSettings('docExpansionDocs=3');
      const without = await withSettings('docExpansionDocs=0');
      assert.equal(without, Infinity, 'without documents no word of the question reaches the commit');
      assert.equal(withDocs, 0, 'with documents it comes first');
    });
  });
});
