// Export and import as JSON Lines: the user's data is theirs to move. One header line, then one
// line per record ({"kind": ..., "record": {...}}). Cells are not exported: they are rebuilt
// from the records on import and re-embedded by the background queue.
//
// Ids on import: an imported id is kept only when no process can hand it out any more (the id
// allocator reserves it) and no stored record holds it; the same record imported again (same id,
// project and time) is skipped; any other record gets a fresh id, and the references to it in
// the same import (summaries' and memories' source ids, merged observations' sources, topic
// traces) are rewritten to match. Supersession links and conflicts between memories can point
// either way in the file, so they are rewritten once, after every memory is in.

import { redact, redactJson, redactKey } from '../capture/redact';
import type { CompressedSource, Memory, Scope, TopicTrace } from '../model/records';
import { sqlIntList } from './filters';
import { parseJson, rowToMemory, rowToObservation, rowToSessionSummary } from './mapping';
import { ProjectTable } from './projectTable';
import type { Repositories } from './repos/repositories';
import { SCHEMA_VERSION, TABLES } from './schema';
import type { TableName } from './schema';
import type { Row, Store } from './store';

export const EXPORT_FORMAT = 'code-memory-export';

type RecordKind = 'observation' | 'session_summary' | 'memory';

const KINDS: { kind: string; table: TableName; record?: RecordKind }[] = [
  { kind: 'observation', table: TABLES.observations, record: 'observation' },
  { kind: 'session_summary', table: TABLES.sessionSummaries, record: 'session_summary' },
  { kind: 'memory', table: TABLES.memories, record: 'memory' },
  { kind: 'entity', table: TABLES.entities },
  { kind: 'relationship', table: TABLES.relationships },
  { kind: 'session_prompt', table: TABLES.sessionPrompts },
];

const UPSERT_KEYS: Record<string, string[]> = {
  entity: ['project', 'id'],
  relationship: ['project', 'source', 'target', 'type'],
  session_prompt: ['project', 'session_id', 'created_at_epoch', 'prompt'],
};

export async function exportJsonl(store: Store, write: (line: string) => void, scope: Scope | null): Promise<number> {
  write(JSON.stringify({ kind: EXPORT_FORMAT, schema_version: SCHEMA_VERSION, exported_at: new Date().toISOString(), project: scope?.project ?? null }));
  let n = 0;
  for (const { kind, table, record } of KINDS) {
    const rows = scope ? await new ProjectTable(store, table, scope.project).rows(null) : await store.rows(table, null);
    if (record) rows.sort((a, b) => Number(a.id) - Number(b.id));
    for (const r of rows) {
      write(JSON.stringify({ kind, record: r }));
      n++;
    }
  }
  return n;
}

const BATCH = 500;

/** Old id -> new id, per record kind, for the records of this import that were renumbered. */
type Renumbered = Record<RecordKind, Map<number, number>>;

function remapIds(ids: unknown, map: Map<number, number>): unknown {
  return Array.isArray(ids) ? ids.map((id) => map.get(Number(id)) ?? id) : ids;
}

/** Rewrites a record's references to records renumbered earlier in the same import. */
function remapReferences(kind: RecordKind, r: Row, renumbered: Renumbered): void {
  const obs = renumbered.observation;
  if (kind === 'observation' && r.compressed_sources) {
    const sources = parseJson<CompressedSource[]>(r.compressed_sources, []);
    r.compressed_sources = JSON.stringify(sources.map((s) => ({ ...s, source_observation_id: obs.get(s.source_observation_id) ?? s.source_observation_id })));
  }
  if ((kind === 'session_summary' || kind === 'memory') && r.source_ids) {
    r.source_ids = JSON.stringify(remapIds(parseJson<number[]>(r.source_ids, []), obs));
  }
  if (kind === 'memory' && r.topic_trace) {
    const trace = parseJson<TopicTrace[]>(r.topic_trace, []);
    r.topic_trace = JSON.stringify(
      trace.map((t) => ({ ...t, id: renumbered.memory.get(t.id) ?? t.id, evidence_event_ids: remapIds(t.evidence_event_ids, obs) as number[] })),
    );
  }
}

function hasLinks(m: Memory): boolean {
  return (m.supersedes?.length ?? 0) > 0 || m.superseded_by !== null || (m.conflicts?.length ?? 0) > 0;
}

/** The memory with its links to other memories renumbered, or null when none changed. */
function relinked(m: Memory, map: Map<number, number>): Memory | null {
  const id = (x: number): number => map.get(x) ?? x;
  const next: Memory = {
    ...m,
    supersedes: m.supersedes ? m.supersedes.map(id) : null,
    superseded_by: m.superseded_by === null ? null : id(m.superseded_by),
    conflicts: m.conflicts ? m.conflicts.map((c) => ({ ...c, id: id(c.id) })) : null,
  };
  return JSON.stringify([next.supersedes, next.superseded_by, next.conflicts]) === JSON.stringify([m.supersedes, m.superseded_by, m.conflicts]) ? null : next;
}

/** Fields that name something (a session, a branch, a key, an entity): a secret in them is digested, not replaced (redactKey). */
const KEY_FIELDS = new Set(['id', 'branch', 'memory_session_id', 'content_session_id', 'session_id', 'topic_key', 'dedupe_key', 'source', 'target']);

/**
 * An imported record with this build's redaction applied to every text it holds, as if it had
 * been captured here: an export may be hand-made, or come from a build with fewer rules. The
 * project stays as it is (it scopes the record); numbers are the store's own.
 */
function redactRecord(record: Row): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(record)) {
    if (k === 'project' || v === null || (typeof v !== 'string' && typeof v !== 'object')) out[k] = v;
    else if (typeof v === 'object') out[k] = JSON.parse(redactJson(JSON.stringify(v))) as unknown;
    else if (KEY_FIELDS.has(k)) out[k] = redactKey(v);
    else out[k] = /^\s*[[{]/.test(v) ? redactJson(v) : redact(v);
  }
  return out;
}

export async function importJsonl(repos: Repositories, lines: AsyncIterable<string>): Promise<number> {
  const store = repos.store;
  const pending = new Map<string, Row[]>();
  const renumbered: Renumbered = { observation: new Map(), session_summary: new Map(), memory: new Map() };
  // Id ranges reserved for this import, and the ids it has written.
  const owned: [number, number][] = [];
  const used = new Set<number>();
  const isOwned = (id: number): boolean => owned.some(([lo, hi]) => id >= lo && id < hi);
  let imported = 0;
  let lineNo = 0;
  // Imported memories that link to others (new id, by project), relinked at the end.
  const linked = new Map<string, number[]>();

  const flushKind = async (kind: string): Promise<void> => {
    const rows = pending.get(kind) ?? [];
    pending.set(kind, []);
    if (rows.length === 0) return;
    const spec = KINDS.find((k) => k.kind === kind);
    if (!spec) return;
    const byProject = new Map<string, Row[]>();
    for (const r of rows) {
      const project = String(r.project ?? '');
      const list = byProject.get(project) ?? [];
      list.push(r);
      byProject.set(project, list);
    }
    for (const [project, list] of byProject) {
      if (!project) throw new Error(`Import: a ${kind} record has no project; the file is not a Code Memory export`);
      const scoped = repos.forProject(project);
      if (!spec.record) {
        await new ProjectTable(store, spec.table, project).upsert(UPSERT_KEYS[kind], list);
        imported += list.length;
        continue;
      }
      const record = spec.record;
      for (const r of list) remapReferences(record, r, renumbered);
      // The same record imported twice (same id, project and time) is skipped.
      const existing = await store.rows(spec.table, `id IN ${sqlIntList(list.map((r) => Number(r.id)))}`, { select: ['id', 'project', 'created_at_epoch'] });
      const stored = new Map(existing.map((r) => [Number(r.id), r]));
      const fresh = list.filter((r) => {
        const e = stored.get(Number(r.id));
        return !e || e.project !== r.project || Number(e.created_at_epoch) !== Number(r.created_at_epoch);
      });
      if (fresh.length === 0) continue;
      // Ids the allocator could still hand out, or that another record holds, are renumbered.
      const candidates = fresh.map((r) => Number(r.id)).filter((id) => !stored.has(id) && !used.has(id));
      const range = await repos.ids.reserve(candidates.filter((id) => !isOwned(id)));
      if (range) owned.push(range);
      const clashes = fresh.filter((r) => {
        const id = Number(r.id);
        if (stored.has(id) || used.has(id) || !isOwned(id)) return true;
        used.add(id);
        return false;
      });
      const newIds = clashes.length > 0 ? await repos.ids.allocate(clashes.length) : [];
      clashes.forEach((r, i) => {
        renumbered[record].set(Number(r.id), newIds[i]);
        r.id = newIds[i];
        used.add(newIds[i]);
      });
      if (record === 'observation') {
        await scoped.observations.write(
          fresh.map(rowToObservation),
          fresh.map((r) => ({ search_extra: (r.search_extra as string | null) ?? null, dedupe_key: (r.dedupe_key as string | null) ?? null, fingerprint: (r.fingerprint as string | null) ?? null })),
        );
      } else if (record === 'memory') {
        for (const r of fresh) {
          const memory = rowToMemory(r);
          await scoped.memories.write(memory, { source_ids: parseJson<number[]>(r.source_ids, []) });
          if (hasLinks(memory)) linked.set(project, [...(linked.get(project) ?? []), memory.id]);
        }
      } else {
        for (const r of fresh) await scoped.summaries.write(rowToSessionSummary(r), r, (r.branch as string | null) ?? null, []);
      }
      imported += fresh.length;
    }
  };

  for await (const raw of lines) {
    lineNo++;
    const line = raw.trim();
    if (!line) continue;
    let parsed: { kind?: unknown; record?: unknown; schema_version?: unknown };
    try {
      parsed = JSON.parse(line) as typeof parsed;
    } catch {
      throw new Error(`Import line ${lineNo} is not JSON: fix or remove it and import again (nothing after it was imported)`);
    }
    if (parsed.kind === EXPORT_FORMAT) {
      if (Number(parsed.schema_version) > SCHEMA_VERSION) {
        throw new Error(`The export has schema version ${String(parsed.schema_version)}; this Code Memory reads up to ${SCHEMA_VERSION}. Update Code Memory first.`);
      }
      continue;
    }
    const kind = String(parsed.kind);
    if (!KINDS.some((k) => k.kind === kind) || typeof parsed.record !== 'object' || parsed.record === null) {
      throw new Error(`Import line ${lineNo}: unknown record kind '${kind}'`);
    }
    const record = redactRecord(parsed.record as Row);
    if (kind === 'session_prompt' && !record.project) continue; // prompts of a v2 export have no project
    if (kind === 'observation' && record.compressed_sources && typeof record.compressed_sources !== 'string') {
      record.compressed_sources = JSON.stringify(record.compressed_sources);
    }
    if (kind === 'memory') {
      for (const k of ['topic_trace', 'temporal_facts', 'supersedes', 'conflicts'] as const) {
        if (record[k] && typeof record[k] !== 'string') record[k] = JSON.stringify(record[k]);
      }
      record.current_context_eligible = Boolean(parseJson(String(record.current_context_eligible ?? false), record.current_context_eligible));
    }
    // Records refer to earlier kinds (summaries to observations), so a kind is written before
    // the next one starts.
    const index = KINDS.findIndex((k) => k.kind === kind);
    for (const k of KINDS.slice(0, index)) await flushKind(k.kind);
    const queued = pending.get(kind) ?? [];
    queued.push(record);
    pending.set(kind, queued);
    if (queued.length >= BATCH) await flushKind(kind);
  }
  for (const { kind } of KINDS) await flushKind(kind);
  if (renumbered.memory.size > 0) {
    for (const [project, ids] of linked) {
      const memories = repos.forProject(project).memories;
      for (let i = 0; i < ids.length; i += 500) {
        for (const m of await memories.get(ids.slice(i, i + 500), { includeSuppressed: true })) {
          const next = relinked(m, renumbered.memory);
          if (next) await memories.rewrite(next);
        }
      }
    }
  }
  return imported;
}
