// Retrieval that knows time, shared by recall_context and retrieve_memory (one order for both,
// rankInTime): superseded memories left out unless the question asks for history ("what did we
// use before", "when did we switch"), and then ranked by relevance with the current ones (never
// above the memory that replaced them), marked as history with their dates. Memories with an unreviewed possible conflict are marked as such. A caller
// on a branch gets that branch's memories over the project-wide ones they replace there (the
// branch memory lists them in `supersedes`, compress/supersede.ts): those are history on that
// branch only, and current everywhere else.

import type { SearchHit } from '../api';
import { projectWideBranch } from '../model/branches';
import type { Memory } from '../model/records';
import { matches } from '../model/limits';
import type { ToolContext } from './types';

const HISTORY_QUESTION =
  /\b(?:before|previous(?:ly)?|used to|formerly|former|earlier|history|historical|histories|originally|original|superseded|replaced|prior|old(?:er)?|past|any ?more|no longer|when did|since when|what changed|changed from|switch(?:ed)? from|mov(?:e|ed) from|migrat\w* from)\b/i;

/** Whether a question asks about how things were, not only how they are. */
export function asksForHistory(query: string): boolean {
  return HISTORY_QUESTION.test(query);
}

export interface TimedHit {
  hit: SearchHit;
  /** The memory behind an L2 memory cell, else null. */
  memory: Memory | null;
  /** Superseded: shown only for history questions, marked as history. */
  history: boolean;
  /** How the item stands in time, in words for the tool text ("superseded by memory 2 on ..."), or null. */
  note: string | null;
  /** For a history item: the memory that replaced it (here or on the caller's branch), else null. */
  replacedBy: number | null;
}

function day(epoch: number | null): string {
  return epoch === null ? '?' : new Date(epoch).toISOString().slice(0, 10);
}

/**
 * The words a tool prints about a memory's place in time, or null when there is nothing to say.
 * `isCurrent` tells whether the other side of a conflict still holds: a conflict with a memory
 * that became history (or was suppressed) is no question any more and is not shown.
 */
export function timeNote(memory: Memory, history: boolean, isCurrent: (id: number) => boolean = () => true, shadowedBy: Memory | null = null, defaultBranch: string | null = null): string | null {
  const parts: string[] = [];
  if (memory.status === 'superseded') {
    parts.push(`HISTORY: superseded by memory ${memory.superseded_by ?? '?'} on ${day(memory.valid_to_epoch)}; held from ${day(memory.created_at_epoch)} to ${day(memory.valid_to_epoch)}`);
  } else if (shadowedBy) {
    parts.push(`HISTORY on branch ${shadowedBy.branch ?? '?'}: replaced here by memory ${shadowedBy.id}; still current project-wide`);
  } else if (!projectWideBranch(memory.branch, defaultBranch) && memory.supersedes && memory.supersedes.length > 0) {
    parts.push(`CURRENT on branch ${memory.branch} since ${day(memory.created_at_epoch)}; replaces memory ${memory.supersedes.join(', ')} on that branch`);
  } else if (memory.supersedes && memory.supersedes.length > 0) {
    parts.push(`CURRENT since ${day(memory.created_at_epoch)}; replaces memory ${memory.supersedes.join(', ')}`);
  } else if (history) {
    parts.push(`CURRENT since ${day(memory.created_at_epoch)}`);
  }
  const open = (memory.conflicts ?? []).filter((c) => c.resolution === 'open' && isCurrent(c.id));
  if (open.length > 0) parts.push(`POSSIBLE CONFLICT with memory ${open.map((c) => c.id).join(', ')} (${open[0].reason}); not reviewed, check before relying on it`);
  return parts.length > 0 ? parts.join('; ') : null;
}

/**
 * For a caller on a branch: the project-wide memories among `found` that a current memory of that
 * branch replaces there, each with that memory. Read only when there is one to ask about.
 */
async function shadowsOnBranch(ctx: ToolContext, found: Memory[], defaultBranch: string | null): Promise<Map<number, Memory>> {
  const out = new Map<number, Memory>();
  const { branch } = ctx.scope;
  const asked = new Set(found.filter((m) => projectWideBranch(m.branch, defaultBranch) && m.status === 'active').map((m) => m.id));
  if (!branch || projectWideBranch(branch, defaultBranch) || asked.size === 0) return out;
  // Only the branch's current memories that replace others are read, not the project's.
  for (const m of await ctx.engine.listMemories(ctx.scope, { replacingOnBranch: true })) {
    if (m.branch !== branch || m.status !== 'active') continue;
    for (const id of m.supersedes ?? []) if (asked.has(id) && !out.has(id)) out.set(id, m);
  }
  return out;
}

/** Searches the caller's scope and places the hits in time as described above; rankInTime orders them. */
export async function searchInTime(ctx: ToolContext, query: string, limit: number, historyQuery = query): Promise<TimedHit[]> {
  const history = asksForHistory(historyQuery);
  const hits = matches(await ctx.engine.search(query, { scope: ctx.scope, limit, includeSuperseded: history }));
  // A team item's source id is its sharer's, not a memory of this store.
  const own = (h: SearchHit): boolean => h.cell.source_kind === 'memory' && h.origin?.store !== 'team';
  const memoryIds = hits.filter(own).map((h) => h.cell.source_id);
  const memories = new Map((memoryIds.length > 0 ? await ctx.engine.getMemories(memoryIds, ctx.scope) : []).map((m) => [m.id, m]));
  // The other sides of open conflicts, to leave out those no longer current (stored before their
  // conflicts were closed on supersession, or suppressed since).
  const others = [...new Set([...memories.values()].flatMap((m) => (m.conflicts ?? []).filter((c) => c.resolution === 'open').map((c) => c.id)))].filter((id) => !memories.has(id));
  const status = new Map([...memories.values(), ...(others.length > 0 ? await ctx.engine.getMemories(others, ctx.scope, { includeSuppressed: true }) : [])].map((m) => [m.id, m.status]));
  const isCurrent = (id: number): boolean => status.get(id) === 'active';
  // The project's default branch as the engine knows it (its records hold project-wide), not only as this caller names it.
  const defaultBranch = memories.size > 0 ? await ctx.engine.defaultBranchOf(ctx.scope) : null;
  const shadows = await shadowsOnBranch(ctx, [...memories.values()], defaultBranch);
  const timed = hits.map((hit): TimedHit => {
    const memory = own(hit) ? (memories.get(hit.cell.source_id) ?? null) : null;
    const shadowedBy = memory ? (shadows.get(memory.id) ?? null) : null;
    const superseded = memory?.status === 'superseded' || hit.cell.status === 'superseded' || shadowedBy !== null;
    const by = shadowedBy?.id ?? memory?.superseded_by ?? null;
    return { hit, memory, history: superseded, note: memory ? timeNote(memory, history, isCurrent, shadowedBy, defaultBranch) : null, replacedBy: superseded ? by : null };
  });
  // A superseded cell can only come back for a history question, which asks about it. In the
  // search's order: the tools rank with rankInTime once they know each hit's weight.
  return history ? timed : timed.filter((t) => !t.history);
}

/**
 * The one order of both tools (recall_context's items, retrieve_memory's facts): each hit's
 * relevance times its weight (freshness: a changed or off-branch record a little lower), then
 * ranked by it, what holds now and what it replaced together, a replaced memory never above the
 * memory that replaced it (see rankedWithHistory). Each hit's score becomes the one it is ranked
 * by, so ranks and scores agree.
 */
export function rankInTime(timed: TimedHit[], weight: (t: TimedHit) => number = () => 1): TimedHit[] {
  const weighed = timed.map((t) => {
    const w = weight(t);
    return w === 1 ? t : { ...t, hit: { ...t.hit, score: t.hit.score * w } };
  });
  return rankedWithHistory(weighed);
}

/**
 * The hits of a history question ranked by relevance, what holds now and what it replaced
 * together, so that ranks and scores agree; a replaced memory never above the one that replaced
 * it (where both were found, its score is at most that one's, and on a tie what holds now goes
 * first): "what did we use before X" shows X, then what X replaced.
 */
function rankedWithHistory(timed: TimedHit[]): TimedHit[] {
  const score = new Map(timed.map((t) => [t, t.hit.score]));
  const byMemory = new Map(timed.filter((t) => t.memory).map((t) => [t.memory!.id, t]));
  const replaced = timed.filter((t) => t.history && t.replacedBy !== null);
  // A chain (A replaced by B, B by C) settles within as many passes as it has links.
  for (let pass = 0, changed = replaced.length > 0; changed && pass < timed.length; pass++) {
    changed = false;
    for (const t of replaced) {
      const newer = byMemory.get(t.replacedBy!);
      if (newer && score.get(newer)! < score.get(t)!) {
        score.set(t, score.get(newer)!);
        changed = true;
      }
    }
  }
  // Stable: equal scores and kinds keep the search's order.
  return timed
    .map((t) => (score.get(t) === t.hit.score ? t : { ...t, hit: { ...t.hit, score: score.get(t)! } }))
    .sort((a, b) => b.hit.score - a.hit.score || Number(a.history) - Number(b.history));
}
