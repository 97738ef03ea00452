// One search cell per record: L0 for observations, L1 for session summaries, L2 for memories.
// search_text is the prepared (identifier-split, stemmed) text the FTS index sees; vectors stay
// zero with embed_model '' until the background embedding queue fills them. A cell's node id
// follows from its record (cellNodeId).

import { createHash } from 'node:crypto';
import { prepareIndexText } from '../retrieve/textPrep';
import type { Memory, Observation, SessionSummary, SourceKind } from '../model/records';
import { parseJson } from './mapping';
import type { Row } from './store';
import { cutText } from '../tokens';

function lines(...parts: (string | null | undefined)[]): string {
  return parts.filter((p): p is string => typeof p === 'string' && p.trim().length > 0).join('\n');
}

export function observationFiles(o: Pick<Observation, 'files_read' | 'files_modified'>): string[] {
  const files = [...parseJson<string[]>(o.files_modified, []), ...parseJson<string[]>(o.files_read, [])];
  return [...new Set(files)];
}

function bullets(json: string | null): string | null {
  const items = parseJson<string[]>(json, []);
  return items.length > 0 ? items.map((f) => `- ${f}`).join('\n') : null;
}

/**
 * The node id of a record's cell: a UUID derived from its project, kind and id (name-based, as
 * UUID v5 does it). A record's cell is written by its writer and, when a crash or a slow writer
 * leaves it out, by the store's repair: both name it alike, so a second copy is the same node
 * (and the repair drops it) instead of another result with another id.
 */
export function cellNodeId(project: string, kind: SourceKind, id: number): string {
  return nameUuid(`code-memory-cell\u0000${project}\u0000${kind}\u0000${id}`);
}

/** A UUID (version 5 in form) that a name always gives, and another name never. */
export function nameUuid(name: string): string {
  const h = createHash('sha1').update(name).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** What a new cell starts with; its node_id is given where it is written (CellRepository.add). */
function baseCell(dimension: number): Pick<Row, 'access_count' | 'embed_model' | 'vector' | 'last_accessed_epoch'> {
  return { access_count: 0, embed_model: '', vector: new Float32Array(dimension), last_accessed_epoch: null };
}

export function observationTitle(o: Pick<Observation, 'title' | 'type' | 'files_read' | 'files_modified'>): string {
  if (o.title && o.title.trim()) return o.title.trim();
  const files = observationFiles(o);
  return files.length > 0 ? `${o.type} ${files.slice(0, 3).join(', ')}` : o.type;
}

export function observationCell(o: Observation, searchExtra: string | null, dimension: number): Row {
  const title = observationTitle(o);
  const files = observationFiles(o);
  const concepts = parseJson<string[]>(o.concepts, []);
  const body = lines(o.subtitle, o.narrative, bullets(o.facts));
  // A commit's subtitle (short sha, author, date) repeats what every tool shows from the cell's
  // columns; in the text it is what the sentence encoder reads first and what retrieve_memory's
  // short statements spend their characters on. Its words stay searchable (search_text).
  // Embedding the commits without it: yargs hit@5 0.575 -> 0.600, flask MRR@10 0.249 -> 0.257.
  const shown = o.type === 'commit' ? lines(o.narrative, bullets(o.facts)) : body;
  return {
    ...baseCell(dimension),
    layer: 'L0',
    source_kind: 'observation',
    source_id: o.id,
    project: o.project ?? '',
    branch: o.branch,
    type: o.type,
    title,
    text: lines(title, shown),
    search_text: prepareIndexText({ title, text: lines(body, concepts.join(' ')), files, extra: searchExtra ?? undefined }),
    files: files.length > 0 ? JSON.stringify(files) : null,
    commit_sha: o.commit_sha,
    session_id: o.memory_session_id,
    created_at_epoch: o.created_at_epoch,
    status: o.status,
  };
}

export function summaryText(s: SessionSummary): string {
  return lines(
    s.request && `Request: ${s.request}`,
    s.completed && `Completed: ${s.completed}`,
    s.learned && `Learned: ${s.learned}`,
    s.decisions && `Decisions: ${s.decisions}`,
    s.next_steps && `Next steps: ${s.next_steps}`,
    s.preferences && `Preferences: ${s.preferences}`,
  );
}

export function summaryCell(s: SessionSummary, branch: string | null, files: string[], dimension: number): Row {
  const title = s.request ? `Session: ${cutText(s.request.split('\n')[0], 120)}` : `Session ${s.memory_session_id}`;
  const text = summaryText(s);
  return {
    ...baseCell(dimension),
    layer: 'L1',
    source_kind: 'session_summary',
    source_id: s.id,
    project: s.project ?? '',
    branch,
    type: 'session_summary',
    title,
    text: lines(title, text),
    search_text: prepareIndexText({ title, text, files }),
    files: files.length > 0 ? JSON.stringify(files.slice(0, 50)) : null,
    commit_sha: null,
    session_id: s.memory_session_id,
    created_at_epoch: s.created_at_epoch,
    status: 'active',
  };
}

export function memoryCell(m: Memory, dimension: number): Row {
  const files = parseJson<string[]>(m.files, []);
  const facts = (m.temporal_facts ?? []).filter((f) => f.status === 'current').map((f) => `${f.subject} ${f.predicate} ${f.object}`);
  return {
    ...baseCell(dimension),
    layer: 'L2',
    source_kind: 'memory',
    source_id: m.id,
    project: m.project,
    branch: m.branch,
    type: m.memory_type,
    title: m.title,
    text: lines(m.title, m.text),
    search_text: prepareIndexText({ title: m.title, text: m.text, files, extra: lines(m.topic_key, facts.join('\n')) }),
    files: m.files,
    commit_sha: null,
    session_id: m.session_id,
    created_at_epoch: m.created_at_epoch,
    status: m.status === 'active' ? 'active' : m.status,
  };
}
