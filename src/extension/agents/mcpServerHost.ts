import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { readConfig } from '../config';
import type { EngineHost } from '../engineHost';
import type { ServerAddress } from '../engineWorker/engineClient';
import type { ScopeService } from '../scopes';

/**
 * The token's key in SecretStorage, one per project: SecretStorage is the extension's, shared by
 * every window, so one key would let a client of one project's server into another project's
 * (a token saved for alpha's server opened beta's, on beta's port or on a port beta took over).
 */
export function tokenKey(project: string): string {
  return `codeMemory.serverToken:${project}`;
}

/** What a running server serves: the window's folder it started for (URI string) and that folder's project. */
interface Served {
  folder: string;
  project: string;
}

/**
 * The loopback MCP server of this window (Streamable HTTP + REST), started on first need:
 * when VS Code resolves the server definition, or when the user asks for its info.
 * The bearer token lives in SecretStorage, one per project, so it survives restarts without
 * sitting in settings.
 *
 * It serves the project of one folder of the window (the active file's when it starts, else the
 * first folder's) as long as that folder is in the window and still that project: once the
 * window's folders change so that it is not (removed, replaced, its remote changed), the server
 * stops and VS Code, told its definition changed, starts it again for the window as it is now, so
 * an agent never goes on reading or writing the memory of a project the window no longer holds.
 */
export class McpServerHost implements vscode.Disposable {
  private starting: Promise<ServerAddress> | undefined;
  private running: ServerAddress | undefined;
  private served: Served | undefined;
  /** The stop under way (the engine's server closing): a start waits for it. */
  private stopping: Promise<void> = Promise.resolve();
  /** The checks under way of whether the server still serves a folder of the window: a start waits for them. */
  private following: Promise<void> = Promise.resolve();
  private readonly _onDidChange = new vscode.EventEmitter<void>();
  readonly onDidChange = this._onDidChange.event;
  startedAt: number | null = null;
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly engines: EngineHost,
    private readonly scopes: ScopeService,
    private readonly secrets: vscode.SecretStorage,
    private readonly log: (message: string) => void,
  ) {
    this.subscriptions = [
      // The server lives in the engine's process: when the engine closes, so does the server.
      engines.onDidClose(() => {
        if (!this.running && !this.starting) return;
        this.running = undefined;
        this.starting = undefined;
        this.served = undefined;
        this._onDidChange.fire();
      }),
      scopes.onDidChangeProjects(() => {
        this.following = this.following.then(() => this.follow()).catch((err: unknown) => this.log(`Following the window's folders failed: ${err instanceof Error ? err.message : String(err)}`));
      }),
    ];
  }

  get server(): ServerAddress | undefined {
    return this.running;
  }

  /** The project the running server serves, null while none runs. */
  get project(): string | null {
    return this.served?.project ?? null;
  }

  private async token(project: string): Promise<string> {
    const existing = await this.secrets.get(tokenKey(project));
    if (existing && existing.length >= 16) return existing;
    const token = randomBytes(24).toString('base64url');
    await this.secrets.store(tokenKey(project), token);
    return token;
  }

  /** The running server, else one started for the window's folders as they are (once a change of them is followed). */
  start(): Promise<ServerAddress> {
    return this.following.then(() => this.startNow());
  }

  private startNow(): Promise<ServerAddress> {
    if (this.running) return Promise.resolve(this.running);
    if (!this.starting) {
      const starting: Promise<ServerAddress> = this.stopping
        .then(() => this.doStart())
        .then(
          ({ server, served }) => {
            // A stop while it started leaves it to that stop.
            if (this.starting === starting) {
              this.running = server;
              this.served = served;
              this.startedAt = Date.now();
              this._onDidChange.fire();
            }
            return server;
          },
          (err: unknown) => {
            if (this.starting === starting) this.starting = undefined;
            throw err;
          },
        );
      this.starting = starting;
    }
    return this.starting;
  }

  private async doStart(): Promise<{ server: ServerAddress; served: Served }> {
    // One folder for the project and the repository: the active editor may change meanwhile.
    const folder = this.scopes.currentFolder();
    if (!folder) throw new Error('Open a folder first: the memory server serves the memory of one project.');
    const scope = await this.scopes.scopeFor(folder.uri.toString());
    const served: Served = { folder: folder.uri.toString(), project: scope.project };
    const [engine, token] = await Promise.all([this.engines.get(), this.token(scope.project)]);
    const port = readConfig().serverPort;
    const repoRoot = folder.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
    let server: ServerAddress;
    try {
      server = await engine.startHttpServer({ scope, port, token, repoRoot });
    } catch (err) {
      if (port === 0) throw err;
      // The configured port is taken (another window?): a random port still works for VS Code.
      this.log(`Port ${port} is not available (${err instanceof Error ? err.message : String(err)}); using a random port.`);
      server = await engine.startHttpServer({ scope, port: 0, token, repoRoot });
    }
    this.log(`MCP server for ${scope.project} listening on ${server.url}`);
    return { server, served };
  }

  /**
   * After the projects of the window's folders may have changed (its folders did, or a folder's
   * git config): stops the server unless the folder it serves is still in the window and still
   * the same project.
   */
  private async follow(): Promise<void> {
    const served = this.served ?? (this.starting ? await this.starting.then(() => this.served, () => undefined) : undefined);
    if (!served) return;
    const inWindow = this.scopes.folders().some((f) => f.uri.toString() === served.folder);
    const project = inWindow ? (await this.scopes.scopeFor(served.folder)).project : undefined;
    if (project === served.project || this.served !== served) return;
    this.log(project === undefined ? `The folder of ${served.project} left the window: its MCP server stops.` : `The folder of ${served.project} is now ${project}: its MCP server stops.`);
    await this.stop();
  }

  stop(): Promise<void> {
    const running = this.running;
    const starting = this.starting;
    this.running = undefined;
    this.starting = undefined;
    this.served = undefined;
    if (!running && !starting) return this.stopping;
    const previous = this.stopping;
    this.stopping = (async () => {
      await previous;
      const s = running ?? (await starting?.catch(() => undefined));
      if (s) {
        await this.engines.peek()?.stopHttpServer().catch(() => undefined);
        this._onDidChange.fire();
      }
    })();
    return this.stopping;
  }

  /** A new token: running clients must fetch the definition again. */
  async rotateToken(): Promise<void> {
    const project = this.project ?? (await this.scopes.current())?.project;
    if (project) await this.secrets.delete(tokenKey(project));
    await this.stop();
    this._onDidChange.fire();
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    void this.stop();
    this._onDidChange.dispose();
  }
}
