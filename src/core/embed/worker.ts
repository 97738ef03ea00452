// Entry point of the embedding worker thread (bundled to dist/embedWorker.js). The model and
// its WASM compute live here so that the extension host's and the CLI's event loops never
// wait on an embedding. Protocol: see WorkerRequest / WorkerReply in workerEmbedder.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { packVectors, type Embedder } from './embedder';
import { createEmbedder, type EmbedderConfig } from './factory';
import { ModelQueue } from './modelQueue';
import type { WorkerReply, WorkerRequest } from './workerEmbedder';

const port = parentPort;
if (!port) throw new Error('The embedding worker must run in a worker thread.');

function reply(msg: WorkerReply, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(msg, transfer);
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const ready: Promise<Embedder> = createEmbedder((workerData as { config: EmbedderConfig }).config);
// The process's searches and its backfill ask this one model at once: a query goes first.
const queue: Promise<ModelQueue> = ready.then((e) => new ModelQueue(e));
queue.catch(() => undefined); // reported with `failed` above
ready.then(
  (e) => {
    reply({ type: 'ready', name: e.name, dimension: e.dimension });
    // Loaded while the process opens its store, not when its first question comes.
    void e.warmUp?.().catch(() => undefined);
  },
  (err) => reply({ type: 'failed', error: message(err) }),
);

port.on('message', async (req: WorkerRequest) => {
  if (req.type === 'close') {
    const e = await ready.catch(() => null);
    await e?.close?.().catch(() => undefined);
    port.close();
    return;
  }
  try {
    const e = await ready;
    const vectors = await (await queue).embed(req.texts);
    // One packed buffer crosses the thread boundary without a copy.
    const packed = packVectors(vectors, e.dimension);
    reply({ type: 'result', id: req.id, packed, count: vectors.length }, [packed.buffer]);
  } catch (err) {
    reply({ type: 'error', id: req.id, error: message(err) });
  }
});
