// The store's lock file: an O_EXCL file held for a read-then-write that must not interleave with
// another process's (the id counter, the check for records already stored, the team outbox's
// sending), with the holder's process in it and touched every LOCK_HEARTBEAT_MS while held.
//
// When a lock may be broken. Breaking a lock whose holder is still at work lets two processes
// interleave what the lock keeps apart, so a lock is broken only when its holder is known to be
// gone, never merely because it is old:
//  - Held by another process on this host: running (a signal reaches its pid and, on Linux, that
//    pid's process started when the lock says: processRef.ts), it is never broken, however old,
//    since a holder stalled by a debugger, a slow disk or a suspended machine still owns the
//    lock. Ended, it is broken at once, also when its pid now names another process (after a
//    reboot). Held by this process (its pid and start time; without start times, a lock written
//    after this process started), it is another thread's, which touches it while it holds it: it
//    is broken once untouched for LOCK_STALE_MS (that thread was terminated). Our pid with
//    another start time, or a lock older than this process, was an earlier process's: broken.
//  - Held by a process on another host (a store on a shared disk) or in another pid namespace
//    (a container sharing the host name), or a lock we cannot read
//    (torn by a crash, or being written this instant): we cannot see the process, so age alone
//    decides. It is stale once untouched for LOCK_STALE_MS; a holder touches its lock every
//    LOCK_HEARTBEAT_MS for as long as it holds it, so only a holder that stopped running (or
//    whose event loop stays blocked that long) loses its lock.
// Known limit: without start times (not Linux), a dead holder's pid reused by an unrelated live
// process keeps its lock alive; waiters then give up after LOCK_WAIT_MS with an error that names
// the file to delete.
// The lock file is readable by its owner only.

import { randomInt, randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import { describeProcess, isProcessRef, processState, thisProcess } from './processRef';
import type { ProcessRef } from './processRef';

const LOCK_STALE_MS = 10_000;
const LOCK_HEARTBEAT_MS = 2_000;
const LOCK_WAIT_MS = 30_000;
const OWNER_ONLY = 0o600;

interface LockInfo extends ProcessRef {
  at: number;
  token: string;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function parseLock(text: string): LockInfo | null {
  // The team outbox's lock before it was a lock file: the pid of a sender on this host.
  if (/^\d{1,10}$/.test(text.trim()) && Number(text) > 0) return { pid: Number(text), host: os.hostname(), at: 0, token: '' };
  try {
    const info = JSON.parse(text) as Partial<LockInfo> | null;
    if (isProcessRef(info) && typeof info?.at === 'number' && typeof info.token === 'string') return info as LockInfo;
  } catch {
    // still being written, or torn by a crash
  }
  return null;
}

/** Whether a lock with this content, last touched at `mtimeMs`, may be broken (see the header). */
function lockIsStale(text: string, mtimeMs: number): boolean {
  const untouched = Date.now() - mtimeMs >= LOCK_STALE_MS;
  const holder = parseLock(text);
  const state = holder ? processState(holder) : 'elsewhere';
  if (!holder || state === 'elsewhere') return untouched;
  if (state === 'ended') return true;
  if (holder.pid !== process.pid) return false;
  // Our own pid. Without start times: written before this process started, it was an earlier
  // process that had the same pid (the margin keeps a sibling thread's lock safe from a wall
  // clock stepped forward meanwhile).
  if (typeof holder.started !== 'string' && holder.at < Date.now() - process.uptime() * 1000 - LOCK_STALE_MS) return true;
  // A thread of this process: one that ended (a terminated worker) no longer touches its lock.
  return untouched;
}

export interface LockFileOptions {
  /** Called each time the lock is found held and left to its holder. */
  onWait?: () => void;
  /** How long a waiter waits for a live holder before it gives up (default LOCK_WAIT_MS). */
  waitMs?: number;
}

/** An exclusive lock, held for as long as its holder runs (touched meanwhile); recovers locks of dead holders. */
export class LockFile {
  constructor(
    private readonly file: string,
    private readonly options: LockFileOptions = {},
  ) {}

  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    return this.holding((await this.acquire(true)) as string, fn);
  }

  /** Runs fn holding the lock if it can be taken now (a stale lock is broken); false when another holder has it. */
  async tryWithLock(fn: () => Promise<void>): Promise<boolean> {
    const token = await this.acquire(false);
    if (token === null) return false;
    await this.holding(token, fn);
    return true;
  }

  private async holding<T>(token: string, fn: () => Promise<T>): Promise<T> {
    const heartbeat = setInterval(() => void this.touch(token), LOCK_HEARTBEAT_MS);
    heartbeat.unref?.();
    try {
      return await fn();
    } finally {
      clearInterval(heartbeat);
      await this.release(token);
    }
  }

  /** The lock's token once held; without `wait`, null when a live holder has it. */
  private async acquire(wait: boolean): Promise<string | null> {
    const token = `${process.pid}-${randomUUID()}`;
    const info: LockInfo = { ...thisProcess(), at: Date.now(), token };
    const deadline = Date.now() + (this.options.waitMs ?? LOCK_WAIT_MS);
    let delay = 1;
    let holder = '';
    for (;;) {
      try {
        await this.create(info);
        return token;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      const seen = await this.breakIfStale();
      if (seen !== null) {
        if (!wait) return null;
        holder = seen;
        this.options.onWait?.();
      }
      if (Date.now() > deadline) {
        throw new Error(`Timed out waiting for the lock ${this.file}, held by ${describeProcess(parseLock(holder))}. If no Code Memory process is running there, delete that file.`);
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 50);
    }
  }

  /** Creates the lock file holding `info` (EEXIST when held); a write the disk refuses leaves no file behind. */
  private async create(info: LockInfo): Promise<void> {
    const handle = await fsp.open(this.file, 'wx', OWNER_ONLY);
    let written = false;
    try {
      await handle.writeFile(JSON.stringify(info));
      written = true;
    } finally {
      await handle.close();
      // A full disk: the empty file would hold the lock until it is stale.
      if (!written) await fsp.unlink(this.file).catch(() => undefined);
    }
  }

  /** Breaks the lock if its holder is gone. Returns the lock's content if it was left to its holder, else null. */
  private async breakIfStale(): Promise<string | null> {
    let text: string;
    let mtime: number;
    try {
      [text, mtime] = await Promise.all([fsp.readFile(this.file, 'utf8'), fsp.stat(this.file).then((s) => s.mtimeMs)]);
    } catch {
      return null;
    }
    if (!lockIsStale(text, mtime)) return text;
    // Move the stale lock aside atomically; if what we moved is not what we judged stale
    // (another process broke it and re-locked meanwhile), put it back.
    const aside = `${this.file}.stale-${process.pid}-${randomInt(1 << 30)}`;
    try {
      await fsp.rename(this.file, aside);
    } catch {
      return null;
    }
    const moved = await fsp.readFile(aside, 'utf8').catch(() => '');
    if (moved !== text) {
      await fsp.link(aside, this.file).catch(() => undefined);
    }
    await fsp.unlink(aside).catch(() => undefined);
    return null;
  }

  /** The heartbeat: shows waiters on other hosts that the holder still runs. */
  private async touch(token: string): Promise<void> {
    const text = await fsp.readFile(this.file, 'utf8').catch(() => '');
    if (!text.includes(token)) return;
    const now = new Date();
    await fsp.utimes(this.file, now, now).catch(() => undefined);
  }

  private async release(token: string): Promise<void> {
    const text = await fsp.readFile(this.file, 'utf8').catch(() => '');
    if (text.includes(token)) await fsp.unlink(this.file).catch(() => undefined);
  }
}
