import * as vscode from 'vscode';
import type { MemoryEngineApi } from '../core/api';
import type { Summariser } from '../core/compress/summariser';
import type { EmbedderConfig } from '../core/embed/factory';
import { defaultStoreUri } from '../core/store/location';
import type { CodeMemoryConfig } from './config';
import { readConfig } from './config';
import { loadEngineModules } from './engineModules';

export interface EngineHostOptions {
  log: (message: string) => void;
  /** Wraps the engine's extractive summariser (e.g. with the language-model one the user may enable). */
  summariser: (extractive: Summariser) => Summariser;
}

/**
 * Owns the one MemoryEngine of this window and opens it on first need, never at activation:
 * the engine module (and with it LanceDB and the embedding model) is loaded by a dynamic
 * import, so activating the extension costs neither.
 */
export class EngineHost implements vscode.Disposable {
  private opening: Promise<MemoryEngineApi> | undefined;
  private engine: MemoryEngineApi | undefined;
  private readonly _onDidOpen = new vscode.EventEmitter<MemoryEngineApi>();
  readonly onDidOpen = this._onDidOpen.event;
  private readonly _onDidClose = new vscode.EventEmitter<void>();
  readonly onDidClose = this._onDidClose.event;
  openedInMs: number | null = null;

  constructor(private readonly options: EngineHostOptions) {}

  /** The store URI the engine uses (or will use), from settings or the CLI's default. */
  get storeUri(): string {
    return resolveStoreUri(readConfig());
  }

  get isOpen(): boolean {
    return this.engine !== undefined;
  }

  /** The engine if it is open already; never opens it. */
  peek(): MemoryEngineApi | undefined {
    return this.engine;
  }

  get(): Promise<MemoryEngineApi> {
    if (this.engine) return Promise.resolve(this.engine);
    this.opening ??= this.open().then(
      (engine) => {
        this.engine = engine;
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

  private async open(): Promise<MemoryEngineApi> {
    const started = Date.now();
    const config = readConfig();
    const storeUri = resolveStoreUri(config);
    process.env.LANCEDB_LOG ??= 'error';
    const embedder = await this.startEmbedder(config);
    const { MemoryEngine, ExtractiveSummariser } = loadEngineModules();
    const engine = await MemoryEngine.open({
      storeUri,
      embedder,
      summariser: this.options.summariser(new ExtractiveSummariser()),
      // Observations carry the branch, so the engine itself ends a session on a branch switch and after this much quiet.
      sessionIdleMs: config.sessionIdleMinutes * 60_000,
      logger: (m: string) => this.options.log(m),
    });
    this.openedInMs = Date.now() - started;
    this.options.log(`Store opened at ${storeUri} in ${this.openedInMs} ms (embedder: ${embedder === 'none' ? 'none' : embedder.name}).`);
    return engine;
  }

  private async startEmbedder(config: CodeMemoryConfig): Promise<import('../core/embed/embedder').Embedder | 'none'> {
    const embedderConfig = toEmbedderConfig(config);
    if (!embedderConfig) return 'none';
    try {
      const { WorkerEmbedder } = loadEngineModules();
      return await WorkerEmbedder.start(embedderConfig);
    } catch (err) {
      this.options.log(
        `The ${embedderConfig.provider} embedder could not start (${err instanceof Error ? err.message : String(err)}); ` +
          'search uses full text only. Change codeMemory.embedding.provider to fix this.',
      );
      return 'none';
    }
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
    void this.close();
    this._onDidOpen.dispose();
    this._onDidClose.dispose();
  }
}

export function resolveStoreUri(config: CodeMemoryConfig): string {
  if (!config.storeLocation) return defaultStoreUri();
  return config.storeLocation.replace(/^~(?=$|[\\/])/, process.env.HOME ?? process.env.USERPROFILE ?? '~');
}

export function toEmbedderConfig(config: CodeMemoryConfig): EmbedderConfig | null {
  switch (config.embeddingProvider) {
    case 'none':
      return null;
    case 'hashed':
      return { provider: 'hashed' };
    case 'openai':
      return { provider: 'openai', baseUrl: config.embeddingEndpoint || 'http://127.0.0.1:11434/v1', model: config.embeddingModel || 'nomic-embed-text' };
    default:
      return { provider: 'use-lite' };
  }
}
