// What another process writes to or forgets from the store (the CLI, another window) reaches the
// window's views within seconds, without Refresh: the window's engine (a real worker thread on a
// temp store) says when a table it shows has a version it did not write itself, and the window
// brings everything that shows the store up to date once (StoreWatcher). The other process is
// the real CLI.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { EngineClient } from '../../src/extension/engineWorker/engineClient';
import { CliBundle, buildNodeBundle } from './cliFixture';
import { engineClientOptions } from './fixtures/engineClient';
import { REPO_ROOT, removeDir, tempDir } from './mcpFixture';
import { withVscodeStub } from './vscodeStub';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow } from './extensionWindow';

const bundle = new CliBundle('test-other-process');
const workerDir = path.join(REPO_ROOT, 'out', 'test-other-process-worker', String(process.pid));
const labels = (tree: Any[]): string[] => tree.flatMap((n) => [n.label, ...labels(n.children)]);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

describe('extension: what another process changes in the store shows without Refresh', function () {
  this.timeout(240_000);
  let w: TwoProjectWindow;
  let client: EngineClient;
  let dir: string;
  let view: Any;
  let details: Any;
  let statusBar: Any;
  let watcher: Any;
  let watching = true;
  const refreshed = { sessions: 0 };
  let engines: Any;

  const cli = async (args: string[], input?: string): Promise<void> => {
    const r = await bundle.run([...args, '--store', dir, '--project', w.alpha.project], { input });
    assert.equal(r.code, 0, r.stderr);
  };

  before(async () => {
    await bundle.build();
    await buildNodeBundle({ entryPoints: { engineWorker: path.join(REPO_ROOT, 'src/extension/engineWorker/worker.ts') }, outdir: workerDir });
    w = await openTwoProjectWindow();
    w.state.folders = [w.state.folders[0]];
    dir = tempDir('other-process');
    client = await EngineClient.start(engineClientOptions(path.join(workerDir, 'engineWorker.js'), dir, { embedder: { provider: 'hashed' } }));
    engines = { ...w.engines, get: async () => client, peek: () => client };
    const capture = { state: 'capturing', queue: { stats: { observations: 0 } }, onDidChangeState: () => ({ dispose() {} }), onDidCapture: () => ({ dispose() {} }) };
    const navigation = { openFile: async () => undefined, openCommit: async () => undefined };
    const quiet = { refresh() {} };
    withVscodeStub(w.stub, () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { StoreWatcher } = require('../../src/extension/storeChanged');
      view = new w.mods.memoriesView.MemoriesView(engines, w.scopes);
      details = new w.mods.details.DetailsPanel(w.stub.Uri.file(w.dir), engines, navigation, { check: async () => null });
      statusBar = new w.mods.statusBar.StatusBar(capture, engines);
      const c = { engines, memoriesView: view, sessionsView: { refresh: () => refreshed.sessions++ }, requestLogView: quiet, codeLens: quiet, statusBar, details, recall: { refresh: async () => undefined } };
      watcher = new StoreWatcher(c, () => watching, 200);
    });
  });
  after(async () => {
    watcher?.dispose();
    view?.dispose();
    statusBar?.dispose();
    // A look under way ends before the engine closes.
    await until('the last look ended', () => !watcher?.looking, 10_000);
    await client?.close();
    await w?.close();
    removeDir(dir);
    removeDir(workerDir);
    bundle.remove();
  });

  it('a memory forgotten by `code-memory forget` leaves the Memories view and the details panel, once', async () => {
    const m = await client.remember({ title: 'gizmo secret lives here', text: 'the gizmo secret lives here' }, w.alpha);
    assert.ok(labels(await view.snapshot()).includes('gizmo secret lives here'));
    await details.show({ kind: 'memory', scope: w.alpha, id: m.id });
    const panel = w.state.panels[w.state.panels.length - 1];
    assert.match(panel.webview.html, /gizmo secret/);
    await sleep(600); // the watcher's first look, and more, before the forget
    const before = refreshed.sessions;
    let fired = 0;
    view.onDidChangeTreeData(() => fired++);
    await cli(['forget', '--ids', String(m.id), '--kind', 'memory']);
    await until('the Memories view told of the forget', () => fired > 0);
    assert.ok(!labels(await view.snapshot()).includes('gizmo secret lives here'));
    await until('the details panel says the memory went', () => /no longer in the store/.test(panel.webview.html));
    assert.doesNotMatch(panel.webview.html, /gizmo secret/);
    // No loop: the refresh itself writes nothing, so once the forget's commits are over, the looks
    // find no change. (Its commits are taken together, once; one more when a pause between them
    // outlasts the wait, on a busy machine.)
    let last = refreshed.sessions;
    for (let quiet = Date.now(); Date.now() - quiet < 2000; await sleep(100)) {
      if (refreshed.sessions !== last) [last, quiet] = [refreshed.sessions, Date.now()];
    }
    assert.ok(refreshed.sessions - before >= 1 && refreshed.sessions - before <= 2, `${refreshed.sessions - before} refreshes for one forget`);
  });

  it("what `code-memory observe` adds reaches the status bar's store count", async () => {
    await sleep(400);
    await statusBar.refreshCount();
    const item = w.state.items[w.state.items.length - 1];
    const count = (): number => Number(/(\d+) in the store/.exec(item.tooltip.value)?.[1] ?? -1);
    const before = count();
    await cli(['observe'], `${JSON.stringify({ type: 'note', title: 'seen from the CLI', narrative: 'a note the CLI observed' })}\n`);
    await until('the store count follows the CLI', () => count() === before + 1);
  });

  it("the window's own writes and reads are no change from elsewhere", async () => {
    await sleep(400);
    assert.equal(await watcher.look(), false);
    const m = await client.remember({ title: 'kept by this window', text: 'kept by this window' }, w.alpha);
    await client.listMemories(w.alpha);
    await client.forget({ ids: [m.id], kind: 'memory' } as Any, w.alpha);
    assert.equal(await watcher.look(), false);
  });

  it('a window that is not watching does not look; once it watches, it shows what changed meanwhile', async () => {
    watching = false;
    try {
      await sleep(1500); // a look under way ends
      const before = refreshed.sessions;
      await cli(['observe'], `${JSON.stringify({ type: 'note', title: 'while hidden', narrative: 'observed while the window was hidden' })}\n`);
      await sleep(1000);
      assert.equal(refreshed.sessions, before, 'looked while not watching');
      watching = true;
      await until('the change made while hidden shows', () => refreshed.sessions === before + 1);
    } finally {
      watching = true;
    }
  });

  it('never opens the engine to look', async () => {
    const closed = withVscodeStub(w.stub, () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { StoreWatcher } = require('../../src/extension/storeChanged');
      let opened = 0;
      const none = { peek: () => undefined, get: async () => (opened++, client) };
      return { watcher: new StoreWatcher({ engines: none }, () => true, 60_000), opened: () => opened };
    });
    try {
      assert.equal(await closed.watcher.look(), false);
      assert.equal(closed.opened(), 0);
    } finally {
      closed.watcher.dispose();
    }
  });
});
