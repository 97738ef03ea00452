// Session summaries. The Summariser is called once per ended session (never per event), with
// a token budget; the default is extractive and deterministic: no model, no network. The
// extension can plug a language-model summariser in behind the same interface.

import type { Observation, SummaryFields } from '../model/records';
import { countTokens, truncateToTokens } from '../tokens';
import { parseJson } from '../store/mapping';

export type { SummaryFields };

/** A summary, with the name of what wrote it when that is not the summariser asked. */
export type SummaryResult = SummaryFields & { summariser?: string };

export interface SummaryContext {
  /** The user's recent prompts in this session, oldest first. */
  prompts?: string[];
  /**
   * Commits on the session's branch since it began that another session holds (another window
   * or the CLI stored the commit first): what they took is not this session's uncommitted work.
   */
  commitsElsewhere?: Observation[];
}

export interface Summariser {
  readonly name: string;
  /**
   * The summary fields; `summariser` names what wrote them where a summariser hands the work on
   * (a language model, with the extractive one as fallback), so the stored name is always true.
   */
  summarise(observations: Observation[], budgetTokens: number, context?: SummaryContext): Promise<SummaryResult>;
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

/** A hunk's header in an edit's diff listing (editDiff.ts): `@@ line 12 in function total(...)`. */
const HUNK_HEADER = /^@@ /;
/** A line of a diff listing: a hunk's header, a removed or added line, the mark of a listing cut short. */
const DIFF_LINE = /^(?:@@ |[-+](?: |$)|…$)/;

/**
 * The prose of a narrative: without its diff listing (an edit's `@@ line ...`, `- old`, `+ new`
 * lines), which is code, not something said. Only a narrative with a hunk header is a listing: a
 * note's `- item` lines are a list.
 */
function prose(narrative: string | null): string | null {
  if (!narrative) return narrative;
  const lines = narrative.split('\n');
  if (!lines.some((l) => HUNK_HEADER.test(l))) return narrative;
  return lines.filter((l) => !DIFF_LINE.test(l)).join('\n');
}

/**
 * Statements an observation makes: a decision's title (the decision itself, as an agent's
 * `observe` gives it), its facts, then its narrative's sentences, diff listings left out.
 */
export function statements(o: Observation): string[] {
  const title = o.type === 'decision' ? (o.title ?? '').trim() : '';
  return [...(title ? [title] : []), ...parseJson<string[]>(o.facts, []), ...sentences(prose(o.narrative))];
}

/** Whether a statement of `o` is a decision: it says so, or it is a decision observation's title. */
export function isDecision(s: string, o: Observation): boolean {
  return DECISION_PATTERN.test(s) || (o.type === 'decision' && s === (o.title ?? '').trim());
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

// Facts capture writes about mechanics (what changed where, outcomes): the summary says them in
// its own words below, so they are not repeated as things learned.
/** A checkout observation's fact naming the commits a move of HEAD left (12-digit SHAs, newest first). */
export const COMMITS_LEFT = 'commits left by the move:';
/** A commit observation's fact naming the commit it amended (`git commit --amend`, 12-digit SHA): that one no longer stands. */
export const AMENDS = 'amends commit';

const MECHANICAL = /^(commits left by the move: |amends commit |changed .+ in |added in |removed from |strings in |problem (introduced|cleared) in |test failed: |\d+ (change\(s\)|file\(s\)) |touched |(test )?task |tests |command |debug session |head moved |.+ was renamed to |.+ (created|deleted|changed on disk)$)/i;

function fileOf(o: Observation): string | null {
  return files(o, 'files_modified')[0] ?? null;
}

/** Symbols an edit observation names in its facts ("changed a, b in path"). */
function symbolsOf(o: Observation): string[] {
  for (const f of parseJson<string[]>(o.facts, [])) {
    const m = /^changed (.+) in \S+$/.exec(f);
    if (m) return m[1].split(', ');
  }
  return [];
}

/** Outcomes of test runs in order: which went from failing to passing, which still fail. */
function testOutcomes(obs: Observation[]): { fixed: string[]; failing: string[] } {
  const runs = new Map<string, { failedWith: string | null; failed: boolean }>();
  const fixed: string[] = [];
  for (const o of obs) {
    if ((o.type !== 'task' && o.type !== 'terminal') || !parseJson<string[]>(o.concepts, []).includes('test')) continue;
    const name = (o.title ?? '').replace(/ (succeeded|failed \(exit -?\d+\)|ended|ran)$/, '');
    const failedTest = parseJson<string[]>(o.facts, []).find((f) => f.startsWith('test failed: '))?.slice('test failed: '.length) ?? null;
    const failed = /failed \(exit/.test(o.title ?? '');
    const prev = runs.get(name);
    if (!failed && prev?.failed) fixed.push(`${name} went from failing${prev.failedWith ? ` (${prev.failedWith})` : ''} to passing`);
    runs.set(name, { failed, failedWith: failed ? failedTest : null });
  }
  const failing = [...runs.entries()].filter(([, r]) => r.failed).map(([name, r]) => `${name} still failing${r.failedWith ? `: ${r.failedWith}` : ''}`);
  return { fixed, failing };
}

/** The moves of HEAD in the session that left commits (a reset, a rebase): when, what, which SHAs. */
function leftBehind(obs: Observation[]): { at: number; title: string; shas: string[] }[] {
  const out: { at: number; title: string; shas: string[] }[] = [];
  for (const o of obs) {
    if (o.type !== 'checkout') continue;
    const fact = parseJson<string[]>(o.facts, []).find((f) => f.startsWith(COMMITS_LEFT));
    const shas = fact?.slice(COMMITS_LEFT.length).trim().split(/\s+/).filter((s) => /^[0-9a-f]{7,64}$/.test(s)) ?? [];
    if (shas.length) out.push({ at: o.created_at_epoch, title: o.title ?? 'HEAD moved', shas });
  }
  return out;
}

/** The commits (SHA prefixes) that later commits amended (their AMENDS fact). */
function amendedAway(commits: Observation[]): string[] {
  return commits.flatMap((o) => parseJson<string[]>(o.facts, []).filter((f) => f.startsWith(AMENDS)).map((f) => f.slice(AMENDS.length).trim())).filter((s) => /^[0-9a-f]{7,64}$/.test(s));
}

/** The extractive summariser's name, as a summary it wrote records it (store/summaryQuotes.ts reads it). */
export const EXTRACTIVE_SUMMARISER = 'extractive-v2';

export class ExtractiveSummariser implements Summariser {
  readonly name = EXTRACTIVE_SUMMARISER;

  async summarise(observations: Observation[], budgetTokens: number, context: SummaryContext = {}): Promise<SummaryFields> {
    const obs = [...observations].sort((a, b) => a.created_at_epoch - b.created_at_epoch || a.id - b.id);

    const requestItems = [
      ...(context.prompts ?? []),
      ...obs.filter((o) => o.type === 'agent').map((o) => o.title ?? ''),
    ].filter(Boolean);

    // What changed: commits, then files with the symbols changed in them.
    const completed: string[] = [];
    const commits = obs.filter((x) => x.type === 'commit');
    const moves = leftBehind(obs);
    const amended = amendedAway(commits);
    for (const o of commits) {
      // A commit the session amended is told by the commit that replaced it.
      if (o.commit_sha && amended.some((s) => o.commit_sha!.startsWith(s))) continue;
      const undone = o.commit_sha ? moves.find((l) => l.at >= o.created_at_epoch && l.shas.some((s) => o.commit_sha!.startsWith(s))) : undefined;
      completed.push(`Committed: ${o.title ?? o.commit_sha ?? ''}${undone ? ` (undone: ${undone.title})` : ''}`);
    }
    const changed = new Map<string, Set<string>>();
    for (const o of obs.filter((x) => EDIT_TYPES.has(x.type))) {
      for (const f of files(o, 'files_modified')) {
        const set = changed.get(f) ?? new Set<string>();
        if (o.type === 'edit') for (const s of symbolsOf(o)) set.add(s);
        changed.set(f, set);
      }
    }
    const changedList = [...changed.entries()].map(([f, syms]) => (syms.size ? `${f} (${[...syms].slice(0, 4).join(', ')})` : f));
    if (changedList.length > 0) completed.push(`Changed ${changedList.slice(0, 10).join(', ')}${changedList.length > 10 ? ` and ${changedList.length - 10} more files` : ''}`);

    // What was learned: problems met and cleared, tests that went from failing to passing.
    const tests = testOutcomes(obs);
    const introduced = new Set<string>();
    const outcomes: string[] = [...tests.fixed];
    for (const o of obs) {
      for (const f of parseJson<string[]>(o.facts, [])) {
        const m = /^problem (introduced|cleared) in (\S+): (.+)$/.exec(f);
        if (!m) continue;
        const key = `${m[2]}\u0000${m[3]}`;
        if (m[1] === 'introduced') introduced.add(key);
        else outcomes.push(introduced.has(key) ? `Problem met and cleared in ${m[2]}: ${m[3]}` : `Problem cleared in ${m[2]}: ${m[3]}`);
      }
    }

    const all = obs.flatMap((o) => statements(o).filter((s) => !MECHANICAL.test(s)).map((s) => ({ s, o })));
    const decisions = all.filter(({ s, o }) => isDecision(s, o)).map(({ s }) => s);
    const preferences = all.filter(({ s, o }) => PREFERENCE_PATTERN.test(s) && !isDecision(s, o)).map(({ s }) => s);
    const next = all.filter(({ s }) => NEXT_PATTERN.test(s)).map(({ s }) => s);

    // Next steps: tests still failing at the end, work not committed or not saved.
    // A file is committed when a commit that names it came after its last edit (obs is in time order).
    const lastCommitted = new Map<string, number>();
    for (const o of [...commits, ...(context.commitsElsewhere ?? [])]) for (const f of files(o, 'files_modified')) lastCommitted.set(f, Math.max(lastCommitted.get(f) ?? -Infinity, o.created_at_epoch));
    const lastEdited = new Map<string, number>();
    for (const o of obs.filter((x) => x.type === 'edit')) {
      const f = fileOf(o);
      // An edit observation grows with each save: its last one is when it last took content.
      if (f) lastEdited.set(f, Math.max(lastEdited.get(f) ?? 0, o.updated_at_epoch ?? o.created_at_epoch));
    }
    const uncommitted = [...lastEdited].filter(([f, at]) => !(at <= (lastCommitted.get(f) ?? -Infinity))).map(([f]) => f);
    const unsaved = obs.filter((o) => o.type === 'edit' && (o.title ?? '').startsWith('Unsaved edits in')).map(fileOf).filter((f): f is string => !!f);
    const nextItems = [
      ...tests.failing.map((t) => `Fix ${t}`),
      ...(unsaved.length ? [`Unsaved edits in ${[...new Set(unsaved)].join(', ')}`] : []),
      ...(uncommitted.length ? [`Uncommitted changes in ${uncommitted.slice(0, 8).join(', ')}${uncommitted.length > 8 ? ` and ${uncommitted.length - 8} more` : ''}`] : []),
      ...next,
    ];

    const used = new Set([...decisions, ...preferences, ...next].map(normalise));
    const learned = [
      ...outcomes,
      ...all.filter(({ s }) => !used.has(normalise(s))).map(({ s }) => s.replace(/^comment in (\S+): /, 'Noted in $1: ')),
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
      ['next_steps', nextItems],
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
