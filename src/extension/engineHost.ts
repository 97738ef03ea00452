import * as path from 'node:path';
import * as vscode from 'vscode';
import type { SummaryContext, SummaryResult } from '../core/compress/summariser';
import { DEFAULT_OPENAI_EMBEDDING } from '../core/embed/embedder';
import type { EmbedderConfig } from '../core/embed/factory';
import type { Observation } from '../core/model/records';
import { defaultStoreUri, expandHome } from '../core/store/location';
import { gitAuthor } from '../core/team/shareRows';
import { requestLogRetention } from '../core/store/retention';
import type { CodeMemoryConfig } from './config';
import { affectsConfig, readConfig } from './config';
import { EngineClient } from './engineWorker/engineClient';

export interface EngineHostOptions {
  log: (message: string) => void;
  /** A language-model summary of an ended session (when the user chose that), or null. */
  summarise: (observations: Observation[], budgetTokens: number, context?: SummaryContext) => Promise<SummaryResult | null>;
}

/**
 * Owns the one engine of this window and starts it on first need, never at activation. The
 * engine (LanceDB, tokenizer, embedder, tools, MCP server) runs in a child process
 * (dist/engineWorker.js), so neither loading it nor using it blocks the extension host.
 */
export class EngineHost implements vscode.Disposable {
  private opening: Promise<EngineClient> | undefined;
  private engine: EngineClient | undefined;
  private readonly _onDidOpen = new vscode.EventEmitter<EngineClient>();
  readonly onDidOpen = this._onDidOpen.event;
  private readonly _onDidClose = new vscode.EventEmitter<void>();
  readonly onDidClose = this._onDidClose.event;
  private readonly subscription: vscode.Disposable;
  openedInMs: number | null = null;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly options: EngineHostOptions,
  ) {
    this.subscription = vscode.workspace.onDidChangeConfiguration((e) => {
      if (affectsConfig(e, 'summariser')) this.engine?.setLanguageModelSummaries(readConfig().summariser === 'languageModel');
    });
  }

  /** The store URI the engine uses (or will use), from settings or the CLI's default. */
  get storeUri(): string {
    return resolveStoreUri(readConfig());
  }

  get isOpen(): boolean {
    return this.engine !== undefined;
  }

  /** The engine if it is open already; never opens it. */
  peek(): EngineClient | undefined {
    return this.engine;
  }

  get(): Promise<EngineClient> {
    if (this.engine) return Promise.resolve(this.engine);
    this.opening ??= this.open().then(
      (engine) => {
        this.engine = engine;
        this.opening = undefined;
        // A crashed engine process is started again by the next get().
        void engine.exited.then(() => {
          if (this.engine !== engine) return;
          this.engine = undefined;
          this._onDidClose.fire();
        });
        this._onDidOpen.fire(engine);
        return engine;
      },
      (err: unknown) => {
        this.opening = undefined;
        throw err;
      },
    );
    return this.opening;
  }

  private async open(): Promise<EngineClient> {
    const started = Date.now();
    const config = readConfig();
    const engine = await EngineClient.start({
      workerPath: path.join(this.extensionUri.fsPath, 'dist', 'engineWorker.js'),
      storeUri: resolveStoreUri(config),
      embedder: toEmbedderConfig(config),
      reranker: config.rerankEndpoint ? { endpoint: config.rerankEndpoint, model: config.rerankModel, candidates: config.rerankCandidates } : null,
      sessionIdleMs: config.sessionIdleMinutes * 60_000,
      requestLogRetention: requestLogRetention(config.requestLogRetentionDays, config.requestLogMaxRows),
      languageModelSummaries: config.summariser === 'languageModel',
      team: config.teamStore ? { uri: expandHome(config.teamStore), author: await gitAuthor(vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? process.cwd()) } : undefined,
      objectStore: config.storeEndpoint ? { endpoint: config.storeEndpoint } : undefined,
      log: this.options.log,
      summarise: this.options.summarise,
    });
    this.openedInMs = Date.now() - started;
    this.options.log(`Store opened at ${engine.storeUri} in ${this.openedInMs} ms (embedder: ${engine.embedderName ?? 'none, full-text search only'}).`);
    return engine;
  }

  /** Closes the engine (flushing what it holds); the next get() opens it again with current settings. */
  async close(): Promise<void> {
    const pending = this.opening;
    this.opening = undefined;
    const engine = this.engine ?? (pending ? await pending.catch(() => undefined) : undefined);
    this.engine = undefined;
    if (engine) {
      await engine.close();
      this._onDidClose.fire();
    }
  }

  dispose(): void {
    this.subscription.dispose();
    void this.close();
    this._onDidOpen.dispose();
    this._onDidClose.dispose();
  }
}

export function resolveStoreUri(config: CodeMemoryConfig): string {
  if (!config.storeLocation) return defaultStoreUri();
  return expandHome(config.storeLocation);
}

export function toEmbedderConfig(config: CodeMemoryConfig): EmbedderConfig | null {
  switch (config.embeddingProvider) {
    case 'none':
      return null;
    case 'hashed':
      return { provider: 'hashed' };
    case 'openai':
      return { provider: 'openai', baseUrl: config.embeddingEndpoint || DEFAULT_OPENAI_EMBEDDING.baseUrl, model: config.embeddingModel || DEFAULT_OPENAI_EMBEDDING.model };
    default:
      return { provider: 'use-lite' };
  }
}
