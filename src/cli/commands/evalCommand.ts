// `eval`: retrieval quality on a repository's history and a question file, through the real tools.

import { createReadStream, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { formatReport } from '../../core/eval/format';
import { reportHtml } from '../../core/eval/htmlReport';
import { EVAL_TOOLS } from '../../core/eval/evalTools';
import type { EvalTool } from '../../core/eval/evalTools';
import { parseQuestions } from '../../core/eval/queries';
import type { EvalQuestion } from '../../core/eval/queries';
import { runEval } from '../../core/eval/runEval';
import type { CommandImpl } from '../command';
import { writeJson } from '../context';
import { checkInputFile, checkInputFolder, gitInputError } from '../inputs';
import { boundedLines, LineNotUtf8Error, LineTooLongError } from '../lines';
import { UsageError } from '../options';
import { wholeNumber } from '../wholeNumber';

/** The longest question line read: a question, its gold commits and files take far less. */
const MAX_QUESTION_LINE_BYTES = 1024 * 1024;

/**
 * The question file, read as import reads its file (each line bounded as it streams in): a path
 * that names no readable file, a line too long or a question that is not one is bad input (exit 2).
 */
async function readQuestions(file: string): Promise<EvalQuestion[]> {
  checkInputFile(file, 'give a JSON Lines question file');
  const lines: string[] = [];
  try {
    for await (const line of boundedLines(createReadStream(file), MAX_QUESTION_LINE_BYTES)) lines.push(line);
  } catch (error) {
    if (error instanceof LineTooLongError) throw new UsageError(`${file}:${error.lineNo}: the line is longer than ${MAX_QUESTION_LINE_BYTES / 1024 / 1024} MiB; each line must be one question object.`);
    if (error instanceof LineNotUtf8Error) throw new UsageError(`${file}:${error.lineNo}: the line is not valid UTF-8; save the question file as UTF-8.`);
    throw error;
  }
  try {
    return parseQuestions(lines.join('\n'), file);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Why `file` cannot be written (a usage error, as export --out says it), or undefined. */
function outProblem(file: string, code: string | undefined): string | undefined {
  if (code === 'ENOENT') return `the folder ${path.dirname(path.resolve(file))} does not exist`;
  if (code === 'ENOTDIR') return `${path.dirname(path.resolve(file))} is not a folder`;
  if (code === 'EISDIR') return 'it is a folder';
  return undefined;
}

/** Checked before the run, which takes minutes: --out (or --html) in a folder that does not exist is bad input (exit 2). */
function checkOutFile(file: string, option = '--out'): void {
  if (!file) throw new UsageError(`${option} needs a file path`);
  let code: string | undefined;
  try {
    const dir = statSync(path.dirname(path.resolve(file)));
    if (!dir.isDirectory()) code = 'ENOTDIR';
    else if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) code = 'EISDIR';
  } catch (error) {
    code = (error as NodeJS.ErrnoException).code ?? 'ENOENT';
  }
  const why = outProblem(file, code);
  if (why) throw new UsageError(`cannot write ${file}: ${why}`);
}

/** Whether two paths name one file (the same path, or a link to it). */
function sameFile(a: string, b: string): boolean {
  if (path.resolve(a) === path.resolve(b)) return true;
  const [sa, sb] = [statSync(a, { throwIfNoEntry: false }), statSync(b, { throwIfNoEntry: false })];
  return sa !== undefined && sb !== undefined && sa.dev === sb.dev && sa.ino === sb.ino;
}

/** The report is never written over the question file, nor the JSON report and the page over each other (exit 2, before the run). */
function checkDistinct(files: Array<[string, string | undefined]>): void {
  const given = files.filter((f): f is [string, string] => f[1] !== undefined);
  for (let i = 0; i < given.length; i++) {
    for (let j = i + 1; j < given.length; j++) {
      if (sameFile(given[i][1], given[j][1])) throw new UsageError(`${given[j][0]} ${given[j][1]} is the file of ${given[i][0]}: give another file`);
    }
  }
}

function writeOutFile(file: string, text: string): void {
  try {
    writeFileSync(file, text);
  } catch (error) {
    const why = outProblem(file, (error as NodeJS.ErrnoException).code);
    throw why ? new UsageError(`cannot write ${file}: ${why}`) : error;
  }
}

export const evalCommand: CommandImpl = {
  name: 'eval',
  async run({ options, values, io }) {
    if (!values.repo || !values.queries) {
      io.stderr.write('error: --repo and --queries are required\n');
      return 2;
    }
    // Given, --tools names each tool: an empty list (`--tools ""`, an unset variable) is no tool, not all of them.
    const tools = values.tools !== undefined ? String(values.tools).split(',').map((t) => t.trim()) : [...EVAL_TOOLS];
    if (tools.some((t) => !t)) {
      io.stderr.write(`error: --tools needs tool names separated by commas, from ${EVAL_TOOLS.join(', ')}\n`);
      return 2;
    }
    const unknown = tools.filter((t) => !(EVAL_TOOLS as readonly string[]).includes(t));
    if (unknown.length) {
      io.stderr.write(`error: unknown tool(s) ${unknown.join(', ')}; use ${EVAL_TOOLS.join(', ')}\n`);
      return 2;
    }
    const k = values.k === undefined ? 10 : wholeNumber(values.k, 1, 50);
    if (k === undefined) {
      io.stderr.write('error: --k must be an integer from 1 to 50\n');
      return 2;
    }
    // Checked before the history is imported: a wrong path is bad input, found in seconds.
    checkInputFolder(path.resolve(String(values.repo)), 'give the path of a git repository');
    const queries = await readQuestions(String(values.queries));
    const out = values.out === undefined ? undefined : String(values.out);
    if (out !== undefined) checkOutFile(out);
    const html = values.html === undefined ? undefined : String(values.html);
    if (html !== undefined) checkOutFile(html, '--html');
    checkDistinct([['--queries', String(values.queries)], ['--out', out], ['--html', html]]);
    const report = await runEval({
      repo: String(values.repo),
      queries,
      rev: values.rev as string | undefined,
      embedder: options.embedding ?? 'none',
      reranker: options.reranker,
      tools: tools as EvalTool[],
      k,
      includeMerges: Boolean(values.merges),
      log: (m) => io.stderr.write(`${m}\n`),
    }).catch((error: unknown) => {
      throw gitInputError(error);
    });
    if (out !== undefined) writeOutFile(out, `${JSON.stringify(report, null, 2)}\n`);
    if (html !== undefined) writeOutFile(html, reportHtml(report));
    if (options.json) writeJson(io, report);
    else io.stdout.write(`${formatReport(report, { perQuestion: Boolean(values['per-question']) })}\n`);
    return 0;
  },
};
