// The request log of one project: every retrieve_memory call with its (redacted) arguments and
// response, for the user to review. Bounded by age and count (see pruneRequestLog).

import { redactJson, redactKeyNullable } from '../../capture/redact';
import type { RequestLogEntry } from '../../model/records';
import { sqlInt } from '../filters';
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

/** Drops entries older than the retention's age and all but its newest maxRows (store-wide). */
export async function pruneRequestLog(store: Store, retention: RequestLogRetention, now = Date.now()): Promise<number> {
  let removed = await store.delete(TABLES.requestLog, `created_at_epoch < ${sqlInt(Math.floor(now - retention.maxAgeMs))}`);
  const count = await store.count(TABLES.requestLog);
  if (count > retention.maxRows) {
    const times = (await store.rows(TABLES.requestLog, null, { select: ['created_at_epoch'] })).map((r) => Number(r.created_at_epoch)).sort((a, b) => b - a);
    removed += await store.delete(TABLES.requestLog, `created_at_epoch < ${sqlInt(times[retention.maxRows - 1])}`);
  }
  return removed;
}
