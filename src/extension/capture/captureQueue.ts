import { performance } from 'node:perf_hooks';
import type { CaptureEvent, CaptureKind } from './events';

export interface CaptureStats {
  events: number;
  /** Handler invocations measured: every recorded event, plus keystrokes (which record nothing until a save). */
  handlerCalls: number;
  byKind: Partial<Record<CaptureKind, number>>;
  /** Synchronous time spent in event handlers, from the handler's first line to the push. */
  handlerMs: number;
  handlerMaxMs: number;
  drains: number;
  /** Wall time of drains (async: enrichment and the store write, off the event path). */
  drainMs: number;
  /** Synchronous slices of the drains, i.e. what the drains took from the event loop. */
  drainSyncMs: number;
  observations: number;
  /** Events never written: pushed out by newer ones, given up after maxAttempts, or left at dispose. */
  dropped: number;
  /** Failed writes, retried or not. */
  errors: number;
  lastError: string | null;
}

export type CaptureSink = (events: CaptureEvent[]) => Promise<number>;

export interface CaptureQueueOptions {
  /** How long events gather before a batched write. */
  delayMs: number;
  maxBatch: number;
  /**
   * Beyond this many events waiting (a failed batch included) the oldest are dropped, and
   * counted: memory stays bounded at this plus the one batch being written.
   */
  maxPending: number;
  /** Writes of one batch before it is given up (and counted as dropped). */
  maxAttempts: number;
  /** Wait before a failed batch's first retry; doubled for each one after. */
  retryDelayMs: number;
}

const DEFAULTS: CaptureQueueOptions = { delayMs: 1500, maxBatch: 500, maxPending: 5000, maxAttempts: 3, retryDelayMs: 500 };

interface Batch {
  events: CaptureEvent[];
  /** Failed writes so far. */
  attempts: number;
}

/**
 * Event handlers push here and return; a timer drains batches into the sink (enrichment +
 * one store write per batch). Nothing in push() touches the disk, the store or a model.
 * A batch whose write failed waits at the head of the queue and is written again, after a
 * backoff, before anything pushed later, so events reach the store in the order they
 * happened. Knows nothing of VS Code, so it is tested in plain Node.
 */
export class CaptureQueue {
  private pending: CaptureEvent[] = [];
  /** The batch whose last write failed: the next to write, once `retryAt` has come. */
  private failed: Batch | undefined;
  private retryAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  /** Wakes flush() and drainAndDispose() from their waits when the queue is disposed. */
  private readonly wakers = new Set<() => void>();
  private disposed = false;
  private readonly options: CaptureQueueOptions;
  readonly stats: CaptureStats = {
    events: 0,
    handlerCalls: 0,
    byKind: {},
    handlerMs: 0,
    handlerMaxMs: 0,
    drains: 0,
    drainMs: 0,
    drainSyncMs: 0,
    observations: 0,
    dropped: 0,
    errors: 0,
    lastError: null,
  };

  constructor(
    private readonly sink: CaptureSink,
    options: Partial<CaptureQueueOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  /** Events waiting to be written (not counting a batch being written now). */
  get size(): number {
    return this.pending.length + (this.failed?.events.length ?? 0);
  }

  /** `startedAt` is performance.now() at the top of the handler, so the cost covers its own work. */
  push(event: CaptureEvent, startedAt?: number): void {
    if (this.disposed) return;
    this.pending.push(event);
    this.trim();
    const s = this.stats;
    s.events++;
    s.byKind[event.kind] = (s.byKind[event.kind] ?? 0) + 1;
    if (startedAt !== undefined) this.account(startedAt);
    this.schedule(this.options.delayMs);
  }

  /** Adds a handler's cost (from `startedAt` to now) to the stats. */
  account(startedAt: number): void {
    const cost = performance.now() - startedAt;
    this.stats.handlerCalls++;
    this.stats.handlerMs += cost;
    if (cost > this.stats.handlerMaxMs) this.stats.handlerMaxMs = cost;
  }

  /** Drop everything not yet written (used when capture is paused or the workspace loses trust). */
  clear(): void {
    this.pending = [];
    this.failed = undefined;
  }

  /**
   * Writes everything pending now, a failed batch after its backoff; resolves when all is
   * stored, or given up after maxAttempts (see stats), or the queue is disposed.
   */
  async flush(): Promise<void> {
    while (!this.disposed) {
      if (this.draining) {
        await this.draining;
        continue;
      }
      if (this.size === 0) return;
      const wait = this.failed ? this.retryAt - Date.now() : 0;
      if (wait > 0) await this.pause(wait);
      else await this.drain();
    }
  }

  /**
   * For closing: writes what is pending, as flush() does, for at most `timeoutMs`; then
   * disposes the queue, counting what is still unwritten as dropped. A write still running
   * then is not waited for, and not retried if it fails.
   */
  async drainAndDispose(timeoutMs: number): Promise<void> {
    if (this.disposed) return;
    await Promise.race([this.flush(), this.pause(timeoutMs)]);
    this.dispose();
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.draining || this.disposed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.drain();
    }, delayMs);
    // A pending capture must never keep a process alive on its own.
    this.timer.unref?.();
  }

  private cancelTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Resolves after `ms`, or at once when the queue is disposed. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }

  /** The next batch to write: the failed one first, so nothing overtakes it. */
  private takeBatch(): Batch | undefined {
    if (this.failed) {
      const batch = this.failed;
      this.failed = undefined;
      return batch;
    }
    const events = this.pending.splice(0, this.options.maxBatch);
    return events.length > 0 ? { events, attempts: 0 } : undefined;
  }

  /** Drops the oldest waiting events, a failed batch's first, until at most maxPending wait. */
  private trim(): void {
    let excess = this.size - this.options.maxPending;
    if (excess <= 0) return;
    this.stats.dropped += excess;
    if (this.failed) {
      const fromFailed = Math.min(excess, this.failed.events.length);
      this.failed.events.splice(0, fromFailed);
      excess -= fromFailed;
      if (this.failed.events.length === 0) this.failed = undefined;
    }
    this.pending.splice(0, excess);
  }

  private retryOrDrop(batch: Batch): void {
    const attempts = batch.attempts + 1;
    if (attempts >= this.options.maxAttempts || this.disposed) {
      this.stats.dropped += batch.events.length;
      return;
    }
    this.failed = { events: batch.events, attempts };
    this.retryAt = Date.now() + this.options.retryDelayMs * 2 ** (attempts - 1);
    this.trim();
  }

  private drain(): Promise<void> {
    if (this.draining) return this.draining;
    this.cancelTimer();
    const batch = this.takeBatch();
    if (!batch) return Promise.resolve();
    const started = performance.now();
    let syncEnd = 0;
    const run = (async () => {
      try {
        const pendingWrite = this.sink(batch.events);
        syncEnd = performance.now();
        const written = await pendingWrite;
        this.stats.observations += written;
        this.stats.drains++;
      } catch (err) {
        this.stats.errors++;
        this.stats.lastError = err instanceof Error ? err.message : String(err);
        this.retryOrDrop(batch);
      } finally {
        this.stats.drainMs += performance.now() - started;
        this.stats.drainSyncMs += (syncEnd || performance.now()) - started;
        this.draining = undefined;
        if (this.size > 0) this.schedule(this.failed ? Math.max(0, this.retryAt - Date.now()) : this.options.delayMs);
      }
    })();
    this.draining = run;
    return run;
  }

  /** Stops at once: what is not written yet is dropped, and counted. To write it first, use drainAndDispose(). */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.cancelTimer();
    for (const wake of [...this.wakers]) wake();
    const left = this.size;
    if (left > 0) {
      this.stats.dropped += left;
      this.stats.lastError = `${left} event${left === 1 ? ' was' : 's were'} not written before capture closed`;
    }
    this.clear();
  }
}
