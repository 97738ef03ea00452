// What each retrieval lever is worth: runs the evaluation once per configuration (a fresh
// import each time, because most levers change the index text) and prints one table row per
// run for recall and recall_context.
//   npx tsx bench/evalAblation.ts --repo <git dir> --queries <file.jsonl> [--rev <rev>] [--embedder use-lite] [--only name,name] [--json]
// Rows marked "+" add one lever to the row above (the path from the naive baseline to the
// default); rows marked "-" take one lever out of the default.

import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runEval } from '../src/core/eval/runEval';
import type { EvalReport, EvalTool } from '../src/core/eval/runEval';

interface Run {
  name: string;
  /** CODE_MEMORY_RETRIEVAL for this run. */
  settings: string;
  vectors: boolean;
  includeMerges?: boolean;
  pullRequestText?: boolean;
}

const BASE_TEXT = 'diffText=0,splitIdentifiers=0,stem=0,stopWords=0,titleRepeat=1,extraWeight=1,abbrevWeight=0';
const RUNS: Run[] = [
  { name: 'naive: LanceDB FTS over message + paths', settings: `${BASE_TEXT},lexical=fts`, vectors: false, pullRequestText: false },
  { name: '+ in-process BM25 (fresh, ranked) instead of LanceDB FTS', settings: BASE_TEXT, vectors: false, pullRequestText: false },
  { name: '+ diff text (hunk headers, doc/comment/test lines, identifiers, changed lines)', settings: 'splitIdentifiers=0,stem=0,stopWords=0,titleRepeat=1,extraWeight=1,abbrevWeight=0', vectors: false, pullRequestText: false },
  { name: '+ identifier splitting (camelCase, snake_case, kept whole too)', settings: 'stem=0,stopWords=0,titleRepeat=1,extraWeight=1,abbrevWeight=0', vectors: false, pullRequestText: false },
  { name: '+ stemming and stop words', settings: 'titleRepeat=1,extraWeight=1,abbrevWeight=0', vectors: false, pullRequestText: false },
  { name: '+ field weights (title x3, diff text x0.5)', settings: 'abbrevWeight=0', vectors: false, pullRequestText: false },
  { name: '+ abbreviations from the store vocabulary (co-occurrence checked)', settings: '', vectors: false, pullRequestText: false },
  { name: '+ pull-request messages kept with their commits', settings: '', vectors: false },
  { name: '+ USE-lite vectors, score fusion (= default)', settings: '', vectors: true },
  { name: '- vectors fused by RRF instead of scores', settings: 'fusion=rrf', vectors: true },
  { name: '- vectors only (no BM25)', settings: 'lexicalWeight=0', vectors: true },
  { name: '- with pseudo-relevance feedback (3 docs, 10 terms)', settings: 'prfDocs=3', vectors: true },
  { name: '- merges imported as observations of their own', settings: '', vectors: true, includeMerges: true },
];

function f3(x: number): string {
  return x.toFixed(3);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      repo: { type: 'string' },
      queries: { type: 'string' },
      rev: { type: 'string' },
      embedder: { type: 'string', default: 'use-lite' },
      only: { type: 'string' },
      json: { type: 'boolean', default: false },
      out: { type: 'string' },
    },
  });
  if (!values.repo || !values.queries) {
    process.stderr.write('usage: tsx bench/evalAblation.ts --repo <git dir> --queries <file.jsonl> [--rev <rev>] [--embedder use-lite|hashed] [--only <name prefix>,...] [--json] [--out file]\n');
    return 2;
  }
  const only = values.only?.split(',').map((s) => s.trim().toLowerCase());
  const runs = RUNS.filter((r) => !only || only.some((o) => r.name.toLowerCase().includes(o)));
  const tools: EvalTool[] = ['recall', 'recall_context'];
  const results: Array<{ run: Run; report: EvalReport }> = [];
  for (const run of runs) {
    process.env.CODE_MEMORY_RETRIEVAL = run.settings;
    process.stderr.write(`[${results.length + 1}/${runs.length}] ${run.name}\n`);
    const report = await runEval({
      repo: values.repo,
      queries: values.queries,
      rev: values.rev,
      embedder: run.vectors ? (values.embedder as 'use-lite' | 'hashed') : 'none',
      tools,
      includeMerges: run.includeMerges,
      pullRequestText: run.pullRequestText,
    });
    results.push({ run, report });
  }
  delete process.env.CODE_MEMORY_RETRIEVAL;
  if (values.out) writeFileSync(values.out, JSON.stringify(results, null, 2));
  if (values.json) {
    process.stdout.write(`${JSON.stringify(results.map(({ run, report }) => ({ run, tools: report.tools })), null, 2)}\n`);
    return 0;
  }
  const lines = [
    '| lever | recall hit@1 | hit@5 | hit@10 | MRR@10 | p95 ms | recall_context hit@5 | hit@10 |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const { run, report } of results) {
    const r = report.tools.recall!;
    const c = report.tools.recall_context!;
    lines.push(
      `| ${run.name} | ${f3(r.metrics.hit_at_1)} | ${f3(r.metrics.hit_at_5)} | ${f3(r.metrics.hit_at_10)} | ${f3(r.metrics.mrr_at_10)} | ${r.latency.p95_ms.toFixed(1)} | ${f3(c.metrics.hit_at_5)} | ${f3(c.metrics.hit_at_10)} |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`ablation failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
