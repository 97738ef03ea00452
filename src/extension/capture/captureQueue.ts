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
  /** Of those, the ones pushed out because the waiting events held more than maxPendingBytes. */
  droppedForBytes: number;
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
  /**
   * The same bound in bytes (estimated: texts count two bytes a character): edits of large files
   * carry their text, so a few thousand of them could hold gigabytes. Oldest are dropped first; an
   * event larger than the whole bound alone is not kept.
   */
  maxPendingBytes: number;
  /** Writes of one batch before it is given up (and counted as dropped). */
  maxAttempts: number;
  /** Wait before a failed batch's first retry; doubled for each one after. */
  retryDelayMs: number;
}

const DEFAULTS: CaptureQueueOptions = { delayMs: 1500, maxBatch: 500, maxPending: 5000, maxPendingBytes: 64 * 1024 * 1024, maxAttempts: 3, retryDelayMs: 500 };

/** An event's memory, roughly: its texts at two bytes a character, and a fixed cost for the rest. Cheap: string lengths only. */
export function eventBytes(event: CaptureEvent): number {
  let bytes = 64;
  for (const value of Object.values(event)) {
    if (typeof value === 'string') bytes += 16 + value.length * 2;
    else if (Array.isArray(value)) for (const item of value as unknown[]) bytes += typeof item === 'string' ? 16 + item.length * 2 : 8;
    else bytes += 8;
  }
  return bytes;
}

interface Waiting {
  event: CaptureEvent;
  bytes: number;
}

interface Batch {
  events: Waiting[];
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
  private pending: Waiting[] = [];
  private pendingBytes = 0;
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
    droppedForBytes: 0,
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

  /** Estimated bytes of the events waiting (a failed batch's included). */
  get bytes(): number {
    return this.pendingBytes;
  }

  /** `startedAt` is performance.now() at the top of the handler, so the cost covers its own work. */
  push(event: CaptureEvent, startedAt?: number): void {
    if (this.disposed) return;
    const bytes = eventBytes(event);
    this.pending.push({ event, bytes });
    this.pendingBytes += bytes;
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
    this.pendingBytes = 0;
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
      for (const e of batch.events) this.pendingBytes -= e.bytes;
      return batch;
    }
    const events = this.pending.splice(0, this.options.maxBatch);
    for (const e of events) this.pendingBytes -= e.bytes;
    return events.length > 0 ? { events, attempts: 0 } : undefined;
  }

  /**
   * Drops the oldest waiting events, a failed batch's first, until at most maxPending wait and
   * they hold at most maxPendingBytes. Counted, and said in lastError; never waits.
   */
  private trim(): void {
    const { maxPending, maxPendingBytes } = this.options;
    let byCount = 0;
    let byBytes = 0;
    const failed = this.failed?.events ?? [];
    let size = this.size;
    // Counted first and cut once: dropping a whole failed batch must not splice it one by one.
    let fromFailed = 0;
    let fromPending = 0;
    while (size > maxPending || (this.pendingBytes > maxPendingBytes && size > 0)) {
      const dropped = fromFailed < failed.length ? failed[fromFailed++] : this.pending[fromPending++];
      if (size > maxPending) byCount++;
      else byBytes++;
      this.pendingBytes -= dropped.bytes;
      size--;
    }
    if (byCount + byBytes === 0) return;
    failed.splice(0, fromFailed);
    if (this.failed && this.failed.events.length === 0) this.failed = undefined;
    this.pending.splice(0, fromPending);
    this.stats.dropped += byCount + byBytes;
    this.stats.droppedForBytes += byBytes;
    if (byBytes > 0) this.stats.lastError = `${this.stats.droppedForBytes} capture event(s) dropped: the events waiting to be written held more than ${Math.round(maxPendingBytes / 1024 / 1024)} MB`;
  }

  private retryOrDrop(batch: Batch): void {
    const attempts = batch.attempts + 1;
    if (attempts >= this.options.maxAttempts || this.disposed) {
      this.stats.dropped += batch.events.length;
      return;
    }
    this.failed = { events: batch.events, attempts };
    for (const e of batch.events) this.pendingBytes += e.bytes;
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
        const pendingWrite = this.sink(batch.events.map((w) => w.event));
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
