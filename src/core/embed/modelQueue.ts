// One model, many callers: the shared model host (one per machine user) and the embedding thread
// (one per process) each hold a model that a search's query and a backfill's thousands of texts
// ask at once. Requests are cut into model calls of the model's own size (Embedder.textsPerCall)
// and, before each call, the request with the fewest texts left goes first: a query's one text
// waits for at most one call of a backfill, never for its whole batch. One call runs at a time.
// While queries come (one within the last second), batches are held between their calls and only
// queries are served: for as long as the batch's last call took, and after each query for
// QUERY_GAP_MS more (a search's next question tends to come that soon, and would otherwise find
// the batch's next call running), but never for more than twice that call: the backfill keeps at
// least a third of the model however many questions come, and all of it when none do.
import type { Embedder } from './embedder';

const DEFAULT_TEXTS_PER_CALL = 32;
const QUERIES_ACTIVE_MS = 1000;
const QUERY_GAP_MS = 25;

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
  /** Batches wait until then (queries do not), which queries may push back until the limit. */
  private batchesHeldUntil = 0;
  private holdLimit = 0;
  /** Ends a wait for the hold's end: a request arrived, maybe a query. */
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
        const held = this.batchesHeldUntil - performance.now();
        const ready = held > 0 ? this.jobs.filter((j) => j.query) : this.jobs;
        if (ready.length === 0) {
          await this.pause(held);
          continue;
        }
        const job = ready.reduce((a, b) => (left(b) < left(a) ? b : a));
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
        const now = performance.now();
        const took = now - started;
        if (left(job) === 0) {
          this.finish(job);
          job.resolve(job.vectors);
        }
        if (job.query) {
          this.lastQueryAt = now;
          this.batchesHeldUntil = Math.min(this.holdLimit, Math.max(this.batchesHeldUntil, now + QUERY_GAP_MS));
        } else if (now - this.lastQueryAt < QUERIES_ACTIVE_MS) {
          this.batchesHeldUntil = now + took;
          this.holdLimit = now + 2 * took;
        }
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
