// A small store for the retrieval tests that switch settings between two searches: opened with
// the given records before the suite's tests, closed after, with CODE_MEMORY_RETRIEVAL restored.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ObservationInput } from '../../src/core/api';
import { MemoryEngine } from '../../src/core/engine';

export const SEARCH_SCOPE = { project: 'acme/app' };

/** Call inside a describe: registers its before/after hooks; `engine()` is the open engine. */
export function searchStore(batches: ObservationInput[][]): { engine: () => MemoryEngine } {
  let dir = '';
  let engine: MemoryEngine | null = null;
  const saved = process.env.CODE_MEMORY_RETRIEVAL;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-search-'));
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    for (const batch of batches) await engine.observe(batch, SEARCH_SCOPE);
    await engine.flush();
  });
  after(async () => {
    if (saved === undefined) delete process.env.CODE_MEMORY_RETRIEVAL;
    else process.env.CODE_MEMORY_RETRIEVAL = saved;
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { engine: () => engine as MemoryEngine };
}
