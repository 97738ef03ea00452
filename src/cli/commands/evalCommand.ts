// `eval`: retrieval quality on a repository's history and a question file, through the real tools.

import { writeFileSync } from 'node:fs';
import { formatReport } from '../../core/eval/format';
import { EVAL_TOOLS } from '../../core/eval/evalTools';
import type { EvalTool } from '../../core/eval/evalTools';
import { runEval } from '../../core/eval/runEval';
import type { CommandImpl } from '../command';
import { writeJson } from '../context';

export const evalCommand: CommandImpl = {
  name: 'eval',
  async run({ options, values, io }) {
    if (!values.repo || !values.queries) {
      io.stderr.write('error: --repo and --queries are required\n');
      return 2;
    }
    const tools = values.tools ? String(values.tools).split(',').map((t) => t.trim()) : [...EVAL_TOOLS];
    const unknown = tools.filter((t) => !(EVAL_TOOLS as readonly string[]).includes(t));
    if (unknown.length) {
      io.stderr.write(`error: unknown tool(s) ${unknown.join(', ')}; use ${EVAL_TOOLS.join(', ')}\n`);
      return 2;
    }
    const k = values.k === undefined ? 10 : Number(values.k);
    if (!Number.isInteger(k) || k < 1 || k > 50) {
      io.stderr.write('error: --k must be an integer from 1 to 50\n');
      return 2;
    }
    const report = await runEval({
      repo: String(values.repo),
      queries: String(values.queries),
      rev: values.rev as string | undefined,
      embedder: options.embedding ?? 'none',
      reranker: options.reranker,
      tools: tools as EvalTool[],
      k,
      includeMerges: Boolean(values.merges),
      log: (m) => io.stderr.write(`${m}\n`),
    });
    if (values.out) writeFileSync(String(values.out), `${JSON.stringify(report, null, 2)}\n`);
    if (options.json) writeJson(io, report);
    else io.stdout.write(`${formatReport(report, { perQuestion: Boolean(values['per-question']) })}\n`);
    return 0;
  },
};
