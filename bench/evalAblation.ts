// What each retrieval lever is worth: imports the history once per index configuration and
// asks the questions under each query configuration, then prints one table row per run for
// recall and recall_context, followed by the full report of the default configuration.
//   npx tsx bench/evalAblation.ts --repo <git dir> --queries <file.jsonl> [--rev <rev>] [--embedder use-lite] [--json] [--out file]
// Rows marked "+" add one lever to the row above (the path from the naive baseline to the
// default); rows marked "-" change one thing in the default.

import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatReport } from '../src/core/eval/format';
import { openEvalSession } from '../src/core/eval/runEval';
import type { EvalTool } from '../src/core/eval/evalTools';
import type { EvalReport } from '../src/core/eval/runEval';
import { runBench } from './synthetic';

interface QueryRun {
  name: string;
  /** Query-time settings (CODE_MEMORY_RETRIEVAL, added to the group's index settings). */
  query: string;
  tools?: EvalTool[];
  isDefault?: boolean;
}

interface Group {
  /** Index-time settings, in force while importing and while asking. */
  index: string;
  vectors: boolean;
  pullRequestText?: boolean;
  includeMerges?: boolean;
  runs: QueryRun[];
}

const GROUPS: Group[] = [
  {
    index: 'diffText=0,splitIdentifiers=0,stem=0,stopWords=0,titleRepeat=1',
    vectors: false,
    pullRequestText: false,
    runs: [
      { name: 'naive: LanceDB FTS over message + paths', query: 'lexical=fts,extraWeight=1,abbrevWeight=0' },
      { name: '+ in-process BM25 (fresh, ranked) instead of LanceDB FTS', query: 'extraWeight=1,abbrevWeight=0' },
    ],
  },
  {
    index: 'splitIdentifiers=0,stem=0,stopWords=0,titleRepeat=1',
    vectors: false,
    pullRequestText: false,
    runs: [{ name: '+ diff text (hunk headers, doc/comment/test lines, identifiers, changed lines)', query: 'extraWeight=1,abbrevWeight=0' }],
  },
  {
    index: 'stem=0,stopWords=0,titleRepeat=1',
    vectors: false,
    pullRequestText: false,
    runs: [{ name: '+ identifier splitting (camelCase, snake_case; whole kept too)', query: 'extraWeight=1,abbrevWeight=0' }],
  },
  {
    index: 'titleRepeat=1',
    vectors: false,
    pullRequestText: false,
    runs: [{ name: '+ Porter stemming and stop words', query: 'extraWeight=1,abbrevWeight=0' }],
  },
  {
    index: '',
    vectors: false,
    pullRequestText: false,
    runs: [
      { name: '+ field weights (title x3, diff text x0.5)', query: 'abbrevWeight=0' },
      { name: '+ abbreviations from the store vocabulary (co-occurrence checked)', query: '' },
    ],
  },
  {
    index: '',
    vectors: false,
    runs: [{ name: '+ pull-request messages kept with their commits', query: '' }],
  },
  {
    index: '',
    vectors: true,
    runs: [
      { name: '+ USE-lite vectors, score fusion (the default)', query: '', tools: ['recall', 'recall_context', 'retrieve_memory'], isDefault: true },
      { name: '- vectors fused by weighted RRF instead', query: 'fusion=rrf' },
      { name: '- vectors only (no BM25)', query: 'lexicalWeight=0' },
      { name: '- with pseudo-relevance feedback (3 docs, 10 terms)', query: 'prfDocs=3' },
      { name: '- no query embedding (BM25 + abbreviations only)', query: 'vectorWeight=0' },
    ],
  },
  {
    index: '',
    vectors: false,
    includeMerges: true,
    runs: [{ name: '- merges imported as observations of their own (no vectors)', query: '' }],
  },
];

function f3(x: number): string {
  return x.toFixed(3);
}

function joinSettings(...parts: string[]): string {
  return parts.filter(Boolean).join(',');
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      repo: { type: 'string' },
      queries: { type: 'string' },
      rev: { type: 'string' },
      embedder: { type: 'string', default: 'use-lite' },
      json: { type: 'boolean', default: false },
      out: { type: 'string' },
    },
  });
  if (!values.repo || !values.queries) {
    process.stderr.write('usage: tsx bench/evalAblation.ts --repo <git dir> --queries <file.jsonl> [--rev <rev>] [--embedder use-lite|hashed] [--json] [--out file]\n');
    return 2;
  }
  const results: Array<{ name: string; settings: string; report: EvalReport; isDefault: boolean }> = [];
  for (const group of GROUPS) {
    process.env.CODE_MEMORY_RETRIEVAL = group.index;
    process.stderr.write(`import with "${group.index || 'defaults'}"${group.vectors ? ' + vectors' : ''}${group.includeMerges ? ' + merges' : ''}\n`);
    const session = await openEvalSession({
      repo: values.repo,
      queries: values.queries,
      rev: values.rev,
      embedder: group.vectors ? (values.embedder as 'use-lite' | 'hashed') : 'none',
      includeMerges: group.includeMerges,
      pullRequestText: group.pullRequestText,
      log: (m) => {
        if (!m.startsWith('import:') && !m.startsWith('embedding:')) process.stderr.write(`  ${m}\n`);
      },
    });
    try {
      for (const run of group.runs) {
        const settings = joinSettings(group.index, run.query);
        process.env.CODE_MEMORY_RETRIEVAL = settings;
        process.stderr.write(`  ${run.name}\n`);
        const report = await session.ask(run.tools ?? ['recall', 'recall_context']);
        results.push({ name: run.name, settings, report, isDefault: run.isDefault === true });
      }
    } finally {
      await session.close();
    }
  }
  delete process.env.CODE_MEMORY_RETRIEVAL;
  if (values.out) writeFileSync(values.out, JSON.stringify(results, null, 2));
  if (values.json) {
    process.stdout.write(`${JSON.stringify(results.map(({ name, settings, report }) => ({ name, settings, import: report.import, tools: report.tools })), null, 2)}\n`);
    return 0;
  }
  const lines = [
    '| lever | recall hit@1 | hit@5 | hit@10 | MRR@10 | p50 / p95 ms | recall_context hit@5 | hit@10 |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const { name, report } of results) {
    const r = report.tools.recall!;
    const c = report.tools.recall_context!;
    lines.push(
      `| ${name} | ${f3(r.metrics.hit_at_1)} | ${f3(r.metrics.hit_at_5)} | ${f3(r.metrics.hit_at_10)} | ${f3(r.metrics.mrr_at_10)} | ${r.latency.p50_ms.toFixed(0)} / ${r.latency.p95_ms.toFixed(0)} | ${f3(c.metrics.hit_at_5)} | ${f3(c.metrics.hit_at_10)} |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  const def = results.find((r) => r.isDefault);
  if (def) process.stdout.write(`\nDefault configuration:\n${formatReport(def.report)}\n`);
  return 0;
}

runBench(main);
