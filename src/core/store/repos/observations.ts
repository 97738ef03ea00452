// Observations of one project (L0). insert() is the write path of capture and import: stored
// dedupe keys return the stored row, near-duplicates bump it, and new observations are written
// with their cells (rows first: a crash in between leaves a row the store's repair gives a cell).

import { append, smallest } from '../../lists';
import type { Observation } from '../../model/records';
import { DOCUMENT_TYPE } from '../../model/records';
import { observationCell } from '../cells';
import { branchWhere, sqlContains, sqlInt, sqlIntList, sqlString, sqlStringList, validType } from '../filters';
import type { BranchScope } from '../filters';
import { OBSERVATION_COLUMNS, jsonList, observationToRow, rowToObservation } from '../mapping';
import { TABLES } from '../schema';
import type { IdAllocator } from '../ids';
import type { Row, Store } from '../store';
import type { CellRepository } from './cells';
import { RecordRepository } from './records';

/** An observation ready to store, before it has an id. */
export interface PreparedObservation {
  obs: Omit<Observation, 'id'>;
  extra: string | null;
  dedupe: string | null;
  /** The dedupe key is a grow key: a stored observation with it takes this one's content. */
  grows?: boolean;
  fp: string | null;
}

type RowExtra = Parameters<typeof observationToRow>[1];

/** A working session as its observations show it. */
export interface SessionSpan {
  id: string;
  /** The branch of the first observation read. */
  branch: string | null;
  first: number;
  last: number;
  count: number;
}

export class ObservationRepository extends RecordRepository<Observation> {
  constructor(
    store: Store,
    project: string,
    cells: CellRepository,
    private readonly ids: IdAllocator,
    private readonly duplicateWindowMs: number,
  ) {
    super(store, TABLES.observations, project, 'observation', cells, rowToObservation, OBSERVATION_COLUMNS);
  }

  /** The newest `limit` observations a caller reads, none a forget under way names (forgetFilter). */
  async list(options: { sessionId?: string; branch?: string; defaultBranch?: string | null; limit?: number; type?: string } = {}): Promise<Observation[]> {
    let where = `status <> 'suppressed'`;
    if (options.type !== undefined) where += ` AND type = ${sqlString(validType(options.type))}`;
    if (options.branch) where += ` AND ${branchWhere(options)}`;
    if (options.sessionId !== undefined) where += ` AND memory_session_id = ${sqlString(options.sessionId)}`;
    const filter = await this.forgetFilter(where, true);
    if (!filter) return [];
    const rows = (await this.table.rows(filter.where)).filter((r) => filter.keeps(r.id)).map(rowToObservation);
    rows.sort((a, b) => b.created_at_epoch - a.created_at_epoch || b.id - a.id);
    return rows.slice(0, Math.max(1, Math.min(10_000, options.limit ?? 100)));
  }

  /**
   * The newest `limit` active observations a caller on `branch` reads that could give one of
   * these graph entities (an id such as file:src/a.ts, commit:<12 hex>, branch:, author:, concept:,
   * or a label alone): what the graph of that branch is derived from (see MemoryEngine.entities).
   * A superset: deriving the graph from them says which do.
   */
  async touching(names: string[], branch: BranchScope, limit = 500): Promise<Observation[]> {
    const any = names.flatMap((name) => {
      const [, type, label] = /^(?:(file|commit|branch|author|concept):)?(.*)$/s.exec(name)!;
      const clauses: string[] = [];
      if (!label) return clauses;
      if (!type || type === 'file') clauses.push(sqlContains('files_modified', JSON.stringify(label)), sqlContains('files_read', JSON.stringify(label)));
      if ((!type || type === 'commit') && /^[0-9a-f]{4,64}$/.test(label)) clauses.push(`commit_sha LIKE ${sqlString(`${label}%`)}`);
      if (!type || type === 'branch') clauses.push(`branch = ${sqlString(label)}`);
      if (!type || type === 'author') clauses.push(`(${sqlContains('lower(narrative)', label.toLowerCase())} AND ${sqlContains('lower(narrative)', 'author:')})`);
      if (!type || type === 'concept') clauses.push(sqlContains('lower(concepts)', JSON.stringify(label.toLowerCase())));
      return clauses;
    });
    if (any.length === 0) return [];
    const where = [`status = 'active'`, `(${any.join(' OR ')})`, branchWhere(branch)].filter(Boolean).join(' AND ');
    const rows = (await this.table.rows(where)).map(rowToObservation);
    rows.sort((a, b) => b.created_at_epoch - a.created_at_epoch || b.id - a.id);
    return rows.slice(0, limit);
  }

  /**
   * What one session of this project recorded: its active observations and those an earlier end
   * of the session merged (status `merged`: a session ended again is summarised from all it did),
   * not the merged observations themselves nor suppressed ones.
   */
  async inSession(sessionId: string): Promise<Observation[]> {
    const rows = await this.table.rows(`memory_session_id = ${sqlString(sessionId)} AND status IN ('active', 'merged')`);
    return rows.map(rowToObservation).filter((o) => o.type !== 'merged');
  }

  /**
   * The commits on `branch` stored since `since` (epoch ms) in any session of this project: two
   * windows (or a window and the CLI) each see a commit, and its dedupe key stores it in the
   * session of whichever wrote it first. None a forget under way names (a summary must not quote it).
   */
  async commitsSince(branch: string, since: number): Promise<Observation[]> {
    const filter = await this.forgetFilter(`type = 'commit' AND status IN ('active', 'merged') AND branch = ${sqlString(branch)} AND created_at_epoch >= ${sqlInt(Math.floor(since))}`, true);
    if (!filter) return [];
    return (await this.table.rows(filter.where)).filter((r) => filter.keeps(r.id)).map(rowToObservation);
  }

  /** The merged observations an end of one session of this project wrote (with their sources). */
  async mergedInSession(sessionId: string): Promise<Observation[]> {
    const rows = await this.table.rows(`memory_session_id = ${sqlString(sessionId)} AND type = 'merged'`);
    return rows.map(rowToObservation);
  }

  /**
   * The working sessions that have observations passing `clause`, with their first and last
   * observation times and counts (for session lists and the orphan sweep): the project's
   * documents are a layer, not a session. Read as a stream of three columns, so a project of a
   * million observations costs its sessions' memory, not its rows'. `exceptForgetting`: of the
   * observations no forget under way names (forgetFilter), as a list shown to a caller reads them.
   */
  async sessionSpans(clause: string | null = null, options: { exceptForgetting?: boolean } = {}): Promise<Map<string, SessionSpan>> {
    const notDocuments = `type <> '${DOCUMENT_TYPE}'`;
    const spans = new Map<string, SessionSpan>();
    const filter = await this.forgetFilter(clause ? `(${clause}) AND ${notDocuments}` : notDocuments, options.exceptForgetting === true);
    if (!filter) return spans;
    for await (const batch of this.table.batches(filter.where, ['memory_session_id', 'branch', 'created_at_epoch', ...(options.exceptForgetting ? ['id'] : [])])) {
      const ids = batch.getChild('memory_session_id')!;
      const branches = batch.getChild('branch')!;
      const times = batch.getChild('created_at_epoch')!;
      const recordIds = batch.getChild('id');
      for (let i = 0; i < batch.numRows; i++) {
        if (recordIds && !filter.keeps(recordIds.get(i))) continue;
        const id = String(ids.get(i));
        const at = Number(times.get(i));
        const span = spans.get(id);
        if (!span) {
          const branch = branches.get(i) as string | null;
          spans.set(id, { id, branch: branch ?? null, first: at, last: at, count: 1 });
          continue;
        }
        span.first = Math.min(span.first, at);
        span.last = Math.max(span.last, at);
        span.count++;
      }
    }
    return spans;
  }

  /** Ids of earlier sessions' observations whose text contains `text` (evidence for promotion). */
  async mentioning(text: string, exceptSession: string, limit: number): Promise<{ id: number; created_at_epoch: number }[]> {
    const rows = await this.table.rows(
      `memory_session_id <> ${sqlString(exceptSession)} AND (${sqlContains('narrative', text)} OR ${sqlContains('facts', text)})`,
      { select: ['id', 'created_at_epoch'], limit },
    );
    return rows.map((r) => ({ id: Number(r.id), created_at_epoch: Number(r.created_at_epoch) }));
  }

  async markMerged(ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.table.update(`id IN ${sqlIntList(ids)}`, { status: `'merged'` });
    await this.cells.update('observation', ids, { status: `'merged'` });
  }

  /** Writes observations built elsewhere (merged observations, imports) with their cells. */
  async write(observations: Observation[], extras: (RowExtra | undefined)[] = []): Promise<void> {
    if (observations.length === 0) return;
    await this.addWithCells(
      observations.map((o, i) => observationToRow(o, extras[i] ?? {})),
      observations.map((o, i) => observationCell(o, extras[i]?.search_extra ?? null, this.cells.dimension)),
    );
  }

  /**
   * Stores prepared observations; returns, per input, the stored observation it became (a new
   * one, the one its dedupe key names, or the near-duplicate it bumped).
   */
  async insert(prepared: PreparedObservation[], now: number): Promise<{ results: Observation[]; written: Observation[] }> {
    // Two processes storing the same records at once (two imports of one repository) would both
    // find them missing and both add them: the check and the write go together.
    return this.store.exclusive('observations', () => this.insertAlone(prepared, now));
  }

  private async insertAlone(prepared: PreparedObservation[], now: number): Promise<{ results: Observation[]; written: Observation[] }> {
    const results: (Observation | null)[] = prepared.map(() => null);
    const all = prepared.map((_, i) => i);

    // Idempotent imports: a dedupe_key already stored returns the stored observation. A grow
    // key already stored (an edit of the session seen before) gets the newest content instead.
    const keys = [...new Set(prepared.map((p) => p.dedupe).filter((k): k is string => !!k))];
    const grown = new Map<string, { row: Row; index: number }>();
    if (keys.length > 0) {
      const found = new Map<string, Row>();
      for (const r of await this.table.rows(`dedupe_key IN ${sqlStringList(keys)}`)) found.set(String(r.dedupe_key), r);
      for (const i of all) {
        const p = prepared[i];
        const row = p.dedupe ? found.get(p.dedupe) : undefined;
        if (!row) continue;
        if (p.grows) grown.set(p.dedupe as string, { row, index: i });
        else results[i] = rowToObservation(row);
      }
    }
    // Within a batch, the last input of a grow key is the one kept.
    const lastGrow = new Map<string, number>();
    for (const i of all) if (prepared[i].grows && prepared[i].dedupe) lastGrow.set(prepared[i].dedupe as string, i);
    const replaced: { o: Observation; extra: RowExtra }[] = [];
    const foldInto = new Map<number, number>();
    for (const [key, last] of lastGrow) {
      const stored = grown.get(key)?.row;
      if (stored) {
        const before = rowToObservation(stored);
        const o: Observation = { ...prepared[last].obs, id: before.id, project: this.project, created_at: before.created_at, created_at_epoch: before.created_at_epoch, last_accessed_epoch: before.last_accessed_epoch };
        replaced.push({ o, extra: { search_extra: prepared[last].extra, dedupe_key: key, occurrences: Number(stored.occurrences ?? 1) + 1, updated_at_epoch: now } });
        for (const j of all) if (prepared[j].dedupe === key) results[j] = o;
      } else {
        for (const j of all) if (j !== last && prepared[j].dedupe === key) foldInto.set(j, last);
      }
    }

    // Within one batch, a dedupe key given again is what it is in a later call: skipped, the
    // input answered with what the key's first input became (not counted as an occurrence).
    // Grow keys are settled above.
    const sameKey = new Map<number, number>();
    const firstWithKey = new Map<string, number>();
    for (const i of all) {
      const key = prepared[i].dedupe;
      if (!key || results[i] || foldInto.has(i) || lastGrow.has(key)) continue;
      const first = firstWithKey.get(key);
      if (first === undefined) firstWithKey.set(key, i);
      else sameKey.set(i, first);
    }
    const open = (i: number): boolean => !results[i] && !sameKey.has(i);

    // Near-duplicates (same session, type, files and normalised title, within the window)
    // bump the stored observation instead of adding another.
    const bumps = new Map<number, { row: Row; add: number; facts: string[] }>();
    const fps = [...new Set(all.filter(open).map((i) => prepared[i].fp).filter((f): f is string => !!f))];
    if (fps.length > 0) {
      const since = smallest(prepared.map((p) => p.obs.created_at_epoch)) - this.duplicateWindowMs;
      const existing = await this.table.rows(`fingerprint IN ${sqlStringList(fps)} AND status = 'active' AND created_at_epoch >= ${sqlInt(since)}`);
      for (const i of all) {
        if (!open(i)) continue;
        const p = prepared[i];
        const match = existing.find(
          (r) => r.fingerprint === p.fp && r.memory_session_id === p.obs.memory_session_id && Math.abs(Number(r.created_at_epoch) - p.obs.created_at_epoch) <= this.duplicateWindowMs,
        );
        if (!match) continue;
        const entry = bumps.get(Number(match.id)) ?? { row: match, add: 0, facts: [] };
        entry.add++;
        append(entry.facts, JSON.parse(p.obs.facts ?? '[]') as string[]);
        bumps.set(Number(match.id), entry);
        results[i] = rowToObservation(match);
      }
    }

    // Within one batch, the second of two near-duplicates folds into the first.
    const firstByFp = new Map<string, number>();
    prepared.forEach((p, i) => {
      if (!open(i) || !p.fp) return;
      const key = `${p.obs.memory_session_id}\u0000${p.fp}`;
      const first = firstByFp.get(key);
      if (first === undefined) firstByFp.set(key, i);
      else foldInto.set(i, first);
    });

    const fresh = all.filter((i) => open(i) && !foldInto.has(i));
    const ids = fresh.length > 0 ? await this.ids.allocate(fresh.length) : [];
    const occurrences = new Map<number, number>();
    for (const first of foldInto.values()) occurrences.set(first, (occurrences.get(first) ?? 1) + 1);
    const written: Observation[] = [];
    const extras: RowExtra[] = [];
    fresh.forEach((i, k) => {
      const p = prepared[i];
      const o: Observation = { id: ids[k], ...p.obs, project: this.project };
      results[i] = o;
      written.push(o);
      extras.push({ search_extra: p.extra, dedupe_key: p.dedupe, fingerprint: p.fp, occurrences: occurrences.get(i) ?? 1 });
    });
    for (const [dup, first] of foldInto) results[dup] = results[first];
    for (const [dup, first] of sameKey) results[dup] = results[first];

    await this.write(written, extras);
    await this.replace(replaced);
    if (bumps.size > 0) {
      const rows = [...bumps.values()].map(({ row, add, facts }) => {
        const merged = [...new Set([...(JSON.parse(String(row.facts ?? '[]')) as string[]), ...facts])];
        return { ...row, occurrences: Number(row.occurrences ?? 1) + add, updated_at_epoch: now, facts: jsonList(merged) };
      });
      // A near-duplicate of an observation forgotten since it was read goes with it.
      await this.store.rewrite(TABLES.observations, 'id', this.project, rows);
    }
    return { results: results as Observation[], written };
  }

  /** Gives observations new index text (their search_extra), their rows and cells rewritten in place. */
  async rewriteSearchExtra(extras: Map<number, string | null>): Promise<void> {
    if (extras.size === 0) return;
    const rows = await this.table.rows(`id IN ${sqlIntList([...extras.keys()])}`);
    await this.replace(
      rows.map((r) => ({
        o: rowToObservation(r),
        extra: {
          search_extra: extras.get(Number(r.id)) ?? null,
          dedupe_key: (r.dedupe_key as string | null) ?? null,
          fingerprint: (r.fingerprint as string | null) ?? null,
          occurrences: Number(r.occurrences ?? 1),
          updated_at_epoch: r.updated_at_epoch === null || r.updated_at_epoch === undefined ? undefined : Number(r.updated_at_epoch),
        },
      })),
    );
  }

  /**
   * Replaces grown observations' rows and their cells' text in place: same id, same node id (a
   * client holding it still finds it); the vector is redone by the embedding queue. Only stored
   * observations: one forgotten since it was read stays gone, its next content with it.
   */
  private async replace(replaced: { o: Observation; extra: RowExtra }[]): Promise<void> {
    if (replaced.length === 0) return;
    await this.store.rewrite(TABLES.observations, 'id', this.project, replaced.map(({ o, extra }) => observationToRow(o, extra)));
    const ids = replaced.map(({ o }) => o.id);
    const stored = new Set((await this.table.rows(`id IN ${sqlIntList(ids)}`, { select: ['id'] })).map((r) => Number(r.id)));
    const nodes = new Map<number, Row>();
    for (const r of await this.cells.table.rows(`source_kind = 'observation' AND source_id IN ${sqlIntList(ids)}`, { select: ['node_id', 'source_id', 'access_count', 'last_accessed_epoch'] })) nodes.set(Number(r.source_id), r);
    const kept: Row[] = [];
    const added: Row[] = [];
    for (const { o, extra } of replaced) {
      if (!stored.has(o.id)) continue;
      const cell = observationCell(o, extra.search_extra ?? null, this.cells.dimension);
      const old = nodes.get(o.id);
      if (old) kept.push({ ...cell, node_id: old.node_id, access_count: old.access_count ?? 0, last_accessed_epoch: old.last_accessed_epoch ?? null });
      else added.push(cell);
    }
    await this.cells.rewrite(kept);
    // A grown row whose cell a crash left out gets its one cell the way every record does.
    await this.cells.add(added);
  }

  protected readonly searchedColumns = ['type', 'title', 'subtitle', 'narrative', 'facts', 'concepts', 'files_read', 'files_modified', 'search_extra'];

  protected cellOf(row: Row): Row {
    return observationCell(rowToObservation(row), (row.search_extra as string | null) ?? null, this.cells.dimension);
  }
}
