// Commits and checkouts seen while capture still holds events to write, or by two windows on one
// repository, through the real capture (vscode stubbed), real engines and real git repositories
// (captureHarness.ts): a commit made before a checkout seen in the same HEAD report goes to the
// session it was made in, not to a new one the checkout's branch ended at once; a commit amended
// before it was written is not told as a commit that stands; and a commit that
// another window stored first (each window sees every commit; its dedupe key keeps one) still
// takes the files it committed out of the uncommitted work of the window that edited them.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness, Windows, brief, git, makeRepo, tmp } from './captureHarness';

const A0 = 'export function price(n: number) {\n  return n * 2;\n}\n';

describe('commits and checkouts seen while capture is pending, or by two windows', function () {
  this.timeout(120_000);
  let root: string;
  let ws: string;
  let h: Harness | undefined;

  beforeEach(() => {
    root = tmp('cm-gitpending-');
    ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/price.ts': A0 });
  });
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('`git commit && git checkout -b x` in one HEAD report: the commit joins the session of the edits it took, which then ends on the switch', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const project = await h.project();
    const doc = h.open(path.join(ws, 'src/price.ts'));
    h.type(doc, A0.replace('n * 2', 'n * 3'));
    h.save(doc);
    await h.flush();
    git(ws, 'commit', '-q', '-am', 'Triple prices');
    git(ws, 'checkout', '-q', '-b', 'feature/x');
    h.gitRefresh();
    await h.flush();
    const obs = await h.observations(project);
    const edit = obs.find((o) => o.type === 'edit');
    const commit = obs.find((o) => o.type === 'commit');
    const checkout = obs.find((o) => o.type === 'checkout');
    assert.equal(commit?.branch, 'main', brief(obs));
    assert.equal(checkout?.branch, 'feature/x', brief(obs));
    assert.equal(commit?.memory_session_id, edit?.memory_session_id, brief(obs));
    assert.notEqual(checkout?.memory_session_id, edit?.memory_session_id, brief(obs));
    // The checkout's session is still open: the switch back to main did not end it.
    const sessions = await h.engine.listSessions({ project }, 100);
    assert.deepEqual(sessions.filter((s) => s.branch === 'main').map((s) => s.memory_session_id), [edit?.memory_session_id], JSON.stringify(sessions));
  });

  it('a commit on a side branch, back to main, and a commit there, in one report: the side commit comes before the checkout, the main one after', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const project = await h.project();
    git(ws, 'checkout', '-q', '-b', 'side');
    h.gitRefresh();
    await h.flush();
    fs.writeFileSync(path.join(ws, 'src/price.ts'), A0.replace('n * 2', 'n * 4'));
    git(ws, 'commit', '-q', '-am', 'On side');
    git(ws, 'checkout', '-q', 'main');
    fs.writeFileSync(path.join(ws, 'src/price.ts'), A0.replace('n * 2', 'n * 5'));
    git(ws, 'commit', '-q', '-am', 'On main');
    h.gitRefresh();
    await h.flush();
    const obs = (await h.observations(project)).sort((a, b) => a.id - b.id);
    assert.deepEqual(
      obs.map((o) => `${o.type} ${o.title} @ ${o.branch}`),
      ['checkout Switched to side @ side', 'commit On side @ side', 'checkout Switched to main @ main', 'commit On main @ main'],
      brief(obs),
    );
    const sessionOf = (title: string) => obs.find((o) => o.title === title)?.memory_session_id;
    assert.equal(sessionOf('On side'), sessionOf('Switched to side'), brief(obs));
    assert.equal(sessionOf('On main'), sessionOf('Switched to main'), brief(obs));
  });

  it('a commit amended before capture wrote it: both stored, and the summary lists only the commit that stands', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const project = await h.project();
    fs.writeFileSync(path.join(ws, 'src/price.ts'), A0.replace('n * 2', 'n * 4'));
    git(ws, 'commit', '-q', '-am', 'Quad');
    h.gitRefresh();
    git(ws, 'commit', '-q', '--amend', '-m', 'Quadruple prices');
    h.gitRefresh();
    await h.flush();
    const obs = await h.observations(project);
    assert.deepEqual(obs.filter((o) => o.type === 'commit').map((o) => o.title).sort(), ['Quad', 'Quadruple prices'], brief(obs));
    const [ended] = await h.endSession(0);
    assert.equal(ended.summary?.completed, '- Committed: Quadruple prices');
  });

  describe('two windows on one repository', () => {
    const windows = new Windows(() => path.join(root, 'store'));

    it('a commit in a terminal of what window A edited, stored first by window B: stored once, and A\'s summary has no uncommitted work left', async () => {
      const a = await windows.open({ folders: [ws] });
      const b = await windows.open({ folders: [ws] });
      const project = await a.project();
      const doc = a.open(path.join(ws, 'src/price.ts'));
      a.type(doc, A0.replace('n * 2', 'n * 3'));
      a.save(doc);
      await a.flush();
      git(ws, 'commit', '-q', '-am', 'Triple prices');
      a.gitRefresh();
      b.gitRefresh();
      await b.flush();
      await a.flush();
      const obs = await a.observations(project);
      assert.deepEqual(obs.filter((o) => o.type === 'commit').map((o) => o.title), ['Triple prices'], brief(obs));
      // B's session holds it: B wrote it first.
      assert.notEqual(obs.find((o) => o.type === 'commit')?.memory_session_id, obs.find((o) => o.type === 'edit')?.memory_session_id, brief(obs));
      const [ended] = await a.endSession(0);
      assert.match(ended.summary?.completed ?? '', /Changed src\/price\.ts/);
      assert.doesNotMatch(ended.summary?.next_steps ?? '', /Uncommitted changes in src\/price\.ts/);
    });

    it('window A edits again after B stored the commit: that change is still uncommitted work', async () => {
      const a = await windows.open({ folders: [ws] });
      const b = await windows.open({ folders: [ws] });
      const doc = a.open(path.join(ws, 'src/price.ts'));
      a.type(doc, A0.replace('n * 2', 'n * 3'));
      a.save(doc);
      await a.flush();
      git(ws, 'commit', '-q', '-am', 'Triple prices');
      b.gitRefresh();
      await b.flush();
      a.gitRefresh();
      await a.flush();
      a.type(doc, A0.replace('n * 2', 'n * 4'));
      a.save(doc);
      await a.flush();
      const [ended] = await a.endSession(0);
      assert.match(ended.summary?.next_steps ?? '', /Uncommitted changes in src\/price\.ts/);
    });
  });
});
