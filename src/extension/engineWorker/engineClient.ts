import { Worker } from 'node:worker_threads';
import type {
  ForgetReport,
  ForgetRequest,
  MemoryEngineApi,
  MemoryInput,
  NodeDetail,
  ObservationInput,
  SearchHit,
  SearchOptions,
  SessionEndReason,
  SessionInfo,
  StoreStats,
} from '../../core/api';
import type { SummaryContext, SummaryFields } from '../../core/compress/summariser';
import type { Entity, Memory, Observation, Relationship, RequestLogEntry, Scope, SessionSummary, SourceKind } from '../../core/model/records';
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
  summarise: (observations: Observation[], budgetTokens: number, context?: SummaryContext) => Promise<SummaryFields | null>;
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
export class EngineClient {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
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
    if (!this.closed) this.worker.postMessage(m);
  }

  private call<T>(method: string, args: unknown[], extra: { onProgress?: (done: number, total: number) => void; signal?: AbortSignal } = {}): Promise<T> {
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

  // MemoryEngineApi, over messages.
  observe(inputs: ObservationInput[], scope: Scope): Promise<Observation[]> {
    return this.call('observe', [inputs, scope]);
  }
  flush(): Promise<void> {
    return this.call('flush', []);
  }
  remember(input: MemoryInput, scope: Scope): Promise<Memory> {
    return this.call('remember', [input, scope]);
  }
  endSession(memorySessionId: string, reason: SessionEndReason): Promise<SessionSummary | null> {
    return this.call('endSession', [memorySessionId, reason]);
  }
  currentSessionId(scope: Scope): Promise<string> {
    return this.call('currentSessionId', [scope]);
  }
  /** Ends the open session of a scope (one round trip, so nothing slips in between). */
  endCurrentSession(scope: Scope, reason: SessionEndReason): Promise<{ sessionId: string; summary: SessionSummary | null }> {
    return this.call('endCurrentSession', [scope, reason]);
  }
  search(text: string, options: SearchOptions): Promise<SearchHit[]> {
    return this.call('search', [text, options]);
  }
  getObservations(ids: number[], scope: Scope, options?: { includeSuppressed?: boolean }): Promise<Observation[]> {
    return this.call('getObservations', [ids, scope, options]);
  }
  getSessionSummaries(ids: number[], scope: Scope): Promise<SessionSummary[]> {
    return this.call('getSessionSummaries', [ids, scope]);
  }
  getMemories(ids: number[], scope: Scope, options?: { includeSuppressed?: boolean }): Promise<Memory[]> {
    return this.call('getMemories', [ids, scope, options]);
  }
  touch(kind: SourceKind, ids: number[], scope: Scope): Promise<void> {
    return this.call('touch', [kind, ids, scope]);
  }
  getNode(nodeId: string, scope: Scope): Promise<NodeDetail | null> {
    return this.call('getNode', [nodeId, scope]);
  }
  listSessions(scope: Scope, limit?: number): Promise<SessionInfo[]> {
    return this.call('listSessions', [scope, limit]);
  }
  listObservations(scope: Scope, options?: { sessionId?: string; limit?: number }): Promise<Observation[]> {
    return this.call('listObservations', [scope, options]);
  }
  listMemories(scope: Scope, options?: { includeSuppressed?: boolean }): Promise<Memory[]> {
    return this.call('listMemories', [scope, options]);
  }
  entities(scope: Scope, names: string[]): Promise<{ entities: Entity[]; relationships: Relationship[] }> {
    return this.call('entities', [scope, names]);
  }
  setStatus(kind: SourceKind, id: number, status: string, scope: Scope): Promise<void> {
    return this.call('setStatus', [kind, id, status, scope]);
  }
  promote(observationId: number, scope: Scope): Promise<Memory> {
    return this.call('promote', [observationId, scope]);
  }
  forget(request: ForgetRequest, scope: Scope | null): Promise<ForgetReport> {
    return this.call('forget', [request, scope]);
  }
  addPrompt(sessionId: string, prompt: string): Promise<void> {
    return this.call('addPrompt', [sessionId, prompt]);
  }
  recentPrompts(sessionId: string, limit: number): Promise<string[]> {
    return this.call('recentPrompts', [sessionId, limit]);
  }
  logRequest(entry: RequestLogEntry): Promise<void> {
    return this.call('logRequest', [entry]);
  }
  listRequests(scope: Scope, limit?: number): Promise<RequestLogEntry[]> {
    return this.call('listRequests', [scope, limit]);
  }
  stats(scope: Scope | null): Promise<StoreStats> {
    return this.call('stats', [scope]);
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
  startHttpServer(options: { scope: Scope; port: number; token: string }): Promise<ServerAddress> {
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

  /** Closes the store (flushing it) and ends the thread. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await Promise.race([this.call('close', []), new Promise((resolve) => setTimeout(resolve, 5000))]);
    } finally {
      this.closed = true;
      await this.worker.terminate();
    }
  }
}

/** Compile-time check that the client mirrors the engine contract's reading and curating methods. */
type Mirrored = Omit<MemoryEngineApi, 'storeUri' | 'enqueue' | 'currentSessionId' | 'exportJsonl' | 'importJsonl' | 'close'>;
const _mirrors: (c: EngineClient) => Mirrored = (c) => c;
void _mirrors;
