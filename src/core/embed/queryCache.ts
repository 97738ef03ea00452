// Query vectors, cached per text. Agents ask the same questions again (retrieve_memory runs on
// every prompt, recall_context on every selection, a retry repeats its query), and with the
// sentence encoder one query embedding alone costs p50 17 / p95 40 ms here: a hit costs a map
// lookup. Keyed by model and text, so a vector of one model is never served for another, and
// kept per project (ProjectQueryCaches): a hit answers faster, so one cache shared by the
// projects an engine serves told one project's caller which questions another had asked.
// Only the search path uses it; the embedding queue embeds each cell once and would only
// evict the queries.
import type { Embedder } from './embedder';

export const DEFAULT_QUERY_CACHE_SIZE = 1000;

export class CachedQueryEmbedder {
  // A Map iterates in insertion order: re-inserting on a hit keeps the oldest entry first.
  private readonly entries = new Map<string, Promise<Float32Array>>();
  private hitCount = 0;
  private missCount = 0;

  constructor(
    private readonly inner: Embedder,
    private readonly capacity = DEFAULT_QUERY_CACHE_SIZE,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`query cache capacity must be a positive integer, got ${capacity}`);
  }

  get name(): string {
    return this.inner.name;
  }

  get dimension(): number {
    return this.inner.dimension;
  }

  get stats(): { hits: number; misses: number; size: number } {
    return { hits: this.hitCount, misses: this.missCount, size: this.entries.size };
  }

  /**
   * One vector per text, from the cache where it has one; the rest in one call to the embedder.
   * The vectors are shared between callers: read them, never write them.
   */
  async embed(texts: string[]): Promise<Float32Array[]> {
    const model = this.inner.name;
    const own = new Map<string, Deferred>();
    const out = texts.map((text) => {
      const key = `${model}\u0000${text}`;
      const cached = this.entries.get(key);
      if (cached) {
        this.hitCount++;
        this.entries.delete(key);
        this.entries.set(key, cached);
        return cached;
      }
      // Concurrent callers asking for the same text share this call's result.
      this.missCount++;
      const d = deferred();
      own.set(text, d);
      this.entries.set(key, d.promise);
      return d.promise;
    });
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    if (own.size > 0) {
      const missing = [...own.keys()];
      try {
        const vectors = await this.inner.embed(missing);
        missing.forEach((text, i) => {
          const v = vectors[i];
          if (v?.length !== this.inner.dimension) throw new Error(`Embedder ${model} returned a vector of ${v?.length} values, expected ${this.inner.dimension}.`);
        });
        missing.forEach((text, i) => own.get(text)?.resolve(vectors[i]));
      } catch (e) {
        // A failure is not remembered: the next call asks the embedder again.
        for (const [text, d] of own) {
          const key = `${model}\u0000${text}`;
          if (this.entries.get(key) === d.promise) this.entries.delete(key);
          d.reject(e);
        }
      }
    }
    return Promise.all(out);
  }
}

/** How many projects' query caches an engine keeps (the least recently searched one goes first). */
export const QUERY_CACHE_PROJECTS = 32;

/** One CachedQueryEmbedder per project, so no project's questions warm another's searches. */
export class ProjectQueryCaches {
  // Insertion order again: a search re-inserts its project's cache.
  private readonly caches = new Map<string, CachedQueryEmbedder>();

  constructor(
    private readonly inner: Embedder,
    private readonly capacity = DEFAULT_QUERY_CACHE_SIZE,
    private readonly projects = QUERY_CACHE_PROJECTS,
  ) {}

  for(project: string): CachedQueryEmbedder {
    const cache = this.caches.get(project) ?? new CachedQueryEmbedder(this.inner, this.capacity);
    this.caches.delete(project);
    this.caches.set(project, cache);
    while (this.caches.size > this.projects) this.caches.delete(this.caches.keys().next().value as string);
    return cache;
  }

  /**
   * A forget in `project` (null: of everything) deletes what its agents asked (the prompts, the
   * request log): its cached questions go too, or a hit would still answer one of them faster.
   */
  drop(project: string | null): void {
    if (project === null) this.caches.clear();
    else this.caches.delete(project);
  }
}

interface Deferred {
  promise: Promise<Float32Array>;
  resolve: (v: Float32Array) => void;
  reject: (e: unknown) => void;
}

function deferred(): Deferred {
  let resolve!: (v: Float32Array) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<Float32Array>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
