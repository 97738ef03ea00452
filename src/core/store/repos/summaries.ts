// Session summaries of one project (L1). A session is a key within a project: the same
// session id in another project is another session.

import { append } from '../../lists';
import type { SessionSummary } from '../../model/records';
import { summaryCell } from '../cells';
import { sqlInt, sqlIntList, sqlString, sqlStringList } from '../filters';
import { parseJson, rowToSessionSummary } from '../mapping';
import { TABLES } from '../schema';
import type { Row, Store } from '../store';
import type { CellRepository } from './cells';
import { RecordRepository } from './records';

export class SummaryRepository extends RecordRepository<SessionSummary> {
  constructor(store: Store, project: string, cells: CellRepository) {
    super(store, TABLES.sessionSummaries, project, 'session_summary', cells, rowToSessionSummary);
  }

  async ofSession(sessionId: string): Promise<SessionSummary | null> {
    const rows = await this.table.rows(`memory_session_id = ${sqlString(sessionId)}`, { limit: 1 });
    return rows.length > 0 ? rowToSessionSummary(rows[0]) : null;
  }

  async ofSessions(sessionIds: string[]): Promise<SessionSummary[]> {
    const out: SessionSummary[] = [];
    for (let i = 0; i < sessionIds.length; i += 500) {
      const rows = await this.table.rows(`memory_session_id IN ${sqlStringList(sessionIds.slice(i, i + 500))}`);
      append(out, rows.map(rowToSessionSummary));
    }
    return out;
  }

  /**
   * The summaries of these sessions with the branch each was written for (a session that worked
   * on several branches has one summary per branch), those `where` keeps (e.g. branchWhere).
   * `exceptForgetting`: none a forget under way names (forgetFilter), as a list shown to a caller reads them.
   */
  async ofSessionsOnBranches(sessionIds: string[], where: string | null = null, options: { exceptForgetting?: boolean } = {}): Promise<Array<{ summary: SessionSummary; branch: string | null }>> {
    const out: Array<{ summary: SessionSummary; branch: string | null }> = [];
    const filter = await this.forgetFilter(where, options.exceptForgetting === true);
    if (!filter) return out;
    for (let i = 0; i < sessionIds.length; i += 500) {
      const rows = await this.table.rows([`memory_session_id IN ${sqlStringList(sessionIds.slice(i, i + 500))}`, ...(filter.where ? [`(${filter.where})`] : [])].join(' AND '));
      append(out, rows.filter((r) => filter.keeps(r.id)).map((r) => ({ summary: rowToSessionSummary(r), branch: (r.branch as string | null) ?? null })));
    }
    return out;
  }

  async summarisedSessions(): Promise<Set<string>> {
    return new Set((await this.table.rows(null, { select: ['memory_session_id'] })).map((r) => String(r.memory_session_id)));
  }

  /** Each summary's decisions and preferences, by summary id (of the sessions but `exceptSession`): recurrence across sessions. */
  async statements(exceptSession?: string): Promise<Array<{ id: number; text: string }>> {
    const rows = await this.table.rows(exceptSession === undefined ? null : `memory_session_id <> ${sqlString(exceptSession)}`, { select: ['id', 'decisions', 'preferences'] });
    return rows.map((r) => ({ id: Number(r.id), text: `${r.decisions ?? ''} ${r.preferences ?? ''}` }));
  }

  /**
   * Runs `fn` alone among the store's writers of session summaries, in every process (see
   * Store.exclusive): two windows, or an idle timer and End Session, ending one session at once
   * would each find no summary and write one.
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.store.exclusive('summaries', fn);
  }

  /**
   * Writes the session's summaries (one per branch it worked on) in place of every summary it had
   * (a session ended again; two left by a build that wrote them unlocked), in one write: a session
   * has all its summaries or none. Call under exclusive().
   */
  async replaceOfSession(sessionId: string, summaries: Array<{ summary: SessionSummary; row: Row; branch: string | null; files: string[] }>): Promise<void> {
    const where = `memory_session_id = ${sqlString(sessionId)}`;
    const old = (await this.table.rows(where, { select: ['id'] })).map((r) => Number(r.id));
    if (old.length > 0) {
      await this.table.delete(`id IN ${sqlIntList(old)}`);
      await this.cells.delete('session_summary', old);
    }
    await this.addWithCells(
      summaries.map((s) => s.row),
      summaries.map((s) => summaryCell(s.summary, s.branch, s.files, this.cells.dimension)),
    );
  }

  /** Writes (or replaces, for a session ended again) a summary row and its L1 cell. */
  async write(summary: SessionSummary, row: Row, branch: string | null, files: string[]): Promise<void> {
    if ((await this.table.count(`id = ${sqlInt(summary.id)}`)) > 0) {
      await this.table.delete(`id = ${sqlInt(summary.id)}`);
      await this.cells.delete('session_summary', [summary.id]);
    }
    await this.addWithCells([row], [summaryCell(summary, branch, files, this.cells.dimension)]);
  }

  // The files are the cell's own (kept from the session's observations), not the record's.
  protected readonly searchedColumns = ['memory_session_id', 'request', 'learned', 'completed', 'decisions', 'next_steps', 'preferences'];

  protected cellOf(row: Row, old?: Row): Row {
    const files = parseJson<string[]>(old?.files, []);
    return summaryCell(rowToSessionSummary(row), (row.branch as string | null) ?? null, files, this.cells.dimension);
  }

  /** Ids of the observations these summaries were written from. */
  async sources(ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await this.table.rows(`id IN ${sqlIntList(ids)}`, { select: ['source_ids'] });
    return [...new Set(rows.flatMap((r) => parseJson<number[]>(r.source_ids, []).map(Number)))];
  }

  /** Ids of summaries built from any of these observations. */
  async citing(observationIds: Set<number>): Promise<number[]> {
    const rows = await this.table.rows('source_ids IS NOT NULL', { select: ['id', 'source_ids'] });
    return rows.filter((r) => parseJson<number[]>(r.source_ids, []).some((id) => observationIds.has(Number(id)))).map((r) => Number(r.id));
  }
}
