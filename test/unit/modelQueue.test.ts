import assert from 'node:assert/strict';
import type { Embedder } from '../../src/core/embed/embedder';
import { ModelQueue } from '../../src/core/embed/modelQueue';

/** A model that takes `ms` per call (or per call of these texts) and records each call: its texts, start and end. */
function slowModel(ms: number | ((texts: string[]) => number), textsPerCall?: number): Embedder & { calls: Array<{ texts: string[]; start: number; end: number }> } {
  const calls: Array<{ texts: string[]; start: number; end: number }> = [];
  return {
    name: 'slow',
    dimension: 2,
    textsPerCall,
    calls,
    async embed(texts: string[]) {
      const start = performance.now();
      await new Promise((r) => setTimeout(r, typeof ms === 'number' ? ms : ms(texts)));
      calls.push({ texts, start, end: performance.now() });
      return texts.map((t) => Float32Array.from([t.length, 1]));
    },
  };
}

const gaps = (calls: Array<{ start: number; end: number }>): number[] => calls.slice(1).map((c, i) => c.start - calls[i].end);

describe('ModelQueue', () => {
  it('cuts requests into calls of the model\'s size and answers each in order', async () => {
    const model = slowModel(1, 3);
    const queue = new ModelQueue(model);
    const texts = Array.from({ length: 8 }, (_, i) => 'x'.repeat(i + 1));
    const vectors = await queue.embed(texts);
    assert.deepEqual(vectors.map((v) => v[0]), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(model.calls.map((c) => c.texts.length), [3, 3, 2]);
    assert.deepEqual(await queue.embed([]), []);
  });

  it('serves the request with the fewest texts left first, after the call that runs', async () => {
    const model = slowModel(10, 1);
    const queue = new ModelQueue(model);
    const batch = queue.embed(Array.from({ length: 20 }, (_, i) => `batch ${i}`));
    await new Promise((r) => setTimeout(r, 35));
    const query = await queue.embed(['the query']);
    assert.equal(query.length, 1);
    const at = model.calls.findIndex((c) => c.texts[0] === 'the query');
    assert.ok(at >= 1 && at <= 5, `the query was call ${at} of ${model.calls.length}`);
    assert.equal((await batch).length, 20);
  });

  it('leaves the model free between a batch\'s calls while queries come, and not otherwise', async () => {
    const alone = slowModel(40, 1);
    await new ModelQueue(alone).embed(Array.from({ length: 8 }, (_, i) => `batch ${i}`));
    assert.ok(Math.max(...gaps(alone.calls)) < 30, `gaps with no query: ${gaps(alone.calls).map(Math.round)}`);

    const busy = slowModel(40, 1);
    const queue = new ModelQueue(busy);
    await queue.embed(['a query']);
    await queue.embed(Array.from({ length: 8 }, (_, i) => `batch ${i}`));
    const batchGaps = gaps(busy.calls.slice(1));
    assert.ok(Math.min(...batchGaps) >= 35, `gaps after a query: ${batchGaps.map(Math.round)}`);
  });

  it('ends that pause for a request that arrives, and serves it at once', async () => {
    const model = slowModel(80, 1);
    const queue = new ModelQueue(model);
    await queue.embed(['first query']);
    const batch = queue.embed(Array.from({ length: 6 }, (_, i) => `batch ${i}`));
    // Inside the pause after the batch's first call (80 ms of call, then 80 ms of pause).
    await new Promise((r) => setTimeout(r, 95));
    const asked = performance.now();
    await queue.embed(['second query']);
    // Without the pause ending, its call would start about 65 ms later. Measured to the call's
    // start, not its end: a loaded machine's timers stretch the model's own call too.
    const waited = model.calls.find((c) => c.texts[0] === 'second query')!.start - asked;
    assert.ok(waited < 40, `the query waited ${Math.round(waited)} ms before its call`);
    await batch;
  });

  it('keeps a third of the model for a batch while a client asks query after query, and serves most queries at once', async () => {
    // As USE-lite here: a long text of the backfill 60 ms, a question 17.
    const model = slowModel((texts) => (texts[0].startsWith('batch') ? 60 : 17), 1);
    const queue = new ModelQueue(model);
    await queue.embed(['warm query']);
    let done = false;
    const batch = queue.embed(Array.from({ length: 10 }, (_, i) => `batch ${i}`)).then(() => (done = true));
    const waits: number[] = [];
    const started = performance.now();
    while (!done && performance.now() - started < 5_000) {
      const asked = performance.now();
      await queue.embed([`query ${waits.length}`]);
      waits.push(performance.now() - asked - 17);
      // A search does some work of its own before its next question.
      await new Promise((r) => setTimeout(r, 10));
    }
    await batch;
    // Neither starved: the batch ended (10 calls of 60 ms, each followed by a hold of at most
    // 120 ms), and most queries found the model free.
    assert.ok(performance.now() - started < 3_000, `the batch took ${Math.round(performance.now() - started)} ms`);
    const sorted = [...waits].sort((x, y) => x - y);
    // Held, most wait for nothing; not held, they wait for most of a batch's call (about 50 ms).
    assert.ok(sorted[Math.floor(sorted.length / 2)] < 30, `query waits ${waits.map(Math.round)}`);
  });

  it('drops the rest of an aborted request and rejects it, and passes a model error to its caller only', async () => {
    const model = slowModel(5, 1);
    const queue = new ModelQueue(model);
    const left = new AbortController();
    const aborted = queue.embed(Array.from({ length: 50 }, (_, i) => `gone ${i}`), left.signal);
    await new Promise((r) => setTimeout(r, 20));
    left.abort(new Error('the client left'));
    await assert.rejects(aborted, /the client left/);
    const made = model.calls.length;
    assert.ok(made < 50, `${made} calls`);
    const failing: Embedder = { name: 'f', dimension: 2, textsPerCall: 1, embed: async (t) => (t[0] === 'bad' ? Promise.reject(new Error('model exploded')) : t.map(() => new Float32Array(2))) };
    const q2 = new ModelQueue(failing);
    const [bad, good] = await Promise.allSettled([q2.embed(['bad']), q2.embed(['good', 'fine'])]);
    assert.equal(bad.status, 'rejected');
    assert.match(String((bad as PromiseRejectedResult).reason), /model exploded/);
    assert.equal(good.status, 'fulfilled');
  });
});
