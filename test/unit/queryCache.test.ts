import { strict as assert } from 'node:assert';
import type { Embedder } from '../../src/core/embed/embedder';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CachedQueryEmbedder, ProjectQueryCaches } from '../../src/core/embed/queryCache';
import { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';

/** Counts the texts it is asked to embed; fails while `failing` is set. */
class CountingEmbedder implements Embedder {
  readonly asked: string[] = [];
  failing = false;
  private readonly inner: HashedEmbedder;
  constructor(
    readonly name: string,
    dimension = 32,
  ) {
    this.inner = new HashedEmbedder(dimension);
  }
  get dimension(): number {
    return this.inner.dimension;
  }
  async embed(texts: string[]): Promise<Float32Array[]> {
    this.asked.push(...texts);
    await new Promise((r) => setTimeout(r, 5));
    if (this.failing) throw new Error('encoder not loaded');
    return this.inner.embed(texts);
  }
}

describe('CachedQueryEmbedder', () => {
  it('embeds a text once and serves the same vector again, in the order asked', async () => {
    const inner = new CountingEmbedder('m-32');
    const cache = new CachedQueryEmbedder(inner);
    const [a] = await cache.embed(['retry the webhook']);
    const [b, c, d] = await cache.embed(['parse the config', 'retry the webhook', 'parse the config']);
    assert.deepEqual(inner.asked, ['retry the webhook', 'parse the config']);
    assert.equal(c, a);
    assert.equal(d, b);
    assert.deepEqual(Array.from(a), Array.from((await new HashedEmbedder(32).embed(['retry the webhook']))[0]));
    assert.deepEqual(cache.stats, { hits: 2, misses: 2, size: 2 });
    assert.equal(cache.name, 'm-32');
    assert.equal(cache.dimension, 32);
  });

  it('shares one embedder call between concurrent callers of the same text', async () => {
    const inner = new CountingEmbedder('m-32');
    const cache = new CachedQueryEmbedder(inner);
    const [[x], [y]] = await Promise.all([cache.embed(['same question']), cache.embed(['same question'])]);
    assert.equal(x, y);
    assert.deepEqual(inner.asked, ['same question']);
  });

  it('keys by model: a vector of one model is never served for another', async () => {
    let name = 'model-a';
    const inner = new CountingEmbedder('x');
    Object.defineProperty(inner, 'name', { get: () => name });
    const cache = new CachedQueryEmbedder(inner);
    await cache.embed(['q']);
    name = 'model-b';
    await cache.embed(['q']);
    assert.deepEqual(inner.asked, ['q', 'q']);
  });

  it('forgets the least recently used text past its capacity', async () => {
    const inner = new CountingEmbedder('m-32');
    const cache = new CachedQueryEmbedder(inner, 2);
    await cache.embed(['a']);
    await cache.embed(['b']);
    await cache.embed(['a']); // a is now the most recent
    await cache.embed(['c']); // evicts b
    await cache.embed(['a']);
    await cache.embed(['b']);
    assert.deepEqual(inner.asked, ['a', 'b', 'c', 'b']);
    assert.equal(cache.stats.size, 2);
    assert.throws(() => new CachedQueryEmbedder(inner, 0), /positive integer/);
  });

  it('does not remember a failure, and rejects a vector of the wrong size', async () => {
    const inner = new CountingEmbedder('m-32');
    const cache = new CachedQueryEmbedder(inner);
    inner.failing = true;
    await assert.rejects(cache.embed(['q']), /encoder not loaded/);
    inner.failing = false;
    const [v] = await cache.embed(['q']);
    assert.equal(v.length, 32);
    assert.deepEqual(inner.asked, ['q', 'q']);
    const short: Embedder = { name: 'short', dimension: 8, embed: async (t) => t.map(() => new Float32Array(4)) };
    await assert.rejects(new CachedQueryEmbedder(short).embed(['q']), /4 values, expected 8/);
  });
});

/** An engine (counting what its embedder is asked) with a note in each of two projects, embedded; removed after `fn`. */
async function withTwoProjects(fn: (t: { engine: MemoryEngine; inner: CountingEmbedder; alpha: Scope; beta: Scope; note: { id: number } }) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-querycache-'));
  const inner = new CountingEmbedder('m-64', 64);
  const engine = await MemoryEngine.open({ storeUri: dir, embedder: inner, maintenanceIntervalMs: 0 });
  try {
    const alpha = { project: 'alpha' };
    const beta = { project: 'beta' };
    const [note] = await engine.observe([{ type: 'note', title: 'Initech acquisition', narrative: 'alpha plans to acquire Initech' }], alpha);
    await engine.observe([{ type: 'note', title: 'beta parser', narrative: 'the beta parser reads CSV' }], beta);
    await engine.flush();
    await engine.waitForVectors();
    await fn({ engine, inner, alpha, beta, note });
  } finally {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe("an engine's query vectors, per project", function () {
  this.timeout(120_000);

  it("one project's question is embedded again for another (a cached one would answer faster, telling what the first asked), and served from the asker's own cache after", async () => {
    await withTwoProjects(async ({ engine, inner, alpha, beta }) => {
      const secret = 'when do we acquire Initech';
      const times = (): number => inner.asked.filter((t) => t === secret).length;
      await engine.search(secret, { scope: alpha, limit: 3 });
      assert.equal(times(), 1, 'control: alpha embedded its question');
      await engine.search(secret, { scope: beta, limit: 3 });
      assert.equal(times(), 2, "beta's search was served alpha's cached query vector");
      await engine.search(secret, { scope: beta, limit: 3 });
      await engine.rank(secret, { scope: alpha, limit: 3 });
      assert.equal(times(), 2, "each project's own cache serves its repeated question");
    });
  });

  it("a forget in a project drops its cached questions (it deletes what its agents asked: a hit would still answer one faster), and leaves another project's", async () => {
    await withTwoProjects(async ({ engine, inner, alpha, beta, note }) => {
      const asked = 'when do we acquire Initech';
      const kept = 'what does the parser read';
      const times = (q: string): number => inner.asked.filter((t) => t === q).length;
      await engine.search(asked, { scope: alpha, limit: 3 });
      await engine.search(kept, { scope: beta, limit: 3 });
      await engine.forget({ ids: [note.id] }, alpha);
      await engine.search(asked, { scope: alpha, limit: 3 });
      assert.equal(times(asked), 2, 'the question asked before the forget was served from the cache after it');
      await engine.search(kept, { scope: beta, limit: 3 });
      assert.equal(times(kept), 1, "another project's cache stays");
      await engine.forget({ all: true }, null);
      await engine.search(kept, { scope: beta, limit: 3 });
      assert.equal(times(kept), 2, 'a forget of everything drops every project\'s');
    });
  });
});

describe('ProjectQueryCaches', () => {
  it('keeps the most recently searched projects, each its own cache', async () => {
    const caches = new ProjectQueryCaches(new CountingEmbedder('m-16', 16), 10, 2);
    const a = caches.for('a');
    assert.equal(caches.for('a'), a);
    assert.notEqual(caches.for('b'), a);
    caches.for('c');
    assert.notEqual(caches.for('a'), a, "the least recently searched project's cache was dropped");
  });
});
