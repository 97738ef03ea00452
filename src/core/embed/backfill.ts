// Fills in cell vectors in the background. A cell is written with a zero vector and
// embed_model '' so that it is searchable by full text at once; this queue embeds every cell
// whose embed_model is not the current embedder's name and writes vector + embed_model back.
//
// Model switches:
// - Same dimension (e.g. hashed-ngram-512 -> use-lite-512): nothing is rewritten up front.
//   Rows still carrying the old model's name are simply "not embedded" for the new model: the
//   hybrid search only uses vectors whose embed_model equals the current model and finds the
//   rest by full text, while this queue re-embeds them batch by batch.
// - Different dimension: the vector column's type changes, so the store recreates the cells
//   table when the engine opens with the new embedder (Store.resizeVectors: text and every
//   other column kept, vectors zeroed, embed_model ''), and this queue then fills it. That is
//   why `cells` may be a getter: the Table object is replaced by the resize.
//
// Writes are a partial merge on node_id that only touches vector and embed_model, and only
// when the row's text is still the text that was embedded (an edit in between leaves the row
// for the next pass), so concurrent updates of access counts or status are never undone and
// deleted rows are not resurrected. Failures are reported through onError and retried with
// backoff; nothing here ever throws into the caller.
import type { Table } from '@lancedb/lancedb';
import { retryConflicts } from '../store/store';
import type { Embedder } from './embedder';

export interface BackfillProgress {
  /** Cells embedded since this backfill started. */
  embedded: number;
  /** Cells still waiting, as of the last count. */
  remaining: number;
}

export interface VectorBackfillOptions {
  cells: Table | (() => Table);
  embedder: Embedder;
  /** Cells per embed call and per write. */
  batchSize?: number;
  onProgress?: (progress: BackfillProgress) => void;
  onError?: (error: Error) => void;
  /** First retry delay after a failure; doubles up to a minute. */
  retryDelayMs?: number;
}

// Embedding text: what a reader sees, title first. Longer text is cut by each provider.
function embeddingText(title: unknown, text: unknown): string {
  const t = String(title ?? '').trim();
  const body = String(text ?? '').trim();
  return t && !body.startsWith(t) ? `${t}\n${body}` : body || t;
}

function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

export class VectorBackfill {
  private readonly batchSize: number;
  private readonly getCells: () => Table;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private embedded = 0;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(private readonly options: VectorBackfillOptions) {
    const cells = options.cells;
    this.getCells = typeof cells === 'function' ? cells : () => cells;
    this.batchSize = Math.max(1, options.batchSize ?? 64);
  }

  /** Asks for a pass over the table (after new cells were written). Cheap to call often. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = null;
    });
  }

  /** Resolves once no pass is running or due (a pending retry after a failure counts as idle). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops after the batch in flight; later kicks do nothing. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.idle();
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      try {
        const stalled = await this.pass();
        this.failures = 0;
        if (stalled) {
          this.scheduleRetry();
          return;
        }
      } catch (e) {
        this.failures++;
        this.report(e);
        this.scheduleRetry();
        return;
      }
    } while (this.again && !this.stopped);
  }

  /** One sweep over the cells not embedded by the current model; true when it made no progress. */
  private async pass(): Promise<boolean> {
    const model = this.options.embedder.name;
    const where = `embed_model != ${sqlString(model)}`;
    let remaining = await this.getCells().countRows(where);
    while (remaining > 0 && !this.stopped) {
      const cells = this.getCells();
      const rows = (await cells
        .query()
        .where(where)
        .select(['node_id', 'title', 'text'])
        .limit(this.batchSize)
        .toArray()) as Array<{ node_id: string; title: string | null; text: string }>;
      if (rows.length === 0) break;
      const vectors = await this.options.embedder.embed(rows.map((r) => embeddingText(r.title, r.text)));
      const dimension = this.options.embedder.dimension;
      const updates = rows.map((r, i) => {
        if (vectors[i]?.length !== dimension) {
          throw new Error(`Embedder ${model} returned a vector of ${vectors[i]?.length} values, expected ${dimension}.`);
        }
        return { node_id: r.node_id, text: r.text, embed_model: model, vector: Array.from(vectors[i]) };
      });
      if (this.stopped) break;
      const result = await retryConflicts(() =>
        this.getCells()
          .mergeInsert('node_id')
          .whenMatchedUpdateAll({ where: 'target.text = source.text' })
          .execute(updates),
      );
      this.embedded += result.numUpdatedRows;
      remaining = Math.max(0, remaining - rows.length);
      this.options.onProgress?.({ embedded: this.embedded, remaining });
      // Every row of the batch changed under us: come back later instead of spinning.
      if (result.numUpdatedRows === 0) return true;
    }
    return false;
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retryTimer) return;
    const base = this.options.retryDelayMs ?? 1000;
    const delay = Math.min(60_000, base * 2 ** Math.min(6, Math.max(0, this.failures - 1)));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.kick();
    }, delay);
    // A pending retry must not keep a CLI process alive.
    this.retryTimer.unref();
  }

  private report(e: unknown): void {
    try {
      this.options.onError?.(e instanceof Error ? e : new Error(String(e)));
    } catch {
      // The error callback is the caller's; its failure must not stop the queue.
    }
  }
}
