// Capture test fixture: the extension's real capture (CaptureService, EditorCapture, FileCapture,
// GitCapture, TaskCapture, SessionTracker, ScopeService) loaded with `vscode` resolved to a
// controllable stub (as in vscodeStub.ts), writing into a real MemoryEngine in a temp folder,
// with real git repositories. Not a spec: used by captureTruth.test.ts and the audit probes.

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { differingMiddle } from '../../src/core/capture/editDiff';
import { projectScopeFor } from '../../src/core/capture/project';
import type { Observation, SessionSummary } from '../../src/core/model/records';
import { EventEmitter as Emitter, withVscodeStub } from './vscodeStub';

export { Emitter };

process.env.LANCEDB_LOG ??= 'error';

export class Uri {
  constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
  ) {}
  static file(p: string): Uri {
    return new Uri('file', '', p.replace(/\\/g, '/'));
  }
  static parse(s: string): Uri {
    const m = /^([a-z][\w+.-]*):\/\/([^/]*)(.*)$/i.exec(s);
    if (m) return new Uri(m[1], m[2], decodeURIComponent(m[3] || '/'));
    const m2 = /^([a-z][\w+.-]*):(.*)$/i.exec(s);
    if (m2) return new Uri(m2[1], '', m2[2]);
    return Uri.file(s);
  }
  static joinPath(u: Uri, ...parts: string[]): Uri {
    return new Uri(u.scheme, u.authority, path.posix.join(u.path, ...parts));
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return this.scheme === 'file' || this.authority ? `${this.scheme}://${this.authority}${this.path}` : `${this.scheme}:${this.path}`;
  }
}

export class RelativePattern {
  /** A workspace folder, or (as VS Code also takes) a folder's Uri, kept here in a folder's shape. */
  readonly base: { uri: Uri };
  readonly baseUri: Uri;
  constructor(
    base: Uri | { uri: Uri },
    readonly pattern: string,
  ) {
    this.base = base instanceof Uri ? { uri: base } : base;
    this.baseUri = this.base.uri;
  }
}

export interface Doc {
  uri: Uri;
  text: string;
  isDirty: boolean;
  version: number;
  languageId: string;
  /** VS Code's id of the encoding the document was opened with and is saved in ('utf8' unless told). */
  encoding: string;
  getText(): string;
}

/** Encodings the harness writes and decodes, as VS Code (iconv-lite) does for the characters tests use. */
const LATIN = new Set(['iso88591', 'windows1252', 'iso885915', 'iso885916']);

/** `text` as VS Code saves it in `encoding`. */
export function encodeText(text: string, encoding = 'utf8'): Buffer {
  if (LATIN.has(encoding)) return Buffer.from(text, 'latin1');
  if (encoding === 'utf8bom') return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]);
  if (encoding === 'utf16le') return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
  return Buffer.from(text, 'utf8');
}

/**
 * `vscode.workspace.decode(bytes, { encoding })`: throws for binary content, as VS Code does; the
 * Latin encodings agree with Latin-1 on the letters tests use. Resolves a moment later, as the
 * real one (a call to the main process) does.
 */
async function decodeText(bytes: Uint8Array, options: { encoding?: string }): Promise<string> {
  await new Promise((r) => setTimeout(r, 5));
  const buf = Buffer.from(bytes);
  const encoding = options.encoding ?? 'utf8';
  if (!encoding.startsWith('utf16') && buf.includes(0)) throw new Error('binary content');
  if (LATIN.has(encoding)) return buf.toString('latin1');
  if (encoding === 'utf16le') return buf.toString('utf16le').replace(/^\uFEFF/, '');
  return buf.toString('utf8').replace(/^\uFEFF/, '');
}

interface Watcher {
  pattern: unknown;
  create: Emitter<Uri>;
  change: Emitter<Uri>;
  del: Emitter<Uri>;
}

export interface StubRepo {
  rootUri: Uri;
  state: { HEAD: { name?: string; commit?: string } | undefined; onDidChange: (l: () => void) => { dispose(): void } };
  changed: Emitter<void>;
  root: string;
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.com', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.com' },
  }).trim();
}

export function makeRepo(dir: string, files: Record<string, string>, message = 'initial'): void {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'commit.gpgsign', 'false');
  writeFiles(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', message);
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    const p = path.join(dir, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
  }
}

function readHead(root: string): { name?: string; commit?: string } | undefined {
  let commit: string | undefined;
  let name: string | undefined;
  try {
    commit = git(root, 'rev-parse', 'HEAD');
  } catch {
    commit = undefined;
  }
  try {
    name = git(root, 'symbolic-ref', '--quiet', '--short', 'HEAD') || undefined;
  } catch {
    name = undefined;
  }
  return { name, commit };
}

export interface HarnessOptions {
  /** Workspace folders (absolute paths). */
  folders: string[];
  /** Leave `vscode.workspace.decode` out, as a host before VS Code 1.100 does. */
  noDecode?: boolean;
  /** Repository roots the Git extension reports (default: every folder that has a .git). */
  repoRoots?: string[];
  trusted?: boolean;
  config?: Record<string, unknown>;
  /** An engine to share (two windows on one store); else one is opened in a temp folder. */
  engine?: MemoryEngine;
  storeDir?: string;
  sessionIdleMs?: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

export class Harness {
  readonly e = {
    activeEditor: new Emitter<Any>(),
    visibleEditors: new Emitter<Any>(),
    windowState: new Emitter<Any>(),
    changeDoc: new Emitter<Any>(),
    saveDoc: new Emitter<Any>(),
    closeDoc: new Emitter<Any>(),
    renameFiles: new Emitter<Any>(),
    trust: new Emitter<void>(),
    config: new Emitter<Any>(),
    folders: new Emitter<Any>(),
    taskStart: new Emitter<Any>(),
    taskEnd: new Emitter<Any>(),
    debugStart: new Emitter<Any>(),
    debugEnd: new Emitter<Any>(),
    shellStart: new Emitter<Any>(),
    shellEnd: new Emitter<Any>(),
    gitState: new Emitter<Any>(),
  };
  readonly watchers: Watcher[] = [];
  readonly docs: Doc[] = [];
  readonly repos: StubRepo[] = [];
  readonly memento = new Map<string, unknown>();
  readonly outputLines: string[] = [];
  /** Each output channel's lines as it shows them now (clear() empties them), by name. */
  readonly channels = new Map<string, string[]>();
  activeEditor: { document: Doc } | undefined;
  visibleEditors: { document: Doc }[] = [];
  trusted: boolean;
  config: Record<string, unknown>;
  folders: { uri: Uri; name: string; index: number }[];
  symbols = new Map<string, Any[]>();
  stub: Any;
  engine!: MemoryEngine;
  storeDir!: string;
  private ownEngine = false;
  // The loaded extension modules' instances.
  capture!: Any;
  /** What the window shows of capture ("Code Memory: Captured"). */
  captured!: Any;
  sessions!: Any;
  scopes!: Any;

  constructor(private readonly options: HarnessOptions) {
    this.trusted = options.trusted ?? true;
    this.config = { ...(options.config ?? {}) };
    this.folders = options.folders.map((f, index) => ({ uri: Uri.file(f), name: path.basename(f), index }));
    const roots = options.repoRoots ?? options.folders.filter((f) => fs.existsSync(path.join(f, '.git')));
    for (const root of roots) {
      const changed = new Emitter<void>();
      this.repos.push({ rootUri: Uri.file(root), root, changed, state: { HEAD: readHead(root), onDidChange: changed.event } });
    }
    this.stub = this.makeStub();
  }

  private makeStub(): Any {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the stub's getters read the harness
    const h = this;
    const gitApi = {
      state: 'initialized',
      onDidChangeState: new Emitter<Any>().event,
      get repositories() {
        return h.repos;
      },
      onDidOpenRepository: new Emitter<Any>().event,
      onDidCloseRepository: new Emitter<Any>().event,
    };
    return {
      EventEmitter: Emitter,
      Uri,
      RelativePattern,
      DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
      SymbolKind: { File: 0, Module: 1, Namespace: 2, Package: 3, Class: 4, Method: 5, Property: 6, Field: 7, Constructor: 8, Enum: 9, Interface: 10, Function: 11, Variable: 12, Constant: 13, Object: 18, Struct: 22 },
      workspace: {
        get workspaceFolders() {
          return h.folders;
        },
        get isTrusted() {
          return h.trusted;
        },
        get textDocuments() {
          return h.docs;
        },
        getWorkspaceFolder(uri: Uri) {
          let best: (typeof h.folders)[number] | undefined;
          for (const f of h.folders) {
            if (f.uri.scheme !== uri.scheme) continue;
            if (uri.path === f.uri.path || uri.path.startsWith(`${f.uri.path}/`)) if (!best || f.uri.path.length > best.uri.path.length) best = f;
          }
          return best;
        },
        getConfiguration: () => ({ get: <T>(key: string, fallback: T): T => (key in h.config ? (h.config[key] as T) : fallback) }),
        createFileSystemWatcher(pattern: unknown) {
          const w: Watcher = { pattern, create: new Emitter(), change: new Emitter(), del: new Emitter() };
          h.watchers.push(w);
          return { onDidCreate: w.create.event, onDidChange: w.change.event, onDidDelete: w.del.event, dispose() {} };
        },
        fs: { stat: async (uri: Uri) => fs.promises.stat(uri.fsPath) },
        ...(this.options.noDecode ? {} : { decode: decodeText }),
        onDidGrantWorkspaceTrust: h.e.trust.event,
        onDidChangeConfiguration: h.e.config.event,
        onDidChangeWorkspaceFolders: h.e.folders.event,
        onDidChangeTextDocument: h.e.changeDoc.event,
        onDidSaveTextDocument: h.e.saveDoc.event,
        onDidCloseTextDocument: h.e.closeDoc.event,
        onDidRenameFiles: h.e.renameFiles.event,
      },
      window: {
        get activeTextEditor() {
          return h.activeEditor;
        },
        get visibleTextEditors() {
          return h.visibleEditors;
        },
        state: { focused: true },
        createOutputChannel: (name: string) => {
          const lines: string[] = [];
          h.channels.set(name, lines);
          const add = (l: string): void => void (lines.push(l), h.outputLines.push(l));
          return { appendLine: add, info: add, clear: () => void (lines.length = 0), show() {}, dispose() {} };
        },
        onDidChangeActiveTextEditor: h.e.activeEditor.event,
        onDidChangeVisibleTextEditors: h.e.visibleEditors.event,
        onDidChangeWindowState: h.e.windowState.event,
        onDidStartTerminalShellExecution: h.e.shellStart.event,
        onDidEndTerminalShellExecution: h.e.shellEnd.event,
      },
      commands: {
        executeCommand: async (cmd: string, ...args: Any[]) => {
          if (cmd === 'vscode.executeDocumentSymbolProvider') return h.symbols.get(String(args[0])) ?? [];
          return undefined;
        },
      },
      languages: { getDiagnostics: () => [] },
      extensions: {
        getExtension: (id: string) => (id === 'vscode.git' ? { isActive: true, exports: { enabled: true, getAPI: () => gitApi } } : undefined),
      },
      tasks: { onDidStartTaskProcess: h.e.taskStart.event, onDidEndTaskProcess: h.e.taskEnd.event },
      debug: { onDidStartDebugSession: h.e.debugStart.event, onDidTerminateDebugSession: h.e.debugEnd.event },
    };
  }

  async start(): Promise<this> {
    if (this.options.engine) {
      this.engine = this.options.engine;
      this.storeDir = this.options.storeDir ?? '';
    } else {
      this.storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-audit-store-'));
      this.engine = await MemoryEngine.open({ storeUri: this.storeDir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, batchDelayMs: 20, sessionIdleMs: this.options.sessionIdleMs, summariseOrphanSessions: false });
      this.ownEngine = true;
    }
    const engine = this.engine;
    const client = {
      observe: (list: Any, scope: Any) => engine.observe(list, scope),
      capture: (list: Any, scope: Any) => engine.capture(list, scope),
      currentSessionId: (scope: Any) => engine.currentSessionId(scope),
      endCurrentSession: (scope: Any, reason: Any) => engine.endCurrentSession(scope, reason),
    };
    const storeUri = this.storeDir || `memory-of-${path.basename(this.options.folders[0] ?? 'harness')}`;
    const engines = { get: async () => client, storeUri, isOpen: true, peek: () => client, onDidOpen: new Emitter<void>().event, onDidClose: new Emitter<void>().event };
    const memento = { get: <T>(k: string, fb: T): T => (this.memento.has(k) ? (this.memento.get(k) as T) : fb), update: async (k: string, v: unknown) => void this.memento.set(k, v) };
    withVscodeStub(this.stub, () => {
      /* eslint-disable @typescript-eslint/no-require-imports */
      const { CaptureService } = require('../../src/extension/capture/captureService');
      const { SessionTracker } = require('../../src/extension/capture/sessionTracker');
      const { CapturedLog } = require('../../src/extension/capture/capturedLog');
      const { ScopeService } = require('../../src/extension/scopes');
      /* eslint-enable @typescript-eslint/no-require-imports */
      // computeScope's `await import('../core/capture/project')` is bundled by esbuild in the
      // extension; under tsx/cjs it becomes a native ESM import that cannot resolve the .ts file,
      // so the service is given the same rule the extension runs (projectScopeFor).
      this.scopes = new ScopeService((uri: Any) => projectScopeFor(uri.fsPath).then((project: string) => ({ project })));
      const log = new CapturedLog();
      this.captured = log;
      this.capture = new CaptureService(engines, this.scopes, log, memento);
      this.sessions = new SessionTracker(this.capture, engines, this.scopes, log);
    });
    await this.capture.git.ready;
    return this;
  }

  folderUri(i = 0): string {
    return this.folders[i].uri.toString();
  }

  async project(i = 0): Promise<string> {
    return (await this.scopes.scopeFor(this.folderUri(i))).project;
  }

  // ---------------------------------------------------------------- editor actions

  /** Opens a document (from disk, or with the given text) and makes it the active editor. */
  open(file: string, opts: { text?: string; scheme?: string; focus?: boolean; encoding?: string } = {}): Doc {
    const uri = opts.scheme && opts.scheme !== 'file' ? new Uri(opts.scheme, '', file) : Uri.file(file);
    let doc = this.docs.find((d) => d.uri.toString() === uri.toString());
    if (!doc) {
      const text = opts.text ?? (uri.scheme === 'file' && fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');
      const d: Doc = { uri, text, isDirty: false, version: 1, languageId: 'typescript', encoding: opts.encoding ?? 'utf8', getText: () => d.text };
      doc = d;
      this.docs.push(doc);
    }
    if (opts.focus !== false) {
      const editor = { document: doc };
      this.visibleEditors = [...this.visibleEditors.filter((e) => e.document !== doc), editor];
      this.activeEditor = editor;
      this.e.visibleEditors.fire(this.visibleEditors);
      this.e.activeEditor.fire(editor);
    }
    return doc;
  }

  /** A change typed in the editor: the whole text becomes `text` (the change's range covers the lines that differ). */
  type(doc: Doc, text: string, dirty = true): void {
    const a = doc.text.split('\n');
    const b = text.split('\n');
    const { start, endA, endB } = differingMiddle(a, b);
    const change = { range: { start: { line: start, character: 0 }, end: { line: Math.max(start, endA), character: 0 } }, rangeLength: 0, rangeOffset: 0, text: b.slice(start, endB).join('\n') };
    doc.text = text;
    doc.version++;
    doc.isDirty = dirty;
    this.e.changeDoc.fire({ document: doc, contentChanges: [change], reason: undefined });
  }

  save(doc: Doc): void {
    fs.writeFileSync(doc.uri.fsPath, encodeText(doc.text, doc.encoding));
    doc.isDirty = false;
    this.e.saveDoc.fire(doc);
    this.fsEvent('change', doc.uri.fsPath);
  }

  close(doc: Doc): void {
    const i = this.docs.indexOf(doc);
    if (i >= 0) this.docs.splice(i, 1);
    this.visibleEditors = this.visibleEditors.filter((e) => e.document !== doc);
    if (this.activeEditor?.document === doc) this.activeEditor = undefined;
    this.e.visibleEditors.fire(this.visibleEditors);
    this.e.activeEditor.fire(this.activeEditor);
    this.e.closeDoc.fire(doc);
  }

  /** What VS Code's file watcher reports for a path (every '**' watcher gets it). */
  fsEvent(kind: 'create' | 'change' | 'delete', file: string): void {
    const uri = Uri.file(file);
    for (const w of this.watchers) {
      if (w.pattern instanceof RelativePattern) continue; // the fallback's .git/HEAD watcher
      (kind === 'create' ? w.create : kind === 'change' ? w.change : w.del).fire(uri);
    }
  }

  /** The Git extension re-reads HEAD of every repository and reports it. */
  gitRefresh(): void {
    for (const r of this.repos) {
      r.state.HEAD = readHead(r.root);
      r.changed.fire();
    }
  }

  async flush(): Promise<void> {
    await this.capture.checkpoint();
    await this.engine.flush();
  }

  async endSession(i?: number): Promise<Any[]> {
    const ended = await this.sessions.end(i === undefined ? undefined : [this.folderUri(i)], 'manual');
    await this.engine.flush();
    return ended;
  }

  async observations(project: string): Promise<Observation[]> {
    await this.engine.flush();
    return (await this.engine.listObservations({ project }, { limit: 5000 })).filter((o) => o.status !== 'merged');
  }

  async summaries(project: string): Promise<SessionSummary[]> {
    const sessions = await this.engine.listSessions({ project }, 100);
    return sessions.map((s) => s.summary).filter((s): s is SessionSummary => !!s);
  }

  async dispose(): Promise<void> {
    try {
      this.capture?.dispose();
      this.sessions?.dispose();
      this.scopes?.dispose();
    } catch {
      // ignore
    }
    if (this.ownEngine) {
      await this.engine?.close().catch(() => undefined);
      fs.rmSync(this.storeDir, { recursive: true, force: true });
    }
  }
}

/**
 * Windows on one store, as VS Code windows are: each with its own engine (each window's engine
 * thread) on the store folder `storeDir()` names. What a test opened is closed after it: make
 * one at the top of a describe block, before the hook that removes the folders.
 */
export class Windows {
  private readonly harnesses: Harness[] = [];
  private readonly engines: MemoryEngine[] = [];

  constructor(private readonly storeDir: () => string) {
    afterEach(async () => {
      for (const h of this.harnesses.splice(0)) await h.dispose();
      for (const e of this.engines.splice(0)) await e.close().catch(() => undefined);
    });
  }

  /** A window on `folders`, started. */
  async open(options: Omit<HarnessOptions, 'engine' | 'storeDir'>): Promise<Harness> {
    const storeDir = this.storeDir();
    const engine = await MemoryEngine.open({ storeUri: storeDir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, batchDelayMs: 20, summariseOrphanSessions: false });
    this.engines.push(engine);
    const h = await new Harness({ ...options, engine, storeDir }).start();
    this.harnesses.push(h);
    return h;
  }

  /** Closes a window before the test ends (its engine stays open, as a thread outliving its window's capture). */
  async close(h: Harness): Promise<void> {
    this.harnesses.splice(this.harnesses.indexOf(h), 1);
    await h.dispose();
  }
}

export function tmp(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

export function summaryText(s: SessionSummary | undefined): string {
  if (!s) return '(no summary)';
  return ['request', 'completed', 'learned', 'decisions', 'next_steps', 'preferences'].map((k) => `${k}: ${(s as unknown as Record<string, unknown>)[k] ?? ''}`).join('\n');
}

export function brief(list: Observation[]): string {
  return list.map((o) => `#${o.id} ${o.type} ${o.title} | ${o.subtitle ?? ''} | files=${o.files_modified ?? ''}${o.files_read ?? ''} | branch=${o.branch}`).join('\n');
}

/** A command run in a terminal of the harness's window (shell integration's start and end events), with its output and exit code. */
export async function runInTerminal(h: Harness, command: string, cwd: string, pid: number, exitCode = 0, output = ''): Promise<void> {
  const execution = {
    commandLine: { value: command },
    cwd: Uri.file(cwd),
    read: async function* () {
      yield output;
    },
  };
  const terminal = { processId: Promise.resolve(pid) };
  h.e.shellStart.fire({ execution, terminal });
  await new Promise((r) => setTimeout(r, 10));
  h.e.shellEnd.fire({ execution, terminal, exitCode });
  await new Promise((r) => setTimeout(r, 10));
}
