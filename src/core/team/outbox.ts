// Team writes waiting on disk for the team store: one file per share or unshare, written to a
// temporary name, synced and renamed (so a crash leaves a whole entry or none), removed only
// after the team store has the change. Entries go out in the order they were made; a share
// that is unshared before it went out is dropped from the queue and never leaves the machine.

import { randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { LockFile } from '../store/lockFile';
import type { TeamRow } from './teamTable';

export type OutboxEntry =
  | { op: 'share'; rows: TeamRow[] }
  /** `shared_by`: only items this author shared go (absent in entries queued by earlier versions). */
  | { op: 'unshare'; node_ids: string[]; project: string; shared_by?: string };

export interface PendingEntry {
  file: string;
  entry: OutboxEntry;
}

export class Outbox {
  private seq = 0;

  constructor(readonly dir: string) {}

  async add(entry: OutboxEntry): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 });
    // Names sort in the order entries were made (time, then a per-process counter).
    const name = `${String(Date.now()).padStart(15, '0')}-${String(this.seq++).padStart(9, '0')}-${randomUUID()}.json`;
    const tmp = path.join(this.dir, `.${name}.tmp`);
    const handle = await fsp.open(tmp, 'w', 0o600);
    try {
      await handle.writeFile(JSON.stringify(entry));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.rename(tmp, path.join(this.dir, name));
  }

  async pending(): Promise<PendingEntry[]> {
    const names = (await fsp.readdir(this.dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json')).sort();
    const out: PendingEntry[] = [];
    for (const name of names) {
      const file = path.join(this.dir, name);
      try {
        out.push({ file, entry: JSON.parse(await fsp.readFile(file, 'utf8')) as OutboxEntry });
      } catch {
        // Taken by another flush of this process in the meantime: nothing to do.
      }
    }
    return out;
  }

  /**
   * Runs fn as the only sender of this outbox (the CLI and the editor may share one store), under
   * the store's lock rules (store/lockFile.ts: a running holder keeps it however long it sends, one
   * that died loses it at once). Returns false when another process is sending.
   */
  async exclusive(fn: () => Promise<void>): Promise<boolean> {
    await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 });
    return new LockFile(path.join(this.dir, '.sending.lock')).tryWithLock(fn);
  }

  async count(): Promise<number> {
    return (await fsp.readdir(this.dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json')).length;
  }

  async done(entries: PendingEntry[]): Promise<void> {
    for (const e of entries) await fsp.rm(e.file, { force: true });
  }

  /** Drops queued shares of these items (an unshare before they went out). Returns how many rows. */
  async dropShares(nodeIds: Set<string>): Promise<number> {
    let dropped = 0;
    for (const p of await this.pending()) {
      if (p.entry.op !== 'share') continue;
      const keep = p.entry.rows.filter((r) => !nodeIds.has(r.node_id));
      if (keep.length === p.entry.rows.length) continue;
      dropped += p.entry.rows.length - keep.length;
      if (keep.length === 0) await fsp.rm(p.file, { force: true });
      else {
        const tmp = `${p.file}.tmp`;
        await fsp.writeFile(tmp, JSON.stringify({ op: 'share', rows: keep } satisfies OutboxEntry), { mode: 0o600 });
        await fsp.rename(tmp, p.file);
      }
    }
    return dropped;
  }
}
