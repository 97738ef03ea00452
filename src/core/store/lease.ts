// The maintenance lease: background work on a store (embedding backfill, compaction, index
// builds, pruning) runs in one process at a time, so that every process that opens the store
// does not embed the same rows and compact the same tables at once. The others only search.
// Capture uses the same lease (another file name) for one window per repository.
//
// Local stores: a lease file in the store folder, renewed by its holder (the file's `expires`),
// taken over when it expired or its holder is a dead process on this host. Each look at the file
// and the write that follows it (a renewal, a take-over, a release) is one step under the lease's
// lock file (lockFile.ts, held for milliseconds): a compare-and-swap. Without it a renewal and a
// take-over of the expired lease at the same moment both wrote it (the renewal's rename landed on
// the file the taker had just created), and both processes held it. A process of a version
// before the lock takes no lock, and may still race one that does.
// Object storage has no exclusive create here, so every process there holds its own lease
// (as before the lease existed): its writes stay correct, only the work is repeated.

import { randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { LockFile } from './lockFile';
import { processState, thisProcess } from './processRef';
import type { ProcessRef } from './processRef';

export interface LeaseInfo extends ProcessRef {
  token: string;
  expires: number;
  /** What the holder says of its work (the capture lease: the folders it watches). */
  detail?: unknown;
}

const TTL_MS = 30_000;

/**
 * The tokens of the leases this process gave up (released, or closed trying to): one whose file
 * a failed release left (a full disk refuses the lock file) names this live process, and another
 * lease of this process (a store opened again) would otherwise wait for it to expire.
 */
const givenUp = new Set<string>();

export class MaintenanceLease {
  private readonly token = randomUUID();
  private held = false;
  private lockFile: LockFile | undefined;
  private detail: unknown;
  private seen: LeaseInfo | null = null;

  /** `dir` null: object storage, where each process holds the lease. `fileName`: a lease on other work than maintenance. */
  constructor(
    private readonly dir: string | null,
    private readonly ttlMs = TTL_MS,
    private readonly fileName = 'maintenance.lease',
  ) {}

  get isHeld(): boolean {
    return this.dir === null || this.held;
  }

  private get file(): string {
    return path.join(this.dir as string, this.fileName);
  }

  /** The holder another process is, as the last refresh that did not take the lease found it. */
  get holder(): LeaseInfo | null {
    return this.held ? null : this.seen;
  }

  /**
   * Takes or renews the lease; true when this process holds it afterwards. Never throws.
   * `detail`: written in the lease while this process holds it, for the others to read (`holder`).
   */
  async refresh(detail?: unknown): Promise<boolean> {
    if (this.dir === null) return true;
    this.detail = detail;
    this.seen = null;
    try {
      this.held = await this.tryHold();
    } catch {
      this.held = false;
    }
    return this.held;
  }

  /** The lock every read-then-write of the lease file is done under: a compare-and-swap. */
  private get lock(): LockFile {
    this.lockFile ??= new LockFile(`${this.file}.lock`);
    return this.lockFile;
  }

  private info(): LeaseInfo {
    return { ...thisProcess(), token: this.token, expires: Date.now() + this.ttlMs, ...(this.detail === undefined ? {} : { detail: this.detail }) };
  }

  private async tryHold(): Promise<boolean> {
    return this.lock.withLock(async () => {
      const current = await this.read();
      const ours = current?.token === this.token;
      if (!ours && current && current.expires > Date.now() && processState(current) !== 'ended' && !givenUp.has(current.token)) {
        this.seen = current;
        return false;
      }
      // Ours to renew, or free (none, expired, its holder ended or gave it up): no one else writes it meanwhile.
      await this.write(this.file);
      return true;
    });
  }

  private async write(file: string): Promise<void> {
    const tmp = `${file}.${this.token}.tmp`;
    await fsp.writeFile(tmp, JSON.stringify(this.info()), { mode: 0o600 });
    await fsp.rename(tmp, file);
  }

  private async read(): Promise<LeaseInfo | null> {
    try {
      return JSON.parse(await fsp.readFile(this.file, 'utf8')) as LeaseInfo;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      // Torn or half-written: treat as expired only once it is old.
      const stat = await fsp.stat(this.file).catch(() => null);
      return stat ? { pid: -1, host: '', token: '', expires: stat.mtimeMs + this.ttlMs } : null;
    }
  }

  /** Gives the lease up (at close), so another process can take it at once. */
  async release(): Promise<void> {
    if (this.dir === null || !this.held) return;
    this.held = false;
    givenUp.add(this.token);
    await this.lock
      .withLock(async () => {
        const current = await this.read().catch(() => null);
        if (current?.token === this.token) await fsp.unlink(this.file).catch(() => undefined);
      })
      .catch(() => undefined);
  }
}
