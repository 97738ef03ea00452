// The question file of the evaluation: JSON Lines, one question per line, in the format of
// the public development set ({id, question, gold_commits, gold_files?, kind?}).

import { readFileSync } from 'node:fs';
import { MAX_PROMPT_CHARS } from '../tools/retrieveMemory';

/**
 * The longest question, in characters (code points): what every tool asked takes (retrieve_memory's
 * prompt, the least of them). A longer one is refused with its line before the history is imported.
 */
export const MAX_QUESTION_CHARS = MAX_PROMPT_CHARS;

export interface EvalQuestion {
  id: string;
  question: string;
  gold_commits: string[];
  gold_files?: string[];
  kind?: string;
}

export function parseQuestions(text: string, source = 'questions'): EvalQuestion[] {
  const out: EvalQuestion[] = [];
  text.split('\n').forEach((line, i) => {
    const t = line.trim();
    if (!t) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(t);
    } catch {
      throw new Error(`${source}:${i + 1}: not valid JSON. Each line must be one question object.`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new Error(`${source}:${i + 1}: ${parsed === null ? 'null' : Array.isArray(parsed) ? 'a list' : `a ${typeof parsed}`} is not a question. Each line must be one question object.`);
    }
    const q = parsed as Partial<EvalQuestion>;
    if (typeof q.question !== 'string' || !q.question.trim()) {
      throw new Error(`${source}:${i + 1}: "question" must be a non-empty string.`);
    }
    if (q.question.length > MAX_QUESTION_CHARS && (q.question.length > 2 * MAX_QUESTION_CHARS || [...q.question].length > MAX_QUESTION_CHARS)) {
      throw new Error(`${source}:${i + 1}: "question" is longer than ${MAX_QUESTION_CHARS.toLocaleString('en-US')} characters, the most the tools take.`);
    }
    if (!Array.isArray(q.gold_commits) || q.gold_commits.length === 0 || !q.gold_commits.every((g) => typeof g === 'string' && /^[0-9a-f]{4,40}$/i.test(g))) {
      throw new Error(`${source}:${i + 1}: "gold_commits" must be a non-empty array of commit shas.`);
    }
    out.push({
      id: typeof q.id === 'string' && q.id ? q.id : `q${i + 1}`,
      question: q.question,
      gold_commits: q.gold_commits,
      gold_files: Array.isArray(q.gold_files) ? q.gold_files : undefined,
      kind: typeof q.kind === 'string' ? q.kind : undefined,
    });
  });
  if (out.length === 0) throw new Error(`${source}: no questions found.`);
  return out;
}

export function loadQuestions(file: string): EvalQuestion[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`Cannot read the questions file ${file}: ${(e as Error).message}`);
  }
  return parseQuestions(text, file);
}
