// One model, many callers: the shared model host (one per machine user) and the embedding thread
// (one per process) each hold a model that a search's query and a backfill's thousands of texts
// ask at once. Requests are cut into model calls of the model's own size (Embedder.textsPerCall)
// and, before each call, the request with the fewest texts left goes first: a query's one text
// waits for at most one call of a backfill, never for its whole batch. One call runs at a time.
import type { Embedder } from './embedder';

const DEFAULT_TEXTS_PER_CALL = 32;

interface Job {
  texts: string[];
  vectors: Float32Array[];
  signal?: AbortSignal;
  resolve: (vectors: Float32Array[]) => void;
  reject: (err: unknown) => void;
}

export class ModelQueue {
  private readonly jobs: Job[] = [];
  private running = false;
  private readonly textsPerCall: number;

  constructor(private readonly model: Embedder) {
    this.textsPerCall = Math.max(1, model.textsPerCall ?? DEFAULT_TEXTS_PER_CALL);
  }

  /** The vectors of `texts`, in order; a request whose signal aborts gets no further calls. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (texts.length === 0) return Promise.resolve([]);
    return new Promise<Float32Array[]>((resolve, reject) => {
      this.jobs.push({ texts, vectors: [], signal, resolve, reject });
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
        try {
          const start = job.vectors.length;
          job.vectors.push(...(await this.model.embed(job.texts.slice(start, start + this.textsPerCall))));
        } catch (err) {
          this.finish(job);
          job.reject(err);
          continue;
        }
        if (left(job) > 0) continue;
        this.finish(job);
        job.resolve(job.vectors);
      }
    } finally {
      this.running = false;
    }
  }

  private finish(job: Job): void {
    const i = this.jobs.indexOf(job);
    if (i >= 0) this.jobs.splice(i, 1);
  }
}
