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

/**
 * The loopback MCP server of this window (Streamable HTTP + REST), started on first need:
 * when VS Code resolves the server definition, or when the user asks for its info.
 * The bearer token lives in SecretStorage, one per project, so it survives restarts without
 * sitting in settings.
 */
export class McpServerHost implements vscode.Disposable {
  private starting: Promise<ServerAddress> | undefined;
  private running: ServerAddress | undefined;
  private readonly _onDidChange = new vscode.EventEmitter<void>();
  readonly onDidChange = this._onDidChange.event;
  startedAt: number | null = null;
  project: string | null = null;

  constructor(
    private readonly engines: EngineHost,
    private readonly scopes: ScopeService,
    private readonly secrets: vscode.SecretStorage,
    private readonly log: (message: string) => void,
  ) {
    // The server lives in the engine's process: when the engine closes, so does the server.
    this.subscription = engines.onDidClose(() => {
      if (!this.running && !this.starting) return;
      this.running = undefined;
      this.starting = undefined;
      this._onDidChange.fire();
    });
  }

  private readonly subscription: vscode.Disposable;

  get server(): ServerAddress | undefined {
    return this.running;
  }

  private async token(project: string): Promise<string> {
    const existing = await this.secrets.get(tokenKey(project));
    if (existing && existing.length >= 16) return existing;
    const token = randomBytes(24).toString('base64url');
    await this.secrets.store(tokenKey(project), token);
    return token;
  }

  start(): Promise<ServerAddress> {
    if (this.running) return Promise.resolve(this.running);
    this.starting ??= this.doStart().then(
      (s) => {
        this.running = s;
        this.startedAt = Date.now();
        this._onDidChange.fire();
        return s;
      },
      (err: unknown) => {
        this.starting = undefined;
        throw err;
      },
    );
    return this.starting;
  }

  private async doStart(): Promise<ServerAddress> {
    const scope = await this.scopes.current();
    if (!scope) throw new Error('Open a folder first: the memory server serves the memory of one project.');
    const [engine, token] = await Promise.all([this.engines.get(), this.token(scope.project)]);
    const port = readConfig().serverPort;
    const folder = this.scopes.currentFolder();
    const repoRoot = folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
    let server: ServerAddress;
    try {
      server = await engine.startHttpServer({ scope, port, token, repoRoot });
    } catch (err) {
      if (port === 0) throw err;
      // The configured port is taken (another window?): a random port still works for VS Code.
      this.log(`Port ${port} is not available (${err instanceof Error ? err.message : String(err)}); using a random port.`);
      server = await engine.startHttpServer({ scope, port: 0, token, repoRoot });
    }
    this.project = scope.project;
    this.log(`MCP server for ${scope.project} listening on ${server.url}`);
    return server;
  }

  async stop(): Promise<void> {
    const s = this.running ?? (this.starting ? await this.starting.catch(() => undefined) : undefined);
    this.running = undefined;
    this.starting = undefined;
    if (s) {
      await this.engines.peek()?.stopHttpServer().catch(() => undefined);
      this._onDidChange.fire();
    }
  }

  /** A new token: running clients must fetch the definition again. */
  async rotateToken(): Promise<void> {
    const project = this.project ?? (await this.scopes.current())?.project;
    if (project) await this.secrets.delete(tokenKey(project));
    await this.stop();
    this._onDidChange.fire();
  }

  dispose(): void {
    this.subscription.dispose();
    void this.stop();
    this._onDidChange.dispose();
  }
}
