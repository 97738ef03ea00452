// What capture's enrichment (enrich.ts) and batch write (captureService.ts) keep apart and
// keep whole, through the real capture (vscode stubbed), a real engine and real git
// repositories (captureHarness.ts): two repositories in one window with the same file path,
// very long paths, odd file names and merges in commits, renames by content, submodules.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness, brief, git, makeRepo, runInTerminal, tmp, writeFiles } from './captureHarness';

const A0 = 'export function price(n: number) {\n  return n * 2;\n}\n';

describe('capture enrichment: batches with several folders and odd input', function () {
  this.timeout(120_000);
  let root: string;
  let h: Harness | undefined;

  beforeEach(() => {
    root = tmp('cm-enrich-');
  });
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('two repositories in one window, each with src/index.ts edited in one batch: each edit keeps its own diff', async () => {
    const shop = path.join(root, 'shop');
    const api = path.join(root, 'api');
    makeRepo(shop, { 'src/index.ts': 'export const shopRate = 1;\n' });
    makeRepo(api, { 'src/index.ts': 'export const apiTimeout = 10;\n' });
    h = await new Harness({ folders: [shop, api] }).start();
    const d1 = h.open(path.join(shop, 'src/index.ts'));
    h.type(d1, 'export const shopRate = 2;\nexport const shopDiscount = 5;\n');
    h.save(d1);
    const d2 = h.open(path.join(api, 'src/index.ts'));
    h.type(d2, 'export const apiTimeout = 30;\nexport const apiRetries = 3;\n');
    h.save(d2);
    await h.flush();
    const s = (await h.observations(await h.project(0))).filter((o) => o.type === 'edit');
    const a = (await h.observations(await h.project(1))).filter((o) => o.type === 'edit');
    assert.equal(s.length, 1, brief(s));
    assert.equal(a.length, 1, brief(a));
    assert.match(s[0].narrative ?? '', /shopDiscount/, `shop's edit: ${s[0].narrative}`);
    assert.doesNotMatch(s[0].narrative ?? '', /api/, `shop's edit: ${s[0].narrative}`);
    assert.match(a[0].narrative ?? '', /apiRetries/, `api's edit: ${a[0].narrative}`);
    assert.doesNotMatch(a[0].narrative ?? '', /shop/, `api's edit: ${a[0].narrative}`);
    assert.doesNotMatch(`${a[0].title}${a[0].facts}`, /shop/, `api's edit: ${a[0].title} ${a[0].facts}`);
  });

  it('a file with a path of 1,100 characters edited in the same batch as a command: both are stored, and the edit grows in place', async () => {
    const ws = path.join(root, 'deep');
    makeRepo(ws, { 'README.md': 'x\n' });
    const rel = `${Array.from({ length: 11 }, (_, i) => `${String(i).padStart(2, '0')}${'d'.repeat(97)}`).join('/')}/price.ts`;
    writeFiles(ws, { [rel]: A0 });
    h = await new Harness({ folders: [ws] }).start();
    const doc = h.open(path.join(ws, rel));
    h.type(doc, A0.replace('n * 2', 'n * 3'));
    h.save(doc);
    await runInTerminal(h, 'npm run build', ws, 77, 0, 'ok\n');
    await h.flush();
    h.type(doc, A0.replace('n * 2', 'n * 4'));
    h.save(doc);
    await h.flush();
    const obs = await h.observations(await h.project());
    const stats = JSON.stringify(h.capture.queue.stats);
    assert.deepEqual(obs.filter((o) => o.type !== 'read').map((o) => o.type).sort(), ['edit', 'terminal'], `${brief(obs)}\n${stats}`);
    const edit = obs.find((o) => o.type === 'edit')!;
    assert.match(edit.narrative ?? '', /n \* 4/, brief(obs));
    assert.equal(h.capture.queue.stats.errors, 0, stats);
  });

  it('an observation the engine refuses is left out and counted; the rest of its batch is stored', async () => {
    const ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/price.ts': A0 });
    h = await new Harness({ folders: [ws] }).start();
    const engine = h.engine;
    const capture = engine.capture.bind(engine);
    engine.capture = async (list, scope) => {
      if (list.some((o) => /refuse-me/.test(o.title ?? ''))) throw new Error('an observation the store cannot take');
      return capture(list, scope);
    };
    const doc = h.open(path.join(ws, 'src/price.ts'));
    h.type(doc, A0.replace('n * 2', 'n * 3'));
    h.save(doc);
    await runInTerminal(h, 'echo refuse-me', ws, 78, 0, '');
    await runInTerminal(h, 'npm run build', ws, 79, 0, 'ok\n');
    await h.flush();
    const obs = await h.observations(await h.project());
    const stats = h.capture.queue.stats;
    assert.deepEqual(obs.filter((o) => o.type !== 'read').map((o) => o.title).sort(), ['Edited src/price.ts', '`npm run build` succeeded'].sort(), `${brief(obs)}\n${JSON.stringify(stats)}`);
    assert.equal(stats.errors, 1, JSON.stringify(stats));
    assert.equal(stats.dropped, 0, JSON.stringify(stats));
    assert.match(stats.lastError ?? '', /refused/);
  });

  it('a merge commit (--no-ff) records the files it brought in against its first parent', async () => {
    const ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/price.ts': A0 });
    h = await new Harness({ folders: [ws] }).start();
    const project = await h.project();
    git(ws, 'checkout', '-q', '-b', 'feature');
    writeFiles(ws, { 'src/feature.ts': 'export const f = 1;\n' });
    git(ws, 'add', '-A');
    git(ws, 'commit', '-q', '-m', 'Add feature');
    git(ws, 'checkout', '-q', 'main');
    writeFiles(ws, { 'src/main-only.ts': 'export const m = 1;\n' });
    git(ws, 'add', '-A');
    git(ws, 'commit', '-q', '-m', 'Main work');
    h.gitRefresh();
    await h.flush();
    git(ws, 'merge', '-q', '--no-ff', '-m', 'Merge feature', 'feature');
    h.gitRefresh();
    await h.flush();
    const obs = await h.observations(project);
    const merge = obs.find((o) => o.title === 'Merge feature');
    assert.ok(merge, brief(obs));
    assert.deepEqual(JSON.parse(merge.files_modified ?? '[]'), ['src/feature.ts'], brief([merge]));
    assert.match(merge.facts ?? '', /\b1 file\(s\) changed/, brief([merge]));
  });

  it('a commit of files whose names hold a double quote or a tab lists them by their names', async () => {
    const ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/price.ts': A0 });
    h = await new Harness({ folders: [ws] }).start();
    const project = await h.project();
    writeFiles(ws, { 'src/say "hi".ts': 'export const hi = 1;\n', 'src/tab\tname.ts': 'export const t = 1;\n', 'src/café.ts': 'export const c = 1;\n' });
    git(ws, 'add', '-A');
    git(ws, 'commit', '-q', '-m', 'Add odd names');
    h.gitRefresh();
    await h.flush();
    const obs = await h.observations(project);
    const c = obs.find((o) => o.type === 'commit');
    assert.ok(c, brief(obs));
    const files = JSON.parse(c.files_modified ?? '[]') as string[];
    assert.deepEqual(files.sort(), ['src/café.ts', 'src/say "hi".ts', 'src/tab\tname.ts'].sort());
  });

  it('a delete and a create of the same file name are a rename only when the file moved (git mv, mv), not for two unrelated index.ts', async () => {
    const ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/old/index.ts': 'export const old = 1;\n', 'src/util/util.ts': 'export const util = 1;\n', 'src/lib/helpers.ts': 'export const helpers = 1;\n' });
    h = await new Harness({ folders: [ws] }).start();
    const project = await h.project();
    // Unrelated: one index.ts deleted, another with other content created.
    fs.rmSync(path.join(ws, 'src/old/index.ts'));
    writeFiles(ws, { 'src/new-widget/index.ts': 'export const widget = 2;\n' });
    // Moved by git and by mv: the same content under a new folder.
    fs.mkdirSync(path.join(ws, 'src/shared'), { recursive: true });
    git(ws, 'mv', 'src/util/util.ts', 'src/shared/util.ts');
    fs.mkdirSync(path.join(ws, 'src/common'), { recursive: true });
    fs.renameSync(path.join(ws, 'src/lib/helpers.ts'), path.join(ws, 'src/common/helpers.ts'));
    for (const [kind, p] of [
      ['delete', 'src/old/index.ts'],
      ['create', 'src/new-widget/index.ts'],
      ['delete', 'src/util/util.ts'],
      ['create', 'src/shared/util.ts'],
      ['delete', 'src/lib/helpers.ts'],
      ['create', 'src/common/helpers.ts'],
    ] as const) h.fsEvent(kind, path.join(ws, p));
    await h.flush();
    const titles = (await h.observations(project)).map((o) => o.title).sort();
    assert.deepEqual(titles, [
      'Created src/new-widget/index.ts',
      'Deleted src/old/index.ts',
      'Renamed src/lib/helpers.ts to src/common/helpers.ts',
      'Renamed src/util/util.ts to src/shared/util.ts',
    ]);
  });

  it('files created in a submodule in the same batch as build output: what git ignores (in the folder and in the submodule) is left out, the rest kept', async () => {
    const lib = path.join(root, 'lib');
    makeRepo(lib, { 'index.js': 'module.exports = 1;\n', '.gitignore': 'build/\n' });
    const ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/price.ts': A0, '.gitignore': 'dist/\n' });
    git(ws, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'vendor/lib');
    git(ws, 'commit', '-q', '-m', 'add lib');
    h = await new Harness({ folders: [ws], repoRoots: [ws] }).start();
    const files = ['dist/price.js', 'vendor/lib/extra.js', 'vendor/lib/build/out.js', 'src/tax.ts'];
    writeFiles(ws, Object.fromEntries(files.map((f) => [f, 'exports.x = 1;\n'])));
    for (const f of files) h.fsEvent('create', path.join(ws, f));
    await h.flush();
    const obs = await h.observations(await h.project());
    assert.deepEqual(obs.map((o) => o.title).sort(), ['Created src/tax.ts', 'Created vendor/lib/extra.js'], brief(obs));
  });
});
