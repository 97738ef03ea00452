// Which window records a repository's file-watcher and checkout events. Every window open on a
// folder has its own file watcher and Git extension, so each sees the same files created, deleted
// and changed on disk and the same branch switches, and each would store them: twice. One window
// per repository and store holds a lease and records those; the others leave them out. Editor
// events (reads, edits) are each window's own and are never leased.
//
// Keyed by repository (the root above the folder, else the folder): windows on one repository
// through different folders (two packages, or the root and a package) see its checkouts alike,
// and a file in a package from both. Their paths are the repository's, so one project. A window
// watches its folders only, so the holder writes the folders it watches in the lease: another
// window leaves out a file event only when the holder watches that path (the root window records
// a file in packages/b itself while a window on packages/a holds the lease).
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

export class FolderLeases {
  private readonly leases = new Map<string, MaintenanceLease>();

  constructor(
    /** The store the events go to: windows on other stores each record their own. */
    private readonly storeUri: () => string,
    // One folder per user: a folder another user made (0700) would take every lease from this one.
    private readonly dir = path.join(os.tmpdir(), `code-memory-capture-leases-${process.getuid?.() ?? os.userInfo().username}`),
  ) {}

  /**
   * Takes or renews the lease of a repository (`key`: its root, else the folder) for this window,
   * which watches `folders` in it (paths in the repository, '' for all of it). 'held': this window
   * records its leased events; else the folders the holder watches (null: unknown, all of them).
   */
  async holds(key: string, folders: readonly string[] = ['']): Promise<'held' | readonly string[] | null> {
    const name = `${createHash('sha256').update(`${this.storeUri()}\0${key}`).digest('hex').slice(0, 32)}.lease`;
    let lease = this.leases.get(name);
    if (!lease) {
      lease = new MaintenanceLease(this.dir, undefined, name);
      this.leases.set(name, lease);
    }
    try {
      await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 });
    } catch {
      // No place for a lease: recording twice is better than recording nothing.
      return 'held';
    }
    if (await lease.refresh({ folders })) return 'held';
    const theirs = (lease.holder?.detail as { folders?: unknown } | undefined)?.folders;
    return Array.isArray(theirs) && theirs.every((f) => typeof f === 'string') ? (theirs as string[]) : null;
  }

  /** Whether a holder watching `folders` (null: all) sees a file at `path` in the repository. */
  static watches(folders: readonly string[] | null, path: string): boolean {
    return folders === null || folders.some((f) => f === '' || isSameOrInside(f, path));
  }

  /** Gives every lease up, so another window records the folders at once. */
  async release(): Promise<void> {
    const held = [...this.leases.values()];
    this.leases.clear();
    await Promise.all(held.map((l) => l.release().catch(() => undefined)));
  }
}
