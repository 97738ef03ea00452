// Whether the store changed other than through the window's own writes: another process (the
// CLI, another window) wrote or forgot. The window asks every few seconds (StoreWatcher) and
// brings what shows the store up to date once when it did.

import { isLocalUri } from '../../core/store/location';
import type { CommitNotes, Store } from '../../core/store/store';
import { TABLES } from '../../core/store/schema';
import type { TableName } from '../../core/store/schema';

/**
 * The tables whose rows the window shows (the records), and the meta table, which every forget
 * writes its journal and stamp to first. Each commit to a table is a new version; reading a
 * table's latest version lists its versions folder, nothing more (the store opens with a read
 * consistency interval of 0, so it is the version on disk, another process's commits included).
 */
export const WATCHED_TABLES: readonly TableName[] = [TABLES.meta, TABLES.observations, TABLES.sessionSummaries, TABLES.memories];

/**
 * On object storage each look is a listing request per table (billed, and slower): at most one
 * look this often there; a look asked sooner says nothing changed.
 */
export const OBJECT_STORE_LOOK_MS = 30_000;

/** The versions the window's own writes committed, table by table; told nothing once closed. */
class OwnCommits implements CommitNotes {
  private readonly versions = new Map<string, Set<number>>();
  private open = true;

  note(table: string, version: number): void {
    if (!this.open) return;
    const versions = this.versions.get(table) ?? new Set<number>();
    this.versions.set(table, versions.add(version));
  }

  /** Once the write has ended: what commits later (a timer it set) is reported, not taken as the window's. */
  close(): void {
    this.open = false;
  }

  has(table: string, version: number): boolean {
    return this.versions.get(table)?.has(version) ?? false;
  }
}

/** Runs a write, telling `notes` the versions of the commits it makes (Store.recordCommits). */
type Recorder = <T>(notes: CommitNotes, write: () => Promise<T>) => Promise<T>;

export class StoreChanges {
  /** The versions the window has seen, WATCHED_TABLES' order; null before the first look. */
  private seen: number[] | null = null;
  private lastLook = 0;
  /** The commits of the own writes running, and of those that ended while one ran. */
  private readonly ownCommits = new Set<OwnCommits>();
  private ownRunning = 0;

  constructor(
    private readonly versions: () => Promise<number[]>,
    /** The shortest time between two looks that read the versions. */
    private readonly minLookMs = 0,
    /** Without one, no commit is known to be the window's: each own write is a change. */
    private readonly record: Recorder = (_notes, write) => write(),
  ) {}

  static of(store: Store): StoreChanges {
    return new StoreChanges(
      () => Promise.all(WATCHED_TABLES.map((name) => store.table(name).version())),
      isLocalUri(store.uri) ? 0 : OBJECT_STORE_LOOK_MS,
      (notes, write) => store.recordCommits(notes, write),
    );
  }

  /**
   * Whether a watched table has a version not seen yet, which is then seen: a write or forget of
   * another process, or one this engine made on its own (an agent's through the MCP server, an
   * idle session's end, upkeep). The first look only takes note.
   */
  async changed(): Promise<boolean> {
    if (this.seen !== null && Date.now() - this.lastLook < this.minLookMs) return false;
    this.lastLook = Date.now();
    const now = await this.versions();
    const before = this.seen;
    this.seen = now;
    return before !== null && now.some((v, i) => v !== before[i]);
  }

  /**
   * Runs a write the window asked for (which brings its views up to date itself), then takes a
   * table's new versions as seen when each is a commit of the window's own writes. A version
   * another process committed, before or during the write, or this engine for someone else (an
   * agent, an idle session's end), or that LanceDB did not name (an index build, a compaction),
   * leaves the table unseen, so the change is reported (a refresh too many is cheap, one missed
   * is not).
   */
  async own<T>(write: () => Promise<T>): Promise<T> {
    // On object storage the versions are not read around each write (listings, billed, and slow
    // when the store is far): the window's own writes may then cost a refresh at the next look.
    if (this.minLookMs > 0) return write();
    const commits = new OwnCommits();
    this.ownCommits.add(commits);
    this.ownRunning++;
    try {
      return await this.record(commits, write);
    } finally {
      commits.close();
      const after = await this.versions().catch(() => null);
      const seen = this.seen;
      if (after && seen) this.seen = seen.map((v, i) => (after[i] > v && this.allOwn(WATCHED_TABLES[i], v, after[i]) ? after[i] : v));
      // Own writes that overlap take each other's commits as the window's too.
      if (--this.ownRunning === 0) this.ownCommits.clear();
    }
  }

  /** Whether every version of `table` after `from`, up to `to`, is a commit of an own write. */
  private allOwn(table: string, from: number, to: number): boolean {
    for (let v = from + 1; v <= to; v++) if (![...this.ownCommits].some((c) => c.has(table, v))) return false;
    return true;
  }
}
