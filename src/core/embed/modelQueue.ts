// One model, many callers: the shared model host (one per machine user) and the embedding thread
// (one per process) each hold a model that a search's query and a backfill's thousands of texts
// ask at once. Requests are cut into model calls of the model's own size (Embedder.textsPerCall)
// and, before each call, the request with the fewest texts left goes first: a query's one text
// waits for at most one call of a backfill, never for its whole batch. One call runs at a time.
// While queries come (one within the last second), a batch's call is followed by a pause as long
// as that call, which a new request ends: a query then finds the model free half the time
// instead of never, and the backfill still gets half of it.
import type { Embedder } from './embedder';

const DEFAULT_TEXTS_PER_CALL = 32;
const QUERIES_ACTIVE_MS = 1000;

interface Job {
  texts: string[];
  /** Fits in one call: a search's query, not a batch. */
  query: boolean;
  vectors: Float32Array[];
  signal?: AbortSignal;
  resolve: (vectors: Float32Array[]) => void;
  reject: (err: unknown) => void;
}

export class ModelQueue {
  private readonly jobs: Job[] = [];
  private running = false;
  private readonly textsPerCall: number;
  private lastQueryAt = -Infinity;
  /** Ends the pause after a batch's call: a request arrived. */
  private wake: (() => void) | null = null;

  constructor(private readonly model: Embedder) {
    this.textsPerCall = Math.max(1, model.textsPerCall ?? DEFAULT_TEXTS_PER_CALL);
  }

  /** The vectors of `texts`, in order; a request whose signal aborts gets no further calls. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (texts.length === 0) return Promise.resolve([]);
    return new Promise<Float32Array[]>((resolve, reject) => {
      this.jobs.push({ texts, query: texts.length <= this.textsPerCall, vectors: [], signal, resolve, reject });
      this.wake?.();
      void this.run();
    });
  }

  private async run(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.jobs.length > 0) {
        // Requests that arrived during the last call are read before the next one is chosen.
        await new Promise((resolve) => setImmediate(resolve));
        const left = (j: Job) => j.texts.length - j.vectors.length;
        const job = this.jobs.reduce((a, b) => (left(b) < left(a) ? b : a));
        if (job.signal?.aborted) {
          this.finish(job);
          job.reject(job.signal.reason);
          continue;
        }
        const started = performance.now();
        try {
          const start = job.vectors.length;
          job.vectors.push(...(await this.model.embed(job.texts.slice(start, start + this.textsPerCall))));
        } catch (err) {
          this.finish(job);
          job.reject(err);
          continue;
        }
        const took = performance.now() - started;
        if (job.query) this.lastQueryAt = performance.now();
        if (left(job) === 0) {
          this.finish(job);
          job.resolve(job.vectors);
        }
        // Only batches are waiting: while queries come, leave the model free for the next one.
        const batchesOnly = this.jobs.length > 0 && this.jobs.every((j) => !j.query);
        if (!job.query && batchesOnly && performance.now() - this.lastQueryAt < QUERIES_ACTIVE_MS) await this.pause(took);
      }
    } finally {
      this.running = false;
    }
  }

  /** Waits `ms`, or less when a request arrives meanwhile. */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  private finish(job: Job): void {
    const i = this.jobs.indexOf(job);
    if (i >= 0) this.jobs.splice(i, 1);
  }
}
