import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { readConfig } from '../config';
import type { EngineHost } from '../engineHost';
import type { ServerAddress } from '../engineWorker/engineClient';
import type { ScopeService } from '../scopes';
import { SERVER_LABEL } from './constants';

/**
 * The token's key in SecretStorage, one per project: SecretStorage is the extension's, shared by
 * every window, so one key would let a client of one project's server into another project's
 * (a token saved for alpha's server opened beta's, on beta's port or on a port beta took over).
 */
export function tokenKey(project: string): string {
  return `codeMemory.serverToken:${project}`;
}

/** A running server, with the project it serves and when it started (epoch ms). */
export interface ServedAddress extends ServerAddress {
  project: string;
  startedAt: number;
}

/** A project of the window as VS Code lists its server: the definition's label, the project, and the folder it is served for. */
export interface ServerDefinition {
  label: string;
  project: string;
  folder: vscode.WorkspaceFolder;
  /** Its server, while one runs. */
  server: ServedAddress | undefined;
}

/** One project's server: the window's folder it started for (URI string), and the server once it listens. */
interface Entry {
  folder: string;
  project: string;
  starting: Promise<ServedAddress>;
  running?: ServedAddress;
  /** The engine (EngineHost's client) it started on, once known. */
  engine?: unknown;
}

/**
 * The window's loopback MCP servers (Streamable HTTP + REST), one per project of the window's
 * folders, each started on first need: when VS Code resolves that project's server definition,
 * or when the user asks for the server info. Bearer tokens live in SecretStorage, one per project,
 * so they survive restarts without sitting in settings.
 *
 * A window of several repositories lists one server per project, so an agent working in one
 * folder reads and files that folder's memory, never the other's through a server of the window.
 * A server serves its project as long as the folder it started for is in the window and still
 * that project: once the window's folders change so that it is not (removed, replaced, its remote
 * changed), that server stops and VS Code, told the definitions changed, lists the window as it
 * is now, so an agent never goes on reading or writing the memory of a project the window no
 * longer holds.
 */
export class McpServerHost implements vscode.Disposable {
  /** By project. */
  private readonly entries = new Map<string, Entry>();
  /** The stops under way (the engine's servers closing): a start waits for them. */
  private stopping: Promise<void> = Promise.resolve();
  /** The checks under way of whether each server still serves a folder of the window: a start waits for them. */
  private following: Promise<void> = Promise.resolve();
  private readonly _onDidChange = new vscode.EventEmitter<void>();
  /** The servers or the window's projects changed: VS Code asks for the definitions again. */
  readonly onDidChange = this._onDidChange.event;
  private readonly subscriptions: vscode.Disposable[];
  /** Disposed (the window closing): no server starts any more. */
  private disposed = false;

  constructor(
    private readonly engines: EngineHost,
    private readonly scopes: ScopeService,
    private readonly secrets: vscode.SecretStorage,
    private readonly log: (message: string) => void,
  ) {
    this.subscriptions = [
      // The servers live in the engine's process: when the engine closes, so do they. Only the
      // closed engine's: the close is told once the engine is gone, when a start may already be
      // under way, or done, on the engine opened anew (a server that must still stop when its
      // folder leaves the window).
      engines.onDidClose(() => {
        const open = this.engines.peek();
        const gone = [...this.entries.values()].filter((e) => e.engine !== undefined && e.engine !== open);
        if (gone.length === 0) return;
        for (const e of gone) this.entries.delete(e.project);
        this._onDidChange.fire();
      }),
      scopes.onDidChangeProjects(() => {
        this.following = this.following.then(() => this.follow()).catch((err: unknown) => this.log(`Following the window's folders failed: ${err instanceof Error ? err.message : String(err)}`));
      }),
    ];
  }

  /**
   * One definition per project of the window's folders, in the folders' order, each for the
   * project's first folder. Its label is the product's name in a window of one project, else the
   * name and the folder's (`Code Memory (api)`), so that the agent's list says which is which; the
   * project too where two projects' folders have one name (`Code Memory (api, github.com/acme/api)`),
   * since VS Code tells a provider's servers apart by their labels.
   */
  async definitions(): Promise<ServerDefinition[]> {
    await this.following;
    const byProject = new Map<string, vscode.WorkspaceFolder>();
    for (const { folder, scope } of await this.scopes.all()) if (!byProject.has(scope.project)) byProject.set(scope.project, folder);
    const several = byProject.size > 1;
    const names = new Map<string, number>();
    for (const folder of byProject.values()) names.set(folder.name, (names.get(folder.name) ?? 0) + 1);
    return [...byProject].map(([project, folder]) => ({
      label: !several ? SERVER_LABEL : names.get(folder.name) === 1 ? `${SERVER_LABEL} (${folder.name})` : `${SERVER_LABEL} (${folder.name}, ${project})`,
      project,
      folder,
      server: this.entries.get(project)?.running,
    }));
  }

  private async token(project: string): Promise<string> {
    const existing = await this.secrets.get(tokenKey(project));
    if (existing && existing.length >= 16) return existing;
    const token = randomBytes(24).toString('base64url');
    await this.secrets.store(tokenKey(project), token);
    return token;
  }

  /**
   * The server of `folder`'s project (by default the active file's folder, else the first
   * folder's): the running one, else one started for it (once a change of the folders is followed).
   * Only for a folder of the window as it is then, and with `project`, only if the folder is still
   * that project's (a definition VS Code lists is for a project): else it throws, starting nothing.
   */
  start(folder?: vscode.WorkspaceFolder, project?: string): Promise<ServedAddress> {
    return this.following.then(() => this.startNow(folder, project));
  }

  private async startNow(wanted: vscode.WorkspaceFolder | undefined, project: string | undefined): Promise<ServedAddress> {
    // One folder for the project and the repository: the active editor may change meanwhile.
    const folder = wanted ?? this.scopes.currentFolder();
    if (!folder) throw new Error('Open a folder first: the memory server serves the memory of one project.');
    const scope = await this.scopes.scopeFor(folder.uri.toString());
    // Checked once the scope is known, and with no wait before the entry is kept: a change of the
    // folders from here on is followed (see follow), one before would never be for this server.
    if (!this.scopes.folders().some((f) => f.uri.toString() === folder.uri.toString())) throw new Error(`The folder ${folder.name} is no longer in this window.`);
    if (project !== undefined && scope.project !== project) throw new Error(`The folder ${folder.name} is now ${scope.project}, no longer ${project}.`);
    // A start asked for before the window closed, kept after dispose's stop, would run for nothing to stop it.
    if (this.disposed) throw new Error('The window is closing: the memory server does not start.');
    const known = this.entries.get(scope.project);
    if (known) return known.running ?? known.starting;
    const starting: Promise<ServedAddress> = this.stopping
      .then(() => this.listen(scope, folder, (engine) => (entry.engine = engine)))
      .then(
        (server) => {
          // A stop while it started leaves it to that stop.
          if (this.entries.get(scope.project) === entry) {
            entry.running = server;
            this._onDidChange.fire();
          }
          return server;
        },
        (err: unknown) => {
          if (this.entries.get(scope.project) === entry) this.entries.delete(scope.project);
          throw err;
        },
      );
    const entry: Entry = { folder: folder.uri.toString(), project: scope.project, starting };
    this.entries.set(scope.project, entry);
    return starting;
  }

  private async listen(scope: { project: string }, folder: vscode.WorkspaceFolder, onEngine: (engine: unknown) => void): Promise<ServedAddress> {
    const [engine, token] = await Promise.all([this.engines.get(), this.token(scope.project)]);
    onEngine(engine);
    const port = readConfig().serverPort;
    const repoRoot = folder.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
    let server: ServerAddress;
    try {
      server = await engine.startHttpServer({ scope, port, token, repoRoot });
    } catch (err) {
      if (port === 0) throw err;
      // The configured port is taken (another window, or another project's server of this one):
      // a random port still works for VS Code.
      this.log(`Port ${port} is not available (${err instanceof Error ? err.message : String(err)}); using a random port.`);
      server = await engine.startHttpServer({ scope, port: 0, token, repoRoot });
    }
    this.log(`MCP server for ${scope.project} listening on ${server.url}`);
    return { ...server, project: scope.project, startedAt: Date.now() };
  }

  /**
   * After the projects of the window's folders may have changed (its folders did, or a folder's
   * git config): stops each server whose folder is no longer in the window or names another
   * project, and tells VS Code the definitions may have changed (a folder of a new project added).
   */
  private async follow(): Promise<void> {
    const inWindow = new Set(this.scopes.folders().map((f) => f.uri.toString()));
    for (const entry of [...this.entries.values()]) {
      await entry.starting.catch(() => undefined);
      const project = inWindow.has(entry.folder) ? (await this.scopes.scopeFor(entry.folder)).project : undefined;
      if (project === entry.project || this.entries.get(entry.project) !== entry) continue;
      this.log(project === undefined ? `The folder of ${entry.project} left the window: its MCP server stops.` : `The folder of ${entry.project} is now ${project}: its MCP server stops.`);
      await this.stop(entry.project);
    }
    this._onDidChange.fire();
  }

  /** Stops the server of `project`, or every server of the window. */
  stop(project?: string): Promise<void> {
    const gone = [...this.entries.values()].filter((e) => project === undefined || e.project === project);
    for (const e of gone) this.entries.delete(e.project);
    if (gone.length === 0) return this.stopping;
    const previous = this.stopping;
    this.stopping = (async () => {
      await previous;
      let stopped = false;
      for (const e of gone) {
        const s = e.running ?? (await e.starting.catch(() => undefined));
        if (!s) continue;
        await this.engines.peek()?.stopHttpServer(e.project).catch(() => undefined);
        stopped = true;
      }
      if (stopped) this._onDidChange.fire();
    })();
    return this.stopping;
  }

  /** A new token for the active file's project (else the first folder's): its running clients must fetch the definition again. */
  async rotateToken(): Promise<void> {
    const project = (await this.scopes.current())?.project;
    if (!project) return;
    await this.secrets.delete(tokenKey(project));
    await this.stop(project);
    this._onDidChange.fire();
  }

  dispose(): void {
    this.disposed = true;
    for (const s of this.subscriptions) s.dispose();
    void this.stop();
    this._onDidChange.dispose();
  }
}
