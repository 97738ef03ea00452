// Shared by the tests of a store prepared by an earlier build's text preparation (numberTerms,
// unspacedScripts): an engine opened with its log kept, and each cell's vector to compare across
// the preparation again at open, which must keep them.
import * as assert from 'node:assert/strict';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import { TEXT_PREP_VERSION } from '../../src/core/retrieve/textPrep';

/** An engine on `dir` whose log lines go to `logged`, its full-text view written from the first row. */
export function openLogged(dir: string, logged: string[] = []): Promise<MemoryEngine> {
  return MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false, lexiconMinDelta: 1, logger: (m) => logged.push(m) });
}

/** Each cell's embedding model and vector, by node id. */
export async function vectorsByNode(engine: MemoryEngine): Promise<Map<string, string>> {
  const rows = await engine.store.rows('cells', null, { select: ['node_id', 'vector', 'embed_model'] });
  return new Map(rows.map((r) => [String(r.node_id), `${String(r.embed_model)}:${Array.from(r.vector as ArrayLike<number>).join(',')}`]));
}

/**
 * After the store was prepared again at open: every vector as before, the store marked with this
 * build's preparation, and the next open prepares nothing again. Closes `engine`; returns the
 * engine of that next open.
 */
export async function assertPreparedOnce(engine: MemoryEngine, dir: string, vectorsBefore: Map<string, string>): Promise<MemoryEngine> {
  assert.deepEqual(await vectorsByNode(engine), vectorsBefore);
  assert.equal(await engine.store.getMeta('text_prep_version'), String(TEXT_PREP_VERSION));
  await engine.close();
  const logged: string[] = [];
  const again = await openLogged(dir, logged);
  assert.ok(!logged.some((m) => /prepared the search text/.test(m)), 'prepared again on a second open');
  return again;
}
