// What the window shows of the store after a command changed it: the code lens, the status bar's
// store count, the details and recall panels, and the Memories view of a window of two projects.
// The commands run as VS Code runs them, through the registrar, on a real engine.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { ObservationInput } from '../../src/core/api';
import { withVscodeStub } from './vscodeStub';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow } from './extensionWindow';

describe('extension: what shows the store follows its changes', function () {
  this.timeout(60_000);
  let w: TwoProjectWindow;
  let lens: Any;
  let details: Any;
  let recall: Any;
  let statusBar: Any;
  let run: (id: string, ...args: unknown[]) => Promise<Any>;

  before(async () => {
    w = await openTwoProjectWindow();
    const { mods, stub, engines, scopes, state } = w;
    const navigation = { openFile: async () => undefined, openCommit: async () => undefined };
    const capture = { state: 'capturing', queue: { stats: { observations: 0 } }, onDidChangeState: () => ({ dispose() {} }), onDidCapture: () => ({ dispose() {} }), git: { branchOf: () => undefined } };
    withVscodeStub(stub, () => {
      lens = new mods.lens.MemoryCodeLens(engines, scopes);
      details = new mods.details.DetailsPanel(stub.Uri.file(w.dir), engines, navigation, { check: async () => null });
      recall = new mods.recall.RecallPanel(stub.Uri.file(w.dir), engines, details, navigation);
      statusBar = new mods.statusBar.StatusBar(capture, engines);
    });
    const view = { refresh() {} };
    const c = { engines, scopes, capture, details, recall, codeLens: lens, statusBar, sessionsView: view, memoriesView: view, requestLogView: view, captured: { prune: async () => undefined }, output: { error() {}, show() {} } };
    withVscodeStub(stub, () => mods.registerCommands.registerCommands(c, { mcpRegistered: () => false }));
    run = (id, ...args) => state.handlers.get(id)!(...args);
  });
  after(async () => {
    statusBar?.dispose();
    await w.close();
  });

  const observe = async (scope: { project: string }, input: Partial<ObservationInput>): Promise<Any> => {
    const [o] = await w.engine.observe([{ type: 'note', ...input } as ObservationInput], scope);
    await w.engine.flush();
    return o;
  };
  const lensTitles = async (file: string): Promise<string[]> => (await lens.provideCodeLenses(w.doc(file, 'x'), { isCancellationRequested: false })).map((l: Any) => l.command.title);

  it('the code lens stops counting a record once it is forgotten', async () => {
    const o = await observe(w.alpha, { title: 'password handling in src/a.ts', narrative: 'the password handling in src/a.ts', files_modified: ['src/a.ts'] });
    const file = path.join(w.dir, 'alpha', 'src', 'a.ts');
    assert.equal((await lensTitles(file)).length, 1, 'a lens before the forget');
    await run('codeMemory.forgetItem', { kind: 'observation', scope: w.alpha, id: o.id }, { confirm: false });
    assert.deepEqual(await lensTitles(file), []);
  });

  it('the code lens stops counting a record once it is suppressed, and counts it again once it is unsuppressed', async () => {
    const o = await observe(w.beta, { title: 'wibble handling in src/c.ts', narrative: 'wibble handling in src/c.ts', files_modified: ['src/c.ts'] });
    const file = path.join(w.dir, 'beta', 'src', 'c.ts');
    assert.equal((await lensTitles(file)).length, 1, 'a lens before the suppress');
    await run('codeMemory.suppress', { kind: 'observation', scope: w.beta, id: o.id });
    assert.deepEqual(await lensTitles(file), []);
    // Reversible: Unsuppress gives it back to the lens, search and agents.
    await run('codeMemory.unsuppress', { kind: 'observation', scope: w.beta, id: o.id });
    assert.equal((await lensTitles(file)).length, 1, 'a lens again after Unsuppress');
    const [found] = await w.engine.getObservations([o.id], w.beta);
    assert.equal(found?.status, 'active');
  });

  it('the code lens counts a memory kept with Remember Selection and one promoted from an observation', async () => {
    const file = path.join(w.dir, 'alpha', 'src', 'lensed.ts');
    assert.deepEqual(await lensTitles(file), [], 'no lens before');
    w.state.active = w.editor(w.doc(file, 'export const lensed = 1;'));
    const kept = await run('codeMemory.rememberSelection', { title: 'lensed is one', memoryType: 'decision' });
    assert.ok(kept, w.state.errors.join('\n'));
    assert.deepEqual(await lensTitles(file), ['Code Memory: 1 decision']);
    const o = await observe(w.alpha, { title: 'lensed.ts holds the constant', narrative: 'lensed.ts holds the constant', files_modified: ['src/lensed.ts'] });
    lens.refresh(); // as capture's batch does
    const before = await lensTitles(file);
    await run('codeMemory.promoteToMemory', { kind: 'observation', scope: w.alpha, id: o.id });
    const after = await lensTitles(file);
    assert.notDeepEqual(after, before, `the lens did not change after Promote: ${after.join(' | ')}`);
    assert.match(after[0], /1 decision · 1 note/);
  });

  it('Forget on a session that worked on two branches forgets all of it, both summaries and their observations', async () => {
    const t = Date.now() - 60_000;
    await w.engine.observe(
      [
        { memory_session_id: 'two-branches', type: 'note', title: 'zebra work on A', narrative: 'zebra', branch: 'br-a', created_at_epoch: t },
        { memory_session_id: 'two-branches', type: 'note', title: 'yak work on B', narrative: 'yak', branch: 'br-b', created_at_epoch: t + 2000 },
      ],
      w.alpha,
    );
    await w.engine.endSession(w.alpha, 'two-branches', 'idle');
    const listed = (await w.engine.listSessions(w.alpha)).find((s) => s.memory_session_id === 'two-branches');
    assert.equal(listed?.summary_ids?.length, 2, 'a summary per branch');
    const node = withVscodeStub(w.stub, () => new w.mods.nodes.SessionNode(w.alpha, listed));
    await run('codeMemory.forgetItem', node, { confirm: false });
    assert.equal((await w.engine.listSessions(w.alpha)).find((s) => s.memory_session_id === 'two-branches'), undefined, 'the session is gone whole');
  });

  it('the details panel showing a record says it is gone once it is forgotten, title and all', async () => {
    const o = await observe(w.alpha, { title: 'zorblax token is hunter2', narrative: 'zorblax token is hunter2' });
    const target = { kind: 'observation', scope: w.alpha, id: o.id };
    await details.show(target);
    const panel = w.state.panels[w.state.panels.length - 1];
    assert.match(panel.webview.html, /zorblax/, 'shown before the forget');
    await run('codeMemory.forgetItem', target, { confirm: false });
    assert.doesNotMatch(panel.webview.html, /zorblax/);
    assert.doesNotMatch(panel.title, /zorblax/);
    assert.match(panel.webview.html, /no longer in the store/);
  });

  it('the details panel showing a session says it is gone after Forget Everything', async () => {
    await observe(w.beta, { title: 'gloopwidget session work', narrative: 'gloopwidget session work' });
    const [session] = await w.engine.listSessions(w.beta, 5);
    await details.show({ kind: 'session', scope: w.beta, session });
    const panel = w.state.panels.find((p) => /gloopwidget/.test(p.webview.html));
    assert.ok(panel, 'the session is shown');
    w.state.active = undefined;
    w.state.quickPick = (items) => items.find((i: Any) => /Everything in the store/.test(i.label));
    try {
      await run('codeMemory.forget');
    } finally {
      w.state.quickPick = (items) => items[0];
    }
    assert.doesNotMatch(panel.webview.html, /gloopwidget/);
    assert.match(panel.webview.html, /no longer in the store/);
  });

  it('the recall panel drops a result once it is forgotten, and the agent context that quoted it', async () => {
    const kept = await w.engine.remember({ title: 'frobnicator runs nightly', text: 'the frobnicator runs nightly' }, w.alpha);
    const gone = await w.engine.remember({ title: 'frobnicator secret is swordfish', text: 'the frobnicator secret is swordfish' }, w.alpha);
    await w.engine.flush();
    const hits = await w.engine.search('frobnicator', { scope: w.alpha, limit: 10 });
    assert.equal(hits.length, 2);
    recall.show({ query: 'frobnicator', origin: 'query', scope: w.alpha, hits, contextPack: 'frobnicator secret is swordfish', elapsedMs: 1 });
    const panel = w.state.panels[w.state.panels.length - 1];
    assert.match(panel.webview.html, /swordfish/);
    await run('codeMemory.forgetItem', { kind: 'memory', scope: w.alpha, id: gone.id }, { confirm: false });
    assert.doesNotMatch(panel.webview.html, /swordfish/);
    assert.match(panel.webview.html, new RegExp(kept.title));
    assert.match(panel.webview.html, /1 result was forgotten since this recall/);
  });

  it("the status bar's store count follows Forget Everything", async () => {
    await observe(w.alpha, { title: 'counted', narrative: 'counted' });
    await statusBar.refreshCount();
    const item = w.state.items[w.state.items.length - 1];
    assert.match(item.tooltip.value, /[1-9]\d* in the store/, 'counted before');
    w.state.active = undefined;
    w.state.quickPick = (items) => items.find((i: Any) => /Everything in the store/.test(i.label));
    try {
      const report = await run('codeMemory.forget');
      assert.ok(report.observations > 0);
    } finally {
      w.state.quickPick = (items) => items[0];
    }
    assert.match(item.tooltip.value, /· 0 in the store/);
  });
});

describe('extension: the Memories view of a window of two projects', () => {
  let w: TwoProjectWindow;
  before(async () => {
    w = await openTwoProjectWindow();
  });
  after(() => w.close());

  it('puts each project above its memories, with ids unique across the tree', async () => {
    await w.engine.remember({ title: 'Deploy from release branch', text: 'alpha deploys from release' }, w.alpha);
    await w.engine.remember({ title: 'Deploy from main', text: 'beta deploys from main' }, w.beta);
    await w.engine.remember({ title: 'Tabs, not spaces', text: 'beta indents with tabs', memory_type: 'convention' }, w.beta);
    await w.engine.flush();
    const view = withVscodeStub(w.stub, () => new w.mods.memoriesView.MemoriesView(w.engines, w.scopes));
    const tree = await view.snapshot();
    view.dispose();
    assert.deepEqual(
      tree.map((p: Any) => [p.label, p.description, p.children.map((g: Any) => [g.label, g.children.map((m: Any) => m.label)])]),
      [
        ['proj-alpha', '1 memory', [['Notes', ['Deploy from release branch']]]],
        ['proj-beta', '2 memories', [['Conventions', ['Tabs, not spaces']], ['Notes', ['Deploy from main']]]],
      ],
    );
    const ids: string[] = [];
    const collect = (nodes: Any[]): void => nodes.forEach((n) => (ids.push(n.id), collect(n.children)));
    collect(tree);
    assert.equal(new Set(ids).size, ids.length, ids.join('\n'));
  });

  it('keeps the type groups at the top in a window of one project', async () => {
    const folders = w.state.folders;
    w.state.folders = [folders[1]];
    try {
      const view = withVscodeStub(w.stub, () => new w.mods.memoriesView.MemoriesView(w.engines, w.scopes));
      const tree = await view.snapshot();
      view.dispose();
      assert.deepEqual(tree.map((g: Any) => [g.id, g.label]), [['memory-type:convention', 'Conventions'], ['memory-type:note', 'Notes']]);
    } finally {
      w.state.folders = folders;
    }
  });
});
