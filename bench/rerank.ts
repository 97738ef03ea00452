// What the reranker stage itself costs a search: recall (k 10) through the engine without a
// reranker, and with one at 30 and 100 candidates, against a local server that answers at once
// (word overlap). The model's own time is not in these numbers: a real cross-encoder adds its
// inference time on top, which depends on the model and the hardware and was not measured here.
//   npx tsx bench/rerank.ts [--size 5000] [--queries 50] [--json]
// Prints a table and a JSON document (only JSON with --json). Never asserts anything.
import fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { HashedEmbedder } from '../src/core/embed/hashed';
import { MemoryEngine } from '../src/core/engine';
import type { RerankerConfig } from '../src/core/retrieve/rerank';
import { recall } from '../src/core/tools/recall';
import { percentile, round, runBench, sayer, syntheticCorpus, table } from './synthetic';

process.env.LANCEDB_LOG ??= 'error';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '5000' },
    queries: { type: 'string', default: '50' },
    json: { type: 'boolean', default: false },
  },
});
const size = Number(values.size);
const queryCount = Number(values.queries);
const say = sayer(values.json);

/** A rerank server that scores by the share of query words in each document, without delay. */
async function overlapServer(): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      requests++;
      const body = JSON.parse(raw) as { query: string; documents: string[] };
      const words = new Set(body.query.toLowerCase().split(/\W+/).filter(Boolean));
      const results = body.documents.map((d, index) => {
        const doc = new Set(d.toLowerCase().split(/\W+/));
        return { index, relevance_score: [...words].filter((w) => doc.has(w)).length / Math.max(1, words.size) };
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests: () => requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-bench-rerank-'));
  const server = await overlapServer();
  const scope = { project: 'bench' };
  try {
    say(`writing ${size} synthetic observations...`);
    const corpus = syntheticCorpus(size, queryCount);
    const writer = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    for (let i = 0; i < size; i += 500) {
      await writer.observe(corpus.texts.slice(i, i + 500).map((t, j) => ({ type: corpus.types[i + j], title: corpus.titles[i + j], narrative: t, dedupe_key: `k${i + j}` })), scope);
    }
    await writer.flush();
    await writer.settled();
    await writer.close();

    const variants: Array<[string, RerankerConfig | null]> = [
      ['first stage only', null],
      ['reranker, 30 candidates', { endpoint: server.url, model: 'overlap', candidates: 30 }],
      ['reranker, 100 candidates', { endpoint: server.url, model: 'overlap', candidates: 100 }],
    ];
    const rows: Array<Record<string, unknown>> = [];
    for (const [name, reranker] of variants) {
      const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, reranker });
      try {
        const ctx = { engine, scope };
        for (const q of corpus.queries.slice(0, 5)) await recall(ctx, { text: q, k: 10 });
        const before = server.requests();
        const times: number[] = [];
        for (const q of corpus.queries) {
          const t = performance.now();
          await recall(ctx, { text: q, k: 10 });
          times.push(performance.now() - t);
        }
        rows.push({ variant: name, queries: times.length, rerank_requests: server.requests() - before, p50_ms: round(percentile(times, 50), 1), p95_ms: round(percentile(times, 95), 1) });
      } finally {
        await engine.close();
      }
    }
    const report = { size, queries: queryCount, embedder: 'hashed', note: 'instant local rerank server: the stage overhead only, no model time', rows };
    if (values.json) console.log(JSON.stringify(report, null, 2));
    else {
      console.log(`recall (k 10) over ${size} observations, ${queryCount} queries; ${report.note}`);
      console.log(table(rows));
    }
  } finally {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
