import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { WorkerEmbedder } from '../../src/core/embed/workerEmbedder';
import { assertLoadedBeforeTheFirstQuestion } from './embedFixture';

describe('embedding worker thread', function () {
  this.timeout(120_000);

  it('returns the same vectors as the provider run in-process', async () => {
    const e = await WorkerEmbedder.start({ provider: 'hashed', dimension: 128 });
    try {
      assert.equal(e.name, 'hashed-ngram-128');
      assert.equal(e.dimension, 128);
      const texts = ['first text about parsing', '', 'third: renameSymbol in the editor'];
      const [viaWorker, local] = await Promise.all([e.embed(texts), new HashedEmbedder(128).embed(texts)]);
      assert.equal(viaWorker.length, 3);
      viaWorker.forEach((v, i) => assert.deepEqual(Array.from(v), Array.from(local[i])));
      assert.deepEqual(await e.embed([]), []);
    } finally {
      await e.close();
    }
  });

  it('keeps the main event loop running while a large batch is embedded', async () => {
    const e = await WorkerEmbedder.start({ provider: 'hashed' });
    try {
      const texts = Array.from({ length: 20_000 }, (_, i) =>
        `observation ${i}: modified src/core/file${i % 97}.ts, renamed handleRequest${i} to processIncomingRequest, tests pass`,
      );
      let ticks = 0;
      const timer = setInterval(() => ticks++, 5);
      const started = Date.now();
      const vectors = await e.embed(texts);
      const elapsed = Date.now() - started;
      clearInterval(timer);
      assert.equal(vectors.length, texts.length);
      // Had the embedding run on this thread, no interval callback could have fired before it finished.
      assert.ok(ticks > 0, `no tick in ${elapsed} ms`);
    } finally {
      await e.close();
    }
  });

  it("serves a query before the rest of a large batch asked before it (a search beside the backfill)", async () => {
    const e = await WorkerEmbedder.start({ provider: 'hashed' });
    try {
      const texts = Array.from({ length: 20_000 }, (_, i) => `observation ${i}: modified src/core/file${i % 97}.ts, renamed handleRequest${i} ${'and more words '.repeat(20)}`);
      let batchDone = 0;
      const batch = e.embed(texts).then((v) => ((batchDone = Date.now()), v));
      await new Promise((r) => setTimeout(r, 200));
      const asked = Date.now();
      const [query] = await e.embed(['one question']);
      const answered = Date.now();
      const vectors = await batch;
      assert.equal(vectors.length, texts.length);
      assert.deepEqual(Array.from(query), Array.from((await new HashedEmbedder().embed(['one question']))[0]));
      assert.deepEqual(Array.from(vectors[12_345]), Array.from((await new HashedEmbedder().embed([texts[12_345]]))[0]));
      // Served in turn, the query would wait for the whole batch and be answered after it.
      assert.ok(batchDone - answered > (batchDone - asked) / 2, `query answered after ${answered - asked} ms, the batch ${batchDone - answered} ms later`);
    } finally {
      await e.close();
    }
  });

  it('embeds concurrent requests independently and fails cleanly after close', async () => {
    const e = await WorkerEmbedder.start({ provider: 'hashed', dimension: 64 });
    const [a, b] = await Promise.all([e.embed(['alpha']), e.embed(['beta', 'gamma'])]);
    assert.equal(a.length, 1);
    assert.equal(b.length, 2);
    assert.notDeepEqual(Array.from(a[0]), Array.from(b[0]));
    await e.close();
    await assert.rejects(e.embed(['x']), /closed/);
  });

  it('reports a provider that cannot start', async () => {
    await assert.rejects(
      WorkerEmbedder.start({ provider: 'transformers', modelPath: '/nowhere', model: 'x' }),
      /could not start its embedder: .*@huggingface\/transformers/,
    );
  });

  it('runs the offline sentence encoder in the worker', async () => {
    const e = await WorkerEmbedder.start({ provider: 'use-lite' });
    try {
      assert.equal(e.name, 'use-lite-512');
      const [v] = await e.embed(['refactor the authentication middleware']);
      assert.equal(v.length, 512);
      assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-4);
    } finally {
      await e.close();
    }
  });

  it('loads the sentence encoder as soon as the thread is ready, not at the first question', async () => {
    const e = await WorkerEmbedder.start({ provider: 'use-lite' });
    try {
      await assertLoadedBeforeTheFirstQuestion(e);
    } finally {
      await e.close();
    }
  });

  it('does not keep a process alive once it is idle', () => {
    const script = `
      const { WorkerEmbedder } = require(${JSON.stringify(path.resolve(__dirname, '../../src/core/embed/workerEmbedder.ts'))});
      WorkerEmbedder.start({ provider: 'hashed' }).then((e) => e.embed(['hello'])).then((v) => console.log('dims', v[0].length));
    `;
    const res = spawnSync(process.execPath, ['--require', require.resolve('tsx/cjs'), '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(res.signal, null, 'the process had to be killed: the idle worker kept it alive');
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /dims 512/);
  });
});
