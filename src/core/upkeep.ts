// The engine's background work: the maintenance lease and what its holder does (repair, vectors,
// compaction, the request log's retention, orphan sessions), the timers that drive it, and the
// compaction that follows a large write-back. close() stops it before the store closes.

import type { VectorBackfill } from './embed/backfill';
import { errorMessage } from './errorText';
import type { MaintenanceLease } from './store/lease';
import type { Maintenance } from './store/maintenance';

/** Vectors written since the last upkeep after which the lease holder compacts (see scheduleUpkeep). */
const COMPACT_AFTER_EMBEDDED = 1000;

/** Cell writes after which the lease holder tidies, writing or not (see cellsWritten). */
export const TIDY_AFTER_WRITES = 50;

export interface UpkeepParts {
  lease: MaintenanceLease;
  maintenance: Maintenance;
  /** The embedding queue, once the engine has one (none without an embedder). */
  backfill: () => VectorBackfill | null;
  /** The engine is closed: nothing reads the store any more. */
  closed: () => boolean;
  /** Sessions idle past the engine's idle time are ended. */
  endIdleSessions: () => Promise<void>;
  /** Sessions no process ended are summarised (the lease holder's, once, after it takes the lease). */
  endOrphanSessions: () => Promise<unknown>;
  /** This process's forgets that failed part-way are finished. */
  resumeForgets: () => Promise<void>;
  log: (msg: string) => void;
  /** Period of the lease holder's upkeep (0: none). */
  maintenanceMs: number;
  upkeepQuietMs: number;
  sessionIdleMs: number;
  summariseOrphans: boolean;
}

export class Upkeep {
  private readonly timers: NodeJS.Timeout[] = [];
  /** Timer work stop() waits for, so that it never reads a store being closed. */
  private readonly background = new Set<Promise<unknown>>();
  private writesSinceOptimize = 0;
  private writesSinceTidy = 0;
  private embeddedSinceUpkeep = 0;
  private upkeepTimer: NodeJS.Timeout | null = null;
  /** stop() has begun: background work takes no new steps. */
  private stopping = false;

  constructor(private readonly parts: UpkeepParts) {}

  get closing(): boolean {
    return this.stopping;
  }

  /**
   * Cells were written: wake the embedding queue, put off a compaction armed meanwhile, and every
   * TIDY_AFTER_WRITES writes compact the tables they left in pieces.
   */
  cellsWritten(): void {
    this.writesSinceOptimize++;
    this.writesSinceTidy++;
    this.kickVectors();
    // Still writing: compacting everything now would race the writer for every commit.
    if (this.upkeepTimer) this.armUpkeep();
    // Each write is a small fragment of its tables (a memory, its cell, the rewrite of the one it
    // supersedes), and every read of those tables opens each of them: writes in quick succession
    // (an agent saving a topic every turn, a burst of captures) tripled remember's time within
    // the minute between two upkeeps. The lease holder compacts the tables left in pieces (only
    // those: Maintenance.tidy) as they fill; this process's own writes of a table wait meanwhile.
    // Not a large table (the cells from 100,000 on): compacting it rewrites its large fragment
    // too, for pieces that weigh little beside it; the upkeep does that once writing is quiet.
    if (this.writesSinceTidy < TIDY_AFTER_WRITES || !this.parts.lease.isHeld || this.parts.maintenanceMs <= 0 || this.stopping) return;
    this.writesSinceTidy = 0;
    this.inBackground('upkeep', this.parts.maintenance.tidy(undefined, { skipLarge: true }));
  }

  /** New cells wait for vectors: wake the background embedding queue (in the lease holder). */
  kickVectors(): void {
    if (this.parts.lease.isHeld) this.parts.backfill()?.kick();
  }

  /**
   * Takes or renews the maintenance lease. On taking it: cells a crash left out are given back
   * (before the open resolves, so that a search right after finds every record), the request
   * log's retention is applied and, 5 s later, sessions nobody ended are summarised; on taking
   * and on every renewal, cells left unembedded (by another
   * process, an earlier run, or another model) are picked up in the background.
   */
  async takeLease(): Promise<void> {
    const { lease, maintenance, log } = this.parts;
    const had = lease.isHeld;
    if (!(await lease.refresh()) || this.stopping) return;
    // Another process may have died between a record and its cell: the holder looks (a count
    // comparison unless something is missing) every time it renews.
    await maintenance.repairCells().catch((e) => log(`repair: ${errorMessage(e)}`));
    // Cells an earlier build prepared for search otherwise are prepared again, once, before the
    // open resolves (a search right after finds them by the words it now reads).
    if (!had) await maintenance.reprepareText().catch((e) => log(`search text: ${errorMessage(e)}`));
    // Cells other processes wrote (they never embed) get their vectors from the holder.
    this.parts.backfill()?.kick();
    if (had) return;
    // A store nobody kept open for a while holds old requests: the retention applies from the start.
    await maintenance.pruneRequestLog().catch((e) => log(`request log retention: ${errorMessage(e)}`));
    // Processes that never held the lease for a whole period (hooks, brief agent runs) leave
    // their one-row commits in pieces, and every read of those tables opens each piece: the new
    // holder tidies once its open has settled, not a period later.
    if (this.parts.maintenanceMs > 0 && !this.stopping) this.later(this.parts.upkeepQuietMs, 'upkeep', () => maintenance.tidy());
    // Sessions a dead process left open (or a git import wrote) are summarised here alone: every
    // process that opens the store summarising them would repeat the work, at about one session a
    // second of its query time, and race the others to write the same summaries.
    this.summariseOrphansLater();
  }

  /**
   * The lease holder summarises, 5 s from now, the sessions left without a summary: at open (a
   * dead process's, a git import's), and after a forget that took summaries whose sessions'
   * observations stay (a summary that quoted the project's prompts, see store/summaryQuotes.ts).
   */
  summariseOrphansLater(): void {
    if (this.parts.summariseOrphans && this.parts.lease.isHeld && !this.stopping) this.later(5000, 'orphan sessions', () => this.parts.endOrphanSessions());
  }

  /** The lease renewal, the idle-session check and the lease holder's periodic upkeep. */
  start(): void {
    const { maintenanceMs, sessionIdleMs } = this.parts;
    this.every(10_000, () => this.inBackground('maintenance lease', this.takeLease()));
    this.every(Math.max(1000, Math.min(60_000, sessionIdleMs / 2)), () => void this.parts.endIdleSessions());
    if (maintenanceMs <= 0) return;
    this.every(maintenanceMs, () => {
      // Every process finishes its own forgets that failed part-way: no other may while it runs.
      this.inBackground('finishing an interrupted forget', this.parts.resumeForgets());
      if (!this.parts.lease.isHeld) return;
      if (this.writesSinceOptimize > 0) void this.optimize();
      // Rows other processes wrote (or a store from before the index segments) are indexed too,
      // and tables that prompts, log entries and access times left in pieces are compacted.
      else void this.parts.maintenance.tidy();
    });
  }

  /**
   * After a large write-back (an import, a long capture burst, a model switch) the cells table
   * is many fragments and its new vectors are outside the ANN index: the lease holder compacts
   * and builds the index once writing has been quiet for a moment, not at the next timer tick.
   */
  scheduleUpkeep(embedded: number): void {
    this.embeddedSinceUpkeep += embedded;
    if (this.embeddedSinceUpkeep >= COMPACT_AFTER_EMBEDDED && !this.parts.closed()) this.armUpkeep();
  }

  /**
   * Background upkeep (see Maintenance.optimize), begun at once (what waits for the maintenance
   * sees it), then this process's forgets that failed part-way are finished; never throws.
   */
  optimize(olderThanMs?: number): Promise<void> {
    this.writesSinceOptimize = 0;
    return this.parts.maintenance.optimize(olderThanMs).then(() => this.parts.resumeForgets().catch((e: unknown) => this.parts.log(`an interrupted forget is not finished yet: ${errorMessage(e)}`)));
  }

  /**
   * Resolves when background work has settled: vectors written and the upkeep that follows a
   * large write-back done (benchmarks and tests measure the quiet store after it).
   */
  async settled(): Promise<void> {
    for (;;) {
      await this.parts.backfill()?.idle();
      if (this.upkeepTimer) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      await this.parts.maintenance.idle();
      if (!this.upkeepTimer) return;
    }
  }

  /**
   * Stops the timers and waits for the timer work under way: a lease renewal or the orphan sweep
   * still running stops early, and nothing reads the store after it is closed ("Table
   * observations is closed", logged by a repair).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearInterval(t);
    for (const t of this.timers) clearTimeout(t);
    if (this.upkeepTimer) clearTimeout(this.upkeepTimer);
    this.upkeepTimer = null;
    await Promise.all(this.background);
  }

  private armUpkeep(): void {
    if (this.upkeepTimer) clearTimeout(this.upkeepTimer);
    this.upkeepTimer = setTimeout(() => {
      this.upkeepTimer = null;
      if (this.parts.closed() || !this.parts.lease.isHeld) return;
      // Still embedding (a pass stopped early and retries): compact once it is done.
      if (this.parts.backfill()?.busy) return this.armUpkeep();
      this.embeddedSinceUpkeep = 0;
      void this.optimize();
    }, this.parts.upkeepQuietMs);
    this.upkeepTimer.unref();
  }

  /** Runs timer work that stop() waits for; a failure is logged under `what`. */
  private inBackground(what: string, work: Promise<unknown>): void {
    const tracked: Promise<unknown> = work.catch((e) => this.parts.log(`${what}: ${errorMessage(e)}`)).finally(() => this.background.delete(tracked));
    this.background.add(tracked);
  }

  /** Background work `ms` from now, which stop() cancels or waits for. */
  private later(ms: number, what: string, work: () => Promise<unknown>): void {
    const t = setTimeout(() => this.inBackground(what, work()), ms);
    t.unref();
    this.timers.push(t);
  }

  private every(ms: number, tick: () => void): void {
    const t = setInterval(tick, ms);
    t.unref();
    this.timers.push(t);
  }
}
