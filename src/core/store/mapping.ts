// Table rows <-> records. JSON-typed fields (facts, files, compressed_sources, temporal_facts...)
// are strings in the tables and in the contract; the nested ones are parsed here.

import type { Cell, CompressedSource, Entity, Layer, Memory, MemoryConflict, Observation, Relationship, RequestLogEntry, SessionSummary, SourceKind, TemporalFact, TopicTrace } from '../model/records';
import type { Row } from './store';
import { printable } from '../model/printable';

function str(v: unknown): string {
  return v === null || v === undefined ? '' : String(v);
}
function strOrNull(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v);
}
function num(v: unknown): number {
  return typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : Number(v ?? 0);
}
function numOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : num(v);
}
export function parseJson<T>(v: unknown, fallback: T): T {
  if (typeof v !== 'string' || v === '') return fallback;
  try {
    return JSON.parse(v) as T;
  } catch {
    return fallback;
  }
}
export function jsonList(values: readonly string[] | undefined | null): string | null {
  return values && values.length > 0 ? JSON.stringify(values) : null;
}

/** The columns rowToObservation reads: a read by id takes these and leaves the search-only ones. */
export const OBSERVATION_COLUMNS = [
  'id', 'memory_session_id', 'content_session_id', 'project', 'type', 'title', 'subtitle', 'narrative', 'facts', 'concepts',
  'files_read', 'files_modified', 'commit_sha', 'branch', 'status', 'created_at', 'created_at_epoch', 'last_accessed_epoch',
  'discovery_tokens', 'compressed_sources',
];

export function rowToObservation(r: Row): Observation {
  return {
    id: num(r.id),
    memory_session_id: str(r.memory_session_id),
    content_session_id: strOrNull(r.content_session_id),
    project: strOrNull(r.project),
    type: str(r.type),
    title: strOrNull(r.title),
    subtitle: strOrNull(r.subtitle),
    narrative: strOrNull(r.narrative),
    facts: strOrNull(r.facts),
    concepts: strOrNull(r.concepts),
    files_read: strOrNull(r.files_read),
    files_modified: strOrNull(r.files_modified),
    commit_sha: strOrNull(r.commit_sha),
    branch: strOrNull(r.branch),
    status: str(r.status),
    created_at: str(r.created_at),
    created_at_epoch: num(r.created_at_epoch),
    last_accessed_epoch: numOrNull(r.last_accessed_epoch),
    discovery_tokens: numOrNull(r.discovery_tokens),
    compressed_sources: parseJson<CompressedSource[] | null>(r.compressed_sources, null),
    ...(num(r.updated_at_epoch) > num(r.created_at_epoch) ? { updated_at_epoch: num(r.updated_at_epoch) } : {}),
  };
}

export function observationToRow(o: Observation, extra: { search_extra?: string | null; dedupe_key?: string | null; fingerprint?: string | null; occurrences?: number; updated_at_epoch?: number }): Row {
  return {
    ...o,
    compressed_sources: o.compressed_sources ? JSON.stringify(o.compressed_sources) : null,
    search_extra: extra.search_extra ?? null,
    dedupe_key: extra.dedupe_key ?? null,
    fingerprint: extra.fingerprint ?? null,
    occurrences: extra.occurrences ?? 1,
    updated_at_epoch: extra.updated_at_epoch ?? o.updated_at_epoch ?? o.created_at_epoch,
  };
}

export function rowToSessionSummary(r: Row): SessionSummary {
  return {
    id: num(r.id),
    memory_session_id: str(r.memory_session_id),
    project: strOrNull(r.project),
    request: strOrNull(r.request),
    learned: strOrNull(r.learned),
    completed: strOrNull(r.completed),
    decisions: strOrNull(r.decisions),
    next_steps: strOrNull(r.next_steps),
    preferences: strOrNull(r.preferences),
    created_at: str(r.created_at),
    created_at_epoch: num(r.created_at_epoch),
  };
}

export function rowToMemory(r: Row): Memory {
  return {
    id: num(r.id),
    project: str(r.project),
    title: str(r.title),
    text: str(r.text),
    memory_type: str(r.memory_type),
    created_at_epoch: num(r.created_at_epoch),
    updated_at_epoch: num(r.updated_at_epoch),
    status: str(r.status),
    scope: str(r.scope),
    classification: str(r.classification),
    classification_reason: str(r.classification_reason),
    current_context_eligible: Boolean(r.current_context_eligible),
    branch: strOrNull(r.branch),
    files: strOrNull(r.files),
    session_id: strOrNull(r.session_id),
    topic_key: strOrNull(r.topic_key),
    topic_trace: ownSegmentClosed(parseJson<TopicTrace[] | null>(r.topic_trace, null), num(r.id), str(r.status)),
    temporal_facts: parseJson<TemporalFact[] | null>(r.temporal_facts, null),
    supersedes: parseJson<number[] | null>(r.supersedes, null),
    superseded_by: numOrNull(r.superseded_by),
    valid_to_epoch: numOrNull(r.valid_to_epoch),
    conflicts: parseJson<MemoryConflict[] | null>(r.conflicts, null),
  };
}

/**
 * A memory's trace is written with it, its own segment current; a newer memory that supersedes it
 * closes that segment in its own trace only. Read back, a superseded memory's own segment is
 * closed too, so that each memory's trace says the same of it.
 */
function ownSegmentClosed(trace: TopicTrace[] | null, id: number, status: string): TopicTrace[] | null {
  if (!trace || status !== 'superseded') return trace;
  return trace.map((t) => (t.id === id && t.status === 'current' ? { ...t, status: 'closed' } : t));
}

export function memoryToRow(m: Memory, extra: { source_ids?: number[]; access_count?: number; last_accessed_epoch?: number | null } = {}): Row {
  return {
    ...m,
    topic_trace: m.topic_trace ? JSON.stringify(m.topic_trace) : null,
    temporal_facts: m.temporal_facts ? JSON.stringify(m.temporal_facts) : null,
    supersedes: m.supersedes && m.supersedes.length > 0 ? JSON.stringify(m.supersedes) : null,
    conflicts: m.conflicts && m.conflicts.length > 0 ? JSON.stringify(m.conflicts) : null,
    source_ids: extra.source_ids ? JSON.stringify(extra.source_ids) : null,
    access_count: extra.access_count ?? 0,
    last_accessed_epoch: extra.last_accessed_epoch ?? null,
  };
}

/** The columns of a Cell. */
export const CELL_COLUMNS = [
  'node_id', 'layer', 'source_kind', 'source_id', 'project', 'branch', 'type', 'title', 'text', 'files',
  'commit_sha', 'session_id', 'created_at_epoch', 'last_accessed_epoch', 'access_count', 'status',
];

export function rowToCell(r: Row): Cell {
  return {
    node_id: str(r.node_id),
    layer: str(r.layer) as Layer,
    source_kind: str(r.source_kind) as SourceKind,
    source_id: num(r.source_id),
    project: str(r.project),
    branch: strOrNull(r.branch),
    type: str(r.type),
    title: printable(str(r.title)),
    text: printable(str(r.text)),
    files: strOrNull(r.files),
    commit_sha: strOrNull(r.commit_sha),
    session_id: strOrNull(r.session_id),
    created_at_epoch: num(r.created_at_epoch),
    last_accessed_epoch: numOrNull(r.last_accessed_epoch),
    access_count: num(r.access_count),
    status: str(r.status),
  };
}

export function rowToEntity(r: Row): Entity {
  return { id: str(r.id), project: str(r.project), label: str(r.label), type: str(r.type), properties: stringProperties(parseJson<unknown>(r.properties, {})) };
}

/**
 * An entity's properties as every reader takes them: names to text. Capture writes text only, but
 * an imported file (another version's, or edited) may hold a number or a list there, and
 * retrieve_memory's answer, which publishes string properties, was refused whole for it: a value
 * that is not text is kept as its JSON, null is left out, and properties that are no object are none.
 */
function stringProperties(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return out;
  for (const [name, v] of Object.entries(value)) if (v !== null && v !== undefined) out[name] = typeof v === 'string' ? v : JSON.stringify(v);
  return out;
}

export function rowToRelationship(r: Row): Relationship {
  return { project: str(r.project), source: str(r.source), target: str(r.target), type: str(r.type), weight: num(r.weight) };
}

export function rowToRequest(r: Row): RequestLogEntry {
  return {
    request_id: str(r.request_id),
    tool: str(r.tool),
    project: str(r.project),
    session_id: strOrNull(r.session_id),
    arguments: str(r.arguments),
    response: str(r.response),
    status: str(r.status),
    duration_ms: num(r.duration_ms),
    created_at_epoch: num(r.created_at_epoch),
  };
}
