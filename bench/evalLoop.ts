// Query-time experiments on a kept import: imports each set's history once into --stores/<set>
// (kept between runs), then asks the questions under each CODE_MEMORY_RETRIEVAL configuration
// given with --try, and prints one row per set and configuration.
//   npx tsx bench/evalLoop.ts --yargs <clone> --flask <clone> [--express <clone>] --stores <dir> [--try "k=v,k=v"]... [--tools recall] [--first-tools recall,recall_context,retrieve_memory] [--misses] [--no-documents]
// (one option a set of bench/devSets.ts, each naming a clone of that set's repository)
// Index-time settings need a fresh store folder (the import is kept as it was made).

import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { DEV_SETS } from './devSets';
import type { SetName } from './devSets';
import { openEvalSession } from '../src/core/eval/runEval';
import type { EvalTool } from '../src/core/eval/evalTools';
import { runBench } from './synthetic';


function f3(x: number): string {
  return x.toFixed(3);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      ...(Object.fromEntries(Object.keys(DEV_SETS).map((name) => [name, { type: 'string' }])) as Record<SetName, { type: 'string' }>),
      stores: { type: 'string' },
      try: { type: 'string', multiple: true },
      tools: { type: 'string', default: 'recall' },
      embedder: { type: 'string', default: 'use-lite' },
      misses: { type: 'boolean', default: false },
      'first-tools': { type: 'string' },
      'no-documents': { type: 'boolean', default: false },
    },
  });
  const sets = (Object.keys(DEV_SETS) as SetName[]).filter((name) => values[name]);
  if (!values.stores || sets.length === 0) {
    process.stderr.write(`usage: tsx bench/evalLoop.ts --stores <dir> ${Object.keys(DEV_SETS).map((n) => `[--${n} <clone>]`).join(' ')} [--try settings]... [--tools recall,...] [--misses]\n`);
    return 2;
  }
  const tools = values.tools!.split(',') as EvalTool[];
  const tries = values.try?.length ? values.try : [''];
  const index = process.env.CODE_MEMORY_RETRIEVAL ?? '';
  const rows: string[] = ['| set | settings | tool | hit@1 | hit@5 | hit@10 | MRR@10 | paraphrase hit@5 | p50 / p95 ms |', '|---|---|---|---|---|---|---|---|---|'];
  // Per configuration and set: recall's metrics and recall_context's first 5, for the side-by-side table.
  const both = new Map<string, Partial<Record<SetName, { recall?: string; context?: string }>>>();
  for (const name of sets) {
    const repo = values[name] as string;
    const storeDir = path.join(values.stores, name);
    mkdirSync(storeDir, { recursive: true });
    const session = await openEvalSession({
      repo,
      queries: DEV_SETS[name].queries,
      rev: DEV_SETS[name].head,
      storeDir,
      reuseStore: true,
      documents: !values['no-documents'],
      embedder: values.embedder as 'use-lite' | 'hashed' | 'none',
      log: (m) => process.stderr.write(`${name}: ${m}\n`),
    });
    try {
      for (const [n, t] of tries.entries()) {
        process.env.CODE_MEMORY_RETRIEVAL = [index, t].filter(Boolean).join(',');
        // --first-tools: the first configuration through these tools, the others through --tools.
        const asked = n === 0 && values['first-tools'] ? (values['first-tools'].split(',') as EvalTool[]) : tools;
        const report = await session.ask(asked);
        for (const tool of asked) {
          const r = report.tools[tool]!;
          const para = r.by_kind.paraphrase?.hit_at_5;
          const cell = both.get(t) ?? {};
          both.set(t, cell);
          const entry = (cell[name] ??= {});
          if (tool === 'recall') entry.recall = `${f3(r.metrics.hit_at_5)} | ${f3(r.metrics.hit_at_10)} | ${f3(r.metrics.mrr_at_10)}`;
          if (tool === 'recall_context') entry.context = f3(r.metrics.hit_at_5);
          rows.push(`| ${name} | ${t || 'defaults'} | ${tool} | ${f3(r.metrics.hit_at_1)} | ${f3(r.metrics.hit_at_5)} | ${f3(r.metrics.hit_at_10)} | ${f3(r.metrics.mrr_at_10)} | ${para === undefined ? '-' : f3(para)} | ${r.latency.p50_ms.toFixed(0)} / ${r.latency.p95_ms.toFixed(0)} |`);
          if (values.misses) {
            for (const q of report.per_question) {
              const rank = q.ranks[tool];
              if (rank === null || (rank ?? 99) > 5) process.stderr.write(`  miss ${q.id} (${q.kind}) rank ${rank ?? '-'} gold ${q.gold_commits[0].slice(0, 10)} top ${(q.top[tool] ?? []).join(' ')}\n`);
            }
          }
        }
        process.stdout.write(`${rows.slice(-asked.length).join('\n')}\n`);
      }
    } finally {
      await session.close();
    }
  }
  process.stdout.write(`\n${rows.join('\n')}\n`);
  if (sets.length > 1) {
    const side = [
      `| settings | ${sets.map((n) => `${n} hit@5 | hit@10 | MRR@10`).join(' | ')} | recall_context first 5 (${sets.join(' / ')}) |`,
      `|---|${sets.map(() => '---|---|---|').join('')}---|`,
    ];
    for (const [t, cell] of both) side.push(`| ${t || 'defaults'} | ${sets.map((n) => cell[n]?.recall ?? '- | - | -').join(' | ')} | ${sets.map((n) => cell[n]?.context ?? '-').join(' / ')} |`);
    process.stdout.write(`\n${side.join('\n')}\n`);
  }
  return 0;
}

runBench(main);
