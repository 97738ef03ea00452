// Which window records a folder's file-watcher and checkout events. Every window open on a folder
// has its own file watcher and Git extension, so each sees the same files created, deleted and
// changed on disk and the same branch switches, and each would store them: twice. One window per
// folder and store holds a lease and records those; the others leave them out. Editor events
// (reads, edits) are each window's own and are never leased.
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

  /** Takes or renews the folder's lease; true when this window records its leased events. */
  async holds(folder: string): Promise<boolean> {
    const name = `${createHash('sha256').update(`${this.storeUri()}\0${folder}`).digest('hex').slice(0, 32)}.lease`;
    let lease = this.leases.get(name);
    if (!lease) {
      lease = new MaintenanceLease(this.dir, undefined, name);
      this.leases.set(name, lease);
    }
    try {
      await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 });
    } catch {
      // No place for a lease: recording twice is better than recording nothing.
      return true;
    }
    return lease.refresh();
  }

  /** Gives every lease up, so another window records the folders at once. */
  async release(): Promise<void> {
    const held = [...this.leases.values()];
    this.leases.clear();
    await Promise.all(held.map((l) => l.release().catch(() => undefined)));
  }
}
