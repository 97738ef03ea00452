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
  dropped: number;
  errors: number;
  lastError: string | null;
}

export type CaptureSink = (events: CaptureEvent[]) => Promise<number>;

export interface CaptureQueueOptions {
  /** How long events gather before a batched write. */
  delayMs: number;
  maxBatch: number;
  /** Beyond this many pending events the oldest are dropped (and counted): memory stays bounded. */
  maxPending: number;
}

/**
 * Event handlers push here and return; a timer drains batches into the sink (enrichment +
 * one store write per batch). Nothing in push() touches the disk, the store or a model.
 * Knows nothing of VS Code, so it is tested in plain Node.
 */
export class CaptureQueue {
  private pending: CaptureEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private disposed = false;
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
    private readonly options: CaptureQueueOptions = { delayMs: 1500, maxBatch: 500, maxPending: 5000 },
  ) {}

  get size(): number {
    return this.pending.length;
  }

  /** `startedAt` is performance.now() at the top of the handler, so the cost covers its own work. */
  push(event: CaptureEvent, startedAt?: number): void {
    if (this.disposed) return;
    this.pending.push(event);
    if (this.pending.length > this.options.maxPending) {
      this.pending.shift();
      this.stats.dropped++;
    }
    const s = this.stats;
    s.events++;
    s.byKind[event.kind] = (s.byKind[event.kind] ?? 0) + 1;
    if (startedAt !== undefined) this.account(startedAt);
    this.schedule();
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
  }

  /** Writes everything pending now; resolves when it is stored. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.draining || this.pending.length > 0) {
      if (this.draining) await this.draining;
      else await this.drain();
    }
  }

  private schedule(): void {
    if (this.timer || this.draining) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.drain();
    }, this.options.delayMs);
    // A pending capture must never keep a process alive on its own.
    this.timer.unref?.();
  }

  private drain(): Promise<void> {
    if (this.draining) return this.draining;
    const batch = this.pending.splice(0, this.options.maxBatch);
    if (batch.length === 0) return Promise.resolve();
    const started = performance.now();
    let syncEnd = 0;
    const run = (async () => {
      try {
        const pendingWrite = this.sink(batch);
        syncEnd = performance.now();
        const written = await pendingWrite;
        this.stats.observations += written;
        this.stats.drains++;
      } catch (err) {
        this.stats.errors++;
        this.stats.lastError = err instanceof Error ? err.message : String(err);
      } finally {
        this.stats.drainMs += performance.now() - started;
        this.stats.drainSyncMs += (syncEnd || performance.now()) - started;
        this.draining = undefined;
        if (this.pending.length > 0 && !this.disposed) this.schedule();
      }
    })();
    this.draining = run;
    return run;
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
