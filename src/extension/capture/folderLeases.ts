// Which window records a repository's file-watcher and checkout events. Every window open on a
// folder has its own file watcher and Git extension, so each sees the same files created, deleted
// and changed on disk and the same branch switches, and each would store them: twice. One window
// per repository and store holds a lease and records those; the others leave them out. Editor
// events (reads, edits) are each window's own and are never leased.
//
// Keyed by repository (the root above the folder, else the folder): windows on one repository
// through different folders (two packages, or the root and a package) see its checkouts alike,
// and a file in a package from both. Their paths are the repository's, so one project. The
// windows on a repository rank themselves, each holding one lease of a numbered row (the first
// free one), and write in it the folders they watch: the first records the repository's checkouts
// and every file event it sees; each other window records a file event that no window ranked
// before it watches (the root window records a file in packages/b itself while a window on
// packages/a is first; with a third window on packages/b, only one of the two records it).
//
// The lease is the store's file lease (MaintenanceLease), in the temp folder rather than the
// store's, so that capture creates nothing in a store the engine has not opened yet. Renewed by
// its holder as it writes (both windows see the same events, so a holder writes when the other
// would); given up when capture stops or the window closes; taken over once it expired or its
// holder process is gone.

import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isSameOrInside } from '../../core/capture/paths';
import { MaintenanceLease } from '../../core/store/lease';
import type { CaptureKind } from './events';

/** The events every window on a folder sees alike. Commits are not here: their dedupe key already stores them once. */
export const LEASED_KINDS: ReadonlySet<CaptureKind> = new Set<CaptureKind>(['create', 'delete', 'disk_change', 'checkout']);

/** Windows on one repository that rank themselves (see ranksBefore); one past them records as if every rank before it watched nothing it does not see. */
const MAX_RANKS = 8;

/**
 * The folder the leases (and the journal of saves, saveJournal.ts) are in: one per user, as a
 * folder another user made (0700) would take every lease from this one.
 */
export function captureLeaseDir(): string {
  return path.join(os.tmpdir(), `code-memory-capture-leases-${process.getuid?.() ?? os.userInfo().username}`);
}

/** The folders a lease's holder watches, as it wrote them; null when unknown (all of them). */
function foldersOf(detail: unknown): readonly string[] | null {
  const folders = (detail as { folders?: unknown } | undefined)?.folders;
  return Array.isArray(folders) && folders.every((f) => typeof f === 'string') ? (folders as string[]) : null;
}

export class FolderLeases {
  /** Leases by file name, with the repository key and rank each is of. */
  private readonly leases = new Map<string, { key: string; rank: number; lease: MaintenanceLease }>();

  constructor(
    /** The store the events go to: windows on other stores each record their own. */
    private readonly storeUri: () => string,
    private readonly dir = captureLeaseDir(),
  ) {}

  /**
   * Takes or renews this window's rank among the windows on a repository (`key`: its root, else
   * the folder), which watches `folders` in it (paths in the repository, '' for all of it): the
   * first lease of the row it can hold, a lower one as soon as it is free. Returns what the
   * windows ranked before it watch, one entry each (null: unknown, all of it); none when this
   * window is first, which records the repository's checkouts.
   */
  async ranksBefore(key: string, folders: readonly string[] = ['']): Promise<(readonly string[] | null)[]> {
    try {
      await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 });
    } catch {
      // No place for a lease: recording twice is better than recording nothing.
      return [];
    }
    const before: (readonly string[] | null)[] = [];
    for (let rank = 0; rank < MAX_RANKS; rank++) {
      const lease = this.lease(key, rank);
      if (await lease.refresh({ folders })) {
        await this.releaseAfter(key, rank);
        return before;
      }
      before.push(foldersOf(lease.holder?.detail));
    }
    return before;
  }

  /** Whether a holder watching `folders` (null: all) sees a file at `path` in the repository. */
  static watches(folders: readonly string[] | null, path: string): boolean {
    return folders === null || folders.some((f) => f === '' || isSameOrInside(f, path));
  }

  /** Gives every lease up, so another window records the folders at once. */
  async release(): Promise<void> {
    const held = [...this.leases.values()];
    this.leases.clear();
    await Promise.all(held.map(({ lease }) => lease.release().catch(() => undefined)));
  }

  /** The lease of `rank` on a repository; the first keeps the name a window of an older build takes. */
  private lease(key: string, rank: number): MaintenanceLease {
    const name = `${createHash('sha256').update(`${this.storeUri()}\0${key}`).digest('hex').slice(0, 32)}${rank === 0 ? '' : `.${rank}`}.lease`;
    let entry = this.leases.get(name);
    if (!entry) {
      entry = { key, rank, lease: new MaintenanceLease(this.dir, undefined, name) };
      this.leases.set(name, entry);
    }
    return entry.lease;
  }

  /** Gives up the ranks after `rank` on a repository that this window held before it moved up. */
  private async releaseAfter(key: string, rank: number): Promise<void> {
    for (const [name, entry] of [...this.leases]) {
      if (entry.key !== key || entry.rank <= rank) continue;
      this.leases.delete(name);
      await entry.lease.release().catch(() => undefined);
    }
  }
}
