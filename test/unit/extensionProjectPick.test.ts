// In a window of several projects with no active editor, the commands a user runs on "the
// project" (Search Memory, Export's "This project", Copy Agent Configuration) ask which project,
// as Recall and Remember do, instead of taking the first folder's; the active file's folder is
// taken without asking; a dismissed pick does nothing. The window's MCP server serves one project
// and says which at initialize. Real engine in a temp folder; commands run through the registrar.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { withVscodeStub } from './vscodeStub';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow } from './extensionWindow';

describe('extension: commands on a project ask which one in a window of several', function () {
  this.timeout(60_000);
  let w: TwoProjectWindow;
  let run: (id: string, ...args: unknown[]) => Promise<Any>;
  let pickers: Any[];

  before(async () => {
    w = await openTwoProjectWindow();
    await w.engine.remember({ title: 'zebrafish alpha decision', text: 'zebrafish lives in alpha' }, w.alpha);
    await w.engine.remember({ title: 'zebrafish beta decision', text: 'zebrafish lives in beta' }, w.beta);
    await w.engine.flush();
    // The engine thread's export, over the engine of the window.
    const engine = w.engine as Any;
    const client = Object.assign(Object.create(engine), {
      exportToFile: async (file: string, scope: Any) => {
        const lines: string[] = [];
        const n = await engine.exportJsonl((l: string) => lines.push(l), scope);
        fs.writeFileSync(file, `${lines.join('\n')}\n`);
        return n;
      },
    });
    const c = {
      context: { extensionUri: w.stub.Uri.file(path.join(w.dir, 'ext')) },
      engines: { ...w.engines, get: async () => client },
      scopes: w.scopes,
      details: { show: async () => undefined },
      output: { error() {}, show() {} },
    };
    withVscodeStub(w.stub, () => w.mods.registerCommands.registerCommands(c, { mcpRegistered: () => false }));
    run = (id, ...args) => w.state.handlers.get(id)!(...args);
    // Search Memory's quick pick, as createQuickPick makes it; `type` types into it.
    w.stub.window.createQuickPick = () => {
      const onValue: ((v: string) => void)[] = [];
      const qp: Any = {
        items: [],
        onDidChangeValue: (l: (v: string) => void) => (onValue.push(l), { dispose() {} }),
        onDidAccept: () => ({ dispose() {} }),
        onDidHide: () => ({ dispose() {} }),
        show() {},
        type: async (v: string) => {
          for (const l of onValue) l(v);
          await new Promise((r) => setTimeout(r, 800));
        },
      };
      pickers.push(qp);
      return qp;
    };
  });
  after(() => w.close());
  beforeEach(() => {
    pickers = [];
    w.state.active = undefined;
    w.state.folderPicks.length = 0;
    w.state.quickPick = (items) => items[0];
  });

  const inBeta = (): Any => w.editor(w.doc(path.join(w.dir, 'beta', 'src', 'x.ts'), 'x'));

  it('Search Memory asks which project, and searches only that one', async () => {
    w.state.folderPick = 'beta';
    await run('codeMemory.searchMemory');
    assert.equal(w.state.folderPicks.length, 1);
    assert.equal(pickers.length, 1);
    assert.equal(pickers[0].title, 'Search Memory · proj-beta');
    await pickers[0].type('zebrafish');
    assert.deepEqual(pickers[0].items.map((i: Any) => i.hit.cell.title), ['zebrafish beta decision']);
  });

  it('Search Memory does nothing when the pick is dismissed, and asks nothing in a file of a folder', async () => {
    w.state.folderPick = undefined;
    await run('codeMemory.searchMemory');
    assert.equal(pickers.length, 0);
    w.state.active = inBeta();
    w.state.folderPicks.length = 0;
    await run('codeMemory.searchMemory');
    assert.deepEqual(w.state.folderPicks, []);
    assert.equal(pickers[0].title, 'Search Memory · proj-beta');
  });

  it("Export's one project asks which, and exports that project alone", async () => {
    w.state.folderPick = 'beta';
    let offered: string[] = [];
    w.state.quickPick = (items) => ((offered = items.map((i: Any) => i.label)), items[0]);
    const file = path.join(w.dir, 'beta.jsonl');
    assert.equal(await run('codeMemory.exportMemory', { uri: w.stub.Uri.file(file) }), 1);
    assert.deepEqual(offered, ['A project of this window…', 'Every project in the store']);
    assert.equal(w.state.folderPicks.length, 1);
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /zebrafish beta/);
    assert.doesNotMatch(text, /zebrafish alpha|proj-alpha/);
  });

  it('Export writes nothing when the project pick is dismissed; in a file of a folder it names that project and asks nothing', async () => {
    w.state.folderPick = undefined;
    const none = path.join(w.dir, 'none.jsonl');
    assert.equal(await run('codeMemory.exportMemory', { uri: w.stub.Uri.file(none) }), undefined);
    assert.equal(fs.existsSync(none), false);
    w.state.active = inBeta();
    w.state.folderPicks.length = 0;
    let offered: string[] = [];
    w.state.quickPick = (items) => ((offered = items.map((i: Any) => i.label)), items[0]);
    const file = path.join(w.dir, 'beta-active.jsonl');
    assert.equal(await run('codeMemory.exportMemory', { uri: w.stub.Uri.file(file) }), 1);
    assert.equal(offered[0], 'This project (proj-beta)');
    assert.deepEqual(w.state.folderPicks, []);
  });

  it('Export of every project asks no project', async () => {
    w.state.quickPick = (items) => items[1];
    const file = path.join(w.dir, 'all.jsonl');
    assert.equal(await run('codeMemory.exportMemory', { uri: w.stub.Uri.file(file) }), 2);
    assert.deepEqual(w.state.folderPicks, []);
  });

  it('Copy Agent Configuration asks which project; dismissed, it copies nothing', async () => {
    w.state.folderPick = 'beta';
    const snippet = await run('codeMemory.copyAgentConfiguration', { target: 'stdio', write: false });
    assert.equal(w.state.folderPicks.length, 1);
    assert.match(snippet.text, /--project proj-beta/);
    assert.doesNotMatch(snippet.text, /proj-alpha/);
    w.state.folderPick = undefined;
    let copied = 0;
    const clipboard = w.stub.env.clipboard.writeText;
    w.stub.env.clipboard.writeText = async () => void copied++;
    try {
      assert.equal(await run('codeMemory.copyAgentConfiguration', { target: 'stdio', write: false }), undefined);
    } finally {
      w.stub.env.clipboard.writeText = clipboard;
    }
    assert.equal(copied, 0);
  });

  it("Copy Agent Configuration in a file of a folder takes that folder's project without asking", async () => {
    w.state.active = inBeta();
    const snippet = await run('codeMemory.copyAgentConfiguration', { target: 'stdio', write: false });
    assert.deepEqual(w.state.folderPicks, []);
    assert.match(snippet.text, /--project proj-beta/);
  });

  it("the window's MCP server says which project it serves when a client connects", async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { McpServerHost } = withVscodeStub(w.stub, () => require('../../src/extension/agents/mcpServerHost'));
    const servers: RunningHttpServer[] = [];
    const client = {
      startHttpServer: async (o: Any) => {
        const s = await startHttpServer({ engine: w.engine, scope: o.scope, port: 0, token: o.token });
        servers.push(s);
        return { url: s.url, token: s.token };
      },
    };
    const secrets = { get: async () => undefined, store: async () => undefined, delete: async () => undefined };
    const logs: string[] = [];
    const host = withVscodeStub(w.stub, () => new McpServerHost({ get: async () => client, peek: () => undefined, onDidClose: () => ({ dispose() {} }) }, w.scopes, secrets, (m: string) => logs.push(m)));
    try {
      const s = await host.start();
      assert.equal(s.project, 'proj-alpha');
      assert.ok(logs.some((l) => l.startsWith('MCP server for proj-alpha listening on')), logs.join('\n'));
      const res = await fetch(s.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spec', version: '1' } } }),
      });
      const body = (await res.json()) as Any;
      assert.match(body.result.instructions, /^Code Memory: the memory of project "proj-alpha" only/);
    } finally {
      for (const s of servers) await s.close();
    }
  });
});
