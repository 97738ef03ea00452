// Memories of one project (L2): rows with their cells, rewritten in place (so a node id held by
// a client stays valid) when a newer memory closes their facts.

import type { MemoryOutline } from '../../api';
import type { Memory } from '../../model/records';
import { memoryCell } from '../cells';
import { branchWhere, sqlInt, sqlString, sqlText } from '../filters';
import { memoryToRow, parseJson, rowToMemory } from '../mapping';
import { TABLES } from '../schema';
import type { Row, Store } from '../store';
import type { CellRepository } from './cells';
import type { GraphRepository } from './graph';
import { RecordRepository } from './records';

const OUTLINE_COLUMNS = ['id', 'memory_type', 'status', 'superseded_by', 'updated_at_epoch', 'conflicts'];

interface ListOptions {
  includeSuppressed?: boolean;
  /** None a forget under way names (forgetFilter), as a list shown to a caller reads them. */
  exceptForgetting?: boolean;
  branch?: string;
  defaultBranch?: string | null;
}

/** A list's filter: the branch's memories (with what holds on every branch), suppressed ones only when asked, and `more`. */
function listWhere(options: ListOptions, more: string[] = []): string | null {
  const parts = [...(options.branch ? [branchWhere(options)!] : []), ...more];
  if (!options.includeSuppressed) parts.push(`status <> 'suppressed'`);
  return parts.join(' AND ') || null;
}

/** Newest first (updated), ties by id. */
function newestFirst<T extends { updated_at_epoch: number; id: number }>(rows: T[]): T[] {
  return rows.sort((a, b) => b.updated_at_epoch - a.updated_at_epoch || b.id - a.id);
}

export class MemoryRepository extends RecordRepository<Memory> {
  /**
   * The memories written or rewritten through this repository (one is made per call, see
   * Repositories.forProject): what a forget that ran meanwhile may have to take back (settleForgets).
   */
  readonly written = new Set<number>();

  constructor(
    store: Store,
    project: string,
    cells: CellRepository,
    private readonly graph: GraphRepository,
    /** The repository's own default branch where its callers named it (ProjectRepositories). */
    readonly defaultBranch: string | null = null,
  ) {
    super(store, TABLES.memories, project, 'memory', cells, rowToMemory);
  }

  /**
   * Runs `fn` alone among the store's writers of memories that read other memories first (a new
   * memory superseding older ones, a conflict's review, an edit, a status set, a forget relinking
   * a supersede chain), in every process (see Store.exclusive): two at once would each find the
   * same older memory current and both retire it, or both miss the other's topic_key, leaving two
   * current memories of one topic, or write back a copy read before the other's write. Not
   * re-entrant: `fn` must not take it again. Lock order: a caller holding `summaries` (session
   * promotion) or `import` may take it; nothing holding it takes those.
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.store.exclusive('memories', fn);
  }

  /**
   * Sets a memory's status under the memories lock: a supersede that read the memory before would
   * otherwise write its whole row back over the status a person chose (a suppression lost).
   */
  override async setStatus(id: number, status: string): Promise<void> {
    await this.exclusive(() => super.setStatus(id, status));
  }

  /** `replacingOn`: only the current memories of exactly that branch that replace others (what they shadow there). */
  /** `aboutFiles`: only the decisions and conventions that name files, the memories of the entity graph (memoryGraph). */
  async list(options: ListOptions & { replacingOn?: string; aboutFiles?: boolean } = {}): Promise<Memory[]> {
    const parts: string[] = [];
    if (options.aboutFiles) parts.push(`memory_type IN ('decision', 'convention') AND files IS NOT NULL AND files <> '[]'`);
    if (options.replacingOn) parts.push(`branch = ${sqlString(options.replacingOn)} AND status = 'active' AND supersedes IS NOT NULL`);
    return newestFirst((await this.listedRows(listWhere(options, parts), options)).map(rowToMemory));
  }

  /** The rows `where` keeps, of memories no forget under way names when `exceptForgetting`. */
  private async listedRows(where: string | null, options: ListOptions, select?: string[]): Promise<Row[]> {
    const filter = await this.forgetFilter(where, options.exceptForgetting === true);
    return filter ? (await this.table.rows(filter.where, { select })).filter((r) => filter.keeps(r.id)) : [];
  }

  /** list()'s memories (same filter and order), only the columns of a MemoryOutline read. */
  async outline(options: ListOptions = {}): Promise<MemoryOutline[]> {
    const rows = await this.listedRows(listWhere(options), options, OUTLINE_COLUMNS);
    return newestFirst(
      rows.map((r): MemoryOutline => {
        const m = rowToMemory(r);
        return { id: m.id, memory_type: m.memory_type, status: m.status, superseded_by: m.superseded_by, updated_at_epoch: m.updated_at_epoch, conflicts: m.conflicts };
      }),
    );
  }

  /** Writes a new memory row and its L2 cell; decisions and conventions about files join the graph. */
  async write(memory: Memory, extra: { source_ids?: number[] } = {}): Promise<void> {
    this.written.add(memory.id);
    await this.addWithCells([memoryToRow(memory, extra)], [memoryCell(memory, this.cells.dimension)]);
    await this.graph.addMemory(memory);
  }

  /**
   * Replaces a stored memory row in place and updates its cell (text or status changed). A memory
   * no longer stored (forgotten since the caller read it) is left gone: nothing is written.
   */
  async rewrite(memory: Memory): Promise<void> {
    this.written.add(memory.id);
    const prev = (await this.table.rows(`id = ${sqlInt(memory.id)}`, { limit: 1 }))[0];
    if (!prev) return;
    const row = memoryToRow(memory, {
      source_ids: prev.source_ids ? parseJson<number[]>(prev.source_ids, []) : undefined,
      access_count: Number(prev.access_count ?? 0),
      last_accessed_epoch: prev.last_accessed_epoch === null || prev.last_accessed_epoch === undefined ? null : Number(prev.last_accessed_epoch),
    });
    if ((await this.store.rewrite(TABLES.memories, 'id', this.project, [row])) === 0) return;
    // A decision's graph entity is labelled with its title: an edited title relabels it.
    if (prev.title !== memory.title) await this.graph.addMemory(memory);
    const cell = memoryCell(memory, this.cells.dimension);
    if ((await this.cells.count('memory', [memory.id])) === 0) {
      await this.cells.add([cell]);
      return;
    }
    // The vector is of the title and text (embeddingText): a new status, new facts or a new trace
    // segment keep it; new words are embedded again.
    const reworded = prev.title !== memory.title || prev.text !== memory.text;
    await this.cells.update('memory', [memory.id], {
      title: sqlText(String(cell.title)),
      text: sqlText(String(cell.text)),
      search_text: sqlText(String(cell.search_text)),
      status: sqlText(String(cell.status)),
      type: sqlText(String(cell.type)),
      ...(reworded ? { embed_model: "''" } : {}),
    });
  }

  protected readonly searchedColumns = ['title', 'text', 'files', 'topic_key', 'temporal_facts'];

  protected cellOf(row: Row): Row {
    return memoryCell(rowToMemory(row), this.cells.dimension);
  }

  /** Ids of memories evidenced by any of these observations. */
  async citing(observationIds: Set<number>): Promise<number[]> {
    const rows = await this.table.rows('source_ids IS NOT NULL', { select: ['id', 'source_ids'] });
    return rows.filter((r) => parseJson<number[]>(r.source_ids, []).some((id) => observationIds.has(Number(id)))).map((r) => Number(r.id));
  }
}
