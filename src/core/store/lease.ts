// The maintenance lease: background work on a store (embedding backfill, compaction, index
// builds, pruning) runs in one process at a time, so that every process that opens the store
// does not embed the same rows and compact the same tables at once. The others only search.
//
// Local stores: a lease file in the store folder, created exclusively, renewed by its holder
// (the file's `expires`), taken over when it expired or its holder is a dead process on this
// host. Object storage has no exclusive create here, so every process there holds its own lease
// (as before the lease existed): its writes stay correct, only the work is repeated.

import { randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { processState, thisProcess } from './processRef';
import type { ProcessRef } from './processRef';

export interface LeaseInfo extends ProcessRef {
  token: string;
  expires: number;
}

const TTL_MS = 30_000;

export class MaintenanceLease {
  private readonly token = randomUUID();
  private held = false;

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

  /** Takes or renews the lease; true when this process holds it afterwards. Never throws. */
  async refresh(): Promise<boolean> {
    if (this.dir === null) return true;
    try {
      this.held = await this.tryHold();
    } catch {
      this.held = false;
    }
    return this.held;
  }

  private info(): LeaseInfo {
    return { ...thisProcess(), token: this.token, expires: Date.now() + this.ttlMs };
  }

  private async tryHold(): Promise<boolean> {
    const current = await this.read();
    if (current && current.token === this.token) {
      await this.write(this.file);
      return true;
    }
    if (current && current.expires > Date.now() && processState(current) !== 'ended') return false;
    if (current) {
      // Expired or dead: move it aside atomically; only one contender wins the rename.
      const aside = `${this.file}.${this.token}`;
      try {
        await fsp.rename(this.file, aside);
      } catch {
        return false;
      }
      await fsp.unlink(aside).catch(() => undefined);
    }
    try {
      const handle = await fsp.open(this.file, 'wx', 0o600);
      try {
        await handle.writeFile(JSON.stringify(this.info()));
      } finally {
        await handle.close();
      }
      return true;
    } catch {
      return false;
    }
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
    const current = await this.read().catch(() => null);
    if (current?.token === this.token) await fsp.unlink(this.file).catch(() => undefined);
  }
}
