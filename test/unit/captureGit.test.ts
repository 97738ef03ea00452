// Branch and commit capture (gitCapture.ts) through the real capture, a real engine and real git
// repositories (captureHarness.ts): which repository is a workspace folder's, commits made in the
// same HEAD report as a checkout, and the git command-line fallback for a folder inside a repository.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { commitsInReflog as CommitsInReflog, reflogSince as ReflogSince } from '../../src/extension/capture/gitCapture';
import { Harness, RelativePattern, brief, git, makeRepo, tmp, writeFiles } from './captureHarness';
import { withVscodeStub } from './vscodeStub';

// gitCapture.ts imports `vscode`; its reflog reader uses none of it.
const { commitsInReflog, reflogSince } = withVscodeStub({}, () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../../src/extension/capture/gitCapture') as { commitsInReflog: typeof CommitsInReflog; reflogSince: typeof ReflogSince };
});

const A0 = 'export function price(n: number) {\n  return n * 2;\n}\n';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What VS Code's file watcher does when a repository's .git/HEAD changes: fires the watchers whose base holds it. */
function headChanged(h: Harness, repo: string): void {
  const head = path.join(repo, '.git/HEAD');
  for (const w of h.watchers) {
    if (!(w.pattern instanceof RelativePattern)) continue;
    const base = w.pattern.baseUri.fsPath;
    if (path.join(base, '.git/HEAD') === head || path.join(base, 'HEAD') === head) w.change.fire({ fsPath: head } as never);
  }
}

describe('capture of branches and commits', function () {
  this.timeout(120_000);
  let root: string;
  let h: Harness | undefined;

  beforeEach(() => {
    root = tmp('cm-git-');
  });
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  describe('a repository nested in a workspace folder (submodule, vendored clone)', () => {
    let ws: string;
    let nested: string;
    beforeEach(() => {
      ws = path.join(root, 'shop');
      makeRepo(ws, { 'src/price.ts': A0 });
      nested = path.join(ws, 'vendor/lib');
      makeRepo(nested, { 'index.js': 'module.exports = 1;\n' });
      git(nested, 'checkout', '-q', '--detach');
    });

    it('status refreshes of both repositories store no checkout, and edits keep the folder repository\'s branch', async () => {
      h = await new Harness({ folders: [ws], repoRoots: [ws, nested] }).start();
      h.gitRefresh();
      h.gitRefresh();
      const doc = h.open(path.join(ws, 'src/price.ts'));
      h.type(doc, A0.replace('n * 2', 'n * 3'));
      h.save(doc);
      h.gitRefresh();
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.deepEqual(obs.filter((o) => o.type === 'checkout').map((o) => o.title), [], brief(obs));
      assert.equal(obs.find((o) => o.type === 'edit')?.branch, 'main', brief(obs));
    });

    it('the nested repository reported first, then a branch switch in it: not a checkout of the folder', async () => {
      h = await new Harness({ folders: [ws], repoRoots: [nested, ws] }).start();
      git(nested, 'checkout', '-q', '-b', 'vendor-patch');
      h.gitRefresh();
      const doc = h.open(path.join(ws, 'src/price.ts'));
      h.type(doc, A0.replace('n * 2', 'n * 3'));
      h.save(doc);
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.deepEqual(obs.filter((o) => o.type === 'checkout').map((o) => o.title), [], brief(obs));
      assert.equal(obs.find((o) => o.type === 'edit')?.branch, 'main', brief(obs));
      assert.equal(h.capture.git.branchOf(h.folderUri(0)), 'main');
    });
  });

  describe('a checkout and commits seen in one HEAD report', () => {
    let ws: string;
    beforeEach(() => {
      ws = path.join(root, 'shop');
      makeRepo(ws, { 'src/price.ts': A0 });
    });

    it('`git checkout -b fix && git commit`: the checkout and the commit are stored', async () => {
      h = await new Harness({ folders: [ws] }).start();
      git(ws, 'checkout', '-q', '-b', 'fix/rounding');
      writeFiles(ws, { 'src/price.ts': A0.replace('n * 2', 'n * 5') });
      git(ws, 'commit', '-q', '-am', 'Round prices to five');
      h.gitRefresh();
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.ok(obs.some((o) => o.type === 'checkout' && o.title === 'Switched to fix/rounding'), brief(obs));
      const commit = obs.find((o) => o.type === 'commit');
      assert.equal(commit?.title, 'Round prices to five', brief(obs));
      assert.equal(commit?.branch, 'fix/rounding', brief(obs));
    });

    it('two commits on a new branch, then another new branch with one more: each commit is stored, on the branch it was made on', async () => {
      h = await new Harness({ folders: [ws] }).start();
      git(ws, 'checkout', '-q', '-b', 'a');
      writeFiles(ws, { 'src/price.ts': A0.replace('n * 2', 'n * 5') });
      git(ws, 'commit', '-q', '-am', 'First on a');
      writeFiles(ws, { 'src/price.ts': A0.replace('n * 2', 'n * 6') });
      git(ws, 'commit', '-q', '-am', 'Second on a');
      git(ws, 'checkout', '-q', '-b', 'b');
      writeFiles(ws, { 'src/price.ts': A0.replace('n * 2', 'n * 7') });
      git(ws, 'commit', '-q', '-am', 'Only on b');
      h.gitRefresh();
      await h.flush();
      const obs = await h.observations(await h.project());
      const commits = obs.filter((o) => o.type === 'commit').map((o) => `${o.title} @ ${o.branch}`);
      assert.deepEqual(commits.sort(), ['First on a @ a', 'Only on b @ b', 'Second on a @ a'], brief(obs));
    });

    it('`git checkout` of a branch with commits made elsewhere: a checkout only, those commits are not stored as made here', async () => {
      git(ws, 'checkout', '-q', '-b', 'theirs');
      for (const n of [5, 6, 7]) {
        writeFiles(ws, { 'src/price.ts': A0.replace('n * 2', `n * ${n}`) });
        git(ws, 'commit', '-q', '-am', `Theirs ${n}`);
      }
      git(ws, 'checkout', '-q', 'main');
      h = await new Harness({ folders: [ws] }).start();
      git(ws, 'checkout', '-q', 'theirs');
      h.gitRefresh();
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.deepEqual(obs.filter((o) => o.type === 'commit').map((o) => o.title), [], brief(obs));
      assert.deepEqual(obs.filter((o) => o.type === 'checkout').map((o) => o.title), ['Switched to theirs'], brief(obs));
    });

    it('two commits on the same branch in one report: both stored as commits, not as HEAD moving by two', async () => {
      h = await new Harness({ folders: [ws] }).start();
      writeFiles(ws, { 'src/price.ts': A0.replace('n * 2', 'n * 5') });
      git(ws, 'commit', '-q', '-am', 'One');
      writeFiles(ws, { 'src/price.ts': A0.replace('n * 2', 'n * 6') });
      git(ws, 'commit', '-q', '-am', 'Two');
      h.gitRefresh();
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.deepEqual(obs.filter((o) => o.type === 'commit').map((o) => `${o.title} @ ${o.branch}`).sort(), ['One @ main', 'Two @ main'], brief(obs));
      assert.deepEqual(obs.filter((o) => o.type === 'checkout').map((o) => o.title), [], brief(obs));
    });

    it('a commit then a fast-forward merge in one report: still one HEAD move, no commit claimed for the merged ones', async () => {
      git(ws, 'checkout', '-q', '-b', 'theirs');
      writeFiles(ws, { 'src/other.ts': 'export const x = 1;\n' });
      git(ws, 'add', '-A');
      git(ws, 'commit', '-q', '-m', 'Theirs');
      git(ws, 'checkout', '-q', 'main');
      h = await new Harness({ folders: [ws] }).start();
      git(ws, 'merge', '-q', '--ff-only', 'theirs');
      writeFiles(ws, { 'src/price.ts': A0.replace('n * 2', 'n * 5') });
      git(ws, 'commit', '-q', '-am', 'Mine');
      h.gitRefresh();
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.ok(!obs.some((o) => o.type === 'commit' && o.title === 'Theirs'), brief(obs));
      assert.ok(obs.some((o) => o.type === 'checkout' && /^HEAD moved on main/.test(o.title ?? '')), brief(obs));
    });

    it('reads commits from the HEAD reflog only back to the HEAD before; nothing where the reflog does not reach it', () => {
      const before = git(ws, 'rev-parse', 'HEAD');
      git(ws, 'checkout', '-q', '-b', 'fix');
      writeFiles(ws, { 'src/price.ts': A0.replace('n * 2', 'n * 5') });
      git(ws, 'commit', '-q', '-am', 'Five');
      const after = git(ws, 'rev-parse', 'HEAD');
      assert.deepEqual(commitsInReflog(path.join(ws, '.git'), before, after, 'fix'), [{ sha: after, from: before, branch: 'fix' }]);
      assert.deepEqual(commitsInReflog(path.join(ws, '.git'), 'f'.repeat(40), after, 'fix'), []);
      assert.deepEqual(commitsInReflog(path.join(root, 'no-such-repo/.git'), before, after, 'fix'), []);
    });
  });

  describe('a branch left and re-entered between two HEAD reports', () => {
    let ws: string;
    beforeEach(() => {
      ws = path.join(root, 'shop');
      makeRepo(ws, { 'src/price.ts': A0 });
    });

    /** The commits and checkouts git capture records, as `subject @ branch` and `from -> to`. */
    function gitRecords(harness: Harness): string[] {
      const seen: string[] = [];
      const record = harness.capture.record.bind(harness.capture);
      harness.capture.record = (e: { kind: string; sha?: string; branch?: string | null; from?: string | null }, t0: number) => {
        if (e.kind === 'commit') seen.push(`${git(ws, 'log', '-1', '--format=%s', e.sha!)} @ ${e.branch}`);
        if (e.kind === 'checkout') seen.push(`${e.from} -> ${e.branch}`);
        record(e, t0);
      };
      return seen;
    }

    function commit(message: string, n: number): void {
      writeFiles(ws, { 'src/price.ts': A0.replace('n * 2', `n * ${n}`) });
      git(ws, 'commit', '-q', '-am', message);
    }

    it('`git checkout -b tmp; git commit; git checkout main`: HEAD is back where it was, the commit on tmp is stored once', async () => {
      h = await new Harness({ folders: [ws] }).start();
      const seen = gitRecords(h);
      git(ws, 'checkout', '-q', '-b', 'tmp');
      commit('On tmp', 5);
      git(ws, 'checkout', '-q', 'main');
      h.gitRefresh();
      h.gitRefresh();
      await h.flush();
      assert.deepEqual(seen, ['On tmp @ tmp']);
      const obs = await h.observations(await h.project());
      assert.deepEqual(obs.filter((o) => o.type === 'commit').map((o) => `${o.title} @ ${o.branch}`), ['On tmp @ tmp'], brief(obs));
    });

    it('commits on main, on a side branch, and on main again in one report: each stored once, on its branch', async () => {
      h = await new Harness({ folders: [ws] }).start();
      const seen = gitRecords(h);
      commit('One', 5);
      git(ws, 'checkout', '-q', '-b', 'side');
      commit('Side', 6);
      git(ws, 'checkout', '-q', 'main');
      commit('Two', 7);
      h.gitRefresh();
      await h.flush();
      assert.deepEqual(seen, ['One @ main', 'Side @ side', 'Two @ main']);
      const obs = await h.observations(await h.project());
      assert.deepEqual(obs.filter((o) => o.type === 'commit').map((o) => `${o.title} @ ${o.branch}`).sort(), ['One @ main', 'Side @ side', 'Two @ main'], brief(obs));
      assert.ok(!obs.some((o) => /^HEAD moved/.test(o.title ?? '')), brief(obs));
    });

    it('HEAD left the commit of the last report and came back to it: the commits made in between are all stored', async () => {
      h = await new Harness({ folders: [ws] }).start();
      const seen = gitRecords(h);
      git(ws, 'checkout', '-q', '-b', 'tmp');
      commit('On tmp', 5);
      git(ws, 'checkout', '-q', 'main');
      commit('On main', 6);
      h.gitRefresh();
      await h.flush();
      assert.deepEqual(seen, ['On tmp @ tmp', 'On main @ main']);
    });

    it('a checkout after an excursion on another branch: the checkout and every commit, then nothing again on later reports', async () => {
      h = await new Harness({ folders: [ws] }).start();
      const seen = gitRecords(h);
      git(ws, 'checkout', '-q', '-b', 'a');
      commit('A1', 5);
      git(ws, 'checkout', '-q', 'main');
      git(ws, 'checkout', '-q', '-b', 'b');
      commit('B1', 6);
      h.gitRefresh();
      h.gitRefresh();
      assert.deepEqual(seen, ['A1 @ a', 'main -> b', 'B1 @ b']);
      commit('B2', 7);
      h.gitRefresh();
      h.gitRefresh();
      assert.deepEqual(seen, ['A1 @ a', 'main -> b', 'B1 @ b', 'B2 @ b']);
      await h.flush();
    });

    it('a pull in the same report as an excursion: one HEAD move on main, the commit on the other branch still stored', async () => {
      git(ws, 'checkout', '-q', '-b', 'theirs');
      commit('Theirs 1', 8);
      commit('Theirs 2', 9);
      git(ws, 'checkout', '-q', 'main');
      h = await new Harness({ folders: [ws] }).start();
      const seen = gitRecords(h);
      git(ws, 'checkout', '-q', '-b', 'tmp');
      commit('On tmp', 5);
      git(ws, 'checkout', '-q', 'main');
      git(ws, 'merge', '-q', '--ff-only', 'theirs');
      h.gitRefresh();
      await h.flush();
      // The HEAD move is recorded as a 'commit' event to Theirs 2 from main's HEAD before (not its parent).
      assert.deepEqual(seen, ['On tmp @ tmp', 'Theirs 2 @ main']);
      const obs = await h.observations(await h.project());
      assert.ok(obs.some((o) => o.type === 'checkout' && /^HEAD moved on main/.test(o.title ?? '')), brief(obs));
      assert.deepEqual(obs.filter((o) => o.type === 'commit').map((o) => `${o.title} @ ${o.branch}`), ['On tmp @ tmp'], brief(obs));
    });
  });

  describe('reading HEAD\'s reflog from the mark of the last report', () => {
    it('walks from the mark, not from the last visit of the HEAD before; a report behind the reflog leaves the rest to the next', () => {
      const ws = path.join(root, 'shop');
      makeRepo(ws, { 'src/price.ts': A0 });
      const gitDir = path.join(ws, '.git');
      const x = git(ws, 'rev-parse', 'HEAD');
      const start = reflogSince(gitDir, undefined, null, x, 'main');
      assert.deepEqual(start.commits, []);
      assert.ok(start.mark);
      git(ws, 'checkout', '-q', '-b', 'tmp');
      writeFiles(ws, { 'src/price.ts': A0.replace('n * 2', 'n * 5') });
      git(ws, 'commit', '-q', '-am', 'On tmp');
      const t = git(ws, 'rev-parse', 'HEAD');
      git(ws, 'checkout', '-q', 'main');
      writeFiles(ws, { 'src/price.ts': A0.replace('n * 2', 'n * 6') });
      git(ws, 'commit', '-q', '-am', 'On main');
      const m = git(ws, 'rev-parse', 'HEAD');
      // Without a mark, only back to the last entry that left x: the commit on tmp is not seen.
      assert.deepEqual(commitsInReflog(gitDir, x, m, 'main'), [{ sha: m, from: x, branch: 'main' }]);
      // A report still at x (behind the reflog): the excursion back to x is in it, the commit on main is not.
      const behind = reflogSince(gitDir, start.mark, x, x, 'main');
      assert.deepEqual(behind.commits, [{ sha: t, from: x, branch: 'tmp' }]);
      const next = reflogSince(gitDir, behind.mark, x, m, 'main');
      assert.deepEqual(next.commits, [{ sha: m, from: x, branch: 'main' }]);
      assert.equal(next.others, false);
      // Seen again from the same mark: nothing new.
      assert.deepEqual(reflogSince(gitDir, next.mark, m, m, 'main').commits, []);
      // A mark the reflog no longer holds (expired, rewritten): back to the last entry that left `from`.
      assert.deepEqual(reflogSince(gitDir, { line: 'gone', sha: 'f'.repeat(40), size: 1 }, x, m, 'main').commits, [{ sha: m, from: x, branch: 'main' }]);
    });
  });

  describe('a package of a monorepo opened alone', () => {
    let mono: string;
    let pkg: string;
    beforeEach(() => {
      mono = path.join(root, 'mono');
      makeRepo(mono, { 'packages/a/src/price.ts': A0 });
      pkg = path.join(mono, 'packages/a');
    });

    async function editPrice(): Promise<string | null | undefined> {
      const doc = h!.open(path.join(pkg, 'src/price.ts'));
      h!.type(doc, A0.replace('n * 2', 'n * 3'));
      h!.save(doc);
      await h!.flush();
      const obs = await h!.observations(await h!.project());
      return obs.find((o) => o.type === 'edit')?.branch;
    }

    it('Git extension disabled: the repository above is watched, and an edit after `git checkout -b` is on the new branch', async () => {
      h = new Harness({ folders: [pkg], repoRoots: [] });
      h.stub.extensions.getExtension = () => undefined;
      await h.start();
      assert.equal(h.capture.git.via, 'git-cli');
      git(mono, 'checkout', '-q', '-b', 'feature/x');
      headChanged(h, mono);
      await sleep(500);
      assert.equal(await editPrice(), 'feature/x');
    });

    it('the Git extension has not opened the repository above (it asks first): edits carry its branch', async () => {
      h = await new Harness({ folders: [pkg], repoRoots: [] }).start();
      assert.equal(await editPrice(), 'main', `via ${h.capture.git.via}`);
    });

    it('the repository root opened, Git extension disabled: a checkout is still seen', async () => {
      h = new Harness({ folders: [mono], repoRoots: [] });
      h.stub.extensions.getExtension = () => undefined;
      await h.start();
      git(mono, 'checkout', '-q', '-b', 'feature/y');
      headChanged(h, mono);
      await sleep(500);
      const doc = h.open(path.join(mono, 'packages/a/src/price.ts'));
      h.type(doc, A0.replace('n * 2', 'n * 3'));
      h.save(doc);
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.equal(obs.find((o) => o.type === 'edit')?.branch, 'feature/y', brief(obs));
    });
  });
});
