// Every git command the product runs, run in a repository whose own config, attributes and hooks
// name commands (core.fsmonitor, diff and filter drivers, gpg.program with log.showSignature, a
// promisor remote reached by `ext::`, hooks, aliases, an included config file), with GIT_*
// variables in the environment that name commands or another repository, and with a program
// named `git` in the repository folder: none of those commands runs, and each part still reads
// what it reads. Also what each part says when git is missing or the folder is gone. Each command
// named writes a marker file; the markers found say which ran. Through the real functions:
// capture's enrichment (enrich.ts) and HEAD fallback (gitCapture.ts), the sidebar's commit view
// (navigation.ts), import-git, project documents, freshness, the project name, the sharer's name.

import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitFreshness } from '../../src/core/capture/freshness';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { folderProject } from '../../src/core/capture/project';
import { readProjectDocuments } from '../../src/core/capture/projectDocs';
import { gitAuthor } from '../../src/core/team/shareRows';
import { MemoryEngine } from '../../src/core/engine';
import { Emitter, Harness, RelativePattern, Uri } from './captureHarness';
import { git, makeRepo } from './gitImportFixture';
import { tempDirs } from './mcpFixture';
import { withVscodeStub } from './vscodeStub';

process.env.LANCEDB_LOG ??= 'error';

const T0 = 1_700_000_000;

const shown = { docs: [] as string[], warnings: [] as string[] };
const stub = {
  Uri,
  RelativePattern,
  EventEmitter: Emitter,
  SymbolKind: { File: 0, Module: 1, Namespace: 2, Package: 3, Class: 4, Method: 5, Enum: 9, Interface: 10, Object: 18, Struct: 22 },
  DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
  languages: { getDiagnostics: () => [] },
  commands: { executeCommand: async () => undefined },
  extensions: { getExtension: () => undefined },
  window: {
    showWarningMessage: async (m: string) => void shown.warnings.push(m),
    showTextDocument: async () => undefined,
  },
  workspace: { openTextDocument: async (d: { content: string }) => (shown.docs.push(d.content), {}) },
};
/* eslint-disable @typescript-eslint/no-require-imports */
const { commitDetails, renameContent, gitIgnoredByRepository, Navigation } = withVscodeStub(stub, () => ({
  ...(require('../../src/extension/capture/enrich') as typeof import('../../src/extension/capture/enrich')),
  ...(require('../../src/extension/webviews/navigation') as typeof import('../../src/extension/webviews/navigation')),
}));
/* eslint-enable @typescript-eslint/no-require-imports */

/** Runs `fn` with these variables in this process's environment (undefined: removed), then puts them back. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (v: Record<string, string | undefined>): void => {
    for (const [k, value] of Object.entries(v)) if (value === undefined) delete process.env[k];
    else process.env[k] = value;
  };
  set(vars);
  try {
    return await fn();
  } finally {
    set(before);
  }
}

interface Hostile {
  repo: string;
  marks: string;
  /** HEAD: a commit carrying a (made-up) signature, so that log.showSignature would run gpg.program. */
  head: string;
  /** A shell command that leaves the marker `name`. */
  mark(name: string): string;
  /** The markers left so far (which commands ran), cleared. */
  ran(): string[];
  /** The variables of a caller's environment that name commands. */
  env: Record<string, string>;
}

const HOOKS = ['pre-commit', 'post-commit', 'post-checkout', 'post-merge', 'post-rewrite', 'reference-transaction', 'post-index-change', 'fsmonitor-watchman', 'pre-auto-gc', 'push-to-checkout'];

function hostileRepo(root: string): Hostile {
  const marks = path.join(root, 'marks');
  fs.mkdirSync(marks);
  const mark = (name: string): string => `touch ${JSON.stringify(path.join(marks, name))} #`;
  const program = (name: string): string => {
    const file = path.join(root, `${name}.sh`);
    fs.writeFileSync(file, `#!/bin/sh\ntouch '${path.join(marks, name)}'\nexit 1\n`, { mode: 0o755 });
    return file;
  };
  const { repo } = makeRepo([
    { subject: 'Add the widget notes', files: { 'notes.txt': 'alpha\n', 'data.dat': 'binary-ish\n', 'lib/old.ts': 'export const widgetRate = 1;\n', 'README.md': '# Widget\n\nThe widget library renders dashboards from declarative layout files quickly.\n' }, time: T0 },
    { subject: 'Extend the widget notes', files: { 'notes.txt': 'alpha\nbeta\n' }, time: T0 + 60 },
    { subject: 'Signed change', files: { 'notes.txt': 'alpha\nbeta\ngamma\n', 'data.dat': 'binary-ish 2\n' }, time: T0 + 120 },
  ]);
  // The last commit again, with a signature header (its check would run gpg.program).
  const plain = git(repo, ['cat-file', 'commit', 'HEAD']);
  const signedText = plain.replace(/^(committer .*\n)/m, '$1gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n');
  const head = execInput(repo, ['hash-object', '-t', 'commit', '-w', '--stdin'], signedText).trim();
  git(repo, ['update-ref', 'refs/heads/main', head]);
  git(repo, ['reset', '-q', '--hard', head]);

  const hooks = path.join(root, 'hooks');
  fs.mkdirSync(hooks);
  for (const h of HOOKS) fs.writeFileSync(path.join(hooks, h), `#!/bin/sh\ntouch '${path.join(marks, `hook-${h}`)}'\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(root, 'included.config'), `[diff]\n\texternal = ${JSON.stringify(mark('diff.external'))}\n`);
  const settings: [string, string][] = [
    ['core.fsmonitor', mark('core.fsmonitor')],
    ['core.pager', mark('core.pager')],
    ['core.hooksPath', hooks],
    ['core.sshCommand', mark('core.sshCommand')],
    ['core.askPass', program('core.askPass')],
    ['core.editor', mark('core.editor')],
    ['sequence.editor', mark('sequence.editor')],
    ['include.path', path.join(root, 'included.config')],
    ['diff.evil.textconv', mark('diff.textconv')],
    ['diff.evil.command', mark('diff.command')],
    ['filter.evil.clean', mark('filter.clean')],
    ['filter.evil.smudge', mark('filter.smudge')],
    ['filter.proc.process', mark('filter.process')],
    ['log.showSignature', 'true'],
    ['gpg.program', program('gpg.program')],
    ['credential.helper', `!${mark('credential.helper')}`],
    ['alias.log', `!${mark('alias')}`],
    ['alias.show', `!${mark('alias')}`],
    ['protocol.ext.allow', 'always'],
    ['uploadpack.packObjectsHook', mark('uploadpack.packObjectsHook')],
  ];
  for (const [key, value] of settings) git(repo, ['config', '--add', key, value]);
  fs.writeFileSync(path.join(repo, '.git', 'info', 'attributes'), '* diff=evil filter=evil\n*.dat filter=proc\n');
  const env = {
    GIT_EXTERNAL_DIFF: mark('GIT_EXTERNAL_DIFF'),
    GIT_PAGER: mark('GIT_PAGER'),
    PAGER: mark('PAGER'),
    GIT_SSH_COMMAND: mark('GIT_SSH_COMMAND'),
    GIT_ASKPASS: program('GIT_ASKPASS'),
    GIT_EDITOR: mark('GIT_EDITOR'),
    GIT_CONFIG_PARAMETERS: `'core.fsmonitor'='${mark('GIT_CONFIG_PARAMETERS')}'`,
  };
  const ran = (): string[] => {
    const names = fs.readdirSync(marks).sort();
    for (const n of names) fs.rmSync(path.join(marks, n));
    return names;
  };
  return { repo, marks, head, mark, ran, env };
}

function execInput(repo: string, args: string[], input: string): string {
  return execFileSync('git', ['-C', repo, ...args], { input, encoding: 'utf8' });
}

describe('git in a hostile repository: none of the commands it names runs', function () {
  this.timeout(120_000);
  const dirs = tempDirs();
  let h: Hostile;

  before(function () {
    if (process.platform === 'win32') this.skip(); // the markers are shell commands
    h = hostileRepo(dirs.make('hostile'));
    h.ran();
  });
  beforeEach(() => {
    shown.docs.length = 0;
    shown.warnings.length = 0;
    h?.ran();
  });
  after(() => dirs.removeAll());

  it("capture reads a pulled commit (commitDetails): its subject, author and files, and runs nothing (once fsmonitor and gpg.program ran)", async () => {
    const first = git(h.repo, ['rev-list', '--max-parents=0', 'HEAD']).trim();
    const details = await commitDetails(h.repo, h.head, first);
    assert.deepEqual(h.ran(), []);
    assert.equal(details?.subject, 'Signed change');
    assert.equal(details?.author, 'Ada Lovelace');
    assert.deepEqual([...(details?.files ?? [])].sort(), ['data.dat', 'notes.txt']);
    assert.equal(details?.moved?.ahead, 2);
  });

  it('capture pairs a moved file by its content (renameContent) and runs nothing, not even a filter driver (once fsmonitor and the clean filter ran)', async () => {
    fs.mkdirSync(path.join(h.repo, 'src'), { recursive: true });
    fs.renameSync(path.join(h.repo, 'lib', 'old.ts'), path.join(h.repo, 'src', 'old.ts'));
    try {
      const folder = Uri.file(h.repo).toString();
      const events = [
        { kind: 'delete', folder, path: 'lib/old.ts' },
        { kind: 'create', folder, path: 'src/old.ts' },
      ];
      const ids = await renameContent(events as never);
      assert.deepEqual(h.ran(), []);
      const [gone, made] = [...ids.values()];
      assert.equal(ids.size, 2, JSON.stringify([...ids]));
      assert.equal(gone, made, 'the moved file is still paired by its content');
    } finally {
      fs.renameSync(path.join(h.repo, 'src', 'old.ts'), path.join(h.repo, 'lib', 'old.ts'));
    }
  });

  it('capture asks which files git ignores (gitIgnoredByRepository) and runs nothing (once fsmonitor ran)', async () => {
    fs.writeFileSync(path.join(h.repo, '.gitignore'), 'build/\n');
    try {
      const ignored = await gitIgnoredByRepository(h.repo, ['build/out.js', 'notes.txt']);
      assert.deepEqual(h.ran(), []);
      assert.deepEqual([...ignored], ['build/out.js']);
    } finally {
      fs.rmSync(path.join(h.repo, '.gitignore'));
    }
  });

  it("capture's HEAD watch without the Git extension (GitCapture) reads branch and commit and runs nothing", async () => {
    const harness = new Harness({ folders: [h.repo], repoRoots: [] });
    harness.stub.extensions.getExtension = () => undefined;
    try {
      await harness.start();
      assert.deepEqual(h.ran(), []);
      assert.equal(harness.capture.git.via, 'git-cli');
      assert.deepEqual(harness.capture.git.headOf(Uri.file(h.repo).toString()), { branch: 'main', sha: h.head, repoRoot: h.repo });
    } finally {
      await harness.dispose();
    }
  });

  it('the sidebar opens a commit (Navigation.openCommit) as a diff and runs nothing (once fsmonitor, gpg.program and a filter driver ran)', async () => {
    const folder = { uri: Uri.file(h.repo), name: 'hostile', index: 0 };
    const navigation = new Navigation({ all: async () => [{ scope: { project: 'p' }, folder }], currentFolder: () => folder } as never);
    const failed = await navigation.openCommit(h.head, 'p').catch((e: Error) => e);
    assert.deepEqual(h.ran(), []);
    assert.equal(failed, undefined);
    assert.deepEqual(shown.warnings, []);
    assert.equal(shown.docs.length, 1);
    assert.match(shown.docs[0], /Signed change/);
    assert.match(shown.docs[0], /^\+gamma$/m, 'the diff shows the change itself');
  });

  it("import-git, the project's documents, freshness, the project name and the sharer's name read the repository and run nothing", async () => {
    const store = dirs.make('store');
    const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      const result = await importGitHistory(engine, h.repo, { scope: { project: 'hostile' } });
      assert.equal(result.imported, 3);
      assert.deepEqual(h.ran(), [], 'import-git');
    } finally {
      await engine.close();
    }
    const docs = await readProjectDocuments(h.repo, 'HEAD');
    assert.deepEqual(docs.map((d) => d.path), ['README.md']);
    assert.deepEqual(h.ran(), [], 'project documents');
    const first = git(h.repo, ['rev-list', '--max-parents=0', 'HEAD']).trim();
    const fresh = await GitFreshness.forRepository(h.repo).check(first, ['notes.txt', 'lib/old.ts']);
    assert.equal(fresh?.state, 'changed');
    assert.deepEqual(fresh?.changed_files, ['notes.txt']);
    assert.deepEqual(h.ran(), [], 'freshness');
    await folderProject(h.repo);
    assert.deepEqual(h.ran(), [], 'project name');
    await gitAuthor(h.repo);
    assert.deepEqual(h.ran(), [], "sharer's name");
  });

  it('a partial clone whose promisor remote is a command (ext::): import-git and freshness fetch nothing, run nothing, and import-git says why it stopped', async () => {
    const source = makeRepo([
      { subject: 'One', files: { 'f.txt': 'one\n' }, time: T0 },
      { subject: 'Two', files: { 'f.txt': 'two\n' }, time: T0 + 60 },
    ]).repo;
    dirs.keep(source);
    git(source, ['config', 'uploadpack.allowFilter', 'true']);
    const clone = path.join(dirs.make('partial'), 'clone');
    git(source, ['clone', '-q', '--filter=blob:none', '--no-checkout', `file://${source}`, clone]);
    git(clone, ['config', 'remote.origin.url', `ext::sh -c touch% ${path.join(h.marks, 'promisor-remote')}`]);
    git(clone, ['config', 'protocol.ext.allow', 'always']);
    const store = dirs.make('store');
    const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      const result = await importGitHistory(engine, clone, { scope: { project: 'partial' } }).catch((e: Error) => e);
      assert.deepEqual(h.ran(), [], 'import-git');
      assert.ok(result instanceof Error, 'the blobs of the diffs are not there to read');
      assert.match(result.message, /partial clone, and Code Memory never fetches what it lacks/);
    } finally {
      await engine.close();
    }
    const first = git(clone, ['rev-list', '--max-parents=0', 'HEAD']).trim();
    await GitFreshness.forRepository(clone).check(first, ['f.txt']);
    assert.deepEqual(h.ran(), [], 'freshness');
  });

  it("GIT_* variables of the caller's environment that name commands, config or another repository (a git hook's GIT_DIR): every part reads the repository named and runs nothing", async () => {
    const other = makeRepo([{ subject: 'Elsewhere', files: { 'x.txt': 'x\n' }, time: T0 }]).repo;
    dirs.keep(other);
    const env = { ...h.env, GIT_DIR: path.join(other, '.git'), GIT_WORK_TREE: other, GIT_INDEX_FILE: path.join(other, '.git', 'index') };
    const first = git(h.repo, ['rev-list', '--max-parents=0', 'HEAD']).trim();
    const folder = { uri: Uri.file(h.repo), name: 'hostile', index: 0 };
    const navigation = new Navigation({ all: async () => [{ scope: { project: 'p' }, folder }], currentFolder: () => folder } as never);
    const store = dirs.make('store');
    const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      await withEnv(env, async () => {
        assert.equal((await commitDetails(h.repo, h.head))?.subject, 'Signed change', 'commitDetails');
        assert.deepEqual(h.ran(), [], 'commitDetails');
        await navigation.openCommit(h.head, 'p').catch(() => undefined);
        assert.deepEqual(h.ran(), [], 'openCommit');
        assert.deepEqual(shown.warnings, []);
        assert.match(shown.docs[0] ?? '', /Signed change/);
        assert.deepEqual([...(await gitIgnoredByRepository(h.repo, ['notes.txt']))], []);
        assert.equal((await importGitHistory(engine, h.repo, { scope: { project: 'env' }, documents: false })).imported, 3);
        assert.deepEqual(h.ran(), [], 'import-git');
        assert.equal((await GitFreshness.forRepository(h.repo).check(first, ['notes.txt']))?.state, 'changed');
        await gitAuthor(h.repo);
        await folderProject(h.repo);
      });
    } finally {
      await engine.close();
    }
    assert.deepEqual(h.ran(), []);
  });

  it("a program named git in the repository's folder is never the git run, also from inside that folder (Windows looks in the current folder first; here PATH names it)", async () => {
    const fake = path.join(h.repo, 'git');
    fs.writeFileSync(fake, `#!/bin/sh\ntouch '${path.join(h.marks, 'git-in-repository')}'\nexit 1\n`, { mode: 0o755 });
    const store = dirs.make('store');
    const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    const cwd = process.cwd();
    try {
      const imported = await withEnv({ PATH: `.${path.delimiter}${process.env.PATH ?? ''}` }, async () => {
        await gitIgnoredByRepository(h.repo, ['notes.txt']);
        await gitAuthor(h.repo);
        await commitDetails(h.repo, h.head);
        await renameContent([{ kind: 'delete', folder: Uri.file(h.repo).toString(), path: 'a/x.ts' }, { kind: 'create', folder: Uri.file(h.repo).toString(), path: 'b/x.ts' }] as never);
        // The CLI run from inside the repository: `code-memory import-git .`
        process.chdir(h.repo);
        return importGitHistory(engine, '.', { scope: { project: 'from-inside' }, documents: false }).catch((e: Error) => e);
      });
      assert.deepEqual(h.ran(), []);
      assert.ok(!(imported instanceof Error), String(imported));
      assert.equal(imported.imported, 3);
    } finally {
      process.chdir(cwd);
      await engine.close();
      fs.rmSync(fake);
    }
  });
});

describe('git missing, or the folder gone: a clear answer, never a crash', function () {
  this.timeout(120_000);
  const dirs = tempDirs();
  after(() => dirs.removeAll());
  beforeEach(() => {
    shown.docs.length = 0;
    shown.warnings.length = 0;
  });

  it('no git on PATH: capture reads nothing, the sidebar says to install git', async () => {
    const { repo, shas } = makeRepo([{ subject: 'One', files: { 'a.txt': 'a\n' }, time: T0 }]);
    dirs.keep(repo);
    const folder = { uri: Uri.file(repo), name: 'repo', index: 0 };
    const navigation = new Navigation({ all: async () => [{ scope: { project: 'p' }, folder }], currentFolder: () => folder } as never);
    await withEnv({ PATH: dirs.make('empty-bin') }, async () => {
      assert.equal(await commitDetails(repo, shas[0]), undefined);
      assert.deepEqual([...(await gitIgnoredByRepository(repo, ['a.txt']))], []);
      await navigation.openCommit(shas[0], 'p');
    });
    assert.deepEqual(shown.docs, []);
    assert.equal(shown.warnings.length, 1);
    assert.match(shown.warnings[0], /Could not run git: .*Install git/);
  });

  it('the folder deleted: the sidebar says it is gone (not that the commit was never fetched); capture and freshness answer nothing', async () => {
    const { repo, shas } = makeRepo([{ subject: 'One', files: { 'a.txt': 'a\n' }, time: T0 }]);
    const freshness = GitFreshness.forRepository(repo);
    fs.rmSync(repo, { recursive: true, force: true });
    const folder = { uri: Uri.file(repo), name: 'repo', index: 0 };
    const navigation = new Navigation({ all: async () => [{ scope: { project: 'p' }, folder }], currentFolder: () => folder } as never);
    await navigation.openCommit(shas[0], 'p');
    assert.equal(shown.warnings.length, 1, JSON.stringify(shown.warnings));
    assert.match(shown.warnings[0], /Folder not found: .*moved or deleted/);
    assert.equal(await commitDetails(repo, shas[0]), undefined);
    assert.equal((await freshness.check(shas[0], ['a.txt']))?.state, 'unknown');
  });
});
