// The request log of one project: every retrieve_memory call with its (redacted) arguments and
// response, for the user to review. Bounded by age and count (see pruneRequestLog).

import { redactJson, redactKeyNullable } from '../../capture/redact';
import type { RequestLogEntry } from '../../model/records';
import { sqlInt, sqlString } from '../filters';
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
 * a project whose agents call often does not push another project's entries out.
 */
export async function pruneRequestLog(store: Store, retention: RequestLogRetention, now = Date.now()): Promise<number> {
  let removed = await store.delete(TABLES.requestLog, `created_at_epoch < ${sqlInt(Math.floor(now - retention.maxAgeMs))}`);
  if ((await store.count(TABLES.requestLog)) <= retention.maxRows) return removed;
  const times = new Map<string, number[]>();
  for (const r of await store.rows(TABLES.requestLog, null, { select: ['project', 'created_at_epoch'] })) {
    const project = String(r.project);
    times.set(project, [...(times.get(project) ?? []), Number(r.created_at_epoch)]);
  }
  for (const [project, list] of times) {
    if (list.length <= retention.maxRows) continue;
    list.sort((a, b) => b - a);
    removed += await store.delete(TABLES.requestLog, `project = ${sqlString(project)} AND created_at_epoch < ${sqlInt(list[retention.maxRows - 1])}`);
  }
  return removed;
}
