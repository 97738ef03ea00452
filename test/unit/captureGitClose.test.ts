// A repository the Git extension closes (GitApi.onDidCloseRepository) and opens again, through the
// real capture (captureHarness.ts) and a real git repository: its watch is released, the folder
// on it falls back to watching HEAD (as when the Git extension never opened it), and a re-open
// watches it again without recording anything twice.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Emitter, Harness, RelativePattern, Uri, git, makeRepo, tmp, writeFiles, type StubRepo } from './captureHarness';

const A0 = 'export function price(n: number) {\n  return n * 2;\n}\n';

/** The Git extension's API with open and close under the test's control. */
function gitApiOf(h: Harness): { open(repo: StubRepo): void; close(repo: StubRepo): void } {
  const opened = new Emitter<StubRepo>();
  const closed = new Emitter<StubRepo>();
  const api = {
    state: 'initialized',
    onDidChangeState: new Emitter<string>().event,
    get repositories() {
      return h.repos;
    },
    onDidOpenRepository: opened.event,
    onDidCloseRepository: closed.event,
  };
  h.stub.extensions.getExtension = (id: string) => (id === 'vscode.git' ? { isActive: true, exports: { enabled: true, getAPI: () => api } } : undefined);
  return {
    open(repo) {
      h.repos.push(repo);
      opened.fire(repo);
    },
    close(repo) {
      h.repos.splice(h.repos.indexOf(repo), 1);
      closed.fire(repo);
    },
  };
}

/** A new repository object for `root`, as the Git extension makes on each open. */
function stubRepo(root: string): StubRepo {
  const changed = new Emitter<void>();
  return { rootUri: Uri.file(root), root, changed, state: { HEAD: readHead(root), onDidChange: changed.event } };
}

function readHead(root: string): { name?: string; commit?: string } {
  return { name: git(root, 'symbolic-ref', '--quiet', '--short', 'HEAD') || undefined, commit: git(root, 'rev-parse', 'HEAD') };
}

/** The repository reports HEAD (what the Git extension does on a status refresh), closed or not. */
function report(repo: StubRepo): void {
  repo.state.HEAD = readHead(repo.root);
  repo.changed.fire();
}

/** What VS Code's file watcher does when a repository's .git/HEAD changes: fires the fallback's watchers on it. */
function headChanged(h: Harness, repo: string): void {
  for (const w of h.watchers) {
    if (w.pattern instanceof RelativePattern && w.pattern.baseUri.fsPath === repo) w.change.fire({ fsPath: path.join(repo, '.git/HEAD') } as never);
  }
}

function listeners(repo: StubRepo): number {
  return (repo.changed as unknown as { listeners: unknown[] }).listeners.length;
}

/** Whether some fallback watcher on a repository's HEAD still has a listener. */
function fallbackListening(h: Harness): boolean {
  return h.watchers.some((w) => w.pattern instanceof RelativePattern && (w.change as unknown as { listeners: unknown[] }).listeners.length > 0);
}

/** The checkouts and commits git capture records, as `from -> to` and `commit subject @ branch`. */
function gitRecords(h: Harness, ws: string): string[] {
  const seen: string[] = [];
  const record = h.capture.record.bind(h.capture);
  h.capture.record = (e: { kind: string; sha?: string; branch?: string | null; from?: string | null }, t0: number) => {
    if (e.kind === 'commit') seen.push(`commit ${git(ws, 'log', '-1', '--format=%s', e.sha!)} @ ${e.branch}`);
    if (e.kind === 'checkout') seen.push(`${e.from} -> ${e.branch}`);
    record(e, t0);
  };
  return seen;
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(ok(), what);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('capture of a repository the Git extension closes', function () {
  this.timeout(120_000);
  let root: string;
  let ws: string;
  let h: Harness | undefined;

  beforeEach(() => {
    root = tmp('cm-git-close-');
    ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/price.ts': A0 });
  });
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('after the close, its reports are no longer heard; the folder still in the workspace falls back to watching HEAD', async () => {
    h = new Harness({ folders: [ws] });
    const api = gitApiOf(h);
    await h.start();
    const seen = gitRecords(h, ws);
    const repo = h.repos[0];
    assert.equal(listeners(repo), 1);
    api.close(repo);
    assert.equal(listeners(repo), 0, 'the closed repository is still listened to');
    git(ws, 'checkout', '-q', '-b', 'after-close');
    report(repo);
    assert.deepEqual(seen, [], 'a report of the closed repository was recorded');
    await until('the folder falls back to watching HEAD', () => fallbackListening(h!));
    headChanged(h, ws);
    await until('the fallback reads the checkout', () => seen.length > 0);
    assert.deepEqual(seen, ['main -> after-close']);
    assert.equal(h.capture.git.branchOf(h.folderUri(0)), 'after-close');
  });

  it('re-opened (a new repository object): watched again, each checkout and commit recorded once, the fallback released', async () => {
    h = new Harness({ folders: [ws] });
    const api = gitApiOf(h);
    await h.start();
    const seen = gitRecords(h, ws);
    api.close(h.repos[0]);
    await until('the folder falls back to watching HEAD', () => fallbackListening(h!));
    const again = stubRepo(ws);
    api.open(again);
    assert.ok(!fallbackListening(h), 'the fallback watch is kept after the re-open');
    git(ws, 'checkout', '-q', '-b', 'fix');
    writeFiles(ws, { 'src/price.ts': A0.replace('n * 2', 'n * 5') });
    git(ws, 'commit', '-q', '-am', 'Round to five');
    report(again);
    headChanged(h, ws);
    await sleep(500);
    report(again);
    assert.deepEqual(seen, ['main -> fix', 'commit Round to five @ fix']);
    assert.equal(h.capture.git.branchOf(h.folderUri(0)), 'fix');
    // Closed and opened once more: still one listener, one record per change.
    api.close(again);
    api.open(again);
    assert.equal(listeners(again), 1);
    git(ws, 'checkout', '-q', 'main');
    report(again);
    headChanged(h, ws);
    await sleep(500);
    assert.deepEqual(seen, ['main -> fix', 'commit Round to five @ fix', 'fix -> main']);
  });

  it('closed and at once re-opened as a new repository object: the new object\'s reports are heard, once', async () => {
    h = new Harness({ folders: [ws] });
    const api = gitApiOf(h);
    await h.start();
    const seen = gitRecords(h, ws);
    const first = h.repos[0];
    api.close(first);
    const again = stubRepo(ws);
    api.open(again);
    git(ws, 'checkout', '-q', '-b', 'fix');
    report(again);
    assert.deepEqual(seen, ['main -> fix'], 'the re-opened repository is not heard');
    assert.equal(h.capture.git.branchOf(h.folderUri(0)), 'fix');
    report(first);
    await sleep(500);
    assert.deepEqual(seen, ['main -> fix']);
    assert.ok(!fallbackListening(h), 'a fallback watch was left after the re-open');
  });

  it('a repository closed after its folder left the workspace: unwatched, no fallback started', async () => {
    h = new Harness({ folders: [ws] });
    const api = gitApiOf(h);
    await h.start();
    const seen = gitRecords(h, ws);
    const repo = h.repos[0];
    h.folders = [];
    api.close(repo);
    await sleep(300);
    assert.equal(listeners(repo), 0);
    assert.ok(!h.watchers.some((w) => w.pattern instanceof RelativePattern), 'a fallback watch was started for a folder no longer open');
    git(ws, 'checkout', '-q', '-b', 'gone');
    report(repo);
    assert.deepEqual(seen, []);
  });
});
