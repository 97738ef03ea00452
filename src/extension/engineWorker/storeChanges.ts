// Whether the store changed other than through the window's own writes: another process (the
// CLI, another window) wrote or forgot. The window asks every few seconds (StoreWatcher) and
// brings what shows the store up to date once when it did.

import { isLocalUri } from '../../core/store/location';
import type { Store } from '../../core/store/store';
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

export class StoreChanges {
  /** The versions the window has seen, WATCHED_TABLES' order; null before the first look. */
  private seen: number[] | null = null;
  private lastLook = 0;

  constructor(
    private readonly versions: () => Promise<number[]>,
    /** The shortest time between two looks that read the versions. */
    private readonly minLookMs = 0,
  ) {}

  static of(store: Store): StoreChanges {
    return new StoreChanges(() => Promise.all(WATCHED_TABLES.map((name) => store.table(name).version())), isLocalUri(store.uri) ? 0 : OBJECT_STORE_LOOK_MS);
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
   * Runs a write the window asked for (which brings its views up to date itself), then takes the
   * versions it made as seen, so it is no change from elsewhere. A table another process changed
   * since the last look is left unseen, so that change is still reported.
   */
  async own<T>(write: () => Promise<T>): Promise<T> {
    // On object storage the versions are not read around each write (listings, billed, and slow
    // when the store is far): the window's own writes may then cost a refresh at the next look.
    if (this.minLookMs > 0) return write();
    const before = await this.versions().catch(() => null);
    try {
      return await write();
    } finally {
      if (before) {
        const after = await this.versions().catch(() => null);
        const seen = this.seen;
        if (after && seen) this.seen = seen.map((v, i) => (before[i] === v ? after[i] : v));
      }
    }
  }
}
