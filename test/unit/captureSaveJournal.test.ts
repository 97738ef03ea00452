// Two windows on one folder: a file saved in one window is stored by it as its edit, and not again
// by the other window (the one holding the folder's lease) as changed on disk; a write by another
// process is still stored. Through the real capture (vscode stubbed), one engine per window on one
// store, and a real git repository (captureHarness.ts); and the journal of saves itself
// (saveJournal.ts): concurrent writers, expiry, a corrupt or huge journal, its bound.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SaveJournal } from '../../src/extension/capture/saveJournal';
import type { Harness } from './captureHarness';
import { Windows, brief, git, makeRepo, tmp, writeFiles } from './captureHarness';

const A0 = 'export function price(n: number) {\n  return n * 2;\n}\n';

describe('capture: saves of another window are not changes on disk', function () {
  this.timeout(120_000);
  let root: string;
  let ws: string;
  let file: string;
  const windows = new Windows(() => path.join(root, 'store'));
  const window = (): Promise<Harness> => windows.open({ folders: [ws] });

  beforeEach(() => {
    root = tmp('cm-saves-');
    ws = path.join(root, 'shop');
    file = path.join(ws, 'src/price.ts');
    makeRepo(ws, { 'src/price.ts': A0 });
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  async function titles(h: Harness): Promise<string[]> {
    return (await h.observations(await h.project())).map((o) => o.title ?? '').sort();
  }

  it('a file saved in window A (not open in B): B, which holds the folder, does not store it as changed on disk', async () => {
    const a = await window();
    const b = await window();
    const doc = a.open(file);
    a.type(doc, A0.replace('n * 2', 'n * 3'));
    a.save(doc);
    await a.flush();
    // B's file watcher sees the save; B has no editor on the file.
    b.fsEvent('change', file);
    await b.flush();
    assert.deepEqual(await titles(a), ['Edited src/price.ts'], brief(await a.observations(await a.project())));
  });

  it('a file saved in window A and open (unchanged) in B, which reloads it: B does not store it as changed on disk', async () => {
    const a = await window();
    const b = await window();
    const docA = a.open(file);
    const docB = b.open(file);
    const edited = A0.replace('n * 2', 'n * 3');
    a.type(docA, edited);
    a.save(docA);
    await a.flush();
    b.fsEvent('change', file);
    b.type(docB, edited, false);
    await b.flush();
    assert.deepEqual(await titles(a), ['Edited src/price.ts'], brief(await a.observations(await a.project())));
  });

  it('a file written by another process (not a window of this product): stored as changed on disk, once', async () => {
    const a = await window();
    const b = await window();
    writeFiles(ws, { 'src/price.ts': A0.replace('n * 2', 'n * 4') });
    a.fsEvent('change', file);
    b.fsEvent('change', file);
    await a.flush();
    await b.flush();
    assert.deepEqual(await titles(a), ['Changed on disk: src/price.ts']);
  });

  it('saved in window A, then `git checkout` of the file before B writes its batch: the checkout is stored as changed on disk', async () => {
    const a = await window();
    const b = await window();
    const doc = a.open(file);
    a.type(doc, A0.replace('n * 2', 'n * 3'));
    a.save(doc);
    await a.flush();
    b.fsEvent('change', file);
    git(ws, 'checkout', '--', 'src/price.ts');
    b.fsEvent('change', file);
    await b.flush();
    const t = await titles(a);
    assert.ok(t.includes('Changed on disk: src/price.ts') && t.includes('Edited src/price.ts'), t.join('\n'));
  });

  it('a save made in window A while its capture is paused: not stored by B as changed on disk either', async () => {
    const a = await window();
    const b = await window();
    await a.capture.setPaused(true);
    const doc = a.open(file);
    a.type(doc, A0.replace('n * 2', 'n * 3 // PAUSED'));
    a.save(doc);
    await a.flush();
    b.fsEvent('change', file);
    await b.flush();
    const obs = await b.observations(await b.project());
    assert.deepEqual(obs.map((o) => o.title), [], brief(obs));
  });
});

describe('the journal of saves', () => {
  let dir: string;
  let work: string;
  let clock: number;
  const journal = (store = 'store-1'): SaveJournal => new SaveJournal(() => store, dir, () => clock);

  beforeEach(() => {
    dir = tmp('cm-journal-');
    work = tmp('cm-journal-files-');
    clock = Date.now();
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
  });

  function write(name: string, text: string): string {
    const p = path.join(work, name);
    fs.writeFileSync(p, text);
    return p;
  }

  /** How many of `files`, seen changed now by window `by`, are saves another window noted. */
  async function saved(files: string[], by = journal()): Promise<number> {
    const at = Date.now() + 1;
    return (await by.savedByAnotherWindow(files.map((file) => ({ file, at })))).filter(Boolean).length;
  }

  it('a save noted by one window is known to another on the same store (not to itself), until the file changes again', async () => {
    const f = write('a.ts', 'one\n');
    const mine = journal();
    await mine.noteSave(f);
    assert.equal(await saved([f]), 1);
    assert.equal(await saved([f], mine), 0, 'a window\'s own save is not another window\'s');
    assert.equal(await saved([f], journal('store-2')), 0, 'another store keeps its own journal');
    write('a.ts', 'two\n');
    assert.equal(await saved([f]), 0);
  });

  it('a change seen before the save (the save came after it, of the same text) is not that save', async () => {
    const f = write('a.ts', 'one\n');
    const seenAt = fs.statSync(f).mtimeMs - 1;
    await journal().noteSave(f);
    assert.deepEqual(await journal().savedByAnotherWindow([{ file: f, at: seenAt }]), [false]);
  });

  it('entries expire', async () => {
    const f = write('a.ts', 'one\n');
    await journal().noteSave(f);
    clock += 10 * 60_000;
    assert.equal(await saved([f]), 0);
  });

  it('saves from two windows at once: each is noted, no line mixed with another', async () => {
    const files = Array.from({ length: 200 }, (_, i) => write(`f${i}.ts`, `file ${i}\n`));
    const [x, y] = [journal(), journal()];
    await Promise.all(files.map((f, i) => (i % 2 ? x : y).noteSave(f)));
    assert.equal(await saved(files), files.length);
  });

  it('many saves: the journal stays bounded, and keeps the latest', async () => {
    const files = Array.from({ length: 1200 }, (_, i) => write(`f${i}.ts`, `file ${i}\n`));
    const [x, y] = [journal(), journal()];
    for (const [i, f] of files.entries()) await (i % 2 ? x : y).noteSave(f);
    const last = files.slice(-100);
    assert.equal(await saved(last), last.length, 'the latest saves are all known');
    assert.ok(fs.statSync(x.file).size <= 64 * 1024, `bounded: ${fs.statSync(x.file).size} bytes`);
    assert.deepEqual(fs.readdirSync(dir).filter((n) => n.endsWith('.tmp')), [], 'no file left aside');
  });

  it('a corrupt journal is read for its good lines; a huge one is ignored, then replaced at the next save', async () => {
    const f = write('a.ts', 'one\n');
    const j = journal();
    await j.noteSave(f);
    fs.appendFileSync(j.file, '{"f": 1, cut mid-wr\n\u0000\u0000garbage\n[1,2,3]\nnull\n');
    assert.equal(await saved([f]), 1);
    fs.writeFileSync(j.file, 'x'.repeat(2 * 1024 * 1024));
    assert.equal(await saved([f]), 0);
    await j.noteSave(f);
    assert.equal(await saved([f]), 1);
    assert.ok(fs.statSync(j.file).size < 64 * 1024);
  });

  it('with no place to write the journal, saves are not noted and nothing throws', async () => {
    const f = write('a.ts', 'one\n');
    const blocked = path.join(work, 'not-a-dir');
    fs.writeFileSync(blocked, '');
    const j = new SaveJournal(() => 'store-1', path.join(blocked, 'journal'), () => clock);
    await j.noteSave(f);
    assert.equal(await saved([f], new SaveJournal(() => 'store-1', path.join(blocked, 'journal'), () => clock)), 0);
  });
});
