import { Worker } from 'node:worker_threads';
import type { RemoteEngine, SessionEndReason } from '../../core/api';
import { REMOTE_ENGINE_METHODS } from '../../core/api';
import type { SummaryContext, SummaryResult } from '../../core/compress/summariser';
import type { Observation, Scope, SessionSummary } from '../../core/model/records';
import type { ToMainMessage, ToWorkerMessage, WorkerOpenOptions } from './protocol';

export interface ToolRunResult {
  text: string;
  structured?: Record<string, unknown>;
  isError: boolean;
}

export interface ServerAddress {
  url: string;
  baseUrl: string;
  port: number;
  token: string;
}

export interface EngineClientOptions extends WorkerOpenOptions {
  workerPath: string;
  log: (message: string) => void;
  /** A language-model summary for an ended session, or null for the extractive one. */
  summarise: (observations: Observation[], budgetTokens: number, context?: SummaryContext) => Promise<SummaryResult | null>;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  onProgress?: (done: number, total: number) => void;
}

/**
 * The engine as the extension host sees it: the MemoryEngineApi reads and writes, each a
 * message to the engine thread. The host's event loop only posts and receives messages.
 */
// The class gets the RemoteEngine methods at load time (below); the interface tells the compiler.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface EngineClient extends RemoteEngine {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class EngineClient {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  /** The thread has ended: nothing more is posted to it (until then a closing thread may still ask for a summary). */
  private ended = false;
  exited: Promise<void>;

  private constructor(
    private readonly worker: Worker,
    readonly storeUri: string,
    readonly embedderName: string | null,
    private readonly options: EngineClientOptions,
  ) {
    worker.on('message', (m: ToMainMessage) => this.onMessage(m));
    this.exited = new Promise((resolve) => {
      worker.once('exit', (code) => {
        this.closed = true;
        this.ended = true;
        for (const p of this.pending.values()) p.reject(new Error(`The Code Memory engine stopped (exit code ${code}). It restarts on the next use.`));
        this.pending.clear();
        resolve();
      });
    });
    worker.on('error', (err) => options.log(`Engine thread error: ${err.stack ?? err.message}`));
  }

  static async start(options: EngineClientOptions): Promise<EngineClient> {
    const { workerPath, log: _log, summarise: _summarise, ...data } = options;
    // LanceDB's native logger reads the real process environment, not a worker's copy.
    process.env.LANCEDB_LOG ??= 'error';
    const worker = new Worker(workerPath, { workerData: data });
    let onMessage: (m: ToMainMessage) => void = () => undefined;
    const opening = new Promise<Extract<ToMainMessage, { type: 'ready' }>>((resolve, reject) => {
      onMessage = (m: ToMainMessage): void => {
        if (m.type === 'log') options.log(m.message);
        else if (m.type === 'ready') resolve(m);
        else if (m.type === 'failed') reject(new Error(`The memory store could not be opened: ${m.error}`));
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`The engine thread exited (code ${code}) before the store was open.`)));
    });
    let ready: Extract<ToMainMessage, { type: 'ready' }>;
    try {
      ready = await opening;
    } catch (err) {
      await worker.terminate();
      throw err;
    } finally {
      worker.off('message', onMessage);
      worker.removeAllListeners('error');
      worker.removeAllListeners('exit');
    }
    return new EngineClient(worker, ready.storeUri, ready.embedder, options);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private onMessage(m: ToMainMessage): void {
    switch (m.type) {
      case 'result':
        this.pending.get(m.id)?.resolve(m.value);
        this.pending.delete(m.id);
        return;
      case 'error': {
        const err = new Error(m.error) as Error & { code?: string };
        if (m.code) err.code = m.code;
        this.pending.get(m.id)?.reject(err);
        this.pending.delete(m.id);
        return;
      }
      case 'progress':
        this.pending.get(m.id)?.onProgress?.(m.done, m.total);
        return;
      case 'summarise':
        void this.options.summarise(m.observations, m.budgetTokens, m.context).then(
          (fields) => this.post({ type: 'summary', id: m.id, fields }),
          () => this.post({ type: 'summary', id: m.id, fields: null }),
        );
        return;
      case 'log':
        this.options.log(m.message);
        return;
      default:
        return;
    }
  }

  private post(m: ToWorkerMessage): void {
    if (!this.ended) this.worker.postMessage(m);
  }

  call<T>(method: string, args: unknown[], extra: { onProgress?: (done: number, total: number) => void; signal?: AbortSignal } = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('The Code Memory engine is closed.'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, onProgress: extra.onProgress });
      extra.signal?.addEventListener('abort', () => this.post({ type: 'cancel', id }), { once: true });
      this.post({ type: 'call', id, method, args });
    });
  }

  setLanguageModelSummaries(enabled: boolean): void {
    this.post({ type: 'setLanguageModelSummaries', enabled });
  }

  /** Ends the open session of a scope (one round trip, so nothing slips in between). */
  endCurrentSession(scope: Scope, reason: SessionEndReason): Promise<{ sessionId: string; summary: SessionSummary | null }> {
    return this.call('endCurrentSession', [scope, reason]);
  }
  // What the extension needs beyond the engine contract.
  exportToFile(path: string, scope: Scope | null): Promise<number> {
    return this.call('exportToFile', [path, scope]);
  }
  importFromFile(path: string): Promise<number> {
    return this.call('importFromFile', [path]);
  }
  importGitHistory(
    repoPath: string,
    scope: Scope,
    options: { onProgress?: (done: number, total: number) => void; signal?: AbortSignal } = {},
  ): Promise<{ imported: number; skipped: number; sessions: number }> {
    return this.call('importGitHistory', [repoPath, scope], options);
  }
  startHttpServer(options: { scope: Scope; port: number; token: string; repoRoot?: string }): Promise<ServerAddress> {
    return this.call('startHttpServer', [options]);
  }
  stopHttpServer(): Promise<void> {
    return this.call('stopHttpServer', []);
  }
  invokeTool(name: string, scope: Scope, input: unknown, transportSessionId?: string): Promise<ToolRunResult> {
    return this.call('invokeTool', [name, scope, input, transportSessionId]);
  }
  toolList(): Promise<{ name: string; title: string; readOnly: boolean }[]> {
    return this.call('toolList', []);
  }
  /**
   * Whether the store changed since the last ask other than through this client's writes: another
   * process (the CLI, another window) wrote or forgot. The first ask only takes note. See StoreChanges.
   */
  storeChangedElsewhere(): Promise<boolean> {
    return this.call('storeChangedElsewhere', []);
  }

  /** Closes the store (flushing it) and ends the thread. */
  /**
   * Closes the store and ends the thread. Waits at most 5 s (what VS Code gives deactivate());
   * a thread still closing then (its calls under way, the flush, the sessions' summaries) is left
   * to finish and ended when it has, without holding the process: a thread ended while the store's
   * native code still works in it aborts the whole process (the extension host).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    const closing = this.call('close', []).then(
      () => true,
      () => true,
    );
    const closed = await Promise.race([closing, new Promise<false>((resolve) => setTimeout(() => resolve(false), 5000).unref())]);
    this.closed = true;
    if (closed) {
      await this.worker.terminate();
      return;
    }
    this.worker.unref();
    void closing.then(() => this.worker.terminate());
  }
}

// The engine contract's methods, one message each, made from the one list in core/api.ts.
for (const method of REMOTE_ENGINE_METHODS) {
  Object.defineProperty(EngineClient.prototype, method, {
    value: function (this: EngineClient, ...args: unknown[]) {
      return this.call(method, args);
    },
  });
}
