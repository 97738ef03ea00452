// `eval`: retrieval quality on a repository's history and a question file, through the real tools.

import { writeFileSync } from 'node:fs';
import { formatReport } from '../../core/eval/format';
import { EVAL_TOOLS, runEval } from '../../core/eval/runEval';
import type { EvalTool } from '../../core/eval/runEval';
import type { Command } from '../command';
import { writeJson } from '../context';

export const evalCommand: Command = {
  name: 'eval',
  summary: "Measure retrieval quality on a repository's history and a question file",
  usage: 'code-memory eval --repo <git dir> --queries <file.jsonl> [--rev <rev>] [--tools recall,recall_context,retrieve_memory] [--k <n>] [--per-question] [--out <file>] [--json]',
  details:
    'Imports the history into a fresh temporary store (your store is not touched), asks every question through the tools and scores where the gold commit ranks (hit@1/5/10, MRR@10, latency). ' +
    'Question lines: {"id": "q1", "question": "...", "gold_commits": ["<sha>"], "kind": "paraphrase"}.',
  options: {
    repo: { type: 'string', description: 'Git repository whose history is imported', valueName: 'dir' },
    queries: { type: 'string', description: 'JSON Lines question file', valueName: 'file' },
    rev: { type: 'string', description: 'Revision to import (default HEAD)', valueName: 'rev' },
    tools: { type: 'string', description: `Comma-separated tools (default ${EVAL_TOOLS.join(',')})`, valueName: 'list' },
    k: { type: 'string', description: 'Answers scored per question (default 10)', valueName: 'n' },
    merges: { type: 'boolean', description: 'Import informative merge commits too' },
    'per-question': { type: 'boolean', description: 'Also print each question\'s ranks' },
    out: { type: 'string', description: 'Also write the JSON report to this file', valueName: 'file' },
  },
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
      embedder: options.embedder as 'use-lite' | 'hashed' | 'none',
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
