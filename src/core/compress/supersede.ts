// Memories that stay true. A new memory supersedes an older one of the same project and scope
// (both project-wide, or both of one branch) when
//   - it carries the same topic_key (an agent or person said "this is the same topic"),
//   - it names the older one in `supersedes` (an agent said what it replaces), or
//   - its facts contradict every current fact of the older one, about the same files: same
//     subject and predicate with another object, or a statement that the older object was
//     replaced ("switched from A to B", "A is deprecated", "we no longer use A"; with no subject
//     named, the subject of the fact it ends, about the same files only).
// The older memory gets status 'superseded' (a suppressed one stays suppressed), valid_to_epoch
// and superseded_by; its facts close, and its open conflicts close on both sides (it is in
// conflict with nothing current any more). "Older" is by when a memory was said: a memory
// promoted from old evidence does not retire a newer one, it is history from the start.
// Where the words are not enough (the same subject with other files, or decisions about the
// same files that disagree without saying so), both memories are flagged with a possible
// conflict for a person to review instead of a guess. Nothing is deleted. An edit is weighed
// the same way as a write (said at the edit), and so is a memory given back by Unsuppress;
// suppressing a memory makes what it had superseded hold again (setMemoryStatus), so that no
// memory is history of one nobody can read.
//
// A memory of a branch and a project-wide one (a memory with no branch, or of the default
// branch) never retire each other: what a branch decided holds on that branch only, until it is
// recorded project-wide (merged). Where the same rules say one replaces the other, the branch
// memory shadows the project-wide one, whichever was said first: it lists it in `supersedes`,
// and the project-wide one stays current with its facts open; retrieval on that branch leaves
// it out as history there (tools/timeline.ts). Memories of two branches never meet.

import { projectWideBranch } from '../model/branches';
import type { ConflictChoice, Memory, MemoryConflict, TemporalFact, TopicTrace } from '../model/records';
import { FilterError } from '../store/filters';
import { parseJson } from '../store/mapping';
import type { MemoryRepository } from '../store/repos/memories';
import { NO_LONGER, WITH, exclusiveObjects, extractFacts, objectRelation, sameObject } from './facts';
import type { ExtractedFact } from './facts';
import { cutText } from '../tokens';

const DECIDING_TYPES = new Set(['decision', 'convention', 'preference']);
// Wording that says something changed, without a fact the extractor could read.
const CHANGE_WORDS = /\b(?:mov(?:e|ed)|switch(?:ed)?|migrat\w*|replac\w*|no longer|instead|deprecat\w*|drop(?:ped)?|abandon\w*|revert\w*|stop(?:ped)?)\b/i;

export interface SupersedeOptions {
  /** Ids of memories the caller says this one replaces; each must exist in the project. */
  supersedes?: number[];
}

function filesOf(m: Memory): string[] {
  return parseJson<string[]>(m.files, []);
}

/** Same files: both about none, or about at least one common file. */
function sameFiles(a: Memory, b: Memory): boolean {
  const fa = filesOf(a);
  const fb = new Set(filesOf(b));
  if (fa.length === 0 || fb.size === 0) return fa.length === 0 && fb.size === 0;
  return fa.some((f) => fb.has(f));
}

function sharesFiles(a: Memory, b: Memory): boolean {
  const fb = new Set(filesOf(b));
  return filesOf(a).some((f) => fb.has(f));
}


/**
 * How a new memory meets another one: in the same scope, as a branch memory over a project-wide
 * one ('shadows'), as a project-wide one under a branch memory ('shadowed'), or not at all.
 */
type Meeting = 'same' | 'shadows' | 'shadowed' | null;

/** `defaultBranch`: the repository's own default branch where known (model/branches.ts). */
function meeting(memory: Memory, other: Memory, defaultBranch: string | null): Meeting {
  const projectWide = (m: Memory): boolean => projectWideBranch(m.branch, defaultBranch);
  if (memory.branch === other.branch || (projectWide(memory) && projectWide(other))) return 'same';
  if (projectWide(other)) return 'shadows';
  return projectWide(memory) ? 'shadowed' : null;
}

/** Records that branch memory `shadower` replaces project-wide memory `id` on its branch. */
function addShadow(shadower: Memory, id: number): void {
  shadower.supersedes = [...new Set([...(shadower.supersedes ?? []), id])];
}

function closeFact(f: TemporalFact, at: number): void {
  if (f.status !== 'current') return;
  f.status = 'closed';
  f.valid_to_epoch = at;
}

/**
 * Marks `older` superseded by `newer` at `at` (in memory; the caller writes both). A suppressed
 * memory stays suppressed (hidden from answers, as a person chose), with the link recorded.
 */
export function markSuperseded(older: Memory, newer: Memory, at: number): void {
  if (older.status !== 'suppressed') older.status = 'superseded';
  older.superseded_by = newer.id;
  older.valid_to_epoch = at;
  older.updated_at_epoch = Math.max(older.updated_at_epoch, at);
  for (const f of older.temporal_facts ?? []) closeFact(f, at);
  for (const c of older.conflicts ?? []) if (c.id === newer.id && c.resolution === 'open') Object.assign(c, { resolution: 'superseded', resolved_at_epoch: at });
  newer.supersedes = [...new Set([...(newer.supersedes ?? []), older.id])];
  for (const c of newer.conflicts ?? []) if (c.id === older.id && c.resolution === 'open') Object.assign(c, { resolution: 'superseded', resolved_at_epoch: at });
}

/**
 * A memory that became history is in conflict with nothing current any more: its open conflicts
 * close as 'superseded' (at its valid_to_epoch), on both sides. Returns the other memories it
 * changed (found through `lookup`; a missing one is left alone).
 */
export function closeConflictsOf(m: Memory, lookup: (id: number) => Memory | undefined): Memory[] {
  const at = m.valid_to_epoch ?? m.updated_at_epoch;
  const others: Memory[] = [];
  for (const c of m.conflicts ?? []) {
    if (c.resolution !== 'open') continue;
    Object.assign(c, { resolution: 'superseded', resolved_at_epoch: at });
    const other = lookup(c.id);
    const mirror = other?.conflicts?.find((x) => x.id === m.id && x.resolution === 'open');
    if (other && mirror) {
      Object.assign(mirror, { resolution: 'superseded', resolved_at_epoch: at });
      others.push(other);
    }
  }
  return others;
}

function flagConflict(a: Memory, b: Memory, reason: string, at: number): void {
  for (const [x, y] of [[a, b], [b, a]] as const) {
    const list: MemoryConflict[] = x.conflicts ?? [];
    if (list.some((c) => c.id === y.id)) continue;
    list.push({ id: y.id, reason, detected_at_epoch: at, resolution: 'open', resolved_at_epoch: null });
    x.conflicts = list;
  }
}

/** Does extracted fact `e` (stored as `f`) end the older current fact `old`? */
function ends(e: ExtractedFact, f: TemporalFact, old: TemporalFact): boolean {
  if (old.status !== 'current') return false;
  if (e.replaces && sameObject(old.object, e.replaces) && (!e.subject || e.subject === old.subject)) return true;
  return f.subject === old.subject && f.predicate === old.predicate && f.predicate !== NO_LONGER && f.object !== old.object && exclusiveObjects(f.predicate, f.object, old.object);
}

/**
 * Decides what `memory` supersedes or conflicts with, extends its topic's trace, stores it and
 * rewrites the older memories it changed. Checks `options.supersedes` before writing anything.
 *
 * `memory.created_at_epoch` is when what it says was last said (for a memory promoted from a
 * session, its latest evidence, which may be older than memories stored before it); its
 * `updated_at_epoch` is when it is stored. A current memory newer than that evidence is not
 * retired by it: where the two contradict about the same files the newer one holds and this
 * one is history from the start; elsewhere they are flagged. So the outcome does not depend
 * on the order in which sessions are summarised.
 */
export async function applyMemoryFacts(memories: MemoryRepository, memory: Memory, sourceIds: number[], options: SupersedeOptions = {}): Promise<Memory> {
  // What the other memories say is read and the new memory written as one step (see exclusive).
  return memories.exclusive(() => supersedeAndWrite(memories, memory, sourceIds, options));
}

async function supersedeAndWrite(memories: MemoryRepository, memory: Memory, sourceIds: number[], options: SupersedeOptions): Promise<Memory> {
  const at = memory.created_at_epoch;
  const now = Math.max(memory.updated_at_epoch, at);
  const all = await memories.list({ includeSuppressed: true });
  const byId = new Map(all.map((m) => [m.id, m]));
  const named = [...new Set(options.supersedes ?? [])];
  for (const id of named) {
    const older = byId.get(id);
    if (!older) throw new FilterError(`supersedes: no memory ${id} in project ${memories.project}; pass ids from get_observations or recall_context`);
    if (older.status === 'superseded' || older.superseded_by !== null) throw new FilterError(`supersedes: memory ${id} was already superseded by memory ${older.superseded_by ?? '?'}; name that one instead`);
    // Two branches' memories never meet: naming one does not retire it either.
    if (meeting(memory, older, memories.defaultBranch) === null) throw new FilterError(`supersedes: memory ${id} is of branch '${older.branch}', and a memory of branch '${memory.branch}' never replaces another branch's; name a memory of this branch or a project-wide one`);
  }
  const changed = settle(memories, memory, all, { at, now, named, topic: memory.topic_key, factsTopic: memory.topic_key });
  extendTopicTrace(memory, all, sourceIds, now, (m) => meeting(memory, m, memories.defaultBranch));
  // The new memory first: a successor link never points at a memory that is not stored.
  await memories.write(memory, { source_ids: sourceIds });
  for (const m of changed.values()) await memories.rewrite(m);
  return memory;
}

/** How settle weighs a memory against the others. */
interface Settling {
  /** When what the memory says was said: a memory said after it is not retired by it. */
  at: number;
  /** When it is stored. */
  now: number;
  /** Ids of memories it replaces by name (checked by the caller). */
  named: number[];
  /** The topic_key given for it, which retires the memories of that key; null: none. */
  topic: string | null;
  /** The topic its facts were read with (extractFacts), to read them again alike. */
  factsTopic: string | null;
}

/**
 * What a memory said now (written, edited, or given back by Unsuppress) supersedes or conflicts
 * with, and what supersedes it, as described at the top of this file: `memory` and the others in
 * `all` are changed in place (under the memories lock, see exclusive); returns the others changed,
 * for the caller to write with the memory. `all` may hold a stored copy of `memory`: it is not
 * weighed against itself.
 */
function settle(memories: MemoryRepository, memory: Memory, all: Memory[], how: Settling): Map<number, Memory> {
  const { at, now, named } = how;
  const byId = new Map(all.map((m) => [m.id, m]));
  const meets = (m: Memory): Meeting => meeting(memory, m, memories.defaultBranch);
  const explicitTopic = how.topic;
  const facts = memory.temporal_facts ?? [];
  const extracted = extractFacts(`${memory.title}. ${memory.text}`, how.factsTopic);
  const candidates = all.filter((m) => m.id !== memory.id && m.status === 'active' && meets(m) !== null);
  const newerThanThis = (m: Memory): boolean => m.created_at_epoch > at;
  const superseded = new Map<number, Memory>();
  const changed = new Map<number, Memory>();
  // Newer current memories that end this one (it is history from the start), newest first wins.
  const successors: Memory[] = [];
  // Memories met across the branch line: settled by shadowing, not retired (see the header).
  const shadowed = new Set<number>();
  const shadow = (other: Memory): void => {
    shadowed.add(other.id);
    if (meets(other) === 'shadows') addShadow(memory, other.id);
    else {
      addShadow(other, memory.id);
      changed.set(other.id, other);
    }
  };
  for (const id of named) {
    const older = byId.get(id)!;
    // Across the branch line, named or not, nothing retires: a project-wide memory naming a
    // branch one is shadowed by it there, as with the same topic_key.
    if (meets(older) !== 'same') shadow(older);
    else superseded.set(id, older);
  }
  if (explicitTopic) {
    for (const m of candidates) {
      if (m.topic_key !== explicitTopic || superseded.has(m.id) || shadowed.has(m.id)) continue;
      if (meets(m) !== 'same') shadow(m);
      else if (newerThanThis(m)) successors.push(m);
      else superseded.set(m.id, m);
    }
  }

  // Facts: contradictions about the same files close the older fact; about other files they are a question.
  for (const other of candidates) {
    if (superseded.has(other.id) || shadowed.has(other.id) || successors.includes(other)) continue;
    const across = meets(other) !== 'same';
    const reversed = newerThanThis(other);
    const olds = other.temporal_facts ?? [];
    let closedHere = 0;
    // Across the branch line nothing closes: the facts each side would lose there.
    const endedOld = new Set<TemporalFact>();
    const endedOwn = new Set<TemporalFact>();
    let conflict: string | null = null;
    facts.forEach((f, i) => {
      const e = extracted[i];
      if (!e) return;
      for (const old of olds) {
        if (!ends(e, f, old)) continue;
        if (!sameFiles(memory, other)) {
          // README: facts end older facts "about the same files". About other files this is a
          // question for a person, and "switched from A to B" does not take the subject of a
          // fact about other files.
          conflict ??= e.replaces && !e.subject
            ? `'${f.object}' replaces '${e.replaces}', which '${old.subject}' ${old.predicate}, about different files`
            : `both say what '${old.subject}' ${old.predicate}: '${old.object}' and '${f.object}', about different files`;
          continue;
        }
        if (!e.subject && f.subject !== old.subject) {
          // "Switched from A to B" names no subject: it is the subject of the fact it ends.
          Object.assign(f, e.predicate === NO_LONGER ? { subject: old.subject, predicate: NO_LONGER, object: e.object } : { subject: old.subject, predicate: old.predicate });
        }
        closedHere++;
        if (across) {
          endedOld.add(old);
          endedOwn.add(f);
          continue;
        }
        // The newer word holds: this memory's fact closes when the other one is newer.
        if (reversed) closeFact(f, other.created_at_epoch);
        else closeFact(old, at);
      }
    });
    if (across && closedHere > 0) {
      // The project-wide side is shadowed when every fact of its that holds is ended there.
      const target = meets(other) === 'shadows' ? olds.filter((o) => o.status === 'current' && !endedOld.has(o)) : facts.filter((x) => x.status === 'current' && !endedOwn.has(x));
      if (target.length === 0) {
        shadow(other);
        continue;
      }
    } else if (closedHere > 0) {
      if (reversed) {
        if (facts.every((x) => x.status !== 'current')) successors.push(other);
        continue;
      }
      changed.set(other.id, other);
      if (olds.every((o) => o.status !== 'current')) superseded.set(other.id, other);
      else other.updated_at_epoch = now;
      continue;
    }
    conflict ??= possibleConflict(memory, other, facts);
    if (conflict) {
      flagConflict(memory, other, conflict, now);
      changed.set(other.id, other);
    }
  }
  const lookup = (id: number): Memory | undefined => (id === memory.id ? memory : byId.get(id));
  for (const older of superseded.values()) {
    markSuperseded(older, memory, at);
    changed.set(older.id, older);
    for (const o of closeConflictsOf(older, lookup)) if (o.id !== memory.id) changed.set(o.id, o);
  }
  const successor = successors.sort((a, b) => b.created_at_epoch - a.created_at_epoch || b.id - a.id)[0];
  if (successor) {
    markSuperseded(memory, successor, successor.created_at_epoch);
    memory.updated_at_epoch = now;
    changed.set(successor.id, successor);
    for (const o of closeConflictsOf(memory, lookup)) changed.set(o.id, o);
  }
  changed.delete(memory.id);
  return changed;
}

/** Why two memories may disagree though no fact says so, or null. */
function possibleConflict(memory: Memory, other: Memory, facts: TemporalFact[]): string | null {
  const olds = (other.temporal_facts ?? []).filter((f) => f.status === 'current');
  // "No longer uses A" says nothing against "uses B".
  for (const f of facts.filter((x) => x.predicate !== NO_LONGER)) {
    // "Must be documented" says nothing against "must be backwards compatible": other properties.
    // Where the words do not tell ("must be closed", "must be shut") it is a question. How a
    // thing is done ("with jitter") says nothing against another fact of it ("5 times").
    const disagree = (o: TemporalFact): boolean =>
      o.predicate === f.predicate ? objectRelation(f.predicate, o.object, f.object) !== 'independent' : o.predicate !== WITH && f.predicate !== WITH;
    const old = olds.find((o) => o.subject === f.subject && o.predicate !== NO_LONGER && !sameObject(o.object, f.object) && disagree(o));
    if (old) return `both are about '${f.subject}': '${old.predicate} ${old.object}' and '${f.predicate} ${f.object}'`;
  }
  if (!DECIDING_TYPES.has(memory.memory_type) || !DECIDING_TYPES.has(other.memory_type) || !sharesFiles(memory, other)) return null;
  const shared = filesOf(memory).filter((f) => filesOf(other).includes(f));
  const where = shared.slice(0, 3).join(', ');
  // How a thing is done ("with jitter") adds to what the other decided: no other fact of it.
  const said = facts.filter((f) => f.predicate !== WITH);
  const saidBefore = olds.filter((o) => o.predicate !== WITH);
  if (said.some((f) => saidBefore.some((o) => sameObject(o.object, f.object)))) return null;
  if (said.length > 0 && saidBefore.length > 0) return `${memory.memory_type}s about ${where} with different facts`;
  if (CHANGE_WORDS.test(memory.text)) return `a change to ${where} that does not say what it replaces`;
  return null;
}

/**
 * How many segments of its topic's history a memory's trace keeps: the latest. Every memory on a
 * topic carried the whole history before it, so a topic an agent wrote to on every turn grew its
 * rows (and the store each `remember` reads) with the square of its length, and one memory's
 * get_observations details to 178 KB at 300 segments. The older segments are the older memories'
 * own (each keeps its trace), reached through `supersedes`. `segment_index` is a segment's place in
 * the trace that holds it (a forget renumbers the traces it takes a segment from, as before).
 */
export const TOPIC_TRACE_SEGMENTS = 20;

/** What a memory's segment of its topic's trace says of it. */
function segmentWords(memory: Memory): Pick<TopicTrace, 'title' | 'summary'> {
  return { title: memory.title, summary: memory.text.length > 400 ? `${cutText(memory.text, 397)}...` : memory.text };
}

/**
 * The trace is the topic's history: every memory on it adds a segment, in the order of when
 * they were said (a promoted memory's evidence may be older than the latest segment); only the
 * last segment, if its memory is current, is current. The trace holds the latest
 * TOPIC_TRACE_SEGMENTS of them.
 */
function extendTopicTrace(memory: Memory, all: Memory[], sourceIds: number[], now: number, meets: (m: Memory) => Meeting): void {
  const topic = memory.topic_key ?? memory.temporal_facts?.[0]?.subject ?? null;
  if (!topic) return;
  memory.topic_key = topic;
  // A branch's trace goes on from the project's; the project's does not take in a branch's.
  const inReach = (m: Memory): boolean => ['same', 'shadows'].includes(meets(m) ?? '');
  const previous = all.filter((m) => m.topic_key === topic && inReach(m)).sort((a, b) => b.updated_at_epoch - a.updated_at_epoch || b.id - a.id)[0];
  const evidence = sourceIds.length > 0 ? [...sourceIds].sort((a, b) => a - b) : [memory.id];
  const own: TopicTrace = {
    id: memory.id,
    topic_key: topic,
    ...segmentWords(memory),
    status: 'current',
    segment_index: 0,
    covered_from_event_id: evidence[0],
    covered_to_event_id: evidence[evidence.length - 1],
    evidence_event_ids: evidence,
    files: memory.files ? (JSON.parse(memory.files) as string[]) : null,
    created_at_epoch: memory.created_at_epoch,
    updated_at_epoch: memory.created_at_epoch,
  };
  const earlier = (previous?.topic_trace ?? []).map((t) => ({ ...t }));
  const trace = [...earlier.filter((t) => t.created_at_epoch <= own.created_at_epoch), own, ...earlier.filter((t) => t.created_at_epoch > own.created_at_epoch)];
  const last = trace[trace.length - 1];
  for (const t of trace) {
    const current = t === last && (t !== own || memory.status === 'active');
    if (!current && t.status !== 'closed') Object.assign(t, { status: 'closed', updated_at_epoch: t === own ? now : memory.created_at_epoch });
  }
  // The segments are this memory's own copies (earlier's above): numbered in place.
  const kept = trace.slice(-TOPIC_TRACE_SEGMENTS);
  kept.forEach((t, i) => (t.segment_index = i));
  memory.topic_trace = kept;
}

/**
 * Records a person's review of a possible conflict between `id` and `otherId`: keep both (the
 * conflict stays recorded as reviewed), or `id` is superseded by `otherId`.
 */
export async function resolveConflict(memories: MemoryRepository, id: number, otherId: number, choice: ConflictChoice, at: number): Promise<Memory[]> {
  if (choice !== 'keep_both' && choice !== 'superseded') throw new FilterError(`unknown choice '${String(choice)}': use keep_both or superseded`);
  if (id === otherId) throw new FilterError('a memory cannot supersede itself');
  return memories.exclusive(() => recordReview(memories, id, otherId, choice, at));
}

async function recordReview(memories: MemoryRepository, id: number, otherId: number, choice: ConflictChoice, at: number): Promise<Memory[]> {
  const [a, b] = await bothOf(memories, id, otherId);
  const others: Memory[] = [];
  if (choice === 'superseded') {
    if (a.status === 'superseded' || a.superseded_by !== null) throw new FilterError(`memory ${id} was already superseded by memory ${a.superseded_by ?? '?'}`);
    // A branch's memory never retires a project-wide one, nor the other way round, and two
    // branches' memories never meet: a conflict flagged across the branch line is kept or edited.
    if (meeting(a, b, memories.defaultBranch) !== 'same') {
      const where = (m: Memory): string => (projectWideBranch(m.branch, memories.defaultBranch) ? 'project-wide' : `of branch '${m.branch}'`);
      throw new FilterError(`memory ${id} is ${where(a)} and memory ${otherId} ${where(b)}: they never retire each other; keep both, or edit one`);
    }
    // Only a current memory can be what holds now: a superseded or suppressed one would leave the
    // topic with nothing current (or a cycle: each superseded by the other).
    if (b.status !== 'active') {
      const why = b.status === 'superseded' ? `superseded by memory ${b.superseded_by ?? '?'}` : b.status;
      throw new FilterError(`memory ${otherId} is not current (${why}): only a current memory can supersede memory ${id}`);
    }
    markSuperseded(a, b, at);
    const thirds = new Map((await memories.get((a.conflicts ?? []).filter((c) => c.resolution === 'open' && c.id !== b.id).map((c) => c.id), { includeSuppressed: true })).map((m) => [m.id, m]));
    for (const o of closeConflictsOf(a, (x) => (x === b.id ? b : thirds.get(x)))) if (o.id !== b.id) others.push(o);
  } else {
    for (const [x, y] of [[a, b], [b, a]] as const) {
      const list = x.conflicts ?? [];
      const entry = list.find((c) => c.id === y.id);
      if (entry) Object.assign(entry, { resolution: 'kept_both', resolved_at_epoch: at });
      else list.push({ id: y.id, reason: 'reviewed', detected_at_epoch: at, resolution: 'kept_both', resolved_at_epoch: at });
      x.conflicts = list;
    }
  }
  await memories.rewrite(b);
  await memories.rewrite(a);
  for (const o of others) await memories.rewrite(o);
  return [a, b];
}

/**
 * Edits memory `id`'s title or text (a review, or any edit): its facts are read again (`factsOf`),
 * its open conflicts are closed as edited, and a current memory's new words are weighed as a
 * write's are (settle). Read and written under the memories lock (see exclusive): an edit
 * read before a remember retired the memory would write it back current, or the remember's copy
 * read before the edit would write the old text back.
 */
export async function editMemory(
  memories: MemoryRepository,
  id: number,
  changes: { title?: string; text?: string },
  factsOf: (memory: Memory) => TemporalFact[] | null,
  at: number,
): Promise<Memory> {
  return memories.exclusive(async () => {
    const [memory] = await memories.get([id], { includeSuppressed: true });
    if (!memory) throw new FilterError(`No memory ${id} in project ${memories.project}`);
    return recordEdit(memories, memory, changes, factsOf(memory), at);
  });
}

async function recordEdit(memories: MemoryRepository, memory: Memory, changes: { title?: string; text?: string }, facts: TemporalFact[] | null, at: number): Promise<Memory> {
  const all = await memories.list({ includeSuppressed: true });
  const byId = new Map(all.map((m) => [m.id, m]));
  // A key taken from its first fact where none was given (givenTopicKey) goes with the words it was
  // taken from: kept over other words it would read as given, and retire by it (Unsuppress).
  const taken = memory.topic_key !== null && !givenTopicKey(memory);
  memory.title = changes.title ?? memory.title;
  memory.text = changes.text ?? memory.text;
  memory.updated_at_epoch = at;
  // Its facts are its new words' whatever its status: a memory hidden or history is weighed and
  // answered with them when it holds again (Unsuppress, its successor forgotten: holdAgain). A
  // history's facts held from when it was said until it became history, as its old ones did.
  memory.temporal_facts = facts;
  const closedAt = memory.superseded_by !== null || memory.status === 'superseded' ? (memory.valid_to_epoch ?? at) : null;
  if (closedAt !== null) {
    for (const f of facts ?? []) {
      f.valid_from_epoch = Math.min(f.valid_from_epoch ?? closedAt, memory.created_at_epoch, closedAt);
      closeFact(f, closedAt);
    }
  }
  if (taken && (facts?.[0]?.subject ?? null) !== memory.topic_key) memory.topic_key = null;
  const changed = new Map<number, Memory>();
  // Its segment says its new words, in its own trace and in those of the memories said after it on the topic.
  for (const holder of [memory, ...all.filter((m) => m.id !== memory.id)]) {
    const segment = holder.topic_trace?.find((t) => t.id === memory.id);
    if (!segment) continue;
    Object.assign(segment, segmentWords(memory), { updated_at_epoch: at });
    if (holder !== memory) changed.set(holder.id, holder);
  }
  for (const c of memory.conflicts ?? []) {
    if (c.resolution !== 'open') continue;
    Object.assign(c, { resolution: 'edited', resolved_at_epoch: at });
    const other = byId.get(c.id);
    const mirror = other?.conflicts?.find((x) => x.id === memory.id && x.resolution === 'open');
    if (other && mirror) {
      Object.assign(mirror, { resolution: 'edited', resolved_at_epoch: at });
      changed.set(other.id, other);
    }
  }
  // What it says now is weighed as a write's words are, said now (a person's latest word): it may
  // retire what it contradicts, be history of a memory said after the edit, or be flagged. The
  // conflicts just reviewed by the edit are not flagged again; a topic_key retires nothing here
  // (it was weighed when the memory was written). History and suppressed memories are not weighed.
  if (memory.status === 'active') for (const [id, o] of settle(memories, memory, all, { at, now: at, named: [], topic: null, factsTopic: memory.topic_key })) changed.set(id, o);
  await memories.rewrite(memory);
  for (const o of changed.values()) await memories.rewrite(o);
  return memory;
}

/**
 * A key an old build took from a memory's first fact where none was given (and the current one
 * still stores so): remember retires by a given topic_key only. A given key that is also the
 * first fact's subject reads as taken, and retires nothing (leaving a memory current is what the
 * upgrade did before; retiring one by a key nobody gave would hide it).
 */
export function givenTopicKey(m: Memory): boolean {
  return m.topic_key !== null && m.topic_key !== (m.temporal_facts?.[0]?.subject ?? null);
}

/** The end of the supersede chain from `id` on that a reader sees: the first memory superseded by nothing, if it is current; else null. */
function liveEnd(id: number | null, byId: Map<number, Memory>): Memory | null {
  const seen = new Set<number>();
  for (let x = id; x !== null && !seen.has(x); ) {
    seen.add(x);
    const m = byId.get(x);
    if (!m) return null;
    if (m.superseded_by === null) return m.status === 'active' ? m : null;
    x = m.superseded_by;
  }
  return null;
}

/** `older` becomes (or stays) history of `end`, the current end of its chain: its facts and dates stay as they closed. */
export function relinkTo(older: Memory, end: Memory): void {
  older.superseded_by = end.id;
  end.supersedes = [...new Set([...(end.supersedes ?? []), older.id])];
}

/**
 * A memory history of one that no longer holds holds again: its status (a suppressed one stays
 * suppressed), its facts that closed when it became history, and, where it is current, the
 * conflicts that closed with it where the other side is current. Returns the others changed
 * (through `lookup`, whose memories the caller writes).
 */
export function holdAgain(m: Memory, lookup: (id: number) => Memory | undefined): Memory[] {
  const closedAt = m.valid_to_epoch;
  if (m.status === 'superseded') m.status = 'active';
  m.superseded_by = null;
  m.valid_to_epoch = null;
  m.temporal_facts = (m.temporal_facts ?? []).map((f) => (f.valid_to_epoch !== null && f.valid_to_epoch === closedAt ? { ...f, status: 'current', valid_to_epoch: null } : f));
  if (m.temporal_facts.length === 0) m.temporal_facts = null;
  const others: Memory[] = [];
  if (m.status !== 'active' || closedAt === null) return others;
  for (const c of m.conflicts ?? []) {
    if (c.resolution !== 'superseded' || c.resolved_at_epoch !== closedAt) continue;
    const other = lookup(c.id);
    if (!other || other.status !== 'active') continue;
    const mirror = other.conflicts?.find((x) => x.id === m.id && x.resolution === 'superseded' && x.resolved_at_epoch === closedAt);
    if (!mirror) continue;
    Object.assign(c, { resolution: 'open', resolved_at_epoch: null });
    Object.assign(mirror, { resolution: 'open', resolved_at_epoch: null });
    others.push(other);
  }
  return others;
}

/**
 * Suppress and Unsuppress of memory `id` (status 'suppressed' or 'active'), under the memories
 * lock. No memory is told it was superseded by one nobody can read: suppressing a memory makes
 * those it had superseded hold again, as forgetting it would (or, where it was itself superseded,
 * history of the chain's current end). Unsuppressing gives it back as it stood: history where it
 * was superseded (of its chain's current end), else current, retiring again the memories it
 * names in `supersedes` that nothing else replaced since, and weighed against what was said
 * meanwhile as a write is (it is history of a memory said after it that replaces it).
 */
export async function setMemoryStatus(memories: MemoryRepository, id: number, status: string, at: number): Promise<void> {
  if (status !== 'active' && status !== 'suppressed') throw new FilterError(`a memory is set active or suppressed, not '${status}': a memory becomes history by supersession (remember, or a conflict's review)`);
  await memories.exclusive(async () => {
    const all = await memories.list({ includeSuppressed: true });
    const byId = new Map(all.map((m) => [m.id, m]));
    const memory = byId.get(id);
    if (!memory) throw new FilterError(`No memory ${id} in project ${memories.project}`);
    if ((memory.status === 'suppressed') === (status === 'suppressed')) return;
    const changed = new Map<number, Memory>();
    const lookup = (x: number): Memory | undefined => byId.get(x);
    memory.updated_at_epoch = at;
    const end = liveEnd(memory.superseded_by, byId);
    if (status === 'suppressed') {
      memory.status = 'suppressed';
      for (const older of all.filter((m) => m.superseded_by === memory.id)) {
        changed.set(older.id, older);
        if (end && end.id !== older.id) {
          relinkTo(older, end);
          changed.set(end.id, end);
        } else for (const o of holdAgain(older, lookup)) changed.set(o.id, o);
      }
    } else if (end && end.id !== memory.id) {
      memory.status = 'superseded';
      relinkTo(memory, end);
      changed.set(end.id, end);
      // What it had replaced, relinked to that end while it was hidden, is its history again: the
      // chain is as it was, the end listing it no more (a forget of the end then leaves one memory current, not two).
      for (const older of all.filter((m) => m.superseded_by === end.id && m.id !== memory.id && memory.supersedes?.includes(m.id))) {
        older.superseded_by = memory.id;
        end.supersedes = end.supersedes?.filter((x) => x !== older.id) ?? null;
        changed.set(older.id, older);
      }
    } else {
      // Its successor is gone from view (old data): it holds again, as current.
      memory.status = 'active';
      if (memory.superseded_by !== null) for (const o of holdAgain(memory, lookup)) changed.set(o.id, o);
      const given = givenTopicKey(memory) ? memory.topic_key : null;
      const named = (memory.supersedes ?? []).filter((x) => {
        const older = byId.get(x);
        return older !== undefined && older.id !== memory.id && older.superseded_by === null && older.status !== 'superseded' && older.created_at_epoch <= memory.created_at_epoch && meeting(memory, older, memories.defaultBranch) === 'same';
      });
      for (const [x, o] of settle(memories, memory, all, { at: memory.created_at_epoch, now: at, named, topic: given, factsTopic: given })) changed.set(x, o);
    }
    changed.delete(memory.id);
    await memories.rewrite(memory);
    for (const o of changed.values()) await memories.rewrite(o);
  });
}

async function bothOf(memories: MemoryRepository, id: number, otherId: number): Promise<[Memory, Memory]> {
  const found = await memories.get([id, otherId], { includeSuppressed: true });
  const a = found.find((m) => m.id === id);
  const b = found.find((m) => m.id === otherId);
  if (!a) throw new FilterError(`No memory ${id} in project ${memories.project}`);
  if (!b) throw new FilterError(`No memory ${otherId} in project ${memories.project}`);
  return [a, b];
}
