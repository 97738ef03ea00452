import * as vscode from 'vscode';
import type { SummaryContext, SummaryFields, SummaryResult } from '../../core/compress/summariser';
import type { Observation } from '../../core/model/records';
import { parseJson } from '../../core/store/mapping';
import { readConfig } from '../config';

const FIELDS: (keyof SummaryFields)[] = ['request', 'learned', 'completed', 'decisions', 'next_steps', 'preferences'];

/**
 * Summaries written by VS Code's language-model API, only where the user chose it
 * (codeMemory.summariser.provider = languageModel), once per ended session (never per event),
 * within codeMemory.summariser.tokenBudget tokens of prompt and answer. Answers null on any
 * failure (no model, no consent, over budget, unparsable answer): the engine then writes its
 * extractive summary.
 */
export class LanguageModelSummariser {
  /** Tokens spent per session, to refuse a second run over budget. */
  readonly spent = new Map<string, number>();

  constructor(private readonly log: (message: string) => void) {}

  async summarise(observations: Observation[], budgetTokens: number, context?: SummaryContext): Promise<SummaryResult | null> {
    const config = readConfig();
    if (config.summariser !== 'languageModel' || observations.length === 0) return null;
    try {
      return await this.withModel(observations, budgetTokens, config.summariserTokenBudget, context);
    } catch (err) {
      this.log(`Language-model summary not used (${err instanceof Error ? err.message : String(err)}); writing the extractive summary.`);
      return null;
    }
  }

  private async withModel(observations: Observation[], answerTokens: number, sessionBudget: number, context?: SummaryContext): Promise<SummaryResult> {
    const sessionId = observations[0].memory_session_id;
    const already = this.spent.get(sessionId) ?? 0;
    const [model] = await vscode.lm.selectChatModels();
    if (!model) throw new Error('no language model is available');
    const promptBudget = Math.min(model.maxInputTokens, sessionBudget - already - answerTokens);
    if (promptBudget < 200) throw new Error(`the session's token budget (${sessionBudget}) is spent`);

    const header = [
      'Summarise this coding session for a memory that future coding agents will read.',
      'Answer with JSON only, an object with string-or-null fields: request (what the developer set out to do),',
      'learned, completed, decisions (with their reasons), next_steps, preferences. Be concrete: name files, symbols, commits.',
      `Keep the whole answer under ${answerTokens} tokens. Do not invent anything not in the log.`,
      context?.prompts?.length ? `Recent prompts: ${context.prompts.join(' | ')}` : '',
      // A commit another window or the CLI stored first: the files it took are committed, though not by this log.
      context?.commitsElsewhere?.length ? `Committed meanwhile (recorded elsewhere): ${context.commitsElsewhere.map((c) => `${c.title ?? c.commit_sha ?? ''} [${parseJson<string[]>(c.files_modified, []).slice(0, 10).join(', ')}]`).join(' | ')}` : '',
      'Session log (oldest first):',
    ].join('\n');
    const lines: string[] = [];
    let used = await model.countTokens(header);
    const sorted = [...observations].sort((a, b) => a.created_at_epoch - b.created_at_epoch);
    for (const o of sorted) {
      const line = `- ${new Date(o.created_at_epoch).toISOString().slice(11, 16)} ${o.type}: ${o.title ?? ''}${o.subtitle ? ` (${o.subtitle})` : ''}${o.narrative ? ` — ${o.narrative.slice(0, 400)}` : ''}`;
      const cost = await model.countTokens(line);
      if (used + cost > promptBudget) break;
      lines.push(line);
      used += cost;
    }
    const messages = [vscode.LanguageModelChatMessage.User(`${header}\n${lines.join('\n')}`)];
    const cts = new vscode.CancellationTokenSource();
    const timer = setTimeout(() => cts.cancel(), 60_000);
    let text = '';
    try {
      const response = await model.sendRequest(messages, { justification: 'Code Memory summarises a finished coding session (codeMemory.summariser.provider is languageModel).' }, cts.token);
      for await (const chunk of response.text) {
        text += chunk;
        if (text.length > answerTokens * 8) break;
      }
    } finally {
      clearTimeout(timer);
      cts.dispose();
    }
    this.spent.set(sessionId, already + used + (await model.countTokens(text)));
    return { ...parseFields(text), summariser: `language-model:${model.vendor}/${model.id}` };
  }
}

export function parseFields(text: string): SummaryFields {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start === -1 || end <= start) throw new Error('the model did not answer with JSON');
  const raw = JSON.parse(text.slice(start, end + 1)) as Record<string, unknown>;
  const out = {} as SummaryFields;
  for (const f of FIELDS) {
    const v = raw[f];
    out[f] = typeof v === 'string' && v.trim() ? v.trim() : Array.isArray(v) ? v.map((x) => `- ${String(x)}`).join('\n') || null : null;
  }
  if (FIELDS.every((f) => out[f] === null)) throw new Error('the model answered with an empty summary');
  return out;
}
