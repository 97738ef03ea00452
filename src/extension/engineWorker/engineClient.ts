import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import type { RemoteEngine, SessionEndReason } from '../../core/api';
import { REMOTE_ENGINE_METHODS } from '../../core/api';
import type { SummaryContext, SummaryResult } from '../../core/compress/summariser';
import type { Observation, Scope, SessionSummary } from '../../core/model/records';
import { storeChildEnv } from '../../core/processEnv';
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
 * message to the engine process. The host's event loop only sends and receives messages.
 *
 * A process, not a thread of the host: LanceDB's native layer (napi-rs 3.9.4 in 0.31) keeps one
 * release queue for the buffers its writes let go of, the first JavaScript environment's, and
 * frees there the buffers of every other environment of the process; a host with LanceDB on two
 * threads (a window whose old engine still closes while the new one opens, the test runner)
 * crashed with SIGSEGV or a glibc abort a few engines later. A process also keeps a native crash
 * of the store out of the extension host: the engine restarts on the next use.
 */
// The class gets the RemoteEngine methods at load time (below); the interface tells the compiler.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface EngineClient extends RemoteEngine {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class EngineClient {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  /** The process has ended: nothing more is sent to it (until then a closing one may still ask for a summary). */
  private ended = false;
  exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    readonly storeUri: string,
    readonly embedderName: string | null,
    private readonly options: EngineClientOptions,
    output: ChildOutput,
  ) {
    child.on('message', (m: ToMainMessage) => this.onMessage(m));
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.closed = true;
        this.ended = true;
        const how = signal ? `signal ${signal}` : `exit code ${code}`;
        for (const p of this.pending.values()) p.reject(new Error(`The Code Memory engine stopped (${how}). It restarts on the next use.${output.tail()}`));
        this.pending.clear();
        resolve();
      });
    });
    child.on('error', (err) => options.log(`Engine process error: ${err.stack ?? err.message}`));
  }

  static async start(options: EngineClientOptions): Promise<EngineClient> {
    const { workerPath, log, summarise: _summarise, ...data } = options;
    const child = fork(workerPath, [], {
      // Not the host's flags (a debugger's, tsx's): the bundle is plain JavaScript.
      execArgv: [],
      // The extension host's executable is Electron's: the environment runs the child as Node.
      env: storeChildEnv(),
      // Structured clone, as between threads: records keep their Dates and typed arrays.
      serialization: 'advanced',
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const output = new ChildOutput(child, log);
    let onMessage: (m: ToMainMessage) => void = () => undefined;
    const opening = new Promise<Extract<ToMainMessage, { type: 'ready' }>>((resolve, reject) => {
      onMessage = (m: ToMainMessage): void => {
        if (m.type === 'log') log(m.message);
        else if (m.type === 'ready') resolve(m);
        else if (m.type === 'failed') reject(new Error(`The memory store could not be opened: ${m.error}`));
      };
      child.on('message', onMessage);
      child.once('error', reject);
      child.once('exit', (code, signal) => reject(new Error(`The engine process exited (${signal ?? `code ${code}`}) before the store was open.${output.tail()}`)));
    });
    child.send({ type: 'open', options: data } satisfies ToWorkerMessage);
    let ready: Extract<ToMainMessage, { type: 'ready' }>;
    try {
      ready = await opening;
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    } finally {
      child.off('message', onMessage);
      child.removeAllListeners('error');
      child.removeAllListeners('exit');
    }
    return new EngineClient(child, ready.storeUri, ready.embedder, options, output);
  }

  /** The engine process's id (undefined when it could not start). */
  get pid(): number | undefined {
    return this.child.pid;
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
    if (!this.ended && this.child.connected) this.child.send(m);
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
  /** Stops the server of `project`, or every server of the window. */
  stopHttpServer(project?: string): Promise<void> {
    return this.call('stopHttpServer', project === undefined ? [] : [project]);
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

  /**
   * Closes the store and ends the process. Waits at most 5 s (what VS Code gives deactivate());
   * a process still closing then (its calls under way, the flush, the sessions' summaries) is left
   * to finish, without holding the host: it ends itself once closed, also when the host has gone.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    const closing = this.call('close', []).then(
      () => true,
      () => true,
    );
    const closed = await Promise.race([closing, delay(5000, false, { ref: false })]);
    this.closed = true;
    if (closed) {
      // It exits once it has answered; one that does not is ended.
      if (!(await Promise.race([this.exited.then(() => true), delay(5000, false, { ref: false })]))) this.child.kill('SIGKILL');
      return;
    }
    this.child.unref();
    this.child.channel?.unref();
    for (const stream of [this.child.stdout, this.child.stderr]) (stream as { unref?: () => void } | null)?.unref?.();
  }
}

/** The engine process's own output (a native panic, LanceDB's errors): to the log, and its end kept for the message of an unexpected exit. */
class ChildOutput {
  private last = '';

  constructor(child: ChildProcess, log: (message: string) => void) {
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8').on('data', (d: string) => {
        this.last = (this.last + d).slice(-1000);
        for (const line of d.split(/\r?\n/)) if (line.trim()) log(`engine: ${line}`);
      });
    }
  }

  /** The output's last lines, as the end of a message; nothing when there was none. */
  tail(): string {
    const text = this.last.trim();
    return text ? ` Its last output: ${text.split(/\r?\n/).slice(-5).join(' | ')}` : '';
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
