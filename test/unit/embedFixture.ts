// Shared by the tests of the places a model runs (the embedding thread, the shared model host).
import assert from 'node:assert/strict';
import type { Embedder } from '../../src/core/embed/embedder';

/**
 * Asserts that a model was loaded before anyone asked: 4 s after the embedder started, its first
 * question takes under 300 ms, where loading USE-lite and compiling its kernels take 0.6-0.8 s
 * of a first call that has to do them.
 */
export async function assertLoadedBeforeTheFirstQuestion(e: Embedder): Promise<void> {
  await new Promise((r) => setTimeout(r, 4_000));
  const asked = performance.now();
  await e.embed(['the first question']);
  const took = performance.now() - asked;
  assert.ok(took < 300, `the first question took ${Math.round(took)} ms`);
}
