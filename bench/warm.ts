// Warm tool calls in one process, without a transport: where a query's time goes once the
// store is open. Runs each tool `--calls` times on a store bench/scale.ts filled and kept
// (`--store dir`), and prints p50/p95 per tool and the process's RSS. Sessions are never idle
// here, so that a store filled long ago is not summarised while it is measured.
//   npx tsx bench/warm.ts --store dir [--calls 40] [--tools recall,recall_context,...] [--embedder hashed|none]
// What a retrieval setting costs: --try "settings" (CODE_MEMORY_RETRIEVAL's form, "" for the
// defaults; twice or more) asks each question under every setting in turn, so that the machine's
// noise falls on all of them alike, for --rounds rounds; --questions file.jsonl (repeatable) asks
// an evaluation set's questions instead of the fill's:
//   npx tsx bench/warm.ts --store dir --tools recall --questions bench/eval/dev-queries.jsonl --try "" --try "wordVectorWeight=0" --rounds 4
// For the time by function: node --cpu-prof --import tsx bench/warm.ts --store dir

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { HashedEmbedder } from '../src/core/embed/hashed';
import { MemoryEngine } from '../src/core/engine';
import { findTool } from '../src/core/tools/registry';
import type { ToolContext } from '../src/core/tools/types';
import { percentile, round, runBench } from './synthetic';

process.env.LANCEDB_LOG ??= 'error';

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    calls: { type: 'string', default: '40' },
    tools: { type: 'string', default: 'recall,recall_context,retrieve_memory,get_observations' },
    embedder: { type: 'string', default: 'hashed' },
    try: { type: 'string', multiple: true },
    rounds: { type: 'string', default: '4' },
    questions: { type: 'string', multiple: true },
  },
});

async function main(): Promise<void> {
  if (!values.store) throw new Error('--store dir: a store filled by `bench/scale.ts --store dir`');
  const filled = JSON.parse(readFileSync(path.join(values.store, 'bench-scale-fill.json'), 'utf8')) as { queries: string[]; ids: number[] };
  const calls = Number(values.calls);
  const opened = performance.now();
  const engine = await MemoryEngine.open({ storeUri: values.store, embedder: values.embedder === 'none' ? 'none' : new HashedEmbedder(), sessionIdleMs: 365 * 86_400_000, logger: (m) => process.stderr.write(`${m}\n`) });
  const openMs = performance.now() - opened;
  const ctx: ToolContext = { engine, scope: { project: 'bench/scale' } };
  const asked = values.questions?.length
    ? values.questions.flatMap((f) => readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { question: string }).question))
    : filled.queries;
  const q = (i: number): string => asked[i % asked.length];
  const args: Record<string, (i: number) => Record<string, unknown>> = {
    recall: (i) => ({ text: q(i), k: 10 }),
    recall_context: (i) => ({ query: q(i) }),
    retrieve_memory: (i) => ({ prompt: q(i), session_id: `bench-${i}` }),
    get_observations: (i) => ({ ids: [filled.ids[(i * 7 + 3) % filled.ids.length]], source: 'observation' }),
  };
  const rows: string[] = [`open ${round(openMs, 0)} ms`];
  try {
    const tries = values.try ?? [null];
    const base = process.env.CODE_MEMORY_RETRIEVAL ?? '';
    const rounds = values.try ? Number(values.rounds) : 1;
    for (const name of values.tools.split(',').filter(Boolean)) {
      const tool = findTool(name);
      if (!tool || !args[name]) throw new Error(`no tool ${name}`);
      const times = tries.map(() => [] as number[]);
      const count = values.try ? asked.length : calls;
      for (let r = 0; r < rounds; r++) {
        for (let i = -1; i < count; i++) {
          for (const [n, t] of tries.entries()) {
            if (t !== null) process.env.CODE_MEMORY_RETRIEVAL = [base, t].filter(Boolean).join(',');
            const started = performance.now();
            const out = await tool.run(ctx, args[name](i + 1));
            if (out.isError) throw new Error(`${name}: ${out.text}`);
            if (i >= 0) times[n].push(performance.now() - started);
          }
        }
      }
      for (const [n, t] of tries.entries()) {
        rows.push(`${name}${t === null ? '' : ` [${t || 'defaults'}]`} p50 ${round(percentile(times[n], 50), 1)} / p95 ${round(percentile(times[n], 95), 1)} ms`);
      }
    }
    rows.push(`RSS ${Math.round(process.memoryUsage().rss / 1048576)} MB, heap ${Math.round(process.memoryUsage().heapUsed / 1048576)} MB, external ${Math.round(process.memoryUsage().external / 1048576)} MB`);
  } finally {
    await engine.close();
  }
  process.stdout.write(`${rows.join('\n')}\n`);
}

runBench(main);
