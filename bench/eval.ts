// Retrieval evaluation on a git repository and a JSON Lines question file.
//   npx tsx bench/eval.ts --repo <git dir> --queries <file.jsonl> [--rev <rev>] [--embedder use-lite|hashed|none] [--json] [--out report.json]
// Prints the table (or the JSON report with --json); progress goes to stderr.

import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatReport } from '../src/core/eval/format';
import { EVAL_TOOLS } from '../src/core/eval/evalTools';
import type { EvalTool } from '../src/core/eval/evalTools';
import { runEval } from '../src/core/eval/runEval';
import { runBench } from './synthetic';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      repo: { type: 'string' },
      queries: { type: 'string' },
      rev: { type: 'string' },
      embedder: { type: 'string', default: 'use-lite' },
      tools: { type: 'string' },
      merges: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      out: { type: 'string' },
      quiet: { type: 'boolean', default: false },
    },
  });
  if (!values.repo || !values.queries) {
    process.stderr.write('usage: tsx bench/eval.ts --repo <git dir> --queries <file.jsonl> [--rev <rev>] [--merges] [--embedder use-lite|hashed|none] [--tools recall,recall_context,retrieve_memory] [--json] [--out file]\n');
    return 2;
  }
  const embedder = values.embedder as 'use-lite' | 'hashed' | 'none';
  if (!['use-lite', 'hashed', 'none'].includes(embedder)) throw new Error('--embedder must be use-lite, hashed or none');
  const tools = values.tools ? (values.tools.split(',') as EvalTool[]) : [...EVAL_TOOLS];
  for (const t of tools) if (!(EVAL_TOOLS as readonly string[]).includes(t)) throw new Error(`unknown tool ${t}: use ${EVAL_TOOLS.join(', ')}`);
  const report = await runEval({
    repo: values.repo,
    queries: values.queries,
    rev: values.rev,
    embedder,
    tools,
    includeMerges: values.merges,
    log: values.quiet ? undefined : (m) => process.stderr.write(`${m}\n`),
  });
  if (values.out) writeFileSync(values.out, JSON.stringify(report, null, 2));
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report)}\n`);
  return 0;
}

runBench(main);
