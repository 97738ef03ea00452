// Paths from Windows and macOS, tested on any OS: path.win32 / path.posix are passed explicitly,
// and case-insensitive comparison is switched on the way it is on NTFS and APFS.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { caseInsensitiveFileSystem, isSameOrInside, slashPath, storedPath, workspaceRelativePath } from '../../src/core/capture/paths';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { defaultStoreUri, isLocalUri, localPath } from '../../src/core/store/location';
import { relativePathIn } from '../../src/extension/capture/recorder';

describe('paths: one spelling on every OS', () => {
  it('knows which platforms ignore case in file names', () => {
    assert.equal(caseInsensitiveFileSystem('win32'), true);
    assert.equal(caseInsensitiveFileSystem('darwin'), true);
    assert.equal(caseInsensitiveFileSystem('linux'), false);
  });

  it('writes Windows paths, file-URI paths and POSIX paths in one form', () => {
    assert.equal(slashPath('C:\\Users\\Ana\\app\\src\\main.ts'), 'c:/Users/Ana/app/src/main.ts');
    assert.equal(slashPath('/C:/Users/Ana/app/'), 'c:/Users/Ana/app');
    assert.equal(slashPath('/c:/Users/Ana/app/src/../lib/x.ts'), 'c:/Users/Ana/app/lib/x.ts');
    assert.equal(slashPath('c:\\'), 'c:/');
    assert.equal(slashPath('\\\\server\\share\\repo\\a.ts'), '//server/share/repo/a.ts');
    assert.equal(slashPath('/Users/ana/app//src/'), '/Users/ana/app/src');
  });

  it('makes Windows files workspace-relative with forward slashes, ignoring case and drive-letter spelling', () => {
    const folder = 'C:\\Users\\Ana\\Projects\\App';
    assert.equal(workspaceRelativePath(folder, 'C:\\Users\\Ana\\Projects\\App\\src\\Cache.ts', true), 'src/Cache.ts');
    // VS Code's URI path of the same file: lower-case drive, forward slashes, other case.
    assert.equal(workspaceRelativePath(folder, '/c:/users/ana/projects/app/src/Cache.ts', true), 'src/Cache.ts');
    assert.equal(workspaceRelativePath('/c:/Users/Ana/Projects/App/', 'c:/USERS/ana/projects/APP/docs/Read Me.md', true), 'docs/Read Me.md');
    assert.equal(workspaceRelativePath(folder, 'C:\\Users\\Ana\\Projects\\AppOther\\x.ts', true), undefined);
    assert.equal(workspaceRelativePath(folder, 'D:\\Users\\Ana\\Projects\\App\\x.ts', true), undefined);
    assert.equal(workspaceRelativePath(folder, folder, true), undefined);
    assert.equal(workspaceRelativePath(folder, 'C:\\Users\\Ana\\Projects\\App\\..\\Secret\\x.ts', true), undefined);
    assert.equal(workspaceRelativePath('\\\\server\\share\\repo', '\\\\SERVER\\share\\repo\\src\\a.ts', true), 'src/a.ts');
  });

  it('makes macOS files workspace-relative, ignoring case (APFS) but keeping the file\'s own spelling', () => {
    assert.equal(workspaceRelativePath('/Users/ana/Code/App', '/Users/ana/code/app/Sources/AppDelegate.swift', true), 'Sources/AppDelegate.swift');
    assert.equal(workspaceRelativePath('/Users/ana/Code/App', '/Users/ana/Code/Application/x.swift', true), undefined);
  });

  it('keeps case significant on Linux', () => {
    assert.equal(workspaceRelativePath('/home/ana/app', '/home/ana/App/src/a.ts', false), undefined);
    assert.equal(workspaceRelativePath('/home/ana/app', '/home/ana/app/src/a.ts', false), 'src/a.ts');
  });

  it('tells whether a folder is inside a repository root, as the git capture asks', () => {
    assert.equal(isSameOrInside('C:\\repo', '/c:/Repo/packages/web', true), true);
    assert.equal(isSameOrInside('/c:/repo', 'C:\\REPO', true), true);
    assert.equal(isSameOrInside('/Users/ana/repo', '/Users/ana/repo-other', true), false);
    assert.equal(isSameOrInside('/home/ana/repo', '/home/ana/Repo/web', false), false);
  });

  it('stores paths sent by agents and hooks with forward slashes', () => {
    assert.equal(storedPath('src\\app\\main.ts'), 'src/app/main.ts');
    assert.equal(storedPath('.\\src\\a.ts'), 'src/a.ts');
    assert.equal(storedPath('./src//a.ts'), 'src/a.ts');
    assert.equal(storedPath('src/dir/'), 'src/dir');
    assert.equal(storedPath('C:\\Users\\Ana\\a.ts'), 'C:/Users/Ana/a.ts');
    assert.equal(storedPath('\\\\server\\share\\a.ts'), '//server/share/a.ts');
  });

  it('relativePathIn (the extension\'s locator) returns forward-slash paths and skips noise', () => {
    const folder = { uri: { path: '/home/ana/app' } } as never;
    assert.equal(relativePathIn(folder, { path: '/home/ana/app/src/a.ts' } as never), 'src/a.ts');
    assert.equal(relativePathIn(folder, { path: '/home/ana/app/node_modules/x/index.js' } as never), undefined);
    assert.equal(relativePathIn(folder, { path: '/home/ana/app2/a.ts' } as never), undefined);
  });
});

describe('paths: the store location on each OS', () => {
  it('defaults to .code-memory/store in the user\'s home on Windows, macOS and Linux', () => {
    assert.equal(defaultStoreUri({}, 'C:\\Users\\Ana', path.win32), 'C:\\Users\\Ana\\.code-memory\\store');
    assert.equal(defaultStoreUri({}, '/Users/ana', path.posix), '/Users/ana/.code-memory/store');
    assert.equal(defaultStoreUri({}, '/home/ana', path.posix), '/home/ana/.code-memory/store');
    assert.equal(defaultStoreUri({ CODE_MEMORY_STORE: ' D:\\memory ' }, 'C:\\Users\\Ana', path.win32), 'D:\\memory');
  });

  it('treats drive paths and file URIs as local folders, and object storage as remote', () => {
    assert.equal(isLocalUri('C:\\Users\\Ana\\.code-memory\\store'), true);
    assert.equal(isLocalUri('c:/memory'), true);
    assert.equal(isLocalUri('file:///C:/memory'), true);
    assert.equal(isLocalUri('/Users/ana/memory'), true);
    assert.equal(isLocalUri('s3://team/memory'), false);
    assert.equal(isLocalUri('az://team/memory'), false);
  });

  it('turns file URIs into the folder of each OS', () => {
    assert.equal(localPath('file:///C:/Users/Ana/My%20Memory', 'win32'), 'C:\\Users\\Ana\\My Memory');
    assert.equal(localPath('C:/Users/Ana/memory', 'win32'), 'C:\\Users\\Ana\\memory');
    assert.equal(localPath('file:///Users/ana/My%20Memory', 'darwin'), '/Users/ana/My Memory');
    assert.equal(localPath('/Users/ana/memory/', 'darwin'), '/Users/ana/memory');
  });
});

describe('paths: what reaches the store', function () {
  this.timeout(60_000);
  let dir: string;
  let engine: MemoryEngine;
  const scope = { project: 'acme/app' };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-paths-'));
    engine = await MemoryEngine.open({ storeUri: path.join(dir, 'store'), embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, batchDelayMs: 20 });
  });
  afterEach(async () => {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('stores Windows-style paths from an agent with forward slashes, findable by the forward-slash path', async () => {
    const [o] = await engine.observe(
      [{ type: 'edit', title: 'Edited the cache', files_modified: ['src\\cache\\lru.ts', '.\\src\\cache\\lru.ts'], files_read: ['config\\.env.local', 'docs\\cache.md'] }],
      scope,
    );
    assert.deepEqual(JSON.parse(o.files_modified ?? '[]'), ['src/cache/lru.ts']);
    // The secret file is dropped whichever slash it was sent with.
    assert.deepEqual(JSON.parse(o.files_read ?? '[]'), ['docs/cache.md']);
    for (const asked of ['src/cache/lru.ts', 'src\\cache\\lru.ts']) {
      const hits = await engine.search('cache', { scope, filter: { files: [asked] } });
      assert.ok(hits.some((h) => h.cell.source_kind === 'observation' && h.cell.source_id === o.id), `not found by files: ['${asked}']`);
    }
    const memory = await engine.remember({ title: 'LRU cache', text: 'Evict by insertion order', files: ['src\\cache\\lru.ts'] }, scope);
    assert.deepEqual(JSON.parse(memory.files ?? '[]'), ['src/cache/lru.ts']);
  });

  it('imports a git history whose paths have folders, spaces and non-ASCII names as plain forward-slash paths', async () => {
    const repo = path.join(dir, 'repo');
    execFileSync('git', ['init', '-q', '-b', 'main', repo]);
    fs.mkdirSync(path.join(repo, 'docs', 'Guía de estilo'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'docs', 'Guía de estilo', 'Índice.md'), '# Índice\n');
    execFileSync('git', ['-C', repo, '-c', 'user.name=T', '-c', 'user.email=t@test.invalid', 'add', '.']);
    execFileSync('git', ['-C', repo, '-c', 'user.name=T', '-c', 'user.email=t@test.invalid', 'commit', '-q', '-m', 'Add the style guide index']);
    const result = await importGitHistory(engine, repo, { scope });
    assert.equal(result.imported, 1);
    const [commit] = await engine.listObservations(scope, { limit: 10 });
    assert.deepEqual(JSON.parse(commit.files_modified ?? '[]'), ['docs/Guía de estilo/Índice.md']);
  });
});
