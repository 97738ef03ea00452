// Embedder throughput: texts/s for short (about 20 words) and long (about 300 words) texts,
// in-process and through the worker thread, plus the first-call (model load) time.
//   npx tsx bench/embed.ts [--providers hashed,use-lite] [--short 256] [--long 48] [--json]
// Prints a table and a JSON document (only JSON with --json). Never asserts anything.
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { Embedder } from '../src/core/embed/embedder';
import { createEmbedder, type EmbedderConfig } from '../src/core/embed/factory';
import { WorkerEmbedder } from '../src/core/embed/workerEmbedder';
import { englishTexts, round, sayer, table } from './synthetic';

const { values } = parseArgs({
  options: {
    providers: { type: 'string', default: 'hashed,use-lite' },
    short: { type: 'string', default: '256' },
    long: { type: 'string', default: '48' },
    json: { type: 'boolean', default: false },
  },
});
const say = sayer(values.json);

async function rate(e: Embedder, texts: string[], batch = 32): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < texts.length; i += batch) await e.embed(texts.slice(i, i + batch));
  return texts.length / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  // English words: a sentence encoder splits unknown words into characters, so made-up
  // identifiers would understate its speed on real notes.
  const short = englishTexts(Number(values.short), 20, 5);
  const long = englishTexts(Number(values.long), 300, 6);
  const rows: Array<Record<string, unknown>> = [];
  for (const provider of values.providers.split(',').filter(Boolean)) {
    const config = { provider } as EmbedderConfig;
    for (const where of ['in-process', 'worker'] as const) {
      const started = performance.now();
      const e = where === 'worker' ? await WorkerEmbedder.start(config) : await createEmbedder(config);
      await e.embed(['warm up the model']);
      const firstCallMs = performance.now() - started;
      const row = {
        embedder: e.name,
        where,
        first_call_ms: round(firstCallMs, 0),
        short_texts_per_s: round(await rate(e, short), 1),
        long_texts_per_s: round(await rate(e, long, 8), 1),
        rss_mb: round(process.memoryUsage().rss / 1e6, 0),
      };
      rows.push(row);
      say(`${row.embedder} ${where}: ${row.short_texts_per_s} short/s, ${row.long_texts_per_s} long/s, first call ${row.first_call_ms} ms`);
      await e.close?.();
    }
  }
  const result = { bench: 'embed', machine: { cpus: os.cpus().length, node: process.version }, short_words: 20, long_words: 300, results: rows };
  if (!values.json) console.log('\n' + table(rows) + '\n');
  console.log(JSON.stringify(result, null, values.json ? 2 : 0));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
