// Store-wide upkeep, off the query path: finishing an interrupted forget and restoring one cell
// per record (at open, and when the lease is renewed), compaction, pruning of old versions, the
// request log's retention, the full-text index segments and the ANN index (on a timer). One job
// at a time, in the maintenance-lease holder, and none while a forget runs (FORGET_LOCK).

import type { Table } from '@lancedb/lancedb';
import { ensureAnnIndex } from './annIndex';
import { resumeForget, rewriteFragments } from './forget';
import type { Forgotten } from './forget';
import { DEFAULT_LEXICON_MIN_DELTA, indexProjectLexicon } from './lexiconIndexer';
import type { Repositories } from './repos/repositories';
import { pruneSessionPrompts } from './repos/prompts';
import { DEFAULT_REQUEST_LOG_RETENTION, pruneRequestLog } from './repos/requestLog';
import type { RequestLogRetention } from './repos/requestLog';
import { RECORD_TABLES, TABLES } from './schema';
import type { TableName } from './schema';
import { ensureScalarIndexes } from './indexes';
import { FORGET_LOCK, VERSIONS_KEPT_MS } from './store';
import { errorMessage } from '../errorText';
import { TEXT_PREP_VERSION } from '../retrieve/textPrep';

/** Meta key: the text preparation (textPrep.TEXT_PREP_VERSION) the cells' search text was written with. */
const TEXT_PREP_KEY = 'text_prep_version';

/** Small fragments in one table from which the timer compacts it even though no cell was written. */
export const FRAGMENTS_BEFORE_COMPACTION = 16;

/** The tables whose rows age out: the request log (its retention) and the session prompts (30 days, 5 a session). */
const AGED_OUT_TABLES: TableName[] = [TABLES.requestLog, TABLES.sessionPrompts];

/** How often the fragments holding their deleted rows are rewritten (see rewriteAgedOut). */
export const AGED_OUT_REWRITE_MS = 3600_000;

export interface MaintenanceOptions {
  /** Build the ANN index on the cells once the store is big enough. */
  annIndex: boolean;
  /** Embedded cells from which the index is built (default DEFAULT_ANN_THRESHOLD). */
  annThreshold?: number;
  requestLogRetention?: RequestLogRetention;
  /** Rows outside the full-text index segments before a new segment is written (default 1,000). */
  lexiconMinDelta?: number;
  log: (message: string) => void;
}

/**
 * Maintenance's jobs, each covering those of lower rank: an optimize does all a tidy does (and
 * more: every table, the retention asked for, the ANN index), a tidy writes the full-text segments.
 */
const JOB_RANK = { 'full-text index': 0, upkeep: 1, maintenance: 2 } as const;
type Job = keyof typeof JOB_RANK;

export class Maintenance {
  private running: Promise<void> | null = null;
  /** The kind of job running. */
  private runningJob: Job | null = null;
  /** A job asked for while one it is not covered by ran: it runs next (one of each kind). */
  private readonly queued = new Map<Job, Promise<void>>();
  /** Cells without a record the last repair kept (see CellRepository.removeStray): not looked for again each renewal. */
  private keptOrphans = 0;
  /** When rewriteAgedOut last looked, and when it last rewrote a fragment whose old version is not pruned yet. */
  private agedOutCheckedAt = 0;
  private agedOutRewrittenAt: number | null = null;

  constructor(
    private readonly repos: Repositories,
    private readonly options: MaintenanceOptions,
  ) {}

  /** Projects that have records, from the record tables' project columns (and the cells', with `cells`). */
  async projects(options: { cells?: boolean } = {}): Promise<string[]> {
    const projects = new Set<string>();
    const tables = [...RECORD_TABLES, ...(options.cells ? [TABLES.cells] : [])];
    for (const name of tables) for (const p of await this.projectsIn(name)) projects.add(p);
    return [...projects].sort();
  }

  /** The projects that have rows in one table. */
  private projectsIn(name: TableName): Promise<string[]> {
    return this.repos.store.distinct(name, 'project');
  }

  /** Finishes a forget a crash interrupted (at open, before anything is read). */
  async resumeForget(): Promise<Forgotten[]> {
    const resumed = await resumeForget(this.repos);
    for (const { report } of resumed) this.options.log(`finished an interrupted forget (${report.observations} observations, ${report.memories} memories)`);
    return resumed;
  }

  /**
   * Brings the store back to one cell per record, which two commits (record, then cell) cannot
   * promise by themselves: a crash between them leaves a record without its cell, a writer slower
   * than the repair's grace a second copy of it, and a forget between them a cell without its
   * record. Returns the number of cells added or removed.
   */
  async repairCells(): Promise<number> {
    // Each record has one cell: equal counts (the common case, two index-backed counts) mean
    // there is nothing to look for.
    const store = this.repos.store;
    let records = 0;
    for (const name of RECORD_TABLES) records += await store.count(name);
    const cells = await store.count(TABLES.cells);
    // Equal, or off by exactly the cells the last repair kept as lost records' only copy.
    if (records === cells || (this.keptOrphans > 0 && cells - records === this.keptOrphans)) return 0;
    let repaired = 0;
    let kept = 0;
    for (const project of await this.projects({ cells: true })) {
      const r = this.repos.forProject(project);
      const suspect = (kind: string, orphans: number): void => {
        kept += orphans;
        this.options.log(`${orphans} search cell(s) of ${kind} records in project ${project} have no record: the records table may have lost rows or versions; the cells are kept (code-memory doctor)`);
      };
      repaired += (await r.observations.repairCells(suspect)) + (await r.summaries.repairCells(suspect)) + (await r.memories.repairCells(suspect));
    }
    this.keptOrphans = kept;
    if (repaired > 0) this.options.log(`repaired ${repaired} search cell(s) a crash or a race had left out, doubled or orphaned`);
    return repaired;
  }

  /**
   * Prepares the cells' search text again where an earlier build prepared it otherwise (see
   * TEXT_PREP_VERSION), once per store: the meta table says which preparation the cells have
   * (none: the first, which read ASCII only). Only cells of records holding text a later
   * preparation reads otherwise change. Returns how many did. A store a newer build prepared is
   * left as it is.
   */
  async reprepareText(): Promise<number> {
    const store = this.repos.store;
    const since = Number(await store.getMeta(TEXT_PREP_KEY)) || 1;
    if (since >= TEXT_PREP_VERSION) return 0;
    let changed = 0;
    for (const project of await this.projects()) {
      const r = this.repos.forProject(project);
      changed += (await r.observations.reprepareCells(since)) + (await r.summaries.reprepareCells(since)) + (await r.memories.reprepareCells(since));
    }
    await store.setMeta({ [TEXT_PREP_KEY]: String(TEXT_PREP_VERSION) });
    if (changed > 0) this.options.log(`prepared the search text of ${changed} cell(s) again (the word index reads more of their text now)`);
    return changed;
  }

  /** Applies the request log's retention and the session prompts' expiry (at open, and on each upkeep: tidy and optimize). */
  async pruneRequestLog(): Promise<number> {
    await pruneSessionPrompts(this.repos.store);
    return pruneRequestLog(this.repos.store, this.options.requestLogRetention ?? DEFAULT_REQUEST_LOG_RETENTION);
  }

  /**
   * Compaction, FTS index merge and pruning of old versions, the request log's retention, the
   * full-text index segments, then the ANN index once the store is big enough. Never throws.
   */
  optimize(olderThanMs = VERSIONS_KEPT_MS): Promise<void> {
    return this.run('maintenance', async () => {
      await this.pruneRequestLog();
      await this.rewriteAgedOut();
      const prunes = this.agedOutToPrune(olderThanMs);
      await this.repos.store.optimize(olderThanMs);
      if (prunes) this.agedOutRewrittenAt = null;
      await this.writeLexicon(olderThanMs);
      if (this.options.annIndex) {
        const store = this.repos.store;
        await ensureAnnIndex(this.cells(), { threshold: this.options.annThreshold, build: (kind, rows) => store.buildVectorIndex(kind, rows), logger: this.options.log });
      }
    });
  }

  /** Writes full-text index segments for the rows no segment holds, where enough have gathered. Never throws. */
  indexLexicon(): Promise<void> {
    return this.run('full-text index', () => this.writeLexicon());
  }

  /**
   * The timer's job when no cell was written: the request log's retention and the prompts'
   * expiry, full-text segments for rows other processes wrote, and compaction of the tables that
   * small commits left in pieces. Every prompt, request-log
   * entry and access time is a commit of its own, written by whichever process answered; each
   * adds a fragment that every later read of the table opens, so a store only asked questions
   * slows down (at 300 one-row fragments a prompt-history read took 60 ms instead of 2) unless
   * someone compacts it. Only those tables are compacted; with `skipLarge`, not a large one either
   * (see Store.large), whose compaction rewrites much more than its pieces. Never throws.
   */
  tidy(olderThanMs = VERSIONS_KEPT_MS, options: { skipLarge?: boolean } = {}): Promise<void> {
    return this.run('upkeep', async () => {
      // A process that only answers queries runs this alone: the retention applies here too
      // (a failure there holds up none of the rest).
      await this.pruneRequestLog().catch((e) => this.options.log(`request log retention: ${errorMessage(e)}`));
      await this.writeLexicon(olderThanMs);
      await this.rewriteAgedOut();
      const store = this.repos.store;
      const prunes = this.agedOutToPrune(olderThanMs);
      const fragmented: TableName[] = [];
      for (const name of Object.values(TABLES)) {
        if (options.skipLarge && (await store.large(name))) continue;
        if ((prunes && AGED_OUT_TABLES.includes(name)) || (await store.table(name).stats()).fragmentStats.numSmallFragments >= FRAGMENTS_BEFORE_COMPACTION) fragmented.push(name);
      }
      if (fragmented.length) await store.optimize(olderThanMs, fragmented);
      if (prunes) this.agedOutRewrittenAt = null;
    });
  }

  /**
   * A row the retention deleted (or a prompt a session's newer ones replaced) stays in its
   * fragment, marked deleted, until the fragment is rewritten, and a compaction rewrites one only
   * once about a tenth of it is deleted: an aged-out request could stay on disk for good. At most
   * once an hour, the fragments of those tables that hold deleted rows are rewritten (told by their
   * deletion files, so a table with none costs a directory listing), and the next pruning of old
   * versions once they are older than the versions kept (agedOutToPrune) removes the old files.
   * Where deletion files cannot be listed (gs://) nothing is rewritten: the rows are only marked.
   */
  private async rewriteAgedOut(): Promise<void> {
    const now = Date.now();
    if (now - this.agedOutCheckedAt < AGED_OUT_REWRITE_MS) return;
    this.agedOutCheckedAt = now;
    const store = this.repos.store;
    for (const name of AGED_OUT_TABLES) {
      const fragments = await store.fragmentsWithDeletions(name);
      if (fragments === 'all' || fragments.size === 0) continue;
      await store.gate.mutate(name, () => rewriteFragments(store.table(name), fragments));
      // After the rewrite's last commit: the versions before it still hold the old files.
      this.agedOutRewrittenAt = Date.now();
    }
  }

  /** Whether a pruning of versions older than `olderThanMs` now would remove the files rewriteAgedOut replaced. */
  private agedOutToPrune(olderThanMs: number): boolean {
    return this.agedOutRewrittenAt !== null && Date.now() - this.agedOutRewrittenAt >= olderThanMs;
  }

  private async writeLexicon(olderThanMs?: number): Promise<void> {
    const store = this.repos.store;
    const segments = this.repos.lexicalSegments;
    // Projects with cells, and those whose cells are all gone but whose segments are not.
    const projects = [...new Set([...(await this.projectsIn(TABLES.cells)), ...(await segments.projects())])].sort();
    const minDelta = this.options.lexiconMinDelta ?? DEFAULT_LEXICON_MIN_DELTA;
    // New rows become a segment here, from the view this process keeps; a project of large cells
    // due to be indexed again (seconds of JavaScript) is indexed in a child process, so that this
    // one, often a server, keeps answering meanwhile.
    const rebuildInPlace = !(await store.cellsUpkeepInChild());
    let written = 0;
    const rebuild: string[] = [];
    for (const project of projects) {
      const done = await indexProjectLexicon(this.cells(), segments, project, { minDelta, rebuildInPlace });
      if (done === 'rebuild') rebuild.push(project);
      else if (done) written++;
    }
    if (rebuild.length > 0) {
      const rebuilt = await store.fullTextInChild(rebuild, minDelta);
      this.options.log(`indexed the full text of ${rebuilt} project(s) again in a process of its own`);
      written += rebuilt;
    }
    if (written > 0) {
      // Folds the new postings rows into the table's term index (made first if it is missing).
      await ensureScalarIndexes(store.table(TABLES.lexicalSegments), TABLES.lexicalSegments, this.options.log);
      await store.optimize(olderThanMs, [TABLES.lexicalSegments]);
    }
    // Local copies of the live segments' postings, for the reads of every process (segmentFiles.ts).
    // Reads fall back to the table without them, so a failure (a full disk) holds up no upkeep.
    try {
      const copied = await segments.writeFiles();
      if (copied > 0) this.options.log(`copied the postings of ${copied} full-text segment(s) to files`);
    } catch (error) {
      this.options.log(`copying full-text postings to files: ${String((error as Error).message ?? error)}`);
    }
  }

  /**
   * One job at a time. A job asked for while one that covers it runs is that one (an optimize
   * covers a tidy and the full-text index). One asked for while a lesser one runs (an optimize,
   * while the tidy the lease holder begins every TIDY_AFTER_WRITES writes runs) runs after it:
   * taken to be that one, an optimize would leave the tables it alone compacts (a large one), the
   * pruning with the retention asked for and the ANN index undone, while its caller's count of
   * writes since the last optimize was reset.
   */
  private run(what: Job, job: () => Promise<void>): Promise<void> {
    if (this.running && this.runningJob !== null && JOB_RANK[this.runningJob] >= JOB_RANK[what]) return this.running;
    if (this.running) {
      const waiting = this.queued.get(what);
      if (waiting) return waiting;
      const next = this.running.then(() => {
        this.queued.delete(what);
        return this.run(what, job);
      });
      this.queued.set(what, next);
      return next;
    }
    this.runningJob = what;
    this.running = this.repos.store
      .exclusive(FORGET_LOCK, job)
      .catch((e) => this.options.log(`${what} failed: ${errorMessage(e)}`))
      .finally(() => {
        this.running = null;
        this.runningJob = null;
      });
    return this.running;
  }

  /** Resolves when the running job, and those asked for meanwhile, have finished. */
  async idle(): Promise<void> {
    while (this.running || this.queued.size > 0) await (this.running ?? [...this.queued.values()][0]);
  }

  private cells(): Table {
    return this.repos.store.table(TABLES.cells);
  }
}
