// The store as a server finds it when the maintenance lease holder has kept up, for the benches
// that measure servers on a kept store.
import type { MemoryEngine } from '../src/core/engine';
import type { Scope } from '../src/core/model/records';

/** Waits until every cell of `scope` has its vector, or `timeoutMs`; returns the last stats. */
export async function allEmbedded(engine: MemoryEngine, scope: Scope, timeoutMs: number): Promise<Awaited<ReturnType<MemoryEngine['stats']>>> {
  const deadline = performance.now() + timeoutMs;
  let s = await engine.stats(scope);
  while (s.cells_with_vectors < s.cells && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    s = await engine.stats(scope);
  }
  return s;
}

/**
 * The last run's writes embedded, compacted and in the full-text segments. Without it, the
 * first server measured would be the one doing that upkeep, and its latency and RSS with it.
 */
export async function settleStore(engine: MemoryEngine, scope: Scope, timeoutMs: number): Promise<void> {
  await allEmbedded(engine, scope, timeoutMs);
  await engine.optimize();
}
