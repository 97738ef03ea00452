// Capture across sessions, reloads, renames, windows and repositories, each through the real
// capture (vscode stubbed), a real engine and real git repositories (captureHarness.ts): a session the engine ended when idle
// leaves no stale edit baseline, a file rewritten on disk while open is stored as what happened,
// a renamed unsaved file is named by its new path, and the queue is bounded by bytes as well;
// "Revert File" of unsaved edits is no change on disk, and one repository in two windows through
// different folders (two packages, or the root and a package) stores its file and checkout events once.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CaptureQueue } from '../../src/extension/capture/captureQueue';
import type { CaptureEvent } from '../../src/extension/capture/events';
import { Harness, Windows, Uri, brief, git, makeRepo, runInTerminal, tmp, writeFiles } from './captureHarness';

const A0 = 'export function price(n: number) {\n  return n * 2;\n}\n';

describe('capture across sessions and windows', function () {
  this.timeout(120_000);
  let root: string;
  let ws: string;
  let h: Harness | undefined;

  beforeEach(() => {
    root = tmp('cm-left-');
    ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/price.ts': A0, 'src/other.ts': 'export const other = 1;\n' });
  });
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('after the engine ends a session as idle, the next edit of a file holds only the change made since', async () => {
    h = await new Harness({ folders: [ws], sessionIdleMs: 1500 }).start();
    const project = await h.project();
    const doc = h.open(path.join(ws, 'src/price.ts'));
    h.type(doc, A0.replace('n * 2', 'n * 3'));
    h.save(doc);
    await h.flush();
    const [first] = await h.observations(project);
    assert.ok(first, 'the first edit is stored');
    // Longer than the idle time plus the engine's idle check (every second here): the engine ends
    // the session on its own. (Its summary of one edit may be left out, so that is not waited for.)
    await new Promise((r) => setTimeout(r, 4500));
    h.type(doc, doc.text.replace('export function price', 'export function finalPrice'));
    h.save(doc);
    await h.flush();
    const later = (await h.observations(project)).filter((o) => o.type === 'edit' && o.memory_session_id !== first.memory_session_id);
    assert.equal(later.length, 1, `the later edit is in a new session:\n${brief(await h.observations(project))}`);
    assert.match(later[0].narrative ?? '', /finalPrice/, later[0].narrative ?? '');
    assert.doesNotMatch(later[0].narrative ?? '', /n \* 2/, `the first session's change is not repeated:\n${later[0].narrative}`);
    assert.match(later[0].subtitle ?? '', /\+1 −1 lines/, later[0].subtitle ?? '');
  });

  it('a file rewritten on disk while open (the editor reloads it) is stored as changed on disk, not as an empty edit', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const project = await h.project();
    const doc = h.open(path.join(ws, 'src/price.ts'));
    // A formatter run in the terminal rewrites the file; the editor reloads the document.
    const formatted = A0.replace('return n * 2;', 'return n * 2 ; // FORMATTED');
    fs.writeFileSync(path.join(ws, 'src/price.ts'), formatted);
    h.fsEvent('change', path.join(ws, 'src/price.ts'));
    h.type(doc, formatted, false);
    // Saved again without a change (Ctrl+S out of habit, or auto save).
    h.save(doc);
    await h.flush();
    const obs = await h.observations(project);
    assert.deepEqual(obs.filter((o) => / 0 hunks/.test(o.subtitle ?? '')).map((o) => `${o.title} | ${o.subtitle}`), [], brief(obs));
    const changed = obs.filter((o) => (o.files_modified ?? '').includes('src/price.ts'));
    assert.deepEqual(changed.map((o) => o.title), ['Changed on disk: src/price.ts'], brief(obs));
  });

  it('`git checkout` of an open file that was edited and saved is stored as changed on disk, not as an edit of 0 hunks', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const project = await h.project();
    const doc = h.open(path.join(ws, 'src/price.ts'));
    h.type(doc, A0.replace('n * 2', 'n * 3'));
    h.save(doc);
    await h.flush();
    git(ws, 'checkout', '--', 'src/price.ts');
    h.fsEvent('change', path.join(ws, 'src/price.ts'));
    h.type(doc, A0, false);
    h.save(doc);
    await h.endSession(0);
    const obs = await h.observations(project);
    assert.deepEqual(obs.filter((o) => / 0 hunks/.test(o.subtitle ?? '')).map((o) => `${o.title} | ${o.subtitle}`), [], brief(obs));
    // The edit made in the editor stays as it was; the checkout that undid it is stored with its diff.
    assert.ok(obs.some((o) => o.title === 'Edited src/price.ts' && /n \* 3/.test(o.narrative ?? '') && /1 hunk/.test(o.subtitle ?? '')), brief(obs));
    assert.ok(obs.some((o) => o.title === 'Changed on disk: src/price.ts' && /n \* 2/.test(o.narrative ?? '') && /\+1 −1 lines/.test(o.subtitle ?? '')), brief(obs));
  });

  it('an unsaved file renamed in the editor is named by its new path in the later observation', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const project = await h.project();
    const oldPath = path.join(ws, 'src/price.ts');
    const newPath = path.join(ws, 'src/cost.ts');
    const doc = h.open(oldPath);
    h.type(doc, A0.replace('n * 2', 'n * 5'));
    // What VS Code does (WorkingCopyFileService.move): it keeps the unsaved text, reverts and
    // closes the old document, moves the file, opens the new path with the unsaved text, and
    // then reports the rename.
    const unsaved = doc.text;
    h.type(doc, A0, false);
    h.close(doc);
    fs.renameSync(oldPath, newPath);
    const moved = h.open(newPath, { text: unsaved });
    moved.isDirty = true;
    h.e.renameFiles.fire({ files: [{ oldUri: Uri.file(oldPath), newUri: Uri.file(newPath) }] });
    h.type(moved, moved.text.replace('export function price', 'export function cost'));
    await h.endSession(0);
    const obs = await h.observations(project);
    const edits = obs.filter((o) => o.type === 'edit');
    assert.deepEqual(edits.map((o) => o.title), ['Unsaved edits in src/cost.ts'], brief(obs));
    assert.deepEqual(obs.filter((o) => o.type !== 'rename' && (o.files_modified ?? '').includes('src/price.ts')).map((o) => o.title), [], brief(obs));
    assert.match(edits[0].narrative ?? '', /n \* 5/, edits[0].narrative ?? '');
  });

  it('the queue is bounded by bytes: huge events are dropped (oldest first) and counted, and push never blocks', async () => {
    const written: CaptureEvent[] = [];
    const queue = new CaptureQueue(
      async (events) => {
        written.push(...events);
        return events.length;
      },
      { delayMs: 60_000, maxPending: 5000, maxPendingBytes: 1_000_000 },
    );
    const big = 'x'.repeat(200_000);
    const started = Date.now();
    for (let i = 0; i < 50; i++) {
      queue.push({ kind: 'edit', folder: 'file:///ws', path: `src/f${i}.ts`, uri: `file:///ws/src/f${i}.ts`, lines: [], changes: 1, saved: true, before: big, after: big + i, saves: 1, problemsBefore: [], at: i });
    }
    assert.ok(Date.now() - started < 1000, 'push stays O(1)-ish');
    assert.ok(queue.bytes <= 1_000_000, `${queue.bytes} bytes waiting`);
    assert.ok(queue.stats.dropped >= 45, `${queue.stats.dropped} dropped`);
    assert.match(queue.stats.lastError ?? '', /dropped/);
    // A small event still gets in; the newest big ones are kept.
    queue.push({ kind: 'create', folder: 'file:///ws', path: 'src/small.ts', at: 99 });
    await queue.flush();
    assert.equal(queue.bytes, 0, 'written events no longer count');
    assert.ok(written.some((e) => e.kind === 'create'));
    assert.ok(written.some((e) => e.kind === 'edit' && e.path === 'src/f49.ts'));
    assert.ok(!written.some((e) => e.kind === 'edit' && e.path === 'src/f0.ts'));
    assert.equal(queue.stats.dropped + written.length, 51);
    // One event larger than the whole bound is not kept either.
    queue.push({ kind: 'terminal', folder: 'file:///ws', command: 'cat', cwd: null, exitCode: 0, output: 'y'.repeat(2_000_000), at: 100 });
    assert.equal(queue.size, 0);
    queue.dispose();
  });
});

describe('capture across sessions and windows: two windows', function () {
  this.timeout(120_000);
  let root: string;
  let ws: string;
  const windows = new Windows(() => path.join(root, 'store'));
  const window = (): Promise<Harness> => windows.open({ folders: [ws] });

  beforeEach(() => {
    root = tmp('cm-left2-');
    ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/price.ts': A0 });
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('two windows on one folder store a file created on disk and a branch checkout once', async () => {
    const a = await window();
    const b = await window();
    writeFiles(ws, { 'src/fresh.ts': 'export {};\n' });
    a.fsEvent('create', path.join(ws, 'src/fresh.ts'));
    b.fsEvent('create', path.join(ws, 'src/fresh.ts'));
    git(ws, 'checkout', '-q', '-b', 'feature/x');
    a.gitRefresh();
    b.gitRefresh();
    await a.flush();
    await b.flush();
    const obs = await a.observations(await a.project());
    assert.deepEqual(obs.map((o) => o.title).sort(), ['Created src/fresh.ts', 'Switched to feature/x'], brief(obs));
  });

  it('when the window holding a folder closes, the other window records its file events', async () => {
    const a = await window();
    const b = await window();
    writeFiles(ws, { 'src/first.ts': 'export {};\n' });
    a.fsEvent('create', path.join(ws, 'src/first.ts'));
    await a.flush();
    b.fsEvent('create', path.join(ws, 'src/first.ts'));
    await b.flush();
    // As at deactivation: what is pending is written, then the folder's lease is given up.
    await a.capture.close(1000);
    await windows.close(a);
    writeFiles(ws, { 'src/later.ts': 'export {};\n' });
    b.fsEvent('create', path.join(ws, 'src/later.ts'));
    await b.flush();
    const obs = await b.observations(await b.project());
    assert.deepEqual(obs.map((o) => o.title).sort(), ['Created src/first.ts', 'Created src/later.ts'], brief(obs));
  });
});

describe('capture across sessions and windows: a monorepo opened as one folder per package', function () {
  this.timeout(120_000);
  let root: string;
  let mono: string;
  let h: Harness | undefined;

  beforeEach(() => {
    root = tmp('cm-left3-');
    mono = path.join(root, 'mono');
    makeRepo(mono, {
      '.gitignore': 'dist/\n',
      'packages/a/package.json': '{ "name": "a" }\n',
      'packages/a/src/index.ts': 'export const a = 1;\n',
      'packages/b/package.json': '{ "name": "b" }\n',
      'packages/b/src/index.ts': 'export const b = 1;\n',
    });
  });
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('files of two packages with the same path in their folder are stored by their path in the repository', async () => {
    const a = path.join(mono, 'packages/a');
    const b = path.join(mono, 'packages/b');
    h = await new Harness({ folders: [a, b], repoRoots: [mono] }).start();
    assert.equal(await h.project(0), await h.project(1), 'one repository, one project');
    for (const [dir, name] of [[a, 'a'], [b, 'b']]) {
      const doc = h.open(path.join(dir, 'src/index.ts'));
      h.type(doc, `export const ${name} = 2;\n`);
      h.save(doc);
    }
    writeFiles(a, { 'dist/index.js': 'x', 'src/new.ts': 'export {};\n' });
    h.fsEvent('create', path.join(a, 'dist/index.js'));
    h.fsEvent('create', path.join(a, 'src/new.ts'));
    await h.flush();
    const obs = await h.observations(await h.project(0));
    assert.deepEqual(obs.map((o) => o.title).sort(), ['Created packages/a/src/new.ts', 'Edited packages/a/src/index.ts', 'Edited packages/b/src/index.ts'], brief(obs));
    assert.match(obs.find((o) => o.title === 'Edited packages/b/src/index.ts')?.narrative ?? '', /b = 2/);
    // Both folders are on the repository's branch, and a commit is stored once, not once per folder.
    assert.deepEqual(obs.map((o) => o.branch), ['main', 'main', 'main'], brief(obs));
    git(mono, 'commit', '-q', '-am', 'Bump both packages');
    h.gitRefresh();
    await h.flush();
    const commits = (await h.observations(await h.project(0))).filter((o) => o.type === 'commit');
    assert.deepEqual(commits.map((o) => o.title), ['Bump both packages']);
  });
});

describe('capture across sessions and windows: a revert of unsaved edits', function () {
  this.timeout(120_000);
  let root: string;
  let ws: string;
  let h: Harness | undefined;

  beforeEach(() => {
    root = tmp('cm-left4-');
    ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/price.ts': A0 });
  });
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('unsaved edits recorded, then reverted in the editor: nothing is stored as changed on disk, and the unsaved edit is told as reverted', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const project = await h.project();
    const doc = h.open(path.join(ws, 'src/price.ts'));
    h.type(doc, A0.replace('n * 2', 'n * 7'));
    // The focus moves away (or the idle checkpoint): the unsaved edit is recorded.
    await h.flush();
    // File: Revert File. The file on disk never changed; the document is clean and equals it.
    assert.equal(fs.readFileSync(path.join(ws, 'src/price.ts'), 'utf8'), A0);
    h.type(doc, A0, false);
    await h.flush();
    const obs = await h.observations(project);
    assert.deepEqual(obs.filter((o) => /Changed on disk/.test(o.title ?? '')).map((o) => `${o.title} | ${o.subtitle}`), [], brief(obs));
    // What was tried is kept, told as reverted; the revert adds no edit of its own.
    assert.deepEqual(obs.map((o) => o.title), ['Reverted unsaved edits in src/price.ts'], brief(obs));
    assert.match(obs[0].narrative ?? '', /n \* 7/, brief(obs));
    // Later a real rewrite on disk is still told from a revert.
    fs.writeFileSync(path.join(ws, 'src/price.ts'), A0.replace('n * 2', 'n * 2 // FORMATTED'));
    h.fsEvent('change', path.join(ws, 'src/price.ts'));
    h.type(doc, A0.replace('n * 2', 'n * 2 // FORMATTED'), false);
    await h.flush();
    const later = await h.observations(project);
    assert.deepEqual(later.filter((o) => /Changed on disk/.test(o.title ?? '')).map((o) => o.title), ['Changed on disk: src/price.ts'], brief(later));
  });
});

describe('capture across sessions and windows: one repository in two windows through different folders', function () {
  this.timeout(120_000);
  let root: string;
  let mono: string;
  const windows = new Windows(() => path.join(root, 'store'));
  /** A window on these folders: its own engine on the one store. */
  const window = (folders: string[]): Promise<Harness> => windows.open({ folders, repoRoots: [mono] });

  beforeEach(() => {
    root = tmp('cm-left5-');
    mono = path.join(root, 'mono');
    makeRepo(mono, {
      'packages/a/package.json': '{ "name": "a" }\n',
      'packages/a/src/index.ts': 'export const a = 1;\n',
      'packages/b/package.json': '{ "name": "b" }\n',
      'packages/b/src/index.ts': 'export const b = 1;\n',
    });
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('packages a and b in two windows: a branch checkout of the repository is stored once', async () => {
    const a = await window([path.join(mono, 'packages/a')]);
    const b = await window([path.join(mono, 'packages/b')]);
    assert.equal(await a.project(), await b.project(), 'control: one repository, one project');
    git(mono, 'checkout', '-q', '-b', 'feature/x');
    a.gitRefresh();
    b.gitRefresh();
    await a.flush();
    await b.flush();
    const obs = (await a.observations(await a.project())).filter((o) => o.type === 'checkout' || /Switched/.test(o.title ?? ''));
    assert.deepEqual(obs.map((o) => o.title), ['Switched to feature/x'], brief(obs));
  });

  it('the repository root and packages/a in two windows: a file created in packages/a is stored once', async () => {
    const whole = await window([mono]);
    const pkg = await window([path.join(mono, 'packages/a')]);
    assert.equal(await whole.project(), await pkg.project(), 'control: one repository, one project');
    writeFiles(mono, { 'packages/a/src/fresh.ts': 'export {};\n' });
    whole.fsEvent('create', path.join(mono, 'packages/a/src/fresh.ts'));
    pkg.fsEvent('create', path.join(mono, 'packages/a/src/fresh.ts'));
    await whole.flush();
    await pkg.flush();
    const obs = await whole.observations(await whole.project());
    assert.deepEqual(obs.map((o) => o.title), ['Created packages/a/src/fresh.ts'], brief(obs));
  });

  it('three windows (packages/a, packages/b, the root): a file created in packages/b is stored once, as is a branch checkout', async () => {
    const pkgA = await window([path.join(mono, 'packages/a')]);
    const pkgB = await window([path.join(mono, 'packages/b')]);
    const whole = await window([mono]);
    writeFiles(mono, { 'packages/b/src/fresh.ts': 'export {};\n' });
    // Each window whose folder holds the file sees it (the package a window does not watch packages/b).
    pkgB.fsEvent('create', path.join(mono, 'packages/b/src/fresh.ts'));
    whole.fsEvent('create', path.join(mono, 'packages/b/src/fresh.ts'));
    git(mono, 'checkout', '-q', '-b', 'feature/three');
    for (const w of [pkgA, pkgB, whole]) w.gitRefresh();
    for (const w of [pkgA, pkgB, whole]) await w.flush();
    const obs = await whole.observations(await whole.project());
    assert.deepEqual(obs.map((o) => o.title).sort(), ['Created packages/b/src/fresh.ts', 'Switched to feature/three'], brief(obs));
  });

  it('while the window on packages/a holds the repository, the root window still records a file in packages/b (which the other does not watch)', async () => {
    const whole = await window([mono]);
    const pkg = await window([path.join(mono, 'packages/a')]);
    writeFiles(mono, { 'packages/a/src/one.ts': 'export {};\n' });
    pkg.fsEvent('create', path.join(mono, 'packages/a/src/one.ts'));
    await pkg.flush();
    whole.fsEvent('create', path.join(mono, 'packages/a/src/one.ts'));
    await whole.flush();
    // Only the root window's watcher sees packages/b (the harness fires both; the package window leaves it out).
    writeFiles(mono, { 'packages/b/src/two.ts': 'export {};\n' });
    pkg.fsEvent('create', path.join(mono, 'packages/b/src/two.ts'));
    whole.fsEvent('create', path.join(mono, 'packages/b/src/two.ts'));
    await pkg.flush();
    await whole.flush();
    const obs = await whole.observations(await whole.project());
    assert.deepEqual(obs.map((o) => o.title).sort(), ['Created packages/a/src/one.ts', 'Created packages/b/src/two.ts'], brief(obs));
  });
});

describe('capture across sessions and windows: two projects in one window', function () {
  this.timeout(120_000);
  let root: string;
  let shop: string;
  let api: string;
  let h: Harness | undefined;

  beforeEach(() => {
    root = tmp('cm-left6-');
    shop = path.join(root, 'shop');
    api = path.join(root, 'api');
    makeRepo(shop, { 'src/price.ts': A0 });
    makeRepo(api, { 'src/a.ts': 'export const a = 1;\n' });
  });
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('a task of one name (npm: test) in each folder, ending in the other order: each task is stored with its own output', async () => {
    h = await new Harness({ folders: [shop, api] }).start();
    const task = (folder: string) => ({ name: 'test', source: 'npm', group: { id: 'test' }, scope: { uri: Uri.file(folder) } });
    const shopTask = task(shop);
    const apiTask = task(api);
    h.e.taskStart.fire({ execution: { task: shopTask }, processId: 501 });
    h.e.taskStart.fire({ execution: { task: apiTask }, processId: 502 });
    const failing = (name: string) => `FAILED tests/test_${name}.py::test_${name} - assert 1 == 2\n1 failed\n`;
    await runInTerminal(h, 'npm test', shop, 501, 1, failing('shop'));
    await runInTerminal(h, 'npm test', api, 502, 1, failing('api'));
    // The api task ends first.
    h.e.taskEnd.fire({ execution: { task: apiTask }, exitCode: 1 });
    h.e.taskEnd.fire({ execution: { task: shopTask }, exitCode: 1 });
    await new Promise((r) => setTimeout(r, 50));
    await h.flush();
    const shopTasks = (await h.observations(await h.project(0))).filter((o) => o.type === 'task');
    const apiTasks = (await h.observations(await h.project(1))).filter((o) => o.type === 'task');
    assert.equal(shopTasks.length, 1, brief(shopTasks));
    assert.equal(apiTasks.length, 1, brief(apiTasks));
    assert.match(shopTasks[0].subtitle ?? '', /test_shop/, brief(shopTasks));
    assert.doesNotMatch(shopTasks[0].subtitle ?? '', /test_api/, brief(shopTasks));
    assert.match(apiTasks[0].subtitle ?? '', /test_api/, brief(apiTasks));
  });
});
