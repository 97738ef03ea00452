// Team writes waiting on disk for the team store: one file per share or unshare, written to a
// temporary name, synced and renamed (so a crash leaves a whole entry or none), removed only
// after the team store has the change. Entries go out in the order they were made; a share
// that is unshared before it went out is dropped from the queue and never leaves the machine.
// A temporary file names the process writing it: one left by a process that died (killed while
// it wrote a share, so holding the text) is removed when the outbox is opened and before a
// forget or unshare (sweep).

import { randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LockFile } from '../store/lockFile';
import { processState } from '../store/processRef';
import type { TeamRow } from './teamTable';

export type OutboxEntry =
  | { op: 'share'; rows: TeamRow[] }
  /**
   * `shared_by`: only items this author shared go (absent in entries queued by earlier versions).
   * `if_found`: the ids are only maybe shared (a forget's derived keys): the purge runs only if
   * a row was found (otherwise every forget would rewrite the team store's index).
   */
  | { op: 'unshare'; node_ids: string[]; project: string; shared_by?: string; if_found?: boolean };

/** How old a temporary file that names no process (an older version's) must be before a sweep removes it. */
const UNNAMED_TMP_STALE_MS = 60_000;

/** `.<name>.<pid>.<random>.tmp` (or `<entry>.<pid>.<random>.tmp` when an entry is rewritten): the writer's pid. */
function tmpName(base: string): string {
  return `${base}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
}

function tmpWriter(name: string): number | null {
  const m = /\.(\d{1,10})\.[0-9a-f]{8}\.tmp$/.exec(name);
  return m ? Number(m[1]) : null;
}

function isEntry(e: unknown): e is OutboxEntry {
  if (typeof e !== 'object' || e === null) return false;
  const o = e as Record<string, unknown>;
  if (o.op === 'share') return Array.isArray(o.rows) && o.rows.length > 0 && o.rows.every((r) => typeof r === 'object' && r !== null && typeof (r as TeamRow).node_id === 'string' && typeof (r as TeamRow).project === 'string');
  return o.op === 'unshare' && typeof o.project === 'string' && Array.isArray(o.node_ids) && o.node_ids.every((id) => typeof id === 'string');
}

export interface PendingEntry {
  file: string;
  entry: OutboxEntry;
}

export class Outbox {
  private seq = 0;

  /** `log` is told of each entry removed for being none (see pending). */
  constructor(
    readonly dir: string,
    private readonly log: (message: string) => void = () => undefined,
  ) {}

  async add(entry: OutboxEntry): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 });
    // Names sort in the order entries were made (time, then a per-process counter).
    const name = `${String(Date.now()).padStart(15, '0')}-${String(this.seq++).padStart(9, '0')}-${randomUUID()}.json`;
    const tmp = path.join(this.dir, tmpName(`.${name}`));
    const handle = await fsp.open(tmp, 'w', 0o600);
    try {
      await handle.writeFile(JSON.stringify(entry));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.rename(tmp, path.join(this.dir, name));
  }

  /**
   * Removes temporary files their writer left: that of a process no longer running (a share
   * killed while it was queued held the text; the memory forgotten since, it was still on disk),
   * and an older version's once a minute old. With `doomed`, also any that holds a share of
   * those rows (a forget of them, next to a live writer: its share of a forgotten record fails
   * rather than keeping the text). Returns how many went.
   */
  async sweep(doomed?: (row: TeamRow) => boolean): Promise<number> {
    let removed = 0;
    for (const name of await fsp.readdir(this.dir).catch(() => [] as string[])) {
      if (!name.endsWith('.tmp')) continue;
      const file = path.join(this.dir, name);
      const pid = tmpWriter(name);
      let stale = false;
      if (pid !== null) stale = pid !== process.pid && processState({ pid, host: os.hostname() }) === 'ended';
      else stale = Date.now() - ((await fsp.stat(file).catch(() => null))?.mtimeMs ?? Date.now()) > UNNAMED_TMP_STALE_MS;
      if (!stale && doomed) {
        // Unreadable: being written this instant by a live process (which renames it next).
        const entry = await fsp.readFile(file, 'utf8').then((t) => JSON.parse(t) as OutboxEntry, () => null);
        stale = entry?.op === 'share' && Array.isArray(entry.rows) && entry.rows.some(doomed);
      }
      if (!stale) continue;
      await fsp.rm(file, { force: true });
      removed++;
    }
    return removed;
  }

  /**
   * The entries waiting, oldest first. An entry is renamed into place whole, so one that is not
   * an entry (a damaged disk, a hand edit) never will be: it is removed, and `damaged` told why,
   * rather than left to stop every later share (or, with no op, to loop the sender for ever).
   */
  async pending(): Promise<PendingEntry[]> {
    const names = (await fsp.readdir(this.dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json')).sort();
    const out: PendingEntry[] = [];
    for (const name of names) {
      const file = path.join(this.dir, name);
      // Gone: taken by another flush of this process in the meantime, nothing to do.
      const text = await fsp.readFile(file, 'utf8').catch(() => null);
      if (text === null) continue;
      let entry: unknown;
      try {
        entry = JSON.parse(text);
      } catch {
        entry = null;
      }
      if (isEntry(entry)) {
        out.push({ file, entry });
        continue;
      }
      await fsp.rm(file, { force: true });
      this.log(`team store: queued entry ${name} removed, ${entry === null && text.trim() !== 'null' ? 'not JSON' : 'not a share or an unshare'}: it could never be sent`);
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

  /** How many entries wait (read, so that one that is none is not counted: see pending). */
  async count(): Promise<number> {
    return (await this.pending()).length;
  }

  async done(entries: PendingEntry[]): Promise<void> {
    for (const e of entries) await fsp.rm(e.file, { force: true });
  }

  /** Drops queued shares of these items of `project` (an unshare before they went out). Returns how many rows. */
  async dropShares(project: string, nodeIds: Set<string>): Promise<number> {
    let dropped = 0;
    for (const p of await this.pending()) {
      if (p.entry.op !== 'share') continue;
      const keep = p.entry.rows.filter((r) => r.project !== project || !nodeIds.has(r.node_id));
      if (keep.length === p.entry.rows.length) continue;
      dropped += p.entry.rows.length - keep.length;
      if (keep.length === 0) await fsp.rm(p.file, { force: true });
      else {
        const tmp = tmpName(p.file);
        await fsp.writeFile(tmp, JSON.stringify({ op: 'share', rows: keep } satisfies OutboxEntry), { mode: 0o600 });
        await fsp.rename(tmp, p.file);
      }
    }
    return dropped;
  }
}
