// Fire-and-forget capture: events gather here and are written in batches. A batch whose write
// fails is retried (bounded, with backoff) before it is given up and logged; close() flushes.

export interface WriteQueueOptions<T> {
  write: (batch: T[]) => Promise<unknown>;
  batchSize: number;
  delayMs: number;
  /** Attempts per batch before it is dropped (default 3). */
  attempts?: number;
  log: (message: string) => void;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class WriteQueue<T> {
  private queue: T[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  /** Events given up after every attempt failed. */
  dropped = 0;

  constructor(private readonly options: WriteQueueOptions<T>) {}

  get size(): number {
    return this.queue.length;
  }

  push(item: T): void {
    this.queue.push(item);
    if (this.queue.length >= this.options.batchSize) {
      void this.flush().catch(() => undefined);
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.flush().catch(() => undefined);
      }, this.options.delayMs);
      this.timer.unref();
    }
  }

  /** Writes everything queued so far; resolves when it is written (or given up). */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const run = this.flushing.then(async () => {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.options.batchSize);
        await this.writeWithRetry(batch);
      }
    });
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private async writeWithRetry(batch: T[]): Promise<void> {
    const attempts = this.options.attempts ?? 3;
    for (let i = 1; ; i++) {
      try {
        await this.options.write(batch);
        return;
      } catch (e) {
        const message = String((e as Error).message ?? e);
        if (i >= attempts) {
          // Capture must not throw into the editor: after the last attempt the batch is logged.
          this.dropped += batch.length;
          this.options.log(`capture batch of ${batch.length} dropped after ${attempts} attempts: ${message}`);
          return;
        }
        this.options.log(`capture batch of ${batch.length} failed (attempt ${i} of ${attempts}), retrying: ${message}`);
        await sleep(100 * 2 ** (i - 1));
      }
    }
  }
}
