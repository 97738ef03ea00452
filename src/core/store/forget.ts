// Forget: delete records (and what was derived from them) so they leave results at once and,
// after the prune that follows, every file on disk. A LanceDB delete only marks rows; compaction
// keeps a fragment whose deleted share is small, and the FTS index keeps the tokens. So the
// tables that lost rows are rewritten, the FTS index is rebuilt, and old versions are pruned.

import type { ForgetReport, ForgetRequest } from '../api';
import type { Scope, SourceKind } from '../model/records';
import { FilterError, sqlInt, sqlIntList, sqlString } from './filters';
import { parseJson } from './mapping';
import { TABLES } from './schema';
import type { TableName } from './schema';
import { ensureFtsIndex, retryConflicts } from './store';
import type { Store } from './store';

const KINDS: Record<SourceKind, TableName> = {
  observation: TABLES.observations,
  session_summary: TABLES.sessionSummaries,
  memory: TABLES.memories,
};

export async function forgetRecords(store: Store, request: ForgetRequest, scope: Scope | null): Promise<ForgetReport> {
  const report: ForgetReport = { observations: 0, session_summaries: 0, memories: 0, cells: 0, pruned: false };
  const touched = new Set<TableName>();
  const del = async (name: TableName, where: string): Promise<number> => {
    const n = await store.delete(name, where);
    if (n > 0) touched.add(name);
    return n;
  };

  if (request.all) {
    report.observations = await del(TABLES.observations, 'true');
    report.session_summaries = await del(TABLES.sessionSummaries, 'true');
    report.memories = await del(TABLES.memories, 'true');
    report.cells = await del(TABLES.cells, 'true');
    for (const t of [TABLES.entities, TABLES.relationships, TABLES.sessionPrompts, TABLES.requestLog]) await del(t, 'true');
  } else if (request.project !== undefined) {
    if (scope && scope.project !== request.project) throw new FilterError(`cannot forget project '${request.project}' from scope '${scope.project}'`);
    const p = `project = ${sqlString(request.project)}`;
    const sessions = (await store.rows(TABLES.observations, p, { select: ['memory_session_id'] })).map((r) => String(r.memory_session_id));
    report.observations = await del(TABLES.observations, p);
    report.session_summaries = await del(TABLES.sessionSummaries, p);
    report.memories = await del(TABLES.memories, p);
    report.cells = await del(TABLES.cells, p);
    await del(TABLES.entities, p);
    await del(TABLES.relationships, p);
    await del(TABLES.requestLog, p);
    const unique = [...new Set(sessions)];
    for (let i = 0; i < unique.length; i += 500) {
      await del(TABLES.sessionPrompts, `session_id IN (${unique.slice(i, i + 500).map(sqlString).join(', ')})`);
    }
  } else if (request.ids && request.ids.length > 0) {
    if (!scope) throw new FilterError('forgetting records by id needs a scope (project)');
    const kind = request.kind ?? 'observation';
    if (!(kind in KINDS)) throw new FilterError(`unknown kind '${String(kind)}'`);
    const ids = request.ids.map((id) => Number(sqlInt(Number(id))));
    const p = `project = ${sqlString(scope.project)}`;
    const doomed: Record<SourceKind, Set<number>> = { observation: new Set(), session_summary: new Set(), memory: new Set() };
    for (const id of ids) doomed[kind].add(id);
    if (kind === 'observation') {
      // What was derived from a forgotten observation carries its text: merged observations,
      // session summaries and memories that cite it go too.
      const idSet = new Set(ids);
      for (const r of await store.rows(TABLES.observations, `${p} AND type = 'merged'`, { select: ['id', 'compressed_sources'] })) {
        const sources = parseJson<{ source_observation_id: number }[]>(r.compressed_sources, []);
        if (sources.some((s) => idSet.has(Number(s.source_observation_id)))) doomed.observation.add(Number(r.id));
      }
      for (const [name, k] of [[TABLES.sessionSummaries, 'session_summary'], [TABLES.memories, 'memory']] as const) {
        for (const r of await store.rows(name, `${p} AND source_ids IS NOT NULL`, { select: ['id', 'source_ids'] })) {
          if (parseJson<number[]>(r.source_ids, []).some((id) => doomed.observation.has(Number(id)))) doomed[k].add(Number(r.id));
        }
      }
    }
    for (const k of Object.keys(doomed) as SourceKind[]) {
      if (doomed[k].size === 0) continue;
      const list = sqlIntList([...doomed[k]]);
      const n = await del(KINDS[k], `${p} AND id IN ${list}`);
      if (k === 'observation') report.observations = n;
      else if (k === 'session_summary') report.session_summaries = n;
      else report.memories = n;
      report.cells += await del(TABLES.cells, `${p} AND source_kind = ${sqlString(k)} AND source_id IN ${list}`);
    }
  } else {
    throw new FilterError('forget needs ids, a project, or all: true');
  }

  if (touched.size > 0) {
    await purge(store, [...touched]);
    report.pruned = true;
  }
  return report;
}

/** Physically removes deleted rows: rewrite, rebuild the FTS index, prune every old version. */
export async function purge(store: Store, tables: TableName[]): Promise<void> {
  for (const name of tables) {
    const table = store.table(name);
    if ((await table.countRows()) > 0) {
      const before = await table.version();
      const data = await table.query().toArrow();
      await retryConflicts(() => table.add(data, { mode: 'overwrite' }));
      const after = await table.version();
      if (after > before + 1) await restoreConcurrentAppends(store, name, after - 1);
    }
  }
  if (tables.includes(TABLES.cells)) await ensureFtsIndex(store.table(TABLES.cells), true);
  for (const name of tables) {
    await retryConflicts(() => store.table(name).optimize({ cleanupOlderThan: new Date(Date.now() + 1000) }));
  }
}

const KEYS: Record<TableName, string[]> = {
  meta: ['key'],
  observations: ['id'],
  session_summaries: ['id'],
  memories: ['id'],
  cells: ['node_id'],
  session_prompts: ['session_id', 'created_at_epoch', 'prompt'],
  request_log: ['request_id'],
  entities: ['project', 'id'],
  relationships: ['project', 'source', 'target', 'type'],
};

/**
 * Another process committed between our read and our overwrite: its rows are in the version
 * just before ours and missing from ours. Insert them again (by key, so nothing doubles).
 */
async function restoreConcurrentAppends(store: Store, name: TableName, version: number): Promise<void> {
  const old = await store.db.openTable(name);
  try {
    await old.checkout(version);
    const rows = await old.query().toArrow();
    if (rows.numRows === 0) return;
    await retryConflicts(() => store.table(name).mergeInsert(KEYS[name]).whenNotMatchedInsertAll().execute(rows));
  } finally {
    old.close();
  }
}
