// Where a process's embedder runs. The bundled model (USE-lite) is held once per machine user by
// the shared model host, so that every server and VS Code window asks one process instead of
// each loading its own ~100 MB copy; when that host cannot be used (Windows, a folder others can
// enter, a host that does not start, CODE_MEMORY_SHARED_MODEL=0) the model runs in a thread of
// this process, as do the other providers (the hashed one is cheap, a remote one is a server).
import type { Embedder } from './embedder';
import type { EmbedderConfig } from './factory';
import { SharedModelEmbedder, type SharedModelOptions } from './sharedModel/client';
import { WorkerEmbedder } from './workerEmbedder';

function sharesModel(config: EmbedderConfig): boolean {
  return config.provider === 'use-lite' && process.platform !== 'win32' && process.env.CODE_MEMORY_SHARED_MODEL !== '0';
}

export async function startEmbedder(config: EmbedderConfig, log?: (message: string) => void, shared?: SharedModelOptions): Promise<Embedder> {
  if (sharesModel(config)) {
    try {
      return await SharedModelEmbedder.connect(config, shared);
    } catch (err) {
      log?.(`The shared model host is not available (${err instanceof Error ? err.message : String(err)}); the model runs in this process.`);
    }
  }
  return WorkerEmbedder.start(config);
}
