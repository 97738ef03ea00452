// An Embedder that forwards to a provider running in a worker thread, so embedding (tens of
// milliseconds to seconds of CPU per batch) never blocks the caller's event loop.
// The thread is only referenced while requests are in flight: an idle embedder never keeps a
// CLI process alive, and close() ends the thread for good.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Embedder } from './embedder';
import type { EmbedderConfig } from './factory';

export type WorkerRequest = { type: 'embed'; id: number; texts: string[] } | { type: 'close' };

export type WorkerReply =
  | { type: 'ready'; name: string; dimension: number }
  | { type: 'failed'; error: string }
  | { type: 'result'; id: number; packed: Float32Array; count: number }
  | { type: 'error'; id: number; error: string };

export interface WorkerEmbedderOptions {
  /** The worker entry; by default dist/embedWorker.js next to the bundle, or worker.ts under tsx. */
  workerPath?: string;
}

interface Pending {
  resolve: (v: Float32Array[]) => void;
  reject: (e: Error) => void;
}

export class WorkerEmbedder implements Embedder {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  private constructor(
    private readonly config: EmbedderConfig,
    private readonly entry: string,
    readonly name: string,
    readonly dimension: number,
  ) {}

  /** Starts the thread and waits until the provider inside it is built. */
  static async start(config: EmbedderConfig, options: WorkerEmbedderOptions = {}): Promise<WorkerEmbedder> {
    const entry = options.workerPath ?? defaultWorkerEntry();
    const worker = spawn(entry, config);
    let onMessage!: (m: WorkerReply) => void;
    let onError!: (e: Error) => void;
    let onExit!: (code: number) => void;
    const hello = await new Promise<WorkerReply>((resolve, reject) => {
      onMessage = resolve;
      onError = reject;
      onExit = (code) => reject(new Error(`The embedding worker exited (code ${code}) before it was ready.`));
      worker.once('message', onMessage).once('error', onError).once('exit', onExit);
    }).finally(() => {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    });
    if (hello.type !== 'ready') {
      await worker.terminate();
      throw new Error(`The embedding worker could not start its embedder: ${hello.type === 'failed' ? hello.error : hello.type}`);
    }
    const e = new WorkerEmbedder(config, entry, hello.name, hello.dimension);
    e.attach(worker);
    return e;
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    if (this.closed) return Promise.reject(new Error('This embedder is closed.'));
    if (texts.length === 0) return Promise.resolve([]);
    const worker = this.worker ?? this.respawn();
    const id = this.nextId++;
    return new Promise<Float32Array[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ type: 'embed', id, texts } satisfies WorkerRequest);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    this.failAll(new Error('The embedder was closed.'));
    if (!worker) return;
    const exited = new Promise<void>((r) => worker.once('exit', () => r()));
    worker.postMessage({ type: 'close' } satisfies WorkerRequest);
    const timer = setTimeout(() => void worker.terminate(), 2000);
    await exited;
    clearTimeout(timer);
  }

  private attach(worker: Worker): void {
    this.worker = worker;
    worker.unref();
    worker.on('message', (msg: WorkerReply) => {
      if (msg.type === 'result' || msg.type === 'error') {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (this.pending.size === 0) worker.unref();
        if (!p) return;
        if (msg.type === 'error') p.reject(new Error(msg.error));
        else {
          const out: Float32Array[] = [];
          for (let i = 0; i < msg.count; i++) out.push(msg.packed.subarray(i * this.dimension, (i + 1) * this.dimension));
          p.resolve(out);
        }
      }
    });
    worker.on('error', (err) => this.lost(worker, err));
    worker.on('exit', (code) => this.lost(worker, new Error(`The embedding worker stopped (exit code ${code}).`)));
  }

  // A crashed thread fails its requests; the next embed() starts a fresh one.
  private lost(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.failAll(err);
  }

  private respawn(): Worker {
    const worker = spawn(this.entry, this.config);
    this.attach(worker);
    return worker;
  }

  private failAll(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

function spawn(entry: string, config: EmbedderConfig): Worker {
  const workerData = { config };
  if (entry.endsWith('.ts')) {
    // Running from source (tests, benches under tsx): load the TypeScript entry through tsx.
    // A computed name keeps bundlers from trying to include the dev-only loader.
    const tsx = require.resolve(['tsx', 'cjs'].join('/'));
    return new Worker(`require(${JSON.stringify(tsx)}); require(${JSON.stringify(entry)});`, { eval: true, workerData });
  }
  return new Worker(entry, { workerData });
}

export function defaultWorkerEntry(): string {
  const candidates = [
    path.join(__dirname, 'embedWorker.js'), // bundled: dist/extension.js, dist/cli.js
    path.join(__dirname, 'worker.ts'), // source under tsx
  ];
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new Error(`The embedding worker is missing (looked for ${candidates.join(', ')}). Run the build (npm run build).`);
  }
  return found;
}
