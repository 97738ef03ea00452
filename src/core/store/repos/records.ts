// What the three record kinds (observations, session summaries, memories) share: int64 ids in
// one project, a status mirrored on their cells, and an access time for get_observations.

import { RECORD_STATUSES } from '../../model/records';
import type { SourceKind } from '../../model/records';
import { FilterError, branchWhere, sqlInt, sqlIntList, sqlString } from '../filters';
import type { BranchScope } from '../filters';
import { noteLeftStored } from '../../errorText';
import { pendingForgets } from '../forgetMarks';
import { ProjectTable } from '../projectTable';
import type { TableName } from '../schema';
import type { Row, Store } from '../store';
import type { CellRepository } from './cells';

const MAX_IDS = 1000;

export function checkIds(ids: number[]): number[] {
  if (!Array.isArray(ids)) throw new FilterError('ids must be a list of integers');
  if (ids.length > MAX_IDS) throw new FilterError(`at most ${MAX_IDS} ids per call`);
  return ids.map((id) => Number(sqlInt(Number(id))));
}

export function orderBy<T extends { id: number }>(rows: T[], ids: number[]): T[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id)).filter((r): r is T => r !== undefined);
}


/**
 * By version of the text preparation (textPrep.TEXT_PREP_VERSION), the text it reads differently
 * from the one before, as a test of a record's text column: a store's cells prepared by an earlier
 * version are prepared again where their record's text passes a later version's test.
 */
const PREPARED_OTHERWISE: Record<number, (column: string) => string> = {
  // Letters beyond ASCII.
  2: (column) => `octet_length(${column}) <> character_length(${column})`,
  // Numbers of 5 digits or more (those up to 7 became terms). Shorter groups joined by - or _
  // (400-499), whose joined form became a term too, keep their old terms: worth no rescan.
  3: (column) => `regexp_like(${column}, '[0-9]{5}')`,
  // Thai, Lao, Khmer and Myanmar (their runs became pairs of characters).
  4: (column) => `regexp_like(${column}, '[\\p{Thai}\\p{Lao}\\p{Khmer}\\p{Myanmar}]')`,
};

export abstract class RecordRepository<T extends { id: number }> {
  readonly table: ProjectTable;

  protected constructor(
    protected readonly store: Store,
    name: TableName,
    readonly project: string,
    readonly kind: SourceKind,
    readonly cells: CellRepository,
    private readonly toRecord: (row: Row) => T,
    /** The columns toRecord reads (all when unset). */
    private readonly columns?: string[],
  ) {
    this.table = new ProjectTable(store, name, project);
  }

  /**
   * Records by id, in the order asked, missing ones left out. One read that the id index
   * answers: `id IN (...)` with a limit and only the columns a record needs.
   */
  async get(ids: number[], options: { includeSuppressed?: boolean; branch?: BranchScope } = {}): Promise<T[]> {
    const asked = checkIds(ids);
    const unique = [...new Set(asked)];
    if (unique.length === 0) return [];
    let where = `id IN ${sqlIntList(unique)}`;
    if (!options.includeSuppressed) where += ` AND status <> 'suppressed'`;
    // A caller on a branch reads what a search there finds: not another branch's records.
    const branch = options.branch ? branchWhere(options.branch) : null;
    if (branch) where += ` AND ${branch}`;
    const rows = await this.table.rows(where, { select: this.columns, limit: unique.length });
    return orderBy(rows.map(this.toRecord), asked);
  }

  /**
   * What a list shown to a caller (the sidebar's sessions, observations and memories) reads of
   * this kind while forgets are journalled, whichever process runs them or was killed running them
   * (see PendingForgets): `where` narrowed by the search's filter, and `keeps` to test each row's id
   * read (a forget naming more records than a filter lists); null when the project is under a
   * forget whole. Filtered before a list takes its page, so a page holds all it can. With
   * `exceptForgetting` false (a read for the store's own upkeep), `where` and every row as they are.
   */
  async forgetFilter(where: string | null, exceptForgetting: boolean): Promise<{ where: string | null; keeps: (id: unknown) => boolean } | null> {
    if (!exceptForgetting) return { where, keeps: () => true };
    const pending = await pendingForgets(this.store);
    const forgetting = pending.recordsWhere(this.project, this.kind);
    if (forgetting === 'false') return null;
    return {
      where: forgetting ? (where ? `(${where}) AND ${forgetting}` : forgetting) : where,
      keeps: (id) => !pending.covers(this.project, this.kind, Number(id)),
    };
  }

  /**
   * Adds records and then their cells (two commits: a crash in between leaves records the
   * store's repair gives cells). When either fails (a full disk, say, or an object store that
   * committed the records and answered with an error) the records are taken back before the error
   * goes on: the caller is told the write failed, so trying again must not find half of it stored.
   * Their ids are fresh, so nothing else has them. Should taking them back fail too (a full disk
   * takes the delete as well), the error says they stay stored, and the repair gives them cells.
   */
  protected async addWithCells(rows: Row[], cells: Row[]): Promise<void> {
    let added = false;
    try {
      await this.table.add(rows, 'id');
      added = true;
      await this.cells.add(cells);
    } catch (error) {
      const ids = rows.map((r) => Number(r.id));
      // Also after an add that failed: one answered with an error may have gone through.
      const takenBack = await this.table.delete(`id IN ${sqlIntList(ids)}`).then(() => true, () => false);
      await this.cells.delete(this.kind, ids).catch(() => undefined);
      // An add answered with an error may have gone through: what could not be taken back may be stored.
      if (!takenBack) {
        const one = ids.length === 1;
        const which = one ? ` (id ${ids[0]})` : `s (ids ${ids.slice(0, 10).join(', ')}${ids.length > 10 ? ', …' : ''})`;
        const state = added ? (one ? 'stays stored' : 'stay stored') : 'may be stored';
        noteLeftStored(error, `this call's ${this.kind} record${which} could not be taken back and ${state}: look before writing ${one ? 'it' : 'them'} again`);
      }
      throw error;
    }
  }

  async setStatus(id: number, status: string): Promise<void> {
    if (!(RECORD_STATUSES as readonly string[]).includes(status)) throw new FilterError(`unknown status '${status}': use ${RECORD_STATUSES.join(', ')}`);
    const [checked] = checkIds([id]);
    if ((await this.table.count(`id = ${checked}`)) === 0) throw new Error(`No ${this.kind} ${checked} in project ${this.project}`);
    await this.table.update(`id = ${checked}`, { status: sqlString(status) });
    await this.cells.update(this.kind, [checked], { status: sqlString(status) });
  }

  /** Records an access at `at` (default now): last-accessed time, and the cells' access count. */
  async touch(ids: number[], at = Date.now()): Promise<void> {
    const checked = checkIds(ids);
    if (checked.length === 0) return;
    const now = String(Math.trunc(at));
    if (this.kind !== 'session_summary') await this.table.update(`id IN ${sqlIntList(checked)}`, { last_accessed_epoch: now });
    await this.cells.update(this.kind, checked, { last_accessed_epoch: now, access_count: 'access_count + 1' });
  }

  /**
   * Prepares the search text of this kind's cells again where their record holds text that the
   * preparations after `since` read differently (see PREPARED_OTHERWISE), keeping everything else
   * of the cell (its vector, its access count). Returns how many cells changed.
   */
  async reprepareCells(since: number): Promise<number> {
    const tests = Object.entries(PREPARED_OTHERWISE).filter(([version]) => Number(version) > since);
    const text = this.searchedColumns.flatMap((column) => tests.map(([, test]) => test(column)));
    if (text.length === 0) return 0;
    let changed = 0;
    for await (const batch of this.table.batches(`(${text.join(' OR ')})`, ['id'])) {
      const ids = Array.from((batch.getChild('id')?.toArray() as ArrayLike<bigint | number>) ?? [], Number);
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        const records = new Map((await this.table.rows(`id IN ${sqlIntList(chunk)}`)).map((r) => [Number(r.id), r]));
        const rows: Row[] = [];
        for (const cell of await this.cells.table.rows(`source_kind = ${sqlString(this.kind)} AND source_id IN ${sqlIntList(chunk)}`)) {
          const record = records.get(Number(cell.source_id));
          const searchText = record && this.cellOf(record, cell).search_text;
          if (record && searchText !== cell.search_text) rows.push({ ...cell, search_text: searchText });
        }
        await this.cells.rewrite(rows);
        changed += rows.length;
      }
    }
    return changed;
  }

  /**
   * The search cell of a stored row of this kind (see cells.ts). `old`, its cell as stored, gives
   * what only the cell keeps (a session summary's files).
   */
  protected abstract cellOf(row: Row, old?: Row): Row;

  /**
   * The record's text columns its cell's search text is prepared from (by cellOf); the others
   * (ids, times, hashes) are never read for search, and reprepareCells does not look at them.
   */
  protected abstract readonly searchedColumns: readonly string[];

  /**
   * Brings this kind back to one cell per record: gives records a crash left without a cell
   * theirs, and drops second copies and cells of deleted records (see CellRepository.removeStray).
   * Returns how many cells were added or removed.
   */
  async repairCells(onSuspect?: (kind: SourceKind, orphans: number) => void): Promise<number> {
    const missing = await this.missingCells();
    for (let i = 0; i < missing.length; i += 500) {
      const rows = await this.table.rows(`id IN ${sqlIntList(missing.slice(i, i + 500))}`);
      await this.cells.add(rows.map((r) => this.cellOf(r)));
    }
    const removed = await this.cells.removeStray(
      this.kind,
      async () => new Set((await this.table.rows(null, { select: ['id'] })).map((r) => Number(r.id))),
      (orphans) => onSuspect?.(this.kind, orphans),
    );
    return missing.length + removed;
  }

  /**
   * Ids of this kind's records that have no cell (a crash between the two writes). A writer
   * commits a record's cell right after the record: a record is only reported when it still has
   * no cell after `graceMs`, so a write in progress is not taken for a crash.
   */
  async missingCells(graceMs = 1000): Promise<number[]> {
    const scan = async (only?: number[]): Promise<number[]> => {
      const list = only ? sqlIntList(only) : null;
      const ids = (await this.table.rows(list ? `id IN ${list}` : null, { select: ['id'] })).map((r) => Number(r.id));
      if (ids.length === 0) return [];
      const cellWhere = `source_kind = ${sqlString(this.kind)}${list ? ` AND source_id IN ${list}` : ''}`;
      const have = new Set((await this.cells.table.rows(cellWhere, { select: ['source_id'] })).map((r) => Number(r.source_id)));
      return ids.filter((id) => !have.has(id));
    };
    const first = await scan();
    if (first.length === 0 || graceMs <= 0) return first;
    await new Promise((resolve) => setTimeout(resolve, graceMs));
    return scan(first.slice(0, 10_000));
  }
}
