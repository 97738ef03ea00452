// The optional reranker and the stronger-embedder path, against a local OpenAI-compatible test
// server (node http on 127.0.0.1) that speaks POST /v1/rerank and POST /v1/embeddings.

import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SearchHit } from '../../src/core/api';
import { createEmbedder } from '../../src/core/embed/factory';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { RERANK_DOCUMENT_CHARS, Reranker, normaliseScores } from '../../src/core/retrieve/rerank';
import type { RerankerConfig } from '../../src/core/retrieve/rerank';
import { TABLES } from '../../src/core/store/schema';
import { recall } from '../../src/core/tools/recall';
import { recallContext } from '../../src/core/tools/recallContext';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { removeDir, seed, tempDir, toolContext } from './mcpFixture';
import { runMain } from './cliInProcess';

const scope: Scope = { project: 'github.com/acme/app' };
const other: Scope = { project: 'github.com/evil/other' };

interface RerankBody {
  model: string;
  query: string;
  documents: string[];
  top_n: number;
}

/** What the test server answers to /v1/rerank; set by each test. */
type Answer = (body: RerankBody) => { status?: number; raw?: string; json?: unknown } | 'hang';

/** Scores each document by a judge; results sorted best first, as servers do. */
function judged(judge: (doc: string) => number): Answer {
  return (body) => ({
    json: {
      results: body.documents.map((d, index) => ({ index, relevance_score: judge(d) })).sort((a, b) => b.relevance_score - a.relevance_score),
    },
  });
}

const EMBED_DIM = 384;
const SYNONYMS: Record<string, string> = { automobile: 'car', vehicle: 'car', kitten: 'cat' };

/** A small bag-of-words embedder that knows a few synonyms (which full text cannot). */
function embedText(text: string): number[] {
  const v = new Array<number>(EMBED_DIM).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const word = SYNONYMS[raw] ?? raw;
    let h = 0;
    for (const c of word) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    v[h % EMBED_DIM] += 1;
  }
  return v;
}

class TestServer {
  readonly rerankRequests: Array<{ auth?: string; body: RerankBody }> = [];
  embedRequests = 0;
  answer: Answer = judged(() => 0.5);
  private server!: http.Server;
  private readonly hanging: http.ServerResponse[] = [];
  baseUrl = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/v1/embeddings') {
          this.embedRequests++;
          const body = JSON.parse(raw) as { input: string[] };
          const data = body.input.map((t, index) => ({ index, embedding: embedText(t) }));
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
          return;
        }
        if (req.method === 'POST' && req.url === '/v1/rerank') {
          const body = JSON.parse(raw) as RerankBody;
          this.rerankRequests.push({ auth: req.headers.authorization, body });
          const out = this.answer(body);
          if (out === 'hang') {
            this.hanging.push(res);
            return;
          }
          res.writeHead(out.status ?? 200, { 'content-type': 'application/json' }).end(out.raw ?? JSON.stringify(out.json));
          return;
        }
        res.writeHead(404).end('not found');
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

describe('reranker and stronger embedder (local OpenAI-compatible server)', function () {
  this.timeout(120_000);
  const server = new TestServer();
  let dir: string;
  let engine: MemoryEngine;
  let plain: MemoryEngine;
  const logs: string[] = [];
  let longObservationId: number;
  let tokenizerNode: string;

  before(async () => {
    await server.start();
    dir = tempDir('rerank');
    // The first-stage-only engine writes the store; the reranking one reads the same store.
    plain = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    await seed(plain, scope, other);
    const [long] = await plain.observe([{ type: 'note', title: 'A very long note about LanceDB', narrative: `LanceDB vector store notes. ${'padding words '.repeat(600)}` }], scope);
    longObservationId = long.id;
    await plain.flush();
    await plain.settled();
    const reranker: RerankerConfig = { endpoint: `${server.baseUrl}/`, model: 'bge-reranker-v2-m3', apiKey: 'secret-key-123', candidates: 30 };
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, reranker, logger: (m) => logs.push(m) });
    const tokenizerHit = (await plain.search('o200k tokenizer', { scope, limit: 1 }))[0];
    tokenizerNode = tokenizerHit.cell.node_id;
  });
  after(async () => {
    await engine?.close();
    await plain?.close();
    await server.stop();
    removeDir(dir);
  });
  beforeEach(() => {
    server.rerankRequests.length = 0;
    logs.length = 0;
  });

  it('recall, recall_context and retrieve_memory follow the reranker, one request per search', async () => {
    const query = 'vector store LanceDB';
    const first = await recall(toolContext(plain, scope), { text: query, k: 5 });
    assert.notEqual(first.nodes[0].node_id, tokenizerNode, 'the first stage puts a LanceDB record first');
    // The reranker judges the tokenizer record the only relevant one.
    server.answer = judged((d) => (d.includes('tokenizer') ? 0.98 : 0.01));

    const reranked = await recall(toolContext(engine, scope), { text: query, k: 5 });
    assert.equal(reranked.nodes[0].node_id, tokenizerNode);
    assert.equal(server.rerankRequests.length, 1);
    const distances = reranked.nodes.map((n) => n.distance);
    assert.deepEqual(distances, [...distances].sort((a, b) => a - b), 'distances stay nearest first');
    // The rest keep their first-stage order: their reranker scores are equal.
    assert.deepEqual(
      reranked.nodes.slice(1).map((n) => n.node_id),
      first.nodes.filter((n) => n.node_id !== tokenizerNode).slice(0, 4).map((n) => n.node_id),
    );

    const pack = await recallContext(toolContext(engine, scope), { query });
    const firstItem = pack.text.split('\nContext:\n')[1];
    assert.match(firstItem, /^[^\n]*o200k tokenizer/i, pack.text);

    const report = await retrieveMemory(toolContext(engine, scope), { prompt: 'Why did we pick LanceDB as the vector store?', session_id: 'rerank-1' });
    assert.equal(report.status, 'ok');
    const documents = report.retrieval?.documents ?? [];
    assert.match(documents[0]?.title ?? '', /tokenizer/i, JSON.stringify(report.retrieval));
    assert.ok(server.rerankRequests.length >= 3);
  });

  it('sends a well-formed request: model, query, candidates as truncated documents, top_n, bearer key; logs no key', async () => {
    server.answer = judged(() => 0.5);
    await recall(toolContext(engine, scope), { text: 'LanceDB', k: 2 });
    assert.equal(server.rerankRequests.length, 1);
    const { auth, body } = server.rerankRequests[0];
    assert.equal(auth, 'Bearer secret-key-123');
    assert.equal(body.model, 'bge-reranker-v2-m3');
    assert.equal(body.query, 'LanceDB');
    // Every record of the project is a candidate (fewer than 30), not only the k asked for.
    const count = (await plain.stats(scope)).cells;
    assert.ok(body.documents.length > 2 && body.documents.length <= Math.min(30, count), `${body.documents.length} of ${count}`);
    assert.equal(body.top_n, body.documents.length);
    assert.ok(body.documents.every((d) => typeof d === 'string' && d.length > 0 && d.length <= RERANK_DOCUMENT_CHARS));
    const long = body.documents.find((d) => d.startsWith('A very long note about LanceDB'));
    assert.ok(long, 'the long record is sent, title first');
    assert.equal(long.length, RERANK_DOCUMENT_CHARS);
    assert.ok(longObservationId > 0);

    // A failure's warning names the endpoint, never the key.
    server.answer = () => ({ status: 401, raw: 'bad key' });
    const broken = new Reranker({ endpoint: server.baseUrl, model: 'm', apiKey: 'secret-key-123' }, (m) => logs.push(m));
    await broken.rerank('LanceDB', await plain.search('LanceDB', { scope, limit: 5 }), 5);
    assert.equal(logs.length, 1);
    assert.match(logs[0], /answered 401/);
    assert.ok(!logs.join('\n').includes('secret-key-123'));
  });

  it('falls back to the first-stage order with a warning when the reranker fails, then rests', async () => {
    const query = 'vector store LanceDB tokenizer';
    const hits = await plain.search(query, { scope, limit: 30 });
    assert.ok(hits.length >= 4);
    const firstStage = (h: SearchHit[]): string[] => h.map((x) => x.cell.node_id);
    const failures: Array<[string, Answer, Partial<RerankerConfig>]> = [
      ['bad JSON', () => ({ raw: '<html>oops' }), {}],
      ['server error', () => ({ status: 500, raw: 'model exploded' }), {}],
      ['wrong count', (b) => ({ json: { results: [{ index: 0, relevance_score: 1 }].slice(0, b.documents.length - 1) } }), {}],
      ['no results', () => ({ json: { data: [] } }), {}],
      ['bad index', (b) => ({ json: { results: b.documents.map((_, i) => ({ index: i === 0 ? 99 : i, relevance_score: 0.5 })) } }), {}],
      ['repeated index', (b) => ({ json: { results: b.documents.map(() => ({ index: 0, relevance_score: 0.5 })) } }), {}],
      ['score not a number', (b) => ({ json: { results: b.documents.map((_, index) => ({ index, relevance_score: 'high' })) } }), {}],
      ['timeout', () => 'hang', { timeoutMs: 300 }],
      ['unreachable', () => ({ json: {} }), { endpoint: 'http://127.0.0.1:9/v1' }],
    ];
    for (const [name, answer, extra] of failures) {
      server.answer = answer;
      logs.length = 0;
      const reranker = new Reranker({ endpoint: server.baseUrl, model: 'm', ...extra }, (m) => logs.push(m));
      const out = await reranker.rerank(query, hits, 3);
      assert.deepEqual(firstStage(out), firstStage(hits.slice(0, 3)), name);
      assert.deepEqual(out.map((h) => h.score), hits.slice(0, 3).map((h) => h.score), `${name}: scores untouched`);
      assert.equal(logs.length, 1, name);
      assert.match(logs[0], /warning: reranking failed, first-stage order kept/, name);
      // Within the rest period the reranker is not asked again.
      const asked = server.rerankRequests.length;
      assert.deepEqual(firstStage(await reranker.rerank(query, hits, 3)), firstStage(hits.slice(0, 3)), name);
      assert.equal(server.rerankRequests.length, asked, `${name}: asked again while resting`);
    }

    // Through the engine and a tool: the call succeeds with the first-stage answer.
    server.answer = () => ({ status: 503, raw: 'loading model' });
    const failing = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, reranker: { endpoint: server.baseUrl, model: 'm' }, logger: (m) => logs.push(m) });
    try {
      logs.length = 0;
      const out = await recall(toolContext(failing, scope), { text: query, k: 3 });
      const expected = await recall(toolContext(plain, scope), { text: query, k: 3 });
      assert.deepEqual(out, expected);
      assert.ok(logs.some((m) => /reranking failed.*answered 503/.test(m)), logs.join('\n'));
    } finally {
      await failing.close();
    }
  });

  it('combines scores by the documented rule; raw logits go through the logistic function', async () => {
    assert.deepEqual(normaliseScores([0, 0.25, 1]), [0, 0.25, 1]);
    const logits = normaliseScores([7.7, -2.3, 3.8, -11]);
    assert.ok(logits.every((s) => s > 0 && s < 1));
    assert.deepEqual([...logits.keys()].sort((a, b) => logits[b] - logits[a]), [0, 2, 1, 3]);

    const hits = await plain.search('vector store LanceDB', { scope, limit: 30 });
    const ranks = new Map(hits.map((h, i) => [h.cell.node_id, i]));
    // llama.cpp-style logits: the last first-stage hit is judged best.
    server.answer = (b) => ({ json: { results: b.documents.map((_, index) => ({ index, relevance_score: index === b.documents.length - 1 ? 9 : -9 })) } });
    const reranker = new Reranker({ endpoint: server.baseUrl, model: 'm', candidates: 30 });
    const out = await reranker.rerank('vector store LanceDB', hits, hits.length);
    const last = hits[hits.length - 1];
    assert.equal(out[0].cell.node_id, last.cell.node_id);
    const expected = 0.3 * last.score + 0.7 / (1 + Math.exp(-9));
    assert.ok(Math.abs(out[0].score - expected) < 1e-9, `${out[0].score} vs ${expected}`);
    assert.ok(Math.abs(out[0].distance - (1 - expected)) < 1e-9);
    for (const h of out) assert.ok(h.score >= 0 && h.score <= 1);
    // The others keep their relative order.
    const rest = out.slice(1).map((h) => ranks.get(h.cell.node_id)!);
    assert.deepEqual(rest, [...rest].sort((a, b) => a - b));

    // Only the top `candidates` are sent; the hits after them rank below, in their order.
    server.rerankRequests.length = 0;
    server.answer = judged(() => 0);
    const two = new Reranker({ endpoint: server.baseUrl, model: 'm', candidates: 2 });
    const cut = await two.rerank('vector store LanceDB', hits, hits.length);
    assert.equal(server.rerankRequests[0].body.documents.length, 2);
    assert.deepEqual(cut.map((h) => h.cell.node_id), hits.map((h) => h.cell.node_id));
    assert.ok(Math.abs(cut[2].score - 0.3 * hits[2].score) < 1e-9);
  });

  it('the CLI takes --rerank-* and --embedder openai flags, API keys from the environment, says so in --help, and doctor checks both servers', async () => {
    const run = runMain;
    for (const command of ['mcp', 'serve', 'search', 'eval']) {
      const help = await run([command, '--help']);
      assert.equal(help.code, 0);
      assert.match(help.out, /--rerank-endpoint <url>[\s\S]*CODE_MEMORY_RERANK_API_KEY[\s\S]*--rerank-model <name>[\s\S]*--rerank-candidates <n>/, command);
    }
    const common = ['--store', dir, '--project', scope.project, '--embedder', 'none', '--json'];
    const firstStage = await run(['search', 'LanceDB', ...common]);
    assert.equal(firstStage.code, 0, firstStage.err);
    const before = (JSON.parse(firstStage.out) as Array<{ title: string }>).map((h) => h.title);
    assert.ok(before.length >= 2);
    const favourite = before[before.length - 1];
    server.answer = judged((d) => (d.startsWith(favourite) ? 0.9 : 0.1));
    const reranked = await run(['search', 'LanceDB', ...common, '--rerank-endpoint', server.baseUrl, '--rerank-model', 'bge-reranker-base'], { CODE_MEMORY_RERANK_API_KEY: 'env-key-456' });
    assert.equal(reranked.code, 0, reranked.err);
    assert.equal((JSON.parse(reranked.out) as Array<{ title: string }>)[0].title, favourite);
    const sent = server.rerankRequests.at(-1)!;
    assert.equal(sent.auth, 'Bearer env-key-456');
    assert.equal(sent.body.model, 'bge-reranker-base');

    const tooMany = await run(['search', 'LanceDB', ...common, '--rerank-endpoint', server.baseUrl, '--rerank-candidates', '500']);
    assert.equal(tooMany.code, 2);
    assert.match(tooMany.err, /--rerank-candidates must be from 2 to 100/);
    const noEndpoint = await run(['search', 'LanceDB', ...common, '--rerank-model', 'm']);
    assert.equal(noEndpoint.code, 2);
    assert.match(noEndpoint.err, /need --rerank-endpoint/);
    const notUrl = await run(['search', 'LanceDB', ...common], { CODE_MEMORY_RERANK_ENDPOINT: 'localhost:8080' });
    assert.equal(notUrl.code, 2);
    assert.match(notUrl.err, /must be an http\(s\) URL/);

    // doctor checks both servers: the stronger embedder and the reranker.
    server.answer = judged(() => 0.5);
    const servers = ['--embedder', 'openai', '--embedding-endpoint', server.baseUrl, '--embedding-model', 'test-embed-large', '--rerank-endpoint', server.baseUrl];
    const doctor = await run(['doctor', '--store', dir, '--project', scope.project, '--json', ...servers]);
    const checks = (JSON.parse(doctor.out) as { checks: Array<{ name: string; ok: boolean; detail: string }> }).checks;
    const model = checks.find((c) => c.name === 'model')!;
    assert.ok(model.ok, model.detail);
    assert.match(model.detail, new RegExp(`openai:test-embed-large: ${EMBED_DIM} dims`));
    const rerankCheck = checks.find((c) => c.name === 'reranker')!;
    assert.ok(rerankCheck.ok, rerankCheck.detail);
    const down = await run(['doctor', '--store', dir, '--project', scope.project, '--json', '--embedder', 'openai', '--embedding-endpoint', 'http://127.0.0.1:9/v1', '--rerank-endpoint', 'http://127.0.0.1:9/v1']);
    assert.equal(down.code, 1);
    const failed = (JSON.parse(down.out) as { checks: Array<{ name: string; ok: boolean; fix?: string }> }).checks.filter((c) => !c.ok).map((c) => c.name);
    assert.deepEqual(failed.sort(), ['model', 'reranker']);
    const wrongFlag = await run(['search', 'LanceDB', ...common, '--embedding-model', 'x']);
    assert.equal(wrongFlag.code, 2);
    assert.match(wrongFlag.err, /are for --embedder openai/);
  });

  it('a stronger embedder through the openai provider: another dimension, vectors re-created, found by meaning', async () => {
    const storeDir = tempDir('stronger');
    try {
      const first = await MemoryEngine.open({ storeUri: storeDir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
      await first.observe(
        [
          { type: 'note', title: 'Parking rules', narrative: 'The car must be parked in bay seven overnight.' },
          { type: 'note', title: 'Pet policy', narrative: 'A cat may stay in the office on Fridays.' },
          { type: 'note', title: 'Kitchen', narrative: 'Dishes go into the dishwasher before six.' },
        ],
        scope,
      );
      await first.flush();
      await first.settled();
      const hashedDimension = first.store.dimension;
      await first.close();

      const embedder = await createEmbedder({ provider: 'openai', baseUrl: server.baseUrl, model: 'test-embed-large' });
      assert.equal(embedder.dimension, EMBED_DIM);
      assert.notEqual(EMBED_DIM, hashedDimension);
      const stronger = await MemoryEngine.open({ storeUri: storeDir, embedder, maintenanceIntervalMs: 0 });
      try {
        assert.equal(stronger.store.dimension, EMBED_DIM);
        stronger.kickVectors();
        await stronger.settled();
        const cells = await stronger.store.count(TABLES.cells);
        assert.ok(cells >= 3);
        assert.equal(await stronger.store.count(TABLES.cells, `embed_model = 'openai:test-embed-large'`), cells);
        // No word in common with the record: only the server's vectors can find it.
        const hits = await stronger.search('automobile', { scope, layers: ['L0'], limit: 1 });
        assert.equal(hits[0]?.cell.title, 'Parking rules');
        const out = await recall(toolContext(stronger, scope), { text: 'kitten', k: 1 });
        const [pet] = await stronger.search('Pet policy', { scope, layers: ['L0'], limit: 1 });
        assert.equal(out.nodes[0].node_id, pet.cell.node_id);
        assert.ok(server.embedRequests > 0);
      } finally {
        await stronger.close();
      }
    } finally {
      removeDir(storeDir);
    }
  });
});
