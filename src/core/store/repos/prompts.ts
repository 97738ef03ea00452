// The last prompts of a session, for rewriting short follow-ups. Kept per project: a session id
// is chosen by the client, so the same id from another project's caller is another session.

import { sessionKey } from '../../capture/prepare';
import { redact } from '../../capture/redact';
import { sqlInt, sqlString } from '../filters';
import { forgetMark, forgotSince, purgeRows } from '../forget';
import { ProjectTable } from '../projectTable';
import { TABLES } from '../schema';
import type { Store } from '../store';

export const PROMPTS_PER_SESSION = 5;
export const PROMPT_TTL_MS = 30 * 24 * 3600_000;

export class PromptRepository {
  private readonly table: ProjectTable;

  constructor(
    private readonly store: Store,
    private readonly project: string,
  ) {
    this.table = new ProjectTable(store, TABLES.sessionPrompts, project);
  }

  /**
   * A forget deletes the project's prompts (they ask about what it removed): a prompt written while
   * one runs, in any process, is taken back from every file, as retrieve_memory's log entry is.
   */
  async add(sessionId: string, prompt: string): Promise<void> {
    const mark = await forgetMark(this.store);
    const now = Date.now();
    const id = sessionKey(String(sessionId));
    const session = `session_id = ${sqlString(id)}`;
    await this.table.add([{ session_id: id, prompt: redact(String(prompt)), created_at_epoch: now }]);
    if (await forgotSince(this.store, mark, this.project)) {
      await purgeRows(this.store, TABLES.sessionPrompts, this.table.where(`${session} AND created_at_epoch = ${sqlInt(now)}`));
      return;
    }
    // Keep the last five per session and nothing older than 30 days.
    const times = (await this.table.rows(session, { select: ['created_at_epoch'] })).map((r) => Number(r.created_at_epoch)).sort((a, b) => b - a);
    if (times.length > PROMPTS_PER_SESSION) await this.table.delete(`${session} AND created_at_epoch < ${sqlInt(times[PROMPTS_PER_SESSION - 1])}`);
    // Older than 30 days: never read (see recent), deleted by the maintenance (pruneSessionPrompts).
  }

  /** Newest first, none older than 30 days. */
  async recent(sessionId: string, limit: number): Promise<string[]> {
    const since = Date.now() - PROMPT_TTL_MS;
    const rows = await this.table.rows(`session_id = ${sqlString(sessionKey(String(sessionId)))} AND created_at_epoch >= ${sqlInt(since)}`);
    rows.sort((a, b) => Number(b.created_at_epoch) - Number(a.created_at_epoch));
    return rows.slice(0, Math.max(0, Math.min(PROMPTS_PER_SESSION, limit))).map((r) => String(r.prompt));
  }
}

/** Deletes every project's prompts older than 30 days (the maintenance, off the query path). */
export function pruneSessionPrompts(store: Store, now = Date.now()): Promise<number> {
  return store.delete(TABLES.sessionPrompts, `created_at_epoch < ${sqlInt(now - PROMPT_TTL_MS)}`);
}
