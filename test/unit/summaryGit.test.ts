// What a session summary says was done and what is left, against the repository: a file edited
// again after its commit is work left, a commit a reset left behind is not done.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness, brief, git, makeRepo, summaryText, tmp } from './captureHarness';

const A0 = 'export function price(n: number) {\n  return n * 2;\n}\n';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('session summaries against git', function () {
  this.timeout(120_000);
  let root: string;
  let ws: string;
  let h: Harness | undefined;
  beforeEach(() => {
    root = tmp('cm-summary-git-');
    ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/price.ts': A0 });
  });
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function edit(text: string): Promise<void> {
    const doc = h!.open(path.join(ws, 'src/price.ts'));
    h!.type(doc, text);
    h!.save(doc);
    await h!.flush();
  }

  it('edit, commit, then edit the same file again without committing: next steps name the uncommitted change', async () => {
    h = await new Harness({ folders: [ws] }).start();
    await edit(A0.replace('n * 2', 'n * 3'));
    git(ws, 'commit', '-q', '-am', 'Triple prices');
    h.gitRefresh();
    await h.flush();
    await sleep(100);
    await edit(A0.replace('n * 2', 'n * 4'));
    assert.match(git(ws, 'status', '--porcelain'), /src\/price\.ts/);
    const [ended] = await h.endSession(0);
    const obs = await h.observations(await h.project());
    assert.match(ended?.summary?.next_steps ?? '', /Uncommitted changes in src\/price\.ts/, `${summaryText(ended?.summary)}\n${brief(obs)}`);
  });

  it('a commit thrown away with `git reset --hard HEAD~1` in the same session is not reported as completed', async () => {
    h = await new Harness({ folders: [ws] }).start();
    await edit(A0.replace('n * 2', 'n * 3'));
    git(ws, 'commit', '-q', '-am', 'Triple prices');
    h.gitRefresh();
    await h.flush();
    git(ws, 'reset', '-q', '--hard', 'HEAD~1');
    h.gitRefresh();
    await h.flush();
    const [ended] = await h.endSession(0);
    const obs = await h.observations(await h.project());
    const completed = ended?.summary?.completed ?? '';
    assert.match(completed, /Committed: Triple prices \(undone: HEAD moved on main: reset to [0-9a-f]{8}/, `${summaryText(ended?.summary)}\n${brief(obs)}`);
  });

  it('monorepo package opened alone: an edit committed is not listed as uncommitted', async () => {
    const mono = path.join(root, 'mono');
    makeRepo(mono, { 'packages/a/src/price.ts': A0 });
    const pkg = path.join(mono, 'packages/a');
    h = await new Harness({ folders: [pkg], repoRoots: [mono] }).start();
    const doc = h.open(path.join(pkg, 'src/price.ts'));
    h.type(doc, A0.replace('n * 2', 'n * 3'));
    h.save(doc);
    await h.flush();
    git(mono, 'commit', '-q', '-am', 'Triple prices');
    h.gitRefresh();
    await h.flush();
    assert.equal(git(mono, 'status', '--porcelain'), '');
    const [ended] = await h.endSession(0);
    const obs = await h.observations(await h.project());
    assert.doesNotMatch(ended?.summary?.next_steps ?? '', /Uncommitted changes in src\/price\.ts/, `${summaryText(ended?.summary)}\n${brief(obs)}`);
  });
});
