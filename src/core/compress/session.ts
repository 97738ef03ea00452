// Compressing an ended session: one summary (L1) per branch it worked on, merged observations
// where several say the same thing, and promotion of decisions and conventions that recur into
// memories (L2). One summariser call per summary, within the engine's token budget.

import { addToList, append, largest, smallest } from '../lists';
import type { CompressedSource, Observation, SessionSummary } from '../model/records';
import type { SessionEndReason } from '../api';
import type { ProjectRepositories } from '../store/repos/repositories';
import { observationFiles, observationTitle } from '../store/cells';
import type { Summariser, SummaryFields, SummaryResult } from './summariser';
import { countTokens, truncateToTokens } from '../tokens';
import { createHash } from 'node:crypto';
import { PREFERENCE_PATTERN, isDecision, statements } from './summariser';
import { parseJson } from '../store/mapping';
import { buildMemory } from './promote';
import { memoryBranch, projectWideBranch } from '../model/branches';
import { applyMemoryFacts } from './supersede';
import { storedText } from '../capture/prepare';
import { cutText } from '../tokens';

const MERGE_MIN_GROUP = 3;
/** A statement seen in this many places (observations or earlier sessions) becomes a memory. */
const PROMOTE_MIN_OCCURRENCES = 2;
const MAX_PROMOTIONS_PER_SESSION = 5;

function normalise(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();
}

/** A statement as promotion compares it (a memory promoted from it has it as its text). */
export const normaliseStatement = normalise;

/**
 * What a promoted memory the user forgot stood on when it was forgotten (store/forgetKeys.ts keeps
 * it, as ids, under a digest of its statement): the observations that said it and the summaries
 * that listed it then. They do not count towards promoting that statement again; what says it
 * after the forget does, as for any statement.
 */
export interface ForgottenStatement {
  observations: Set<number>;
  summaries: Set<number>;
}

/** The evidence forgotten with each of the statements (normalised) asked about; none for the others. */
export type ForgottenStatements = (keys: string[]) => Promise<Map<string, ForgottenStatement>>;

function hash(o: Observation): string {
  return createHash('sha1').update(`${o.type}\u0000${o.title ?? ''}\u0000${o.narrative ?? ''}\u0000${o.facts ?? ''}`).digest('hex').slice(0, 16);
}

/** The summariser's answer with every string in it as stored text (storedText: printable, redacted; its name too: it is stored as well). */
function redactSummary(result: SummaryResult): SummaryResult {
  return Object.fromEntries(Object.entries(result).map(([key, value]) => [key, typeof value === 'string' ? storedText(value) : value])) as SummaryResult;
}

const SUMMARY_FIELDS = ['request', 'completed', 'decisions', 'learned', 'next_steps', 'preferences'] as const;

/**
 * The summary's fields within `budget` tokens together (the summariser's name aside): what a
 * plugged-in summariser answers beyond its budget is cut, the shortest fields kept whole and the
 * rest cut to an equal share of what is left. Within the budget, the answer is kept as it is.
 */
function boundSummary(result: SummaryResult, budget: number): SummaryResult {
  const present = SUMMARY_FIELDS.filter((k) => typeof result[k] === 'string' && result[k] !== '');
  // A field of more characters than the budget can be tokens counts as longer than any share.
  const tokens = new Map(present.map((k) => [k, narrativeTokens(result[k], budget)]));
  if (present.reduce((n, k) => n + Math.min(tokens.get(k)!, budget + 1), 0) <= budget) return result;
  const out: SummaryResult = { ...result };
  let left = Math.max(0, Math.floor(budget));
  const byLength = [...present].sort((a, b) => tokens.get(a)! - tokens.get(b)!);
  byLength.forEach((k, i) => {
    const given = Math.min(tokens.get(k)!, Math.floor(left / (byLength.length - i)));
    if (given < tokens.get(k)!) out[k] = truncateToTokens(cutText(result[k]!, budget * 16), given) || null;
    left -= given;
  });
  return out;
}

export interface CompressionContext {
  /** The repositories of the session's project: a session is a key within one project. */
  repos: ProjectRepositories;
  summariser: Summariser;
  summaryBudgetTokens: number;
  /** Statements whose promoted memory was forgotten, with the evidence they were forgotten with. */
  forgottenStatements: ForgottenStatements;
}

/**
 * Observations a summary cannot leave out whatever else the session held: outcomes (tasks, test
 * runs, failed commands: a test still failing at the end is the next step), decisions and commits.
 */
function isKey(o: Observation): boolean {
  if (o.type === 'decision' || o.type === 'commit' || o.type === 'task') return true;
  if (o.type !== 'terminal') return false;
  return /failed \(exit/.test(o.title ?? '') || parseJson<string[]>(o.concepts, []).includes('test');
}

/** A narrative's tokens; one longer than `budget` tokens can be (more characters) is counted as longer than any share. */
function narrativeTokens(narrative: string | null, budget: number): number {
  if (!narrative) return 0;
  return narrative.length > budget * 16 ? Number.MAX_SAFE_INTEGER : countTokens(narrative);
}

/**
 * The summariser's input, bounded to `budget` tokens: the key observations first (see isKey),
 * then the rest newest first. Each is counted first without its narrative, so a long session
 * drops as few observations as it can (every file edited is still named); the tokens left are
 * then shared out among their narratives, the shortest whole and the rest cut to an equal share.
 */
function summariserInput(observations: Observation[], budget: number): Observation[] {
  const newestFirst = [...observations].sort((a, b) => b.created_at_epoch - a.created_at_epoch || b.id - a.id);
  const ordered = [...newestFirst.filter(isKey), ...newestFirst.filter((o) => !isKey(o))];
  const kept: { o: Observation; narrative: number }[] = [];
  let used = 0;
  for (const o of ordered) {
    if (used >= budget) break;
    const cost = countTokens([o.title, o.facts].filter(Boolean).join('\n')) + 1;
    if (used + cost > budget && kept.length > 0) continue;
    kept.push({ o, narrative: narrativeTokens(o.narrative, budget) });
    used += cost;
  }
  // Water-filling: narratives shortest first, each whole if it fits in an equal share of what is left.
  let left = Math.max(0, budget - used);
  const share = new Map<Observation, number>();
  const byLength = kept.filter((k) => k.narrative > 0).sort((a, b) => a.narrative - b.narrative);
  byLength.forEach((k, i) => {
    const allowed = Math.floor(left / (byLength.length - i));
    const given = Math.min(k.narrative, allowed);
    share.set(k.o, given);
    left -= given;
  });
  return kept.map(({ o, narrative }) => {
    if (!o.narrative || narrative <= (share.get(o) ?? 0)) return o;
    const cut = truncateToTokens(o.narrative, share.get(o) ?? 0);
    return { ...o, narrative: cut || null };
  });
}

/**
 * The session's observations by the branch they were recorded on, in the order the session
 * first worked on each: a session that switched branch (an agent naming its own session id across
 * a checkout) is summarised on each branch from what it did there, so a caller on either branch
 * finds that branch's work, and neither finds the other's (model/branches.ts). An observation
 * with no branch belongs to the branch the session was on when it was recorded (the first one
 * named, before any is); a session that named none has one part, with no branch.
 */
export function branchParts(observations: Observation[]): Array<{ branch: string | null; observations: Observation[] }> {
  const inOrder = [...observations].sort((a, b) => a.created_at_epoch - b.created_at_epoch || a.id - b.id);
  let current = inOrder.find((o) => o.branch)?.branch ?? null;
  const parts = new Map<string | null, Observation[]>();
  for (const o of inOrder) {
    if (o.branch) current = o.branch;
    const part = parts.get(current);
    if (part) part.push(o);
    else parts.set(current, [o]);
  }
  return [...parts].map(([branch, list]) => ({ branch, observations: list }));
}

/** Commits on a session's branch since its part there began that other sessions hold (see SummaryContext.commitsElsewhere). */
async function commitsOfOtherSessions(repos: ProjectRepositories, sessionId: string, part: { branch: string | null; observations: Observation[] }): Promise<Observation[]> {
  if (part.branch === null || !part.observations.some((o) => o.type === 'edit')) return [];
  const began = part.observations.reduce((t, o) => Math.min(t, o.created_at_epoch), Infinity);
  return (await repos.observations.commitsSince(part.branch, began)).filter((o) => o.memory_session_id !== sessionId);
}

export async function compressSession(ctx: CompressionContext, sessionId: string, reason: SessionEndReason): Promise<SessionSummary | null> {
  const { repos } = ctx;
  const observations = await repos.observations.inSession(sessionId);
  if (observations.length === 0) return null;
  const project = repos.project;
  const scope = { project };
  const now = Date.now();

  const prompts = (await repos.prompts.recent(sessionId, 5)).reverse();
  const parts = branchParts(observations);
  const written: Array<{ branch: string | null; observations: Observation[]; fields: SummaryFields; writtenBy: string }> = [];
  for (const part of parts) {
    const input = summariserInput(part.observations, ctx.summaryBudgetTokens * 8);
    // A plugged-in summariser (the extension's language model) may quote a credential from its
    // context, or put one together: every text field of its answer is redacted before it is
    // stored, and then kept to the budget (a model may answer with more than it was asked for).
    const commitsElsewhere = await commitsOfOtherSessions(repos, sessionId, part);
    const context = commitsElsewhere.length > 0 ? { prompts, commitsElsewhere } : { prompts };
    const { summariser: writtenBy, ...fields } = boundSummary(redactSummary(await ctx.summariser.summarise(input, ctx.summaryBudgetTokens, context)), ctx.summaryBudgetTokens);
    written.push({ ...part, fields, writtenBy: writtenBy ?? ctx.summariser.name });
  }
  const branchOf = new Map(parts.flatMap((p) => p.observations.map((o) => [o.id, p.branch] as const)));

  // The merge, the promotion and the summaries' write go alone in the store (every process): two
  // ends of one session at once (two windows, an idle timer and End Session) leave one summary
  // per branch, and merge and promote once. The summariser's calls above stay outside: they may take a while.
  return repos.summaries.exclusive(async () => {
    // Read again: what an end of the session that finished meanwhile merged is not merged twice,
    // nor what an end killed before it marked a merge's sources (it wrote no summary, so the sweep
    // of sessions left open ends the session again): those sources are marked now.
    const asked = new Set(observations.map((o) => o.id));
    const merged = new Set((await repos.observations.mergedInSession(sessionId)).flatMap((m) => (m.compressed_sources ?? []).map((c) => c.source_observation_id)));
    const active = (await repos.observations.inSession(sessionId)).filter((o) => o.status === 'active');
    await repos.observations.markMerged(active.filter((o) => merged.has(o.id)).map((o) => o.id));
    await mergeObservations(repos, active.filter((o) => asked.has(o.id) && !merged.has(o.id)), sessionId, now, branchOf);
    // Promotion before the summaries: a session with a summary is not ended again by the sweep of
    // sessions left open, so a process killed before it wrote them leaves the session to that
    // sweep, which promotes again what was not promoted (a statement already a memory is known,
    // and not promoted twice); the summaries are written once everything else is.
    for (const part of parts) await promoteRecurring(repos, part.observations, scope, sessionId, part.branch, now, ctx.forgottenStatements);
    // Each branch's summary keeps its id when the session is ended again. One of a branch the
    // session no longer has a part on (it was summarised with no branch, then named one: its
    // observations joined that branch's part, see branchParts) passes its id on to a new part,
    // so an id a caller holds still names the session's work.
    const before = new Map((await repos.summaries.ofSessionsOnBranches([sessionId])).map((s) => [s.branch, s.summary.id]));
    const spare = [...before].filter(([branch]) => !written.some((w) => w.branch === branch)).map(([, id]) => id);
    const needed = written.filter((w) => !before.has(w.branch)).length;
    const fresh = [...spare.slice(0, needed), ...(await repos.ids.allocate(Math.max(0, needed - spare.length)))];
    const rows = written.map((w) => summaryRow(repos, sessionId, before.get(w.branch) ?? fresh.shift()!, w.branch, w.observations, w.fields, w.writtenBy, reason, now));
    await repos.summaries.replaceOfSession(sessionId, rows);
    // The summary of the branch the session was on last stands for the session.
    const last = observations.reduce((a, b) => (b.created_at_epoch > a.created_at_epoch || (b.created_at_epoch === a.created_at_epoch && b.id > a.id) ? b : a));
    return (rows.find((r) => r.branch === branchOf.get(last.id)) ?? rows[rows.length - 1]).summary;
  });
}

/** A summary of the session's observations on one branch, as stored. */
function summaryRow(
  repos: ProjectRepositories,
  sessionId: string,
  id: number,
  branch: string | null,
  observations: Observation[],
  fields: SummaryFields,
  writtenBy: string,
  reason: SessionEndReason,
  now: number,
): { summary: SessionSummary; row: Record<string, unknown>; branch: string | null; files: string[] } {
  const project = repos.project;
  const started = smallest(observations.map((o) => o.created_at_epoch));
  const summary: SessionSummary = {
    id,
    memory_session_id: sessionId,
    project,
    ...fields,
    created_at: new Date(now).toISOString(),
    created_at_epoch: now,
  };
  const files = [...new Set(observations.flatMap(observationFiles))];
  const row = {
    ...summary,
    branch,
    started_at_epoch: started,
    end_reason: reason,
    observation_count: observations.length,
    source_ids: JSON.stringify(observations.map((o) => o.id).sort((a, b) => a - b)),
    summariser: writtenBy,
    status: 'active',
  };
  return { summary, row, branch, files };
}

/** Groups of observations of one type on the same files and branch become one merged observation. */
async function mergeObservations(repos: ProjectRepositories, observations: Observation[], sessionId: string, now: number, branchOf: Map<number, string | null>): Promise<void> {
  const groups = new Map<string, Observation[]>();
  for (const o of observations) {
    const files = observationFiles(o).sort();
    if (files.length === 0 || o.type === 'commit') continue;
    // Never across branches: a merged observation holds on one branch (see branchParts).
    const key = `${o.type}\u0000${branchOf.get(o.id) ?? ''}\u0000${files.join('\u0000')}`;
    addToList(groups, key, o);
  }
  const mergeable = [...groups.values()].filter((g) => g.length >= MERGE_MIN_GROUP);
  if (mergeable.length === 0) return;
  const ids = await repos.ids.allocate(mergeable.length);
  const merged: Observation[] = [];
  const sourceIds: number[] = [];
  mergeable.forEach((group, k) => {
    group.sort((a, b) => a.created_at_epoch - b.created_at_epoch || a.id - b.id);
    const first = group[0];
    const facts = [...new Set(group.flatMap((o) => statements(o)))].slice(0, 20);
    const titles = [...new Set(group.map((o) => observationTitle(o)))];
    const sources: CompressedSource[] = group.map((o) => ({
      compressed_observation_id: ids[k],
      source_observation_id: o.id,
      source_hash: hash(o),
      source_created_at_epoch: o.created_at_epoch,
      compression_session_id: sessionId,
      created_at_epoch: now,
    }));
    merged.push({
      id: ids[k],
      memory_session_id: sessionId,
      content_session_id: first.content_session_id,
      project: first.project,
      type: 'merged',
      title: `${titles[0]}${group.length > 1 ? ` (${group.length} ${first.type} events)` : ''}`,
      subtitle: titles.length > 1 ? truncateToTokens(titles.slice(1, 6).join('; '), 80) : null,
      narrative: truncateToTokens(group.map((o) => o.narrative).filter(Boolean).join('\n'), 400) || null,
      facts: facts.length > 0 ? JSON.stringify(facts) : null,
      concepts: first.concepts,
      files_read: first.files_read,
      files_modified: first.files_modified,
      commit_sha: null,
      branch: first.branch,
      status: 'active',
      created_at: new Date(group[group.length - 1].created_at_epoch).toISOString(),
      created_at_epoch: group[group.length - 1].created_at_epoch,
      last_accessed_epoch: null,
      discovery_tokens: group.reduce((s, o) => s + (o.discovery_tokens ?? 0), 0),
      compressed_sources: sources,
    });
    append(sourceIds, group.map((o) => o.id));
  });
  await repos.observations.write(merged);
  await repos.observations.markMerged(sourceIds);
}

/**
 * Decision and convention statements that recur become memories with temporal facts. A memory
 * is dated from its evidence (the latest observation that says it; a git import's are the
 * commits' dates), not from when the session was summarised: what it supersedes, or what
 * supersedes it, is decided by when it was said (supersede.ts), whatever the order sessions end in.
 * A session on a branch other than the default one promotes memories of that branch: what it
 * decided holds there until it is said on the default branch too (then it is promoted again,
 * project-wide).
 */
async function promoteRecurring(
  repos: ProjectRepositories,
  observations: Observation[],
  scope: { project: string },
  sessionId: string,
  sessionBranch: string | null,
  now: number,
  forgottenStatements: ForgottenStatements,
): Promise<void> {
  const branch = memoryBranch(sessionBranch, repos.defaultBranch);
  const candidates = new Map<string, { text: string; evidence: Map<number, number>; files: Set<string>; kind: 'decision' | 'convention' }>();
  for (const o of observations) {
    for (const s of statements(o)) {
      const decision = isDecision(s, o);
      if (!decision && !PREFERENCE_PATTERN.test(s)) continue;
      const key = normalise(s);
      const c = candidates.get(key) ?? { text: s, evidence: new Map<number, number>(), files: new Set<string>(), kind: decision ? 'decision' : 'convention' };
      c.evidence.set(o.id, o.created_at_epoch);
      for (const f of observationFiles(o)) c.files.add(f);
      candidates.set(key, c);
    }
  }
  if (candidates.size === 0) return;

  // Recurrence across sessions: the same statement in earlier summaries of the project.
  const earlier = (await repos.summaries.statements(sessionId)).map((s) => ({ id: s.id, text: normalise(s.text) }));
  const memories = await repos.memories.list({ includeSuppressed: true });
  // Known in this session's reach: a branch's memory does not stand for the project's. A
  // superseded one is not: what was replaced and is decided again is promoted again, from what
  // said it since it was replaced (older evidence is what the replacement overruled).
  const inReach = memories.filter((m) => projectWideBranch(m.branch, repos.defaultBranch) || m.branch === branch);
  const known = new Set(inReach.filter((m) => m.status !== 'superseded').map((m) => normalise(m.text)));
  const replacedAt = new Map<string, number>();
  for (const m of inReach) {
    const key = normalise(m.text);
    if (m.status === 'superseded' && !known.has(key)) replacedAt.set(key, Math.max(replacedAt.get(key) ?? 0, m.valid_to_epoch ?? m.updated_at_epoch));
  }
  // A statement whose memory the user forgot is promoted again only from what said it since.
  const forgotten = await forgottenStatements([...candidates.keys()].filter((key) => !known.has(key)));

  let promoted = 0;
  for (const [key, c] of candidates) {
    if (promoted >= MAX_PROMOTIONS_PER_SESSION) break;
    if (known.has(key)) continue;
    const gone = forgotten.get(key);
    // Earlier observations that say the same are evidence too.
    for (const o of await repos.observations.mentioning(c.text, sessionId, 50)) c.evidence.set(o.id, o.created_at_epoch);
    if (gone) for (const id of [...c.evidence.keys()]) if (gone.observations.has(id)) c.evidence.delete(id);
    const replaced = replacedAt.get(key);
    if (replaced !== undefined) for (const [id, at] of [...c.evidence]) if (at <= replaced) c.evidence.delete(id);
    const summaries = replaced !== undefined ? [] : earlier.filter((t) => !gone?.summaries.has(t.id) && t.text.includes(key));
    const occurrences = c.evidence.size + summaries.length;
    if (occurrences < PROMOTE_MIN_OCCURRENCES || c.evidence.size === 0) continue;
    const saidAt = Math.max(0, largest(c.evidence.values()));
    const [id] = await repos.ids.allocate(1);
    const title = c.text.length > 80 ? `${cutText(c.text, 77)}...` : c.text;
    // Evidence dated after now (a client's clock) counts as said now.
    const said = Number.isFinite(saidAt) && saidAt > 0 ? Math.min(saidAt, now) : now;
    const memory = buildMemory(id, { title, text: c.text, memory_type: c.kind, files: [...c.files].slice(0, 20), session_id: sessionId, branch }, scope, said, 'recurring');
    memory.updated_at_epoch = now;
    for (const f of memory.temporal_facts ?? []) f.learned_at_epoch = now;
    await applyMemoryFacts(repos.memories, memory, [...c.evidence.keys()]);
    known.add(key);
    promoted++;
  }
}
