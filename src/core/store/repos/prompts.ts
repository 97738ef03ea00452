// The last prompts of a session, for rewriting short follow-ups. Kept per project: a session id
// is chosen by the client, so the same id from another project's caller is another session.

import { sessionKey } from '../../capture/prepare';
import { redact } from '../../capture/redact';
import { sqlInt, sqlString, sqlStringList } from '../filters';
import { purgeRows } from '../forget';
import { forgetMark, forgotSince } from '../forgetMarks';
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
    const times = (await this.table.rows(session, { select: ['created_at_epoch'] })).map((r) => Number(r.created_at_epoch));
    await keepNewest(this.store, this.project, id, times);
    // Older than 30 days: never read (see recent), deleted by the maintenance (pruneSessionPrompts).
  }

  /** The sessions (as keyed here, sessionKey) with prompts stored. */
  async sessions(): Promise<Set<string>> {
    return new Set((await this.table.rows(null, { select: ['session_id'] })).map((r) => String(r.session_id)));
  }

  /** Newest first, none older than 30 days. */
  async recent(sessionId: string, limit: number): Promise<string[]> {
    const since = Date.now() - PROMPT_TTL_MS;
    const rows = await this.table.rows(`session_id = ${sqlString(sessionKey(String(sessionId)))} AND created_at_epoch >= ${sqlInt(since)}`);
    rows.sort((a, b) => Number(b.created_at_epoch) - Number(a.created_at_epoch));
    return rows.slice(0, Math.max(0, Math.min(PROMPTS_PER_SESSION, limit))).map((r) => String(r.prompt));
  }
}

/**
 * Deletes all but the newest PROMPTS_PER_SESSION prompts of one session, given the times of its
 * stored prompts. Prompts of the same millisecond as the last one kept are told apart by their
 * text, so no more than PROMPTS_PER_SESSION stay however many share it.
 */
async function keepNewest(store: Store, project: string, sessionId: string, times: number[]): Promise<number> {
  if (times.length <= PROMPTS_PER_SESSION) return 0;
  times.sort((a, b) => b - a);
  const last = times[PROMPTS_PER_SESSION - 1];
  const session = `project = ${sqlString(project)} AND session_id = ${sqlString(sessionId)}`;
  let removed = await store.delete(TABLES.sessionPrompts, `${session} AND created_at_epoch < ${sqlInt(last)}`);
  const room = times.slice(0, PROMPTS_PER_SESSION).filter((t) => t === last).length;
  if (times.filter((t) => t === last).length <= room) return removed;
  const tied = `${session} AND created_at_epoch = ${sqlInt(last)}`;
  // A prompt holding NUL cannot be named in a filter: it stays (a prompt too many, never one too few).
  const prompts = [...new Set((await store.rows(TABLES.sessionPrompts, tied, { select: ['prompt'] })).map((r) => String(r.prompt)))].sort();
  const drop = prompts.slice(room).filter((p) => !p.includes('\u0000'));
  for (let i = 0; i < drop.length; i += 100) removed += await store.delete(TABLES.sessionPrompts, `${tied} AND prompt IN ${sqlStringList(drop.slice(i, i + 100))}`);
  return removed;
}

/**
 * Deletes every project's prompts older than 30 days, and all but the newest 5 of each session
 * (the maintenance, off the query path): a session's own writes keep it to 5, but an import
 * adds prompts to a session without trimming it.
 */
export async function pruneSessionPrompts(store: Store, now = Date.now()): Promise<number> {
  let removed = await store.delete(TABLES.sessionPrompts, `created_at_epoch < ${sqlInt(now - PROMPT_TTL_MS)}`);
  if ((await store.count(TABLES.sessionPrompts)) <= PROMPTS_PER_SESSION) return removed;
  const sessions = new Map<string, { project: string; session: string; times: number[] }>();
  for (const r of await store.rows(TABLES.sessionPrompts, null, { select: ['project', 'session_id', 'created_at_epoch'] })) {
    const key = `${String(r.project)}\u0000${String(r.session_id)}`;
    let entry = sessions.get(key);
    if (!entry) sessions.set(key, (entry = { project: String(r.project), session: String(r.session_id), times: [] }));
    entry.times.push(Number(r.created_at_epoch));
  }
  for (const { project, session, times } of sessions.values()) {
    // A key holding NUL (an import of an old file) cannot be named in a filter: left to its 30 days.
    if (!`${project}${session}`.includes('\u0000')) removed += await keepNewest(store, project, session, times);
  }
  return removed;
}
