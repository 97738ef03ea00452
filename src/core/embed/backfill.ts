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
// Writes are a partial merge keyed on node_id and text that only touches vector and
// embed_model: a row whose text changed since it was embedded matches nothing (the next pass
// takes it), concurrent updates of access counts or status are never undone and deleted rows
// are not resurrected. Failures are reported through onError and retried with backoff; nothing
// here ever throws into the caller.
//
// Speed: every merge joins its batch against the whole table, so its cost grows with the table,
// not the batch (4,000 rows into 1,000,000 cells: about 15 s). A pass therefore streams the
// waiting cells in one scan and writes them back in large batches (8,192 rows, one merge each),
// embedding the next batch while the current one is written. With 64-row merges a 100k
// store took ~55 cells/s; see bench/backfill.ts for the numbers now.
import type { MergeResult, Table } from '@lancedb/lancedb';
import { Schema } from 'apache-arrow';
import { rowsToArrow } from '../store/arrowRows';
import { cellsSchema } from '../store/schema';
import { retryConflicts } from '../store/retry';
import { embeddingText } from './embedder';
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
  /** Cells per write (one merge); embed calls take at most `embedBatchSize` of them. */
  batchSize?: number;
  /**
   * Texts per embed call (default 64): the sentence encoder embeds 25-100 texts a second here,
   * and stop() (window close) waits for the call in flight.
   */
  embedBatchSize?: number;
  /**
   * A smaller batch is written once this long has passed since the last write (default 10 s),
   * so that with a slow encoder vectors become searchable as they come, not 8,192 at a time.
   */
  writeAfterMs?: number;
  /** Runs each write-back merge: the store's gate, so that a compaction of the cells is not preempted. */
  mutate?: <T>(write: () => Promise<T>) => Promise<T>;
  onProgress?: (progress: BackfillProgress) => void;
  /** After a run of passes that wrote vectors, with how many: a moment to compact. */
  onCaughtUp?: (embedded: number) => void;
  onError?: (error: Error) => void;
  /** First retry delay after a failure; doubles up to a minute. */
  retryDelayMs?: number;
}

export const DEFAULT_BACKFILL_BATCH = 8192;


function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

type Waiting = { node_id: string; title: string | null; text: string };

const WRITTEN_COLUMNS = ['node_id', 'text', 'embed_model', 'vector'];

export class VectorBackfill {
  private readonly batchSize: number;
  private readonly embedBatchSize: number;
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
    this.batchSize = Math.max(1, options.batchSize ?? DEFAULT_BACKFILL_BATCH);
    this.embedBatchSize = Math.max(1, Math.min(this.batchSize, options.embedBatchSize ?? 64));
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

  /** A pass is running or a retry is due. */
  get busy(): boolean {
    return this.running !== null || this.retryTimer !== null;
  }

  /** Resolves once no pass is running or due (a pending retry after a failure counts as idle). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops after writing what is already embedded; later kicks do nothing. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.idle();
  }

  private async loop(): Promise<void> {
    let written = 0;
    try {
      do {
        this.again = false;
        const pass = await this.pass();
        this.failures = 0;
        written += pass.written;
        if (pass.seen > 0 && pass.written === 0) {
          // Every row changed under us: come back later instead of spinning.
          this.scheduleRetry();
          return;
        }
        // Rows left out (text edited meanwhile, or deleted) are looked at once more.
        if (pass.written < pass.seen) this.again = true;
      } while (this.again && !this.stopped);
    } catch (e) {
      this.failures++;
      this.report(e);
      this.scheduleRetry();
    } finally {
      if (written > 0 && !this.stopped) this.caughtUp(written);
    }
  }

  /**
   * One sweep over the cells not embedded by the current model: one streaming scan, embedded in
   * calls of `embedBatchSize` texts, written back in merges of `batchSize` rows with at most one
   * merge in flight while the next batch is embedded.
   */
  private async pass(): Promise<{ seen: number; written: number }> {
    const model = this.options.embedder.name;
    const where = `embed_model != ${sqlString(model)}`;
    const cells = this.getCells();
    let remaining = await cells.countRows(where);
    let seen = 0;
    let written = 0;
    if (remaining === 0) return { seen, written };
    const schema = new Schema(cellsSchema(this.options.embedder.dimension).fields.filter((f) => WRITTEN_COLUMNS.includes(f.name)));
    // At most one merge in flight. Its failure is kept (not left unhandled while the next batch
    // embeds) and thrown when the pass next waits for it.
    let inFlight: Promise<void> | null = null;
    let writing = false;
    let writeError: unknown = null;
    const settle = async (): Promise<void> => {
      if (inFlight) await inFlight;
      inFlight = null;
      if (writeError) throw writeError;
    };
    const startWrite = (rows: Record<string, unknown>[]): void => {
      writing = true;
      inFlight = write(rows)
        .catch((e: unknown) => {
          writeError = e;
        })
        .finally(() => {
          writing = false;
        });
    };
    const write = async (rows: Record<string, unknown>[]): Promise<void> => {
      const data = rowsToArrow(schema, rows);
      const merge = (): Promise<MergeResult> =>
        retryConflicts(() =>
          // Keyed on the text as well: a row whose text changed since it was read matches
          // nothing and keeps its edit. (The same condition as a `where` on a node_id merge held
          // 3.2 GB to write 4,000 vectors into 1,000,000 cells, against 0.9 GB this way; LanceDB
          // 0.31 panics on that merge when it uses the node_id index.)
          this.getCells().mergeInsert(['node_id', 'text']).whenMatchedUpdateAll().execute(data),
        );
      const result = await (this.options.mutate ? this.options.mutate(merge) : merge());
      written += result.numUpdatedRows;
      this.embedded += result.numUpdatedRows;
      remaining = Math.max(0, remaining - rows.length);
      this.options.onProgress?.({ embedded: this.embedded, remaining });
    };
    let batch: Record<string, unknown>[] = [];
    let waiting: Waiting[] = [];
    let lastWrite = Date.now();
    const writeAfterMs = this.options.writeAfterMs ?? 10_000;
    const embedWaiting = async (): Promise<void> => {
      const texts = waiting;
      waiting = [];
      batch.push(...(await this.embedRows(texts)));
      // A due batch does not wait for the merge in flight: the next one will be larger.
      const due = !writing && Date.now() - lastWrite >= writeAfterMs;
      if (batch.length >= this.batchSize || due) {
        lastWrite = Date.now();
        const full = batch;
        batch = [];
        await settle();
        startWrite(full);
      }
    };
    try {
      const scan = cells.query().where(where).select(['node_id', 'title', 'text']);
      for await (const records of scan) {
        for (const r of records.toArray() as unknown as Waiting[]) waiting.push({ node_id: String(r.node_id), title: r.title ?? null, text: String(r.text ?? '') });
        seen += records.numRows;
        while (waiting.length >= this.embedBatchSize && !this.stopped) {
          const rest = waiting.splice(this.embedBatchSize);
          await embedWaiting();
          waiting = rest;
        }
        if (this.stopped) break;
      }
      if (!this.stopped && waiting.length > 0) await embedWaiting();
      // Embedded work is written, also when stopping (a slow encoder's batch is minutes of work).
      if (batch.length > 0) {
        await settle();
        startWrite(batch);
        batch = [];
      }
    } finally {
      // The merge in flight finishes before the pass returns, even after a throw.
      if (inFlight) await inFlight;
    }
    if (writeError) throw writeError;
    return { seen, written };
  }

  private async embedRows(rows: Waiting[]): Promise<Record<string, unknown>[]> {
    const model = this.options.embedder.name;
    const dimension = this.options.embedder.dimension;
    const vectors = await this.options.embedder.embed(rows.map((r) => embeddingText(r.title, r.text)));
    return rows.map((r, i) => {
      if (vectors[i]?.length !== dimension) {
        throw new Error(`Embedder ${model} returned a vector of ${vectors[i]?.length} values, expected ${dimension}.`);
      }
      return { node_id: r.node_id, text: r.text, embed_model: model, vector: vectors[i] };
    });
  }

  private caughtUp(written: number): void {
    try {
      this.options.onCaughtUp?.(written);
    } catch (e) {
      this.report(e);
    }
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
