// Memories (L2) and their temporal facts. A memory's facts are extracted from its text; a new
// fact that contradicts a current fact of another memory (same subject and predicate, another
// object) closes the older fact (valid_to_epoch, status 'closed'), and a memory whose facts are
// all closed is marked superseded. Nothing is deleted.

import type { Memory, Scope, TemporalFact, TopicTrace } from '../model/records';
import type { MemoryRepository } from '../store/repos/memories';
import { extractFacts } from './facts';

export interface MemoryDraft {
  title: string;
  text: string;
  memory_type?: string;
  branch?: string;
  files?: string[];
  session_id?: string;
  topic_key?: string;
}

const CONTEXT_TYPES = new Set(['decision', 'convention', 'preference']);

export function buildMemory(id: number, draft: MemoryDraft, scope: Scope, now: number, origin: 'explicit' | 'promoted' | 'recurring'): Memory {
  const type = draft.memory_type ?? 'note';
  const facts: TemporalFact[] = extractFacts(`${draft.title}. ${draft.text}`, draft.topic_key ?? null).map((f) => ({
    project: scope.project,
    subject: f.subject,
    predicate: f.predicate,
    object: f.object,
    learned_at_epoch: now,
    confidence: origin === 'explicit' ? 1 : origin === 'promoted' ? 0.9 : 0.7,
    status: 'current',
    valid_from_epoch: now,
    valid_to_epoch: null,
  }));
  return {
    id,
    project: scope.project,
    title: draft.title,
    text: draft.text,
    memory_type: type,
    created_at_epoch: now,
    updated_at_epoch: now,
    status: 'active',
    scope: draft.branch ? 'branch' : 'project',
    classification: CONTEXT_TYPES.has(type) ? type : 'note',
    classification_reason:
      origin === 'explicit' ? 'saved explicitly' : origin === 'promoted' ? 'promoted from an observation' : 'recurred across sessions',
    current_context_eligible: CONTEXT_TYPES.has(type),
    branch: draft.branch ?? null,
    files: draft.files && draft.files.length > 0 ? JSON.stringify(draft.files) : null,
    session_id: draft.session_id ?? null,
    topic_key: draft.topic_key ?? null,
    topic_trace: null,
    temporal_facts: facts.length > 0 ? facts : null,
  };
}

/**
 * Closes older contradicted facts, extends the topic's trace, then stores `memory`.
 * The topic is the memory's topic_key, else the subject of its first fact.
 */
export async function applyMemoryFacts(memories: MemoryRepository, memory: Memory, sourceIds: number[]): Promise<Memory> {
  const facts = memory.temporal_facts ?? [];
  const topic = memory.topic_key ?? facts[0]?.subject ?? null;
  const needOthers = facts.length > 0 || topic !== null;
  const all = needOthers ? await memories.list({ includeSuppressed: true }) : [];
  if (topic) {
    memory.topic_key = topic;
    // The trace is the topic's history: every memory on it adds a segment, older ones close.
    const previous = all.filter((m) => m.topic_key === topic).sort((a, b) => b.updated_at_epoch - a.updated_at_epoch || b.id - a.id)[0];
    const trace: TopicTrace[] = (previous?.topic_trace ?? []).map((t) => ({ ...t, status: 'closed', updated_at_epoch: t.status === 'closed' ? t.updated_at_epoch : memory.created_at_epoch }));
    const evidence = sourceIds.length > 0 ? [...sourceIds].sort((a, b) => a - b) : [memory.id];
    trace.push({
      id: memory.id,
      topic_key: topic,
      title: memory.title,
      summary: memory.text.length > 400 ? `${memory.text.slice(0, 397)}...` : memory.text,
      status: 'current',
      segment_index: trace.length,
      covered_from_event_id: evidence[0],
      covered_to_event_id: evidence[evidence.length - 1],
      evidence_event_ids: evidence,
      files: memory.files ? (JSON.parse(memory.files) as string[]) : null,
      created_at_epoch: memory.created_at_epoch,
      updated_at_epoch: memory.created_at_epoch,
    });
    memory.topic_trace = trace;
  }
  if (facts.length > 0) {
    const others = all.filter((m) => m.status === 'active');
    for (const other of others) {
      let changed = false;
      for (const old of other.temporal_facts ?? []) {
        if (old.status !== 'current') continue;
        const contradicted = facts.some((f) => f.subject === old.subject && f.predicate === old.predicate && f.object !== old.object);
        if (contradicted) {
          old.status = 'closed';
          old.valid_to_epoch = memory.created_at_epoch;
          changed = true;
        }
      }
      if (!changed) continue;
      other.updated_at_epoch = memory.created_at_epoch;
      if ((other.temporal_facts ?? []).every((f) => f.status !== 'current')) other.status = 'superseded';
      await memories.rewrite(other);
    }
  }
  await memories.write(memory, { source_ids: sourceIds });
  return memory;
}
