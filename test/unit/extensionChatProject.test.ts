// The chat tools (VS Code language-model tools) in a window of two projects, called as VS Code
// calls them, with the active editor in no folder (an untitled buffer, no editor at all): the user
// is asked which project once, and the answer holds for the window's later calls, until the
// folders change or the user picks another project; the first folder is never taken unasked.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { findTool } from '../../src/core/tools/registry';
import { withVscodeStub } from './vscodeStub';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow } from './extensionWindow';

type Invoke = (input: Record<string, unknown>) => Promise<string>;

describe('chat tools in a window of two projects, the active editor in no folder', function () {
  this.timeout(60_000);
  let w: TwoProjectWindow;
  let folderChanged: Array<(e: unknown) => unknown>;
  let scopes: Any;
  let tools: Map<string, Any>;
  let stored = 0;

  before(async () => {
    w = await openTwoProjectWindow();
    await w.engine.remember({ title: 'zorblat lives in alpha', text: 'The zorblat cache is an alpha thing.' }, w.alpha);
    await w.engine.remember({ title: 'zorblat lives in beta', text: 'The zorblat queue is a beta thing.' }, w.beta);
    await w.engine.flush();
  });
  after(() => w.close());

  beforeEach(() => {
    // A window whose folder changes the spec can fire, and the tools VS Code would be given.
    folderChanged = [];
    w.stub.workspace.onDidChangeWorkspaceFolders = (l: (e: unknown) => unknown) => (folderChanged.push(l), { dispose: () => undefined });
    tools = new Map();
    w.stub.LanguageModelTextPart = class {
      constructor(readonly value: string) {}
    };
    w.stub.LanguageModelToolResult = class {
      constructor(readonly content: unknown[]) {}
    };
    w.stub.lm = { registerTool: (name: string, tool: Any) => (tools.set(name, tool), { dispose: () => undefined }) };
    scopes = withVscodeStub(w.stub, () => new w.mods.scopes.ScopeService(w.projectOf));
    // The engine worker's invokeTool, on the real engine: the tool of that name, run in the scope given.
    const engine = { invokeTool: (name: string, scope: Any, input: unknown, session: string) => findTool(name)!.run({ engine: w.engine, scope, transportSessionId: session }, input) };
    const engines = { get: async () => engine, peek: () => engine, isOpen: true, storeUri: w.engines.storeUri, onDidOpen: w.engines.onDidOpen };
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const lm = withVscodeStub(w.stub, () => require('../../src/extension/agents/languageModelTools'));
    withVscodeStub(w.stub, () => lm.registerLanguageModelTools(engines, scopes, () => stored++));
    w.state.folderPicks.length = 0;
    w.state.folderPick = undefined;
  });

  /** The chat tool of that MCP name, called as VS Code calls it; its text. */
  const tool = (name: string): Invoke => async (input) => {
    const result = await tools.get(`codeMemory_${name}`).invoke({ input, toolInvocationToken: undefined }, { isCancellationRequested: false });
    return result.content.map((p: Any) => p.value).join('');
  };
  const untitled = (): Any => w.editor(w.doc('Untitled-7', 'scratch', 'untitled'));
  const projectOf = async (title: string): Promise<string[]> =>
    [...(await w.engine.listMemories(w.alpha, {})), ...(await w.engine.listMemories(w.beta, {}))].filter((m) => m.title === title).map((m) => m.project);

  it('asks once, on the first call, and the later calls (any tool, any editor of no folder) go to the project picked', async () => {
    w.state.active = untitled();
    w.state.folderPick = 'beta';
    assert.match(await tool('remember')({ title: 'chat note 1', text: 'said in a chat' }), /Remembered memory/);
    assert.equal(w.state.folderPicks.length, 1, 'the first call asks');
    // The pick would now answer alpha: a question asked again would show.
    w.state.folderPick = 'alpha';
    assert.match(await tool('remember')({ title: 'chat note 2', text: 'said in a chat' }), /Remembered memory/);
    assert.match(await tool('recall_context')({ query: 'zorblat' }), /zorblat lives in beta/);
    w.state.active = undefined;
    assert.match(await tool('retrieve_memory')({ prompt: 'where does zorblat live?' }), /beta/);
    assert.doesNotMatch(await tool('recall_context')({ query: 'zorblat' }), /zorblat lives in alpha/);
    assert.equal(w.state.folderPicks.length, 1, `asked again: ${w.state.folderPicks.join(' | ')}`);
    assert.deepEqual(await projectOf('chat note 1'), ['proj-beta']);
    assert.deepEqual(await projectOf('chat note 2'), ['proj-beta']);
  });

  it("takes the folder of an editor that is in one, without asking, and keeps the choice for the editors that are not", async () => {
    w.state.active = untitled();
    w.state.folderPick = 'beta';
    await tool('remember')({ title: 'chat note 3', text: 'x' });
    w.state.active = w.editor(w.doc(path.join(w.dir, 'alpha', 'src', 'a.ts'), 'code'));
    await tool('remember')({ title: 'chat note 4', text: 'x' });
    w.state.active = untitled();
    await tool('remember')({ title: 'chat note 5', text: 'x' });
    assert.equal(w.state.folderPicks.length, 1);
    assert.deepEqual([await projectOf('chat note 3'), await projectOf('chat note 4'), await projectOf('chat note 5')], [['proj-beta'], ['proj-alpha'], ['proj-beta']]);
  });

  it('never takes the first folder unasked: a dismissed pick searches nothing, and the next call asks again', async () => {
    w.state.active = undefined;
    w.state.folderPick = undefined;
    assert.match(await tool('recall_context')({ query: 'zorblat' }), /No project was chosen/);
    assert.match(await tool('remember')({ title: 'chat note 6', text: 'x' }), /No project was chosen/);
    assert.equal(w.state.folderPicks.length, 2, 'each call asks until a project is picked');
    assert.deepEqual(await projectOf('chat note 6'), []);
  });

  it('asks again once the folders of the window change', async () => {
    w.state.active = undefined;
    w.state.folderPick = 'beta';
    await tool('remember')({ title: 'chat note 7', text: 'x' });
    for (const l of folderChanged) l({ added: [], removed: [] });
    w.state.folderPick = 'alpha';
    await tool('remember')({ title: 'chat note 8', text: 'x' });
    assert.equal(w.state.folderPicks.length, 2);
    assert.deepEqual([await projectOf('chat note 7'), await projectOf('chat note 8')], [['proj-beta'], ['proj-alpha']]);
  });

  it('goes to the project the user picks later for work in no folder (a command on an untitled buffer, or Choose Project for Chat Tools…)', async () => {
    w.state.active = undefined;
    w.state.folderPick = 'beta';
    await tool('remember')({ title: 'chat note 9', text: 'x' });
    // A command run on an untitled buffer asks (the user is there), and its answer is the window's choice.
    w.state.folderPick = 'alpha';
    assert.equal((await scopes.resolve(w.doc('Untitled-8', 'x', 'untitled').uri, 'Add the note to the memory of which project?'))?.scope.project, 'proj-alpha');
    await tool('remember')({ title: 'chat note 10', text: 'x' });
    // The palette's Choose Project for Chat Tools… asks and keeps the answer.
    w.state.folderPick = 'beta';
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { chooseProjectCommand } = withVscodeStub(w.stub, () => require('../../src/extension/commands/chooseProject'));
    assert.equal(await withVscodeStub(w.stub, () => chooseProjectCommand({ scopes }).run()), 'proj-beta');
    await tool('remember')({ title: 'chat note 11', text: 'x' });
    assert.equal(w.state.folderPicks.length, 3);
    assert.deepEqual([await projectOf('chat note 9'), await projectOf('chat note 10'), await projectOf('chat note 11')], [['proj-beta'], ['proj-alpha'], ['proj-beta']]);
    assert.ok(stored > 0, 'the window was told of the memories the chat stored');
  });
});
