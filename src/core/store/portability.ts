// Export and import as JSON Lines: the user's data is theirs to move. One header line, then one
// line per record ({"kind": ..., "record": {...}}). Cells are not exported: they are rebuilt
// from the records on import and re-embedded by the background queue.

import type { MemoryEngine } from '../engine';
import type { Scope } from '../model/records';
import { memoryCell, observationCell, summaryCell } from './cells';
import { sqlIntList, sqlString } from './filters';
import { parseJson, rowToMemory, rowToObservation, rowToSessionSummary } from './mapping';
import { SCHEMA_VERSION, TABLES } from './schema';
import type { TableName } from './schema';
import type { Row, Store } from './store';

export const EXPORT_FORMAT = 'code-memory-export';

const KINDS: { kind: string; table: TableName; hasId: boolean }[] = [
  { kind: 'observation', table: TABLES.observations, hasId: true },
  { kind: 'session_summary', table: TABLES.sessionSummaries, hasId: true },
  { kind: 'memory', table: TABLES.memories, hasId: true },
  { kind: 'entity', table: TABLES.entities, hasId: false },
  { kind: 'relationship', table: TABLES.relationships, hasId: false },
  // Prompts carry no project: they go with a whole-store export only.
  { kind: 'session_prompt', table: TABLES.sessionPrompts, hasId: false },
];

const UPSERT_KEYS: Record<string, string[]> = {
  entity: ['project', 'id'],
  relationship: ['project', 'source', 'target', 'type'],
  session_prompt: ['session_id', 'created_at_epoch', 'prompt'],
};

export async function exportJsonl(store: Store, write: (line: string) => void, scope: Scope | null): Promise<number> {
  write(JSON.stringify({ kind: EXPORT_FORMAT, schema_version: SCHEMA_VERSION, exported_at: new Date().toISOString(), project: scope?.project ?? null }));
  const where = scope ? `project = ${sqlString(scope.project)}` : null;
  let n = 0;
  for (const { kind, table, hasId } of KINDS) {
    if (kind === 'session_prompt' && scope) continue;
    const rows = await store.rows(table, where);
    if (hasId) rows.sort((a, b) => Number(a.id) - Number(b.id));
    for (const record of rows) {
      write(JSON.stringify({ kind, record }));
      n++;
    }
  }
  return n;
}

const BATCH = 500;

export async function importJsonl(engine: MemoryEngine, lines: AsyncIterable<string>): Promise<number> {
  const store = engine.store;
  const pending = new Map<string, Row[]>();
  let imported = 0;
  let maxId = 0;
  let lineNo = 0;

  const flushKind = async (kind: string): Promise<void> => {
    const rows = pending.get(kind) ?? [];
    pending.set(kind, []);
    if (rows.length === 0) return;
    const spec = KINDS.find((k) => k.kind === kind);
    if (!spec) return;
    if (!spec.hasId) {
      await store.upsert(spec.table, UPSERT_KEYS[kind], rows);
      imported += rows.length;
      return;
    }
    // The same record imported twice (same id, project and time) is skipped; an unrelated
    // record that happens to hold the id is kept, and the imported one gets a fresh id.
    const existing = await store.rows(spec.table, `id IN ${sqlIntList(rows.map((r) => Number(r.id)))}`, { select: ['id', 'project', 'created_at_epoch'] });
    const byId = new Map(existing.map((r) => [Number(r.id), r]));
    const fresh: Row[] = [];
    const clashes: Row[] = [];
    for (const r of rows) {
      const e = byId.get(Number(r.id));
      if (!e) fresh.push(r);
      else if (e.project !== r.project || Number(e.created_at_epoch) !== Number(r.created_at_epoch)) clashes.push(r);
    }
    if (clashes.length > 0) {
      const ids = await store.ids.allocate(clashes.length);
      clashes.forEach((r, i) => (r.id = ids[i]));
      fresh.push(...clashes);
    }
    if (fresh.length === 0) return;
    for (const r of fresh) maxId = Math.max(maxId, Number(r.id));
    const dim = store.dimension;
    const cells =
      kind === 'observation'
        ? fresh.map((r) => observationCell(rowToObservation(r), (r.search_extra as string | null) ?? null, dim))
        : kind === 'memory'
          ? fresh.map((r) => memoryCell(rowToMemory(r), dim))
          : fresh.map((r) => {
              const s = rowToSessionSummary(r);
              return summaryCell(s, (r.branch as string | null) ?? null, [], dim);
            });
    await store.add(spec.table, fresh);
    await store.add(TABLES.cells, cells);
    imported += fresh.length;
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
    const record = { ...(parsed.record as Row) };
    if (kind === 'observation' && record.compressed_sources && typeof record.compressed_sources !== 'string') {
      record.compressed_sources = JSON.stringify(record.compressed_sources);
    }
    if (kind === 'memory') {
      for (const k of ['topic_trace', 'temporal_facts'] as const) {
        if (record[k] && typeof record[k] !== 'string') record[k] = JSON.stringify(record[k]);
      }
      record.current_context_eligible = Boolean(parseJson(String(record.current_context_eligible ?? false), record.current_context_eligible));
    }
    pending.set(kind, [...(pending.get(kind) ?? []), record]);
    if ((pending.get(kind) ?? []).length >= BATCH) await flushKind(kind);
  }
  for (const { kind } of KINDS) await flushKind(kind);
  if (maxId > 0) await store.ids.ensureAtLeast(maxId + 1);
  return imported;
}
