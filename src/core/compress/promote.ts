// Memories (L2) built from a draft, with the temporal facts their text states. What a new
// memory supersedes or conflicts with is decided when it is stored (supersede.ts).

import type { Memory, Scope, TemporalFact } from '../model/records';
import { extractFacts, storedFact } from './facts';

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
  const facts = memoryFacts(draft.title, draft.text, draft.topic_key ?? null, scope.project, now, origin === 'explicit' ? 1 : origin === 'promoted' ? 0.9 : 0.7);
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
    temporal_facts: facts,
    supersedes: null,
    superseded_by: null,
    valid_to_epoch: null,
    conflicts: null,
  };
}

/** The current facts a memory's title and text state, one per extracted statement (supersede.ts pairs them up). */
export function memoryFacts(title: string, text: string, topic: string | null, project: string, now: number, confidence: number): TemporalFact[] | null {
  const facts = extractFacts(`${title}. ${text}`, topic).map((e) => ({
    project,
    ...storedFact(e),
    learned_at_epoch: now,
    confidence,
    status: 'current',
    valid_from_epoch: now,
    valid_to_epoch: null,
  }));
  return facts.length > 0 ? facts : null;
}
