// The request log of one project: every retrieve_memory call with its (redacted) arguments and
// response, for the user to review. Bounded by age and count (see pruneRequestLog).

import { redactJson, redactKeyNullable } from '../../capture/redact';
import type { RequestLogEntry } from '../../model/records';
import { sqlInt, sqlString, sqlStringList } from '../filters';
import { rowToRequest } from '../mapping';
import { ProjectTable } from '../projectTable';
import { TABLES } from '../schema';
import type { Store } from '../store';
import type { RequestLogRetention } from '../retention';

export { DEFAULT_REQUEST_LOG_RETENTION, requestLogRetention } from '../retention';
export type { RequestLogRetention } from '../retention';

export class RequestLogRepository {
  private readonly table: ProjectTable;

  constructor(store: Store, project: string) {
    this.table = new ProjectTable(store, TABLES.requestLog, project);
  }

  async log(entry: RequestLogEntry): Promise<void> {
    await this.table.add([{ ...entry, session_id: redactKeyNullable(entry.session_id), arguments: redactJson(entry.arguments), response: redactJson(entry.response) }]);
  }

  async list(limit = 50): Promise<RequestLogEntry[]> {
    const rows = await this.table.rows(null);
    rows.sort((a, b) => Number(b.created_at_epoch) - Number(a.created_at_epoch));
    return rows.slice(0, Math.max(1, Math.min(1000, limit))).map(rowToRequest);
  }
}

/**
 * Drops entries older than the retention's age, and all but the newest maxRows of each project:
 * a project whose agents call often does not push another project's entries out. Entries of
 * the same millisecond as the last one kept are told apart by their request id, so no more than
 * maxRows stay however many share it.
 */
export async function pruneRequestLog(store: Store, retention: RequestLogRetention, now = Date.now()): Promise<number> {
  let removed = await store.delete(TABLES.requestLog, `created_at_epoch < ${sqlInt(Math.floor(now - retention.maxAgeMs))}`);
  if ((await store.count(TABLES.requestLog)) <= retention.maxRows) return removed;
  // Each project counted by its index: only one over the limit is read (the upkeep runs this every minute).
  for (const project of await store.distinct(TABLES.requestLog, 'project')) {
    const where = `project = ${sqlString(project)}`;
    if ((await store.count(TABLES.requestLog, where)) <= retention.maxRows) continue;
    const list = (await store.rows(TABLES.requestLog, where, { select: ['created_at_epoch', 'request_id'] })).map((r) => ({ at: Number(r.created_at_epoch), id: String(r.request_id) }));
    // A forget may have deleted some since the count.
    if (list.length <= retention.maxRows) continue;
    list.sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const last = list[retention.maxRows - 1];
    removed += await store.delete(TABLES.requestLog, `${where} AND created_at_epoch < ${sqlInt(last.at)}`);
    const kept = new Set(list.slice(0, retention.maxRows).filter((r) => r.at === last.at).map((r) => r.id));
    const tied = [...new Set(list.slice(retention.maxRows).filter((r) => r.at === last.at && !kept.has(r.id)).map((r) => r.id))];
    for (let i = 0; i < tied.length; i += 500) {
      removed += await store.delete(TABLES.requestLog, `${where} AND created_at_epoch = ${sqlInt(last.at)} AND request_id IN ${sqlStringList(tied.slice(i, i + 500))}`);
    }
  }
  return removed;
}
