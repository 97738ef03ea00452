// The Memories view with thousands of memories: each level shows a page (the 200 newest), then a
// "Show more…" item whose command shows the next page; the view's description says how many there
// are in all. Unbounded, one level of 5,000 memories took seconds to build here (and VS Code would
// draw every one of them). Real engine in a temp folder; commands run through the registrar.
import { strict as assert } from 'node:assert';
import { memoryToRow } from '../../src/core/store/mapping';
import { TABLES } from '../../src/core/store/schema';
import type { Memory } from '../../src/core/model/records';
import { withVscodeStub } from './vscodeStub';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow } from './extensionWindow';

const COUNT = 3000;

/** `n` notes of `project`, written as rows at once (remembering each would take minutes): note i is the i-th newest from the oldest. */
async function manyNotes(w: TwoProjectWindow, project: string, n: number): Promise<void> {
  const start = Date.now() - n * 1000;
  const rows = [];
  for (let i = 1; i <= n; i++) {
    const memory: Memory = {
      id: 100_000 + i, project, title: `bulk note ${i}`, text: `bulk memory number ${i}`, memory_type: 'note', created_at_epoch: start + i * 1000, updated_at_epoch: start + i * 1000,
      status: 'active', scope: 'project', classification: 'note', classification_reason: 'saved explicitly', current_context_eligible: false, branch: null, files: null, session_id: null,
      topic_key: null, topic_trace: null, temporal_facts: null, supersedes: null, superseded_by: null, valid_to_epoch: null, conflicts: null,
    } as unknown as Memory;
    rows.push(memoryToRow(memory));
  }
  await (w.engine as Any).store.add(TABLES.memories, rows, 'id');
}

const labelOf = (n: Any): string => (typeof n.label === 'string' ? n.label : (n.label?.label ?? ''));

describe('extension: the Memories view shows a page at a time', function () {
  this.timeout(180_000);
  let w: TwoProjectWindow;
  let view: Any;
  let run: (id: string, ...args: unknown[]) => Promise<Any>;
  before(async () => {
    w = await openTwoProjectWindow();
    w.state.folders = [w.state.folders[0]];
    await manyNotes(w, w.alpha.project, COUNT);
    view = withVscodeStub(w.stub, () => new w.mods.memoriesView.MemoriesView(w.engines, w.scopes));
    const quiet = { refresh() {} };
    const c = { engines: w.engines, scopes: w.scopes, memoriesView: view, sessionsView: quiet, requestLogView: quiet, codeLens: quiet, output: { error() {}, show() {} } };
    w.state.handlers.clear();
    withVscodeStub(w.stub, () => w.mods.registerCommands.registerCommands(c, { mcpRegistered: () => false }));
    run = (id, ...args) => w.state.handlers.get(id)!(...args);
  });
  after(async () => {
    view.dispose();
    await w.close();
  });

  it('shows the 200 newest, then Show more…, and says how many there are in all', async () => {
    const [notes] = await view.getChildren();
    assert.equal(labelOf(notes), 'Notes');
    const first = await view.getChildren(notes);
    assert.equal(first.length, 201);
    assert.deepEqual(first.slice(0, 2).map(labelOf), [`bulk note ${COUNT}`, `bulk note ${COUNT - 1}`]);
    assert.equal(labelOf(first[199]), `bulk note ${COUNT - 199}`);
    const more = first[200];
    assert.equal(labelOf(more), 'Show more…');
    assert.equal(more.description, '200 of 3,000 shown');
    assert.equal(more.command.command, 'codeMemory.showMoreMemories');
    assert.equal(view.tree.description, '3,000 memories');
  });

  it('Show more… shows the next page of its level, redrawing that level alone', async () => {
    const [notes] = await view.getChildren();
    const more = (await view.getChildren(notes))[200];
    const fired: Any[] = [];
    view.onDidChangeTreeData((e: Any) => fired.push(e));
    await run(more.command.command, ...more.command.arguments);
    assert.deepEqual(fired, [notes]);
    const second = await view.getChildren(notes);
    assert.equal(second.length, 401);
    assert.equal(labelOf(second[200]), `bulk note ${COUNT - 200}`);
    assert.equal(second[400].description, '400 of 3,000 shown');
    // Every id stays unique, the Show more… item's too.
    const ids = second.map((n: Any) => n.id);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('a level of a page or less has no Show more…', async () => {
    await w.engine.remember({ title: 'one decision', text: 'a single decision', memory_type: 'decision' }, w.alpha);
    const top = await view.getChildren();
    const decisions = top.find((n: Any) => labelOf(n) === 'Decisions');
    assert.deepEqual((await view.getChildren(decisions)).map(labelOf), ['one decision']);
    assert.equal(view.tree.description, '3,001 memories');
  });

  it('claims no count while the store cannot be read, and says why', async () => {
    let broken = false;
    const engines = { ...w.engines, get: async () => (broken ? Promise.reject(new Error('EACCES: permission denied')) : w.engine) };
    const other = withVscodeStub(w.stub, () => new w.mods.memoriesView.MemoriesView(engines, w.scopes));
    try {
      await other.getChildren();
      assert.equal(other.tree.description, '3,001 memories');
      broken = true;
      assert.deepEqual((await other.getChildren()).map(labelOf), ['Could not read the store: EACCES: permission denied']);
      assert.equal(other.tree.description, undefined);
    } finally {
      other.dispose();
    }
  });
});
