// The extension's commands in a window of two projects, run as VS Code runs them (through the
// registrar): which project a selection belongs to, one report of a failure, the size of a memory.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow, registerQuietCommands } from './extensionWindow';

describe('extension commands in a window of two projects', function () {
  this.timeout(60_000);
  let w: TwoProjectWindow;

  before(async () => {
    w = await openTwoProjectWindow();
    await w.engine.remember({ title: 'quuxinator decision alpha', text: 'quuxinator lives in alpha only' }, w.alpha);
    await w.engine.flush();
  });
  after(() => w.close());

  const commands = (engines?: Any): ((id: string, ...args: unknown[]) => Promise<Any>) => registerQuietCommands(w, engines);
  const inAlpha = async (id: number): Promise<boolean> => (await w.engine.listMemories(w.alpha, {})).some((m) => m.id === id);
  const inBeta = async (id: number): Promise<boolean> => (await w.engine.listMemories(w.beta, {})).some((m) => m.id === id);

  it("recalls the memory of the file's own project for a selection in the git diff view of a file of the second folder", async () => {
    const run = commands();
    w.state.active = w.editor(w.doc(path.join(w.dir, 'beta', 'src', 'b.ts'), 'quuxinator', 'git'));
    const r = await run('codeMemory.recallContextForSelection', { show: false });
    assert.equal(r.scope.project, 'proj-beta');
    assert.deepEqual(r.hits.map((h: Any) => h.cell.title), []);
    assert.doesNotMatch(r.contextPack ?? '', /quuxinator decision alpha/);
    assert.deepEqual(w.state.folderPicks, [], 'no need to ask: the path is in beta');
  });

  it('asks which project a selection in an untitled buffer is for, and keeps it there', async () => {
    const run = commands();
    w.state.folderPicks.length = 0;
    w.state.folderPick = 'beta';
    w.state.active = w.editor(w.doc('Untitled-1', 'scratch note for beta', 'untitled'));
    const m = await run('codeMemory.rememberSelection', { memoryType: 'note', title: 'scratch' });
    assert.ok(m, w.state.errors.join('\n'));
    assert.equal(w.state.folderPicks.length, 1, 'the folder was asked for');
    assert.equal(await inBeta(m.id), true);
    assert.equal(await inAlpha(m.id), false);
    assert.match(w.state.infos[w.state.infos.length - 1], /Remembered in proj-beta: scratch/);
  });

  it('stores nothing when the pick of the project is dismissed', async () => {
    const run = commands();
    w.state.folderPick = undefined;
    w.state.active = w.editor(w.doc('Untitled-2', 'where does this go', 'untitled'));
    const before = (await w.engine.listMemories(w.alpha, {})).length + (await w.engine.listMemories(w.beta, {})).length;
    assert.equal(await run('codeMemory.rememberSelection', { memoryType: 'note', title: 'nowhere' }), undefined);
    assert.equal(await run('codeMemory.addNote', { text: 'nowhere either', memoryType: 'note' }), undefined);
    assert.equal(await run('codeMemory.recallContextForSelection', { show: false }), undefined);
    const after = (await w.engine.listMemories(w.alpha, {})).length + (await w.engine.listMemories(w.beta, {})).length;
    assert.equal(after, before);
  });

  it('reports a command run while the store cannot open once, and resolves', async () => {
    const broken = { get: async () => Promise.reject(new Error('EACCES: permission denied, open /store/lock')), isOpen: false, storeUri: '/store', peek: () => undefined };
    const run = commands(broken);
    w.state.active = w.editor(w.doc(path.join(w.dir, 'alpha', 'src', 'a.ts'), 'hello world'));
    for (const id of ['codeMemory.addNote', 'codeMemory.recallContextForSelection', 'codeMemory.rememberSelection']) {
      const before = w.state.errors.length;
      await assert.doesNotReject(run(id, { text: 'x', memoryType: 'note', title: 't' }), id);
      assert.deepEqual(w.state.errors.slice(before), ['Code Memory: EACCES: permission denied, open /store/lock'], id);
    }
  });

  it('refuses to remember a selection longer than a memory holds, and stores nothing', async () => {
    const run = commands();
    const huge = 'line of code\n'.repeat(250_000);
    w.state.active = w.editor(w.doc(path.join(w.dir, 'alpha', 'src', 'big.ts'), huge));
    const before = (await w.engine.listMemories(w.alpha, {})).length;
    assert.equal(await run('codeMemory.rememberSelection', { memoryType: 'note', title: 'big' }), undefined);
    assert.match(w.state.warnings[w.state.warnings.length - 1], /The selection is 3,249,999 characters; a memory holds at most 20,000/);
    assert.equal((await w.engine.listMemories(w.alpha, {})).length, before);
  });

  it('keeps a selection of exactly the limit, without the note of where it came from', async () => {
    const run = commands();
    const text = 'é'.repeat(19_999) + '😀';
    w.state.active = w.editor(w.doc(path.join(w.dir, 'alpha', 'src', 'full.ts'), text));
    const m = await run('codeMemory.rememberSelection', { memoryType: 'note', title: 'full' });
    assert.ok(m, w.state.errors.join('\n'));
    assert.equal([...m.text].length, 20_000);
  });
});

describe("engine: remember holds every caller to the remember tool's bounds", () => {
  let w: TwoProjectWindow;
  before(async () => {
    w = await openTwoProjectWindow();
  });
  after(() => w.close());

  it('refuses a text over 20,000 characters or a title over 300 with a FilterError, and stores nothing', async () => {
    await assert.rejects(w.engine.remember({ title: 'big', text: 'x'.repeat(20_001) }, w.alpha), (e: Error) => e.name === 'FilterError' && /text is at most 20,000 characters; this one has 20,001/.test(e.message));
    await assert.rejects(w.engine.remember({ title: 't'.repeat(301), text: 'small' }, w.alpha), (e: Error) => e.name === 'FilterError' && /title is at most 300 characters/.test(e.message));
    assert.deepEqual(await w.engine.listMemories(w.alpha, {}), []);
    // Counted in code points, as the tool counts them.
    const m = await w.engine.remember({ title: '😀'.repeat(300), text: '😀'.repeat(20_000) }, w.alpha);
    assert.equal([...m.text].length, 20_000);
  });
});
