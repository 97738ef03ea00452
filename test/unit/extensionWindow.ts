// A VS Code window of two projects (folders alpha and beta) on plain Node, for specs that run the
// extension's commands, views and panels against a real engine in a temp dir. `vscode` is a stub
// that records what the window shows (messages, panels, status bar items, registered commands).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import type { Scope } from '../../src/core/model/records';
import { EventEmitter as Emitter, withVscodeStub } from './vscodeStub';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Any = any;

export class Uri {
  constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  get fsPath(): string {
    return this.path;
  }
  static file(p: string): Uri {
    return new Uri('file', p);
  }
  static parse(s: string): Uri {
    const m = /^(\w[\w-]*):\/\/(.*)$/.exec(s);
    return m ? new Uri(m[1], m[2]) : new Uri('untitled', s);
  }
  static joinPath(u: Uri, ...parts: string[]): Uri {
    return new Uri(u.scheme, path.posix.join(u.path, ...parts));
  }
  with(change: { scheme?: string; path?: string }): Uri {
    return new Uri(change.scheme ?? this.scheme, change.path ?? this.path);
  }
  toString(): string {
    return `${this.scheme}://${this.path}`;
  }
}

export interface WindowState {
  folders: { uri: Uri; name: string; index: number }[];
  active: Any;
  infos: string[];
  warnings: string[];
  errors: string[];
  panels: Any[];
  items: Any[];
  handlers: Map<string, (...args: unknown[]) => Promise<unknown>>;
  /** What the folder pick answers (a folder's name), and the questions it was asked. */
  folderPick: string | undefined;
  folderPicks: string[];
  quickPick: (items: Any[]) => Any;
}

export function makeStub(state: WindowState): Any {
  const stub: Any = {
    Uri,
    EventEmitter: Emitter,
    TreeItem: class {
      constructor(
        public label: unknown,
        public collapsibleState?: number,
      ) {}
    },
    TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
    ThemeIcon: class {
      constructor(readonly id: string) {}
    },
    ThemeColor: class {
      constructor(readonly id: string) {}
    },
    MarkdownString: class {
      value = '';
      appendMarkdown(s: string): unknown {
        this.value += s;
        return this;
      }
      appendText(s: string): unknown {
        this.value += s;
        return this;
      }
    },
    CodeLens: class {
      constructor(
        readonly range: unknown,
        readonly command: Any,
      ) {}
    },
    Range: class {},
    ViewColumn: { Active: -1, Beside: -2 },
    StatusBarAlignment: { Left: 1, Right: 2 },
    ProgressLocation: { Window: 10, Notification: 15 },
    env: { sessionId: 'spec', clipboard: { writeText: async () => undefined } },
    languages: { registerCodeLensProvider: () => ({ dispose: () => undefined }) },
    lm: { registerTool: () => ({ dispose: () => undefined }) },
    commands: {
      executeCommand: async (id: string, ...args: unknown[]) => (state.handlers.has(id) ? state.handlers.get(id)!(...args) : []),
      registerCommand: (id: string, h: (...args: unknown[]) => Promise<unknown>) => (state.handlers.set(id, h), { dispose: () => undefined }),
    },
    workspace: {
      get workspaceFolders() {
        return state.folders;
      },
      // As VS Code's: only a file: URI under a folder's path belongs to it.
      getWorkspaceFolder(u: Uri) {
        return state.folders.find((f) => u.scheme === f.uri.scheme && (u.path === f.uri.path || u.path.startsWith(`${f.uri.path}/`)));
      },
      asRelativePath(u: Uri) {
        const f = stub.workspace.getWorkspaceFolder(u);
        return f ? path.posix.relative(f.uri.path, u.path) : u.path;
      },
      onDidChangeWorkspaceFolders: new Emitter().event,
      getConfiguration: () => ({ get: (_k: string, d: unknown) => d }),
      fs: { stat: async () => ({}) },
    },
    window: {
      get activeTextEditor() {
        return state.active;
      },
      showWarningMessage: async (m: string) => (state.warnings.push(m), 'Forget'),
      showInformationMessage: async (m: string) => (state.infos.push(m), undefined),
      showErrorMessage: async (m: string) => (state.errors.push(m), undefined),
      showQuickPick: async (items: Any[]) => state.quickPick(items),
      showInputBox: async (o: Any) => o?.value ?? 'a note',
      showWorkspaceFolderPick: async (o: Any) => (state.folderPicks.push(o?.placeHolder ?? ''), state.folders.find((f) => f.name === state.folderPick)),
      setStatusBarMessage: (m: string) => (state.infos.push(m), { dispose: () => undefined }),
      withProgress: async (_o: unknown, f: () => unknown) => f(),
      createTreeView: () => ({ dispose: () => undefined }),
      createStatusBarItem: () => {
        const item: Any = { show() {}, dispose() {} };
        state.items.push(item);
        return item;
      },
      createWebviewPanel: () => {
        const panel: Any = {
          title: '',
          webview: { html: '', cspSource: 'x', asWebviewUri: (u: Uri) => u.path, onDidReceiveMessage: () => ({ dispose() {} }) },
          onDidDispose: () => ({ dispose() {} }),
          reveal() {},
          dispose() {},
        };
        state.panels.push(panel);
        return panel;
      },
    },
  };
  return stub;
}

export interface TwoProjectWindow {
  dir: string;
  engine: MemoryEngine;
  state: WindowState;
  stub: Any;
  /** The extension modules, loaded against the stub. */
  mods: Any;
  scopes: Any;
  engines: Any;
  alpha: Scope;
  beta: Scope;
  /** The rule the window's ScopeService names the two folders by. */
  projectOf(uri: Uri): Promise<Scope>;
  /** A document of `file`; scheme `file` unless told. */
  doc(file: string, text: string, scheme?: string): Any;
  editor(document: Any): Any;
  close(): Promise<void>;
}

export async function openTwoProjectWindow(): Promise<TwoProjectWindow> {
  const state: WindowState = { folders: [], active: undefined, infos: [], warnings: [], errors: [], panels: [], items: [], handlers: new Map(), folderPick: undefined, folderPicks: [], quickPick: (items) => items[0] };
  const stub = makeStub(state);
  /* eslint-disable @typescript-eslint/no-require-imports */
  const mods = withVscodeStub(stub, () => ({
    lens: require('../../src/extension/editor/memoryCodeLens'),
    registerCommands: require('../../src/extension/commands/registerCommands'),
    details: require('../../src/extension/webviews/detailsPanel'),
    recall: require('../../src/extension/webviews/recallPanel'),
    scopes: require('../../src/extension/scopes'),
    nodes: require('../../src/extension/views/nodes'),
    memoriesView: require('../../src/extension/views/memoriesView'),
    statusBar: require('../../src/extension/statusBar'),
  }));
  /* eslint-enable @typescript-eslint/no-require-imports */
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-window-'));
  const engine = await MemoryEngine.open({ storeUri: path.join(dir, 'store'), embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, batchDelayMs: 20, summariseOrphanSessions: false });
  const opened = new Emitter<void>();
  const engines = { get: async () => engine, peek: () => engine, isOpen: true, storeUri: path.join(dir, 'store'), onDidOpen: opened.event };
  for (const name of ['alpha', 'beta']) fs.mkdirSync(path.join(dir, name, 'src'), { recursive: true });
  state.folders = ['alpha', 'beta'].map((name, index) => ({ uri: Uri.file(path.join(dir, name)), name, index }));
  const alpha = { project: 'proj-alpha' };
  const beta = { project: 'proj-beta' };
  // The folders' projects, as the service's rule would name them (these folders are not repositories).
  const projectOf = async (uri: Uri): Promise<{ project: string }> => (path.basename(uri.fsPath) === 'alpha' ? alpha : beta);
  const scopes = withVscodeStub(stub, () => new mods.scopes.ScopeService(projectOf));
  return {
    projectOf,
    dir,
    engine,
    state,
    stub,
    mods,
    scopes,
    engines,
    alpha,
    beta,
    doc: (file, text, scheme = 'file') => ({ uri: new Uri(scheme, file), getText: () => text, lineAt: () => ({ text: text.split('\n')[0] }) }),
    editor: (document) => ({ document, selections: [{}], selection: { active: { line: 0 }, start: { line: 0 } } }),
    close: async () => {
      await engine.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Registers every command of the extension in the window, as VS Code runs them (through the
 * registrar), over a container whose views, panels and capture do nothing (`engines` may stand in
 * for the window's); returns a runner of one command by id.
 */
export function registerQuietCommands(w: TwoProjectWindow, engines: Any = w.engines): (id: string, ...args: unknown[]) => Promise<Any> {
  const view = { refresh() {} };
  const c = {
    engines,
    scopes: w.scopes,
    capture: { git: { branchOf: () => undefined }, state: 'capturing', queue: { stats: { observations: 0 } } },
    sessions: { end: async () => [] },
    details: { show: async () => undefined, refresh: async () => undefined },
    recall: { show() {}, refresh: async () => undefined },
    codeLens: view,
    statusBar: { refreshCount: async () => undefined },
    sessionsView: view,
    memoriesView: view,
    requestLogView: view,
    captured: { prune: async () => undefined },
    output: { error() {}, show() {} },
  };
  w.state.handlers.clear();
  withVscodeStub(w.stub, () => w.mods.registerCommands.registerCommands(c, { mcpRegistered: () => false }));
  return (id, ...args) => w.state.handlers.get(id)!(...args);
}
