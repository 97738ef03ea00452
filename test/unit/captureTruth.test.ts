// What the extension's capture stores, through the real capture (vscode stubbed), a real engine
// and real git repositories (captureHarness.ts): pauses record nothing, secret files are never
// named, HEAD moves that are not commits are not stored as commits, git-ignored output, terminal
// noise and commands run elsewhere are left out, undone edits leave nothing, and events keep the
// branch they happened on.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness, brief, git, makeRepo, runInTerminal, summaryText, tmp, writeFiles } from './captureHarness';

const A0 = 'export function price(n: number) {\n  return n * 2;\n}\n';
const MOCHA_FAIL = ['', '  billing', '    1) rounds invoices', '', '  0 passing (5ms)', '  1 failing', '', '  1) billing', '       rounds invoices:', '', '      AssertionError [ERR_ASSERTION]: 10.01 !== 10', ''].join('\n');


describe('capture truth: what the extension stores', function () {
  this.timeout(120_000);
  let root: string;
  let ws: string;
  let h: Harness | undefined;

  beforeEach(() => {
    root = tmp('cm-truth-');
    ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/price.ts': A0, 'src/other.ts': 'export const other = 1;\n', 'src/third.ts': 'export const third = 3;\n' });
  });
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  describe('pause', () => {
    it('text typed and saved while paused is not in the next edit after resume', async () => {
      h = await new Harness({ folders: [ws] }).start();
      const doc = h.open(path.join(ws, 'src/price.ts'));
      h.type(doc, A0.replace('n * 2', 'n * 3'));
      h.save(doc);
      await h.flush();
      await h.capture.setPaused(true);
      h.type(doc, doc.text.replace('return n * 3;', 'return n * 3; // PAUSED_SAVED_TEXT'));
      h.save(doc);
      await h.flush();
      await h.capture.setPaused(false);
      h.type(doc, doc.text.replace('export function price', 'export function finalPrice'));
      h.save(doc);
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.ok(obs.some((o) => o.type === 'edit' && /finalPrice/.test(o.narrative ?? '')), `the edit after resume is stored:\n${brief(obs)}`);
      assert.deepEqual(
        obs.filter((o) => JSON.stringify(o).includes('PAUSED_SAVED_TEXT')).map((o) => `${o.title}\n${o.narrative}`),
        [],
      );
    });

    it('text typed (unsaved) while paused is not in the edit saved after resume', async () => {
      h = await new Harness({ folders: [ws] }).start();
      const doc = h.open(path.join(ws, 'src/price.ts'));
      await h.capture.setPaused(true);
      h.type(doc, A0.replace('return n * 2;', 'return n * 2; // PAUSED_UNSAVED_TEXT'));
      await h.capture.setPaused(false);
      h.type(doc, doc.text.replace('export function price', 'export function finalPrice'));
      h.save(doc);
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.ok(obs.some((o) => o.type === 'edit' && /finalPrice/.test(o.narrative ?? '')), `the edit after resume is stored:\n${brief(obs)}`);
      assert.deepEqual(obs.filter((o) => JSON.stringify(o).includes('PAUSED_UNSAVED_TEXT')).map((o) => `${o.title}\n${o.narrative}`), []);
    });

    it('a file focused only while paused is not recorded as read after resume', async () => {
      h = await new Harness({ folders: [ws] }).start();
      h.open(path.join(ws, 'src/price.ts'));
      await h.capture.setPaused(true);
      h.open(path.join(ws, 'src/other.ts'));
      await new Promise((r) => setTimeout(r, 1200));
      await h.capture.setPaused(false);
      h.open(path.join(ws, 'src/third.ts'));
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.deepEqual(obs.filter((o) => (o.files_read ?? '').includes('src/other.ts')).map((o) => o.title), [], brief(obs));
    });
  });

  describe('secret files', () => {
    it('a .env or secrets/ file spelled with capitals is not captured', async () => {
      h = await new Harness({ folders: [ws] }).start();
      for (const rel of ['config/.ENV.production', 'deploy/Secrets/prod.yaml']) {
        writeFiles(ws, { [rel]: 'A=1\n' });
        const doc = h.open(path.join(ws, rel));
        h.type(doc, 'A=1\nB=2\n');
        h.save(doc);
      }
      h.fsEvent('create', path.join(ws, 'config/.ENV.staging'));
      await h.flush();
      assert.equal(brief(await h.observations(await h.project())), '');
    });

    it('*.p12, *.pfx and .netrc files keep no name in any title, and leave commit file lists', async () => {
      h = await new Harness({ folders: [ws] }).start();
      writeFiles(ws, { 'certs/acme-prod-client.p12': 'bin', 'certs/acme-prod-signing.pfx': 'bin', 'ci/.netrc': '' });
      h.fsEvent('create', path.join(ws, 'certs/acme-prod-client.p12'));
      h.fsEvent('create', path.join(ws, 'certs/acme-prod-signing.pfx'));
      const doc = h.open(path.join(ws, 'ci/.netrc'));
      h.type(doc, 'machine ci.acme.internal login deploy password Hunter2Hunter2\n');
      h.save(doc);
      git(ws, 'add', '-A');
      git(ws, 'commit', '-q', '-m', 'Add client certificates');
      h.gitRefresh();
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.deepEqual(obs.filter((o) => /p12|pfx|netrc|Hunter2/.test(JSON.stringify(o))).map((o) => `${o.type}: ${o.title} ${o.files_modified}`), [], brief(obs));
      assert.ok(obs.some((o) => o.type === 'commit' && o.title === 'Add client certificates'), brief(obs));
    });
  });

  describe('files named like secret ones (README, Privacy)', () => {
    // src/other.ts is the control: the same steps capture an ordinary file.
    for (const file of ['src/other.ts', 'src/id_utils.ts', 'docs/.envrc.md']) {
      it(`an edit saved to ${file} is captured with the default settings`, async () => {
        writeFiles(ws, { 'src/id_utils.ts': 'export const idOf = (x: string) => x;\n', 'docs/.envrc.md': '# direnv\n\nHow we use direnv.\n' });
        h = await new Harness({ folders: [ws] }).start();
        const doc = h.open(path.join(ws, file));
        h.type(doc, `${doc.text}// one more line\n`);
        h.save(doc);
        await h.flush();
        const obs = await h.observations(await h.project());
        assert.ok(obs.some((o) => JSON.stringify([o.files_modified, o.files_read]).includes(file)), `nothing captured names ${file}: ${brief(obs) || '(none)'}`);
      });
    }

    it('.envrc and an SSH key (id_ed25519) beside them are not', async () => {
      writeFiles(ws, { '.envrc': 'export A=1\n', 'keys/id_ed25519': 'key\n' });
      h = await new Harness({ folders: [ws] }).start();
      for (const rel of ['.envrc', 'keys/id_ed25519']) {
        const doc = h.open(path.join(ws, rel));
        h.type(doc, `${doc.text}more\n`);
        h.save(doc);
      }
      await h.flush();
      assert.equal(brief(await h.observations(await h.project())), '');
    });
  });

  describe('HEAD moves that are not commits', () => {
    it('a `git pull` of three commits is stored as HEAD moving, not as a commit', async () => {
      const upstream = path.join(root, 'upstream');
      makeRepo(upstream, { 'src/a.ts': 'export const a = 1;\n' });
      const clone = path.join(root, 'clone');
      git(root, 'clone', '-q', upstream, clone);
      git(clone, 'config', 'pull.ff', 'only');
      for (const [i, subject] of ['Add billing module', 'Switch invoices to UTC', 'Remove legacy PDF export'].entries()) {
        writeFiles(upstream, { [`src/b${i}.ts`]: `export const b${i} = ${i};\n` });
        git(upstream, 'add', '-A');
        git(upstream, 'commit', '-q', '-m', subject);
      }
      h = await new Harness({ folders: [clone] }).start();
      git(clone, 'pull', '-q');
      h.gitRefresh();
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.deepEqual(obs.filter((o) => o.type === 'commit').map((o) => o.title), [], brief(obs));
      assert.ok(obs.some((o) => o.type === 'checkout' && /HEAD moved on main: pulled\/merged 3 commits/.test(o.title ?? '')), brief(obs));
    });

    it('`git reset --hard HEAD~1` is stored as a reset; a commit made after it, and its amend, are stored as commits', async () => {
      writeFiles(ws, { 'src/price.ts': A0.replace('2', '4') });
      git(ws, 'commit', '-q', '-am', 'Double the price');
      h = await new Harness({ folders: [ws] }).start();
      git(ws, 'reset', '-q', '--hard', 'HEAD~1');
      h.gitRefresh();
      await h.flush();
      writeFiles(ws, { 'src/price.ts': A0.replace('2', '5') });
      git(ws, 'commit', '-q', '-am', 'Raise the price');
      h.gitRefresh();
      await h.flush();
      git(ws, 'commit', '-q', '--amend', '-m', 'Raise the price to five');
      h.gitRefresh();
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.deepEqual(obs.filter((o) => o.type === 'commit').map((o) => o.title).sort(), ['Raise the price', 'Raise the price to five'], brief(obs));
      assert.match(obs.find((o) => o.title === 'Raise the price to five')?.subtitle ?? '', /amending [0-9a-f]{8}/, brief(obs));
      assert.ok(obs.some((o) => o.type === 'checkout' && /HEAD moved on main: reset to [0-9a-f]{8} \(initial\)/.test(o.title ?? '')), brief(obs));
    });
  });

  it('changes to git-ignored files (dist/, out/, *.log) are not recorded; other files are', async () => {
    writeFiles(ws, { '.gitignore': 'dist/\nout/\n*.log\n' });
    git(ws, 'add', '-A');
    git(ws, 'commit', '-q', '-m', 'ignore build output');
    writeFiles(ws, { 'dist/extension.js': 'old' });
    h = await new Harness({ folders: [ws] }).start();
    writeFiles(ws, { 'dist/extension.js': 'new', 'dist/extension.js.map': '{}', 'out/host/index.js': 'x', 'build.log': 'ok', 'src/fresh.ts': 'export {};\n' });
    h.fsEvent('change', path.join(ws, 'dist/extension.js'));
    h.fsEvent('create', path.join(ws, 'dist/extension.js.map'));
    h.fsEvent('create', path.join(ws, 'out/host/index.js'));
    h.fsEvent('create', path.join(ws, 'build.log'));
    h.fsEvent('create', path.join(ws, 'src/fresh.ts'));
    await h.flush();
    const [ended] = await h.endSession(0);
    const obs = await h.observations(await h.project());
    assert.deepEqual(obs.map((o) => `${o.type}: ${o.title}`), ['create: Created src/fresh.ts'], brief(obs));
    assert.doesNotMatch(ended?.summary?.next_steps ?? '', /dist\//, summaryText(ended?.summary));
  });

  describe('terminal', () => {
    it('a command run outside every workspace folder is not stored under a workspace project', async () => {
      const b = path.join(root, 'beta');
      makeRepo(b, { 'src/b.ts': 'export const b = 1;\n' });
      const elsewhere = path.join(root, 'scratch');
      fs.mkdirSync(elsewhere);
      h = await new Harness({ folders: [ws, b] }).start();
      await runInTerminal(h, 'npx mocha', elsewhere, 4242, 1, MOCHA_FAIL);
      await runInTerminal(h, 'npx mocha', path.join(b, 'src'), 4243, 1, MOCHA_FAIL);
      await h.flush();
      assert.deepEqual((await h.observations(await h.project(0))).map((o) => o.title), []);
      assert.deepEqual((await h.observations(await h.project(1))).map((o) => o.title), ['`npx mocha` failed (exit 1)']);
    });

    it('navigation commands (ls, cd, pwd, clear, git status) are not stored; real commands are', async () => {
      h = await new Harness({ folders: [ws] }).start();
      let pid = 100;
      for (const command of ['ls -la', 'cd src', 'pwd', 'clear', 'git status', 'cd src && npm run build']) await runInTerminal(h, command, ws, pid++);
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.deepEqual(obs.map((o) => o.title), ['`cd src && npm run build` succeeded']);
    });
  });

  it('typing then undoing back to the file as it was stores no "Unsaved edits"', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const doc = h.open(path.join(ws, 'src/price.ts'));
    h.type(doc, A0.replace('n * 2', 'n * 22'));
    h.type(doc, A0, false);
    const other = h.open(path.join(ws, 'src/other.ts'));
    h.type(other, 'export const other = 2;\n');
    const [ended] = await h.endSession(0);
    const obs = await h.observations(await h.project());
    assert.deepEqual(obs.filter((o) => o.type === 'edit').map((o) => o.title), ['Unsaved edits in src/other.ts'], brief(obs));
    assert.doesNotMatch(ended?.summary?.next_steps ?? '', /src\/price\.ts/, summaryText(ended?.summary));
  });

  it('unsaved edits recorded at a checkpoint, then undone back to the file, are kept as reverted: no unsaved work, no file changed', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const doc = h.open(path.join(ws, 'src/price.ts'));
    h.type(doc, A0.replace('n * 2', 'n * 22'));
    // An agent's call flushes capture: the unsaved work is recorded as it is then.
    await h.flush();
    const before = await h.observations(await h.project());
    assert.deepEqual(before.filter((o) => o.type === 'edit').map((o) => o.title), ['Unsaved edits in src/price.ts'], brief(before));
    h.type(doc, A0, false);
    const [ended] = await h.endSession(0);
    const obs = await h.observations(await h.project());
    const edits = obs.filter((o) => o.type === 'edit');
    assert.deepEqual(edits.map((o) => o.title), ['Reverted unsaved edits in src/price.ts'], brief(obs));
    assert.match(edits[0].narrative ?? '', /n \* 22/, 'what was tried is kept');
    assert.deepEqual(JSON.parse(String(edits[0].files_modified ?? '[]')), [], 'no file was modified');
    assert.doesNotMatch(ended?.summary?.next_steps ?? '', /src\/price\.ts/, summaryText(ended?.summary));
  });

  it('an edit saved, then changed back by hand and saved, is kept as reverted with what was tried (no empty edit)', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const doc = h.open(path.join(ws, 'src/price.ts'));
    h.type(doc, A0.replace('n * 2', 'n * 3'));
    h.save(doc);
    await h.flush();
    h.type(doc, A0);
    h.save(doc);
    const [ended] = await h.endSession(0);
    const obs = await h.observations(await h.project());
    const edits = obs.filter((o) => o.type === 'edit');
    assert.deepEqual(edits.map((o) => o.title), ['Reverted edits in src/price.ts'], brief(obs));
    assert.match(edits[0].narrative ?? '', /n \* 3/, 'what was tried is kept');
    assert.doesNotMatch(edits[0].subtitle ?? '', /0 hunks/, brief(obs));
    assert.doesNotMatch(`${ended?.summary?.completed ?? ''}\n${ended?.summary?.next_steps ?? ''}`, /src\/price\.ts/, summaryText(ended?.summary));
  });

  it('an edit saved on main, then a commit and `checkout -b` within the batch delay, is stored on main', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const doc = h.open(path.join(ws, 'src/price.ts'));
    h.type(doc, A0.replace('n * 2', 'n * 7'));
    h.save(doc);
    git(ws, 'commit', '-q', '-am', 'Seven');
    h.gitRefresh();
    git(ws, 'checkout', '-q', '-b', 'feature/other');
    h.gitRefresh();
    const fresh = h.open(path.join(ws, 'src/other.ts'));
    h.type(fresh, 'export const other = 9;\n');
    h.save(fresh);
    await h.flush();
    const obs = await h.observations(await h.project());
    const byTitle = Object.fromEntries(obs.map((o) => [o.title, o.branch]));
    assert.equal(byTitle['Edited src/price.ts'], 'main', brief(obs));
    assert.equal(byTitle['Seven'], 'main', brief(obs));
    assert.equal(byTitle['Edited src/other.ts'], 'feature/other', brief(obs));
  });

  it('typed (unsaved) on main, then `git checkout -b`, then saved: the save is stored as an edit on the new branch', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const doc = h.open(path.join(ws, 'src/price.ts'));
    h.type(doc, A0.replace('n * 2', 'n * 3'));
    git(ws, 'checkout', '-q', '-b', 'feature/x');
    h.gitRefresh();
    await new Promise((r) => setTimeout(r, 50));
    h.save(doc);
    await h.flush();
    const obs = await h.observations(await h.project());
    const edits = obs.filter((o) => o.type === 'edit');
    assert.deepEqual(edits.map((o) => `${o.title} | ${o.branch}`), ['Edited src/price.ts | feature/x'], brief(obs));
    assert.match(edits[0].narrative ?? '', /n \* 3/, brief(obs));
  });

  it('saved, then typed and undone back to the saved text: the edit stays "Edited", with no "Unsaved edits" at the next checkpoint', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const project = await h.project();
    const doc = h.open(path.join(ws, 'src/price.ts'));
    h.type(doc, A0.replace('n * 2', 'n * 3'));
    h.save(doc);
    await h.flush();
    const saved = doc.text;
    h.type(doc, saved.replace('n * 3', 'n * 33'));
    // Undone back to the saved text: the document is clean again.
    h.type(doc, saved, false);
    await h.flush();
    const obs = await h.observations(project);
    assert.deepEqual(obs.filter((o) => o.type === 'edit').map((o) => o.title), ['Edited src/price.ts'], brief(obs));
    assert.doesNotMatch(JSON.stringify(obs), /n \* 33/, brief(obs));
  });

  it('a UTF-8 file with a byte order mark (the editor shows its text without it): a one-line edit is one hunk of one line', async () => {
    writeFiles(ws, { 'src/bom.ts': `\uFEFF${A0}` });
    h = await new Harness({ folders: [ws] }).start();
    const doc = h.open(path.join(ws, 'src/bom.ts'), { text: A0 });
    h.type(doc, A0.replace('n * 2', 'n * 3'));
    h.save(doc);
    await h.flush();
    const edit = (await h.observations(await h.project())).find((o) => o.type === 'edit');
    assert.ok(edit);
    assert.match(edit.subtitle ?? '', /1 hunk, \+1 −1 lines/, `${edit.subtitle}\n${edit.narrative}`);
  });

  it('a Latin-1 file the editor decoded: its edit holds no mis-decoded text (no diff against the file read as UTF-8)', async () => {
    const text = '// café crème\nexport const prix = 2;\n// déjà vu\n';
    fs.writeFileSync(path.join(ws, 'src/prix.ts'), Buffer.from(text, 'latin1'));
    h = await new Harness({ folders: [ws] }).start();
    const doc = h.open(path.join(ws, 'src/prix.ts'), { text });
    h.type(doc, text.replace('prix = 2', 'prix = 3'));
    // Saved in its own encoding.
    fs.writeFileSync(path.join(ws, 'src/prix.ts'), Buffer.from(doc.text, 'latin1'));
    doc.isDirty = false;
    h.e.saveDoc.fire(doc);
    await h.flush();
    const obs = await h.observations(await h.project());
    const edit = obs.find((o) => o.type === 'edit');
    assert.ok(edit, brief(obs));
    assert.equal(edit.title, 'Edited src/prix.ts');
    assert.doesNotMatch(JSON.stringify(obs), /\uFFFD|\\ufffd/i, `${edit.subtitle}\n${edit.narrative}`);
  });
});
