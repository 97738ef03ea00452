// Session summaries. The Summariser is called once per ended session (never per event), with
// a token budget; the default is extractive and deterministic: no model, no network. The
// extension can plug a language-model summariser in behind the same interface.

import type { Observation } from '../model/records';
import { countTokens, truncateToTokens } from '../tokens';
import { parseJson } from '../store/mapping';

export interface SummaryFields {
  request: string | null;
  learned: string | null;
  completed: string | null;
  decisions: string | null;
  next_steps: string | null;
  preferences: string | null;
}

export interface SummaryContext {
  /** The user's recent prompts in this session, oldest first. */
  prompts?: string[];
}

export interface Summariser {
  readonly name: string;
  summarise(observations: Observation[], budgetTokens: number, context?: SummaryContext): Promise<SummaryFields>;
}

export const DECISION_PATTERN = /\b(decided|decision|chose|choose|switch(?:ed)? to|instead of|we will|we'll|going with|settled on|opted|use\s+\S+\s+(?:for|as|instead)|replaced? .+ with)\b/i;
export const PREFERENCE_PATTERN = /\b(prefer(?:s|red)?|preference|convention|always|never|style|must not|do not|don't)\b/i;
export const NEXT_PATTERN = /\b(todo|to do|next|follow[- ]up|still need|remaining|fixme|later|pending|not yet)\b/i;

function sentences(text: string | null): string[] {
  if (!text) return [];
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.replace(/^[-*\s]+/, '').trim())
    .filter((s) => s.length >= 8);
}

function normalise(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();
}

/** Statements an observation makes: its facts, then its narrative's sentences. */
export function statements(o: Observation): string[] {
  return [...parseJson<string[]>(o.facts, []), ...sentences(o.narrative)];
}

function files(o: Observation, key: 'files_read' | 'files_modified'): string[] {
  return parseJson<string[]>(o[key], []);
}

const EDIT_TYPES = new Set(['edit', 'create', 'delete', 'rename']);

/** Adds items (most important first) until the field's token budget is spent. */
function budgeted(items: string[], budget: number): string | null {
  const out: string[] = [];
  const seen = new Set<string>();
  let used = 0;
  for (const item of items) {
    const key = normalise(item);
    if (!key || seen.has(key)) continue;
    seen.add(key);
    const line = `- ${item}`;
    const cost = countTokens(line) + 1;
    if (used + cost > budget) {
      if (out.length === 0) out.push(truncateToTokens(line, budget));
      break;
    }
    out.push(line);
    used += cost;
  }
  return out.length > 0 ? out.join('\n') : null;
}

export class ExtractiveSummariser implements Summariser {
  readonly name = 'extractive-v1';

  async summarise(observations: Observation[], budgetTokens: number, context: SummaryContext = {}): Promise<SummaryFields> {
    const obs = [...observations].sort((a, b) => a.created_at_epoch - b.created_at_epoch || a.id - b.id);

    const requestItems = [
      ...(context.prompts ?? []),
      ...obs.filter((o) => o.type === 'task' || o.type === 'agent').map((o) => o.title ?? ''),
    ].filter(Boolean);

    const completed: string[] = [];
    for (const o of obs.filter((x) => x.type === 'commit')) completed.push(o.title ?? `commit ${o.commit_sha ?? ''}`);
    const edited = new Map<string, number>();
    for (const o of obs.filter((x) => EDIT_TYPES.has(x.type))) {
      for (const f of files(o, 'files_modified')) edited.set(f, (edited.get(f) ?? 0) + 1);
    }
    const editedList = [...edited.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([f]) => f);
    if (editedList.length > 0) completed.push(`Edited ${editedList.slice(0, 12).join(', ')}${editedList.length > 12 ? ` and ${editedList.length - 12} more` : ''}`);
    for (const o of obs.filter((x) => x.type === 'task' && /\b(done|completed|finished|passed|fixed)\b/i.test(x.narrative ?? x.title ?? ''))) {
      completed.push(o.title ?? '');
    }

    const all = obs.flatMap((o) => statements(o).map((s) => ({ s, o })));
    const decisions = all.filter(({ s }) => DECISION_PATTERN.test(s)).map(({ s }) => s);
    const preferences = all.filter(({ s }) => PREFERENCE_PATTERN.test(s) && !DECISION_PATTERN.test(s)).map(({ s }) => s);
    const next = all.filter(({ s }) => NEXT_PATTERN.test(s)).map(({ s }) => s);
    const used = new Set([...decisions, ...preferences, ...next].map(normalise));
    const learned = [
      ...all.filter(({ s }) => !used.has(normalise(s))).map(({ s }) => s),
      ...(() => {
        const read = new Map<string, number>();
        for (const o of obs.filter((x) => x.type === 'read')) for (const f of files(o, 'files_read')) read.set(f, (read.get(f) ?? 0) + 1);
        const top = [...read.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 8).map(([f]) => f);
        return top.length > 0 ? [`Read ${top.join(', ')}`] : [];
      })(),
    ];

    // Fields with nothing to say hand their share of the budget to the others.
    const lists: [keyof SummaryFields, string[]][] = [
      ['request', requestItems],
      ['completed', completed],
      ['decisions', decisions],
      ['learned', learned],
      ['next_steps', next],
      ['preferences', preferences],
    ];
    const out: SummaryFields = { request: null, learned: null, completed: null, decisions: null, next_steps: null, preferences: null };
    let remaining = budgetTokens;
    let left = lists.filter(([, items]) => items.length > 0).length;
    for (const [field, items] of lists) {
      if (items.length === 0) continue;
      const text = budgeted(items, Math.floor(remaining / left));
      left--;
      out[field] = text;
      remaining -= text ? countTokens(text) : 0;
    }
    return out;
  }
}
