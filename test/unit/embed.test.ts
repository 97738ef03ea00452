import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { l2Normalize } from '../../src/core/embed/embedder';
import { createEmbedder } from '../../src/core/embed/factory';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { UseLiteEmbedder } from '../../src/core/embed/useLite';

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}
function norm(a: Float32Array): number {
  return Math.sqrt(dot(a, a));
}

describe('embedders', () => {
  it('l2Normalize scales to unit length and leaves zero vectors alone', () => {
    const v = l2Normalize(Float32Array.from([3, 4]));
    assert.deepEqual(Array.from(v), [0.6000000238418579, 0.800000011920929]);
    assert.deepEqual(Array.from(l2Normalize(new Float32Array(3))), [0, 0, 0]);
  });

  describe('hashed', () => {
    it('is deterministic, unit length, 512 dims by default, and named after its size', async () => {
      const e = new HashedEmbedder();
      assert.equal(e.dimension, 512);
      assert.equal(e.name, 'hashed-ngram-512');
      const [a, b] = await e.embed(['parse the config file', 'parse the config file']);
      assert.deepEqual(a, b);
      assert.ok(Math.abs(norm(a) - 1) < 1e-5);
      const [z] = await e.embed(['']);
      assert.equal(norm(z), 0);
      assert.equal(new HashedEmbedder(64).name, 'hashed-ngram-64');
    });

    it('puts texts sharing words and identifier parts closer than unrelated ones', async () => {
      const e = new HashedEmbedder();
      const [q, near, far] = await e.embed([
        'fix token refresh in the auth client',
        'refreshToken() in AuthClient now retries after a 401',
        'render the sidebar tree with icons',
      ]);
      assert.ok(dot(q, near) > dot(q, far) + 0.05, `${dot(q, near)} vs ${dot(q, far)}`);
    });
  });

  describe('use-lite (offline sentence encoder)', function () {
    this.timeout(120_000);
    it('embeds to 512 unit vectors and ranks paraphrases above unrelated text', async () => {
      const e = await createEmbedder({ provider: 'use-lite' });
      assert.equal(e.name, 'use-lite-512');
      assert.equal(e.dimension, 512);
      const [q, para, other, empty] = await e.embed([
        'How do I stop the app from crashing when the network drops?',
        'Handle connection loss gracefully so the application does not fail',
        'The cake recipe needs two eggs and sugar',
        '',
      ]);
      for (const v of [q, para, other]) {
        assert.equal(v.length, 512);
        assert.ok(Math.abs(norm(v) - 1) < 1e-4);
      }
      assert.equal(norm(empty), 0);
      assert.ok(dot(q, para) > dot(q, other), `${dot(q, para)} vs ${dot(q, other)}`);
      await e.close?.();
    });

    it('gives a text the same vector whatever it is embedded with, in the order asked', async () => {
      // Calls are cut by characters and texts sorted by length inside embed(): neither may
      // change a vector or the order of the answer.
      const e = new UseLiteEmbedder({ callChars: 300 });
      const texts = Array.from({ length: 40 }, (_, i) => `change ${i}: ${'the parser keeps dashed options and their camel-cased aliases '.repeat(1 + ((i * 7) % 9))}`);
      texts.splice(3, 0, '', '...');
      const together = await e.embed(texts);
      for (const i of [0, 3, 4, 5, 17, texts.length - 1]) {
        const [alone] = await e.embed([texts[i]]);
        assert.deepEqual([...together[i]], [...alone], `text ${i}`);
      }
      assert.equal(norm(together[3]), 0);
      assert.equal(norm(together[4]), 0);
      assert.ok(dot(together[0], together[1]) < 0.9999, 'distinct texts keep distinct vectors');
    });
  });

  describe('openai-compatible', () => {
    let server: http.Server;
    let baseUrl: string;
    const seen: Array<{ auth?: string; body: { model: string; input: string[] } }> = [];
    before(async () => {
      server = http.createServer((req, res) => {
        let raw = '';
        req.on('data', (c) => (raw += c));
        req.on('end', () => {
          if (req.url !== '/v1/embeddings' || req.method !== 'POST') {
            res.writeHead(404).end('not found');
            return;
          }
          const body = JSON.parse(raw) as { model: string; input: string[] };
          seen.push({ auth: req.headers.authorization, body });
          if (body.model === 'broken') {
            res.writeHead(500).end('model exploded');
            return;
          }
          // Answer out of order to check that the client sorts by index.
          const data = body.input.map((t, index) => ({ index, embedding: [t.length, 1, 0] })).reverse();
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
    });
    after(() => new Promise<void>((r) => server.close(() => r())));

    it('posts batches to {baseUrl}/embeddings, probes the dimension, keeps order and normalises', async () => {
      seen.length = 0;
      const e = await createEmbedder({ provider: 'openai', baseUrl, model: 'nomic-embed-text', apiKey: 'k-123', batchSize: 2 });
      assert.equal(e.name, 'openai:nomic-embed-text');
      assert.equal(e.dimension, 3);
      const out = await e.embed(['a', 'bbb', '', 'cc']);
      assert.equal(out.length, 4);
      assert.ok(Math.abs(out[1][0] / out[1][1] - 3) < 1e-6, 'vector of "bbb" in its place');
      assert.ok(Math.abs(out[3][0] / out[3][1] - 2) < 1e-6, 'vector of "cc" in its place');
      assert.equal(norm(out[2]), 0, 'empty text gets a zero vector without a request');
      assert.ok(Math.abs(norm(out[0]) - 1) < 1e-6);
      assert.equal(seen[0].auth, 'Bearer k-123');
      assert.deepEqual(
        seen.map((s) => s.body.input),
        [['dimension probe'], ['a', 'bbb'], ['cc']],
      );
    });

    it('rejects vectors of the wrong size and reports server errors with their status', async () => {
      const e = await createEmbedder({ provider: 'openai', baseUrl, model: 'm', dimension: 8 });
      await assert.rejects(e.embed(['x']), /3-dimensional vector, expected 8/);
      const broken = await createEmbedder({ provider: 'openai', baseUrl, model: 'broken', dimension: 3 });
      await assert.rejects(broken.embed(['x']), /answered 500: model exploded/);
      await assert.rejects(
        createEmbedder({ provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' }),
        /not reachable/,
      );
    });
  });

  it('the factory explains unsupported providers', async () => {
    await assert.rejects(createEmbedder({ provider: 'transformers', modelPath: '/x', model: 'y' }), /@huggingface\/transformers/);
    await assert.rejects(createEmbedder({ provider: 'nope' } as never), /Unknown embedding provider/);
  });
});
