// int64 id allocation that stays unique when several processes write one store.
// Local stores: a counter file advanced in blocks under an O_EXCL lock file, so a process takes
// the lock once per block, not per id. Object storage has no exclusive create we can rely on
// from here, so there each process claims a random block far above the local range and checks
// that no record already uses it.

import { randomInt } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface IdAllocator {
  /** `count` fresh ids, ascending. */
  allocate(count: number): Promise<number[]>;
  /** Make sure no future id is below `floor` (after an import wrote ids of its own). */
  ensureAtLeast(floor: number): Promise<void>;
  /**
   * For an import that wants to keep its records' ids: reserves, for the caller alone, the
   * range from the lowest id no block has claimed yet up to past the largest of `ids`, and
   * returns it ([lo, hi), or null when nothing was reserved). Ids below `lo` may sit in a block
   * some process claimed and has not used up.
   */
  reserve(ids: number[]): Promise<[number, number] | null>;
}

const LOCK_STALE_MS = 10_000;
const LOCK_WAIT_MS = 30_000;

interface LockInfo {
  pid: number;
  host: string;
  at: number;
  token: string;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** An exclusive lock held for a few milliseconds at a time; recovers locks of dead holders. */
export class LockFile {
  constructor(private readonly file: string) {}

  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    const token = await this.acquire();
    try {
      return await fn();
    } finally {
      await this.release(token);
    }
  }

  private async acquire(): Promise<string> {
    const token = `${process.pid}-${randomInt(1 << 30)}-${Date.now()}`;
    const info: LockInfo = { pid: process.pid, host: os.hostname(), at: Date.now(), token };
    const deadline = Date.now() + LOCK_WAIT_MS;
    let delay = 1;
    for (;;) {
      try {
        const handle = await fsp.open(this.file, 'wx');
        try {
          await handle.writeFile(JSON.stringify(info));
        } finally {
          await handle.close();
        }
        return token;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      await this.breakIfStale();
      if (Date.now() > deadline) {
        throw new Error(`Timed out waiting for the id lock ${this.file}. If no other Code Memory process is running, delete that file.`);
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 50);
    }
  }

  private async breakIfStale(): Promise<void> {
    let text: string;
    let mtime: number;
    try {
      [text, mtime] = await Promise.all([fsp.readFile(this.file, 'utf8'), fsp.stat(this.file).then((s) => s.mtimeMs)]);
    } catch {
      return;
    }
    let holder: LockInfo | null = null;
    try {
      holder = JSON.parse(text) as LockInfo;
    } catch {
      holder = null; // still being written, or torn by a crash: judged by age alone
    }
    const dead = holder !== null && holder.host === os.hostname() && !processAlive(holder.pid);
    if (!dead && Date.now() - mtime < LOCK_STALE_MS) return;
    // Move the stale lock aside atomically; if what we moved is not what we judged stale
    // (another process broke it and re-locked meanwhile), put it back.
    const aside = `${this.file}.stale-${process.pid}-${randomInt(1 << 30)}`;
    try {
      await fsp.rename(this.file, aside);
    } catch {
      return;
    }
    const moved = await fsp.readFile(aside, 'utf8').catch(() => '');
    if (moved !== text) {
      await fsp.link(aside, this.file).catch(() => undefined);
    }
    await fsp.unlink(aside).catch(() => undefined);
  }

  private async release(token: string): Promise<void> {
    const text = await fsp.readFile(this.file, 'utf8').catch(() => '');
    if (text.includes(token)) await fsp.unlink(this.file).catch(() => undefined);
  }
}

/** Block allocator over a counter file in a local store folder. */
export class LocalBlockAllocator implements IdAllocator {
  private next = 0;
  private end = 0;
  private readonly lock: LockFile;
  private readonly counterFile: string;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    dir: string,
    private readonly initialFloor: () => Promise<number>,
    private readonly blockSize = 256,
  ) {
    this.lock = new LockFile(path.join(dir, 'ids.lock'));
    this.counterFile = path.join(dir, 'ids.next');
  }

  allocate(count: number): Promise<number[]> {
    // Serialise callers inside this process; the lock file serialises processes.
    const run = this.chain.then(() => this.allocateNow(count));
    this.chain = run.catch(() => undefined);
    return run;
  }

  async ensureAtLeast(floor: number): Promise<void> {
    await this.lock.withLock(async () => {
      const current = await this.readCounter();
      if (current < floor) await this.writeCounter(floor);
    });
  }

  async reserve(ids: number[]): Promise<[number, number] | null> {
    if (ids.length === 0) return null;
    return this.lock.withLock(async () => {
      const floor = await this.readCounter();
      const top = Math.max(...ids) + 1;
      if (top <= floor) return null;
      await this.writeCounter(top);
      return [floor, top];
    });
  }

  private async allocateNow(count: number): Promise<number[]> {
    const ids: number[] = [];
    while (ids.length < count) {
      if (this.next >= this.end) await this.claim(Math.max(this.blockSize, count - ids.length));
      while (this.next < this.end && ids.length < count) ids.push(this.next++);
    }
    return ids;
  }

  private async claim(size: number): Promise<void> {
    await this.lock.withLock(async () => {
      const start = await this.readCounter();
      await this.writeCounter(start + size);
      this.next = start;
      this.end = start + size;
    });
  }

  private async readCounter(): Promise<number> {
    try {
      const value = Number((await fsp.readFile(this.counterFile, 'utf8')).trim());
      if (Number.isSafeInteger(value) && value > 0) return value;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    // No counter yet (new store, or a store copied without it): start above every stored id.
    return Math.max(1, await this.initialFloor());
  }

  private async writeCounter(value: number): Promise<void> {
    const tmp = `${this.counterFile}.${process.pid}.tmp`;
    const handle = await fsp.open(tmp, 'w');
    try {
      await handle.writeFile(String(value));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.rename(tmp, this.counterFile);
  }
}

const RANDOM_BLOCK_BITS = 20;
const RANDOM_BLOCK_MIN = 2 ** 12; // keeps remote ids above 2^32, clear of any local counter
const RANDOM_BLOCK_MAX = 2 ** (53 - RANDOM_BLOCK_BITS);

/** For object storage: random 2^20-id blocks, verified unused before use. */
export class RandomBlockAllocator implements IdAllocator {
  private next = 0;
  private end = 0;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly blockInUse: (lo: number, hi: number) => Promise<boolean>) {}

  allocate(count: number): Promise<number[]> {
    const run = this.chain.then(async () => {
      const ids: number[] = [];
      while (ids.length < count) {
        if (this.next >= this.end) await this.claim();
        while (this.next < this.end && ids.length < count) ids.push(this.next++);
      }
      return ids;
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  async ensureAtLeast(): Promise<void> {
    // Random blocks are checked against stored ids on claim; nothing to move.
  }

  async reserve(): Promise<[number, number] | null> {
    // Random blocks start at 2^32 and a claim checks the stored ids: ids below never come from
    // a block, so they are the import's to keep once no stored record holds them.
    return [1, RANDOM_BLOCK_MIN * 2 ** RANDOM_BLOCK_BITS];
  }

  private async claim(): Promise<void> {
    for (let attempt = 0; attempt < 16; attempt++) {
      const block = RANDOM_BLOCK_MIN + randomInt(RANDOM_BLOCK_MAX - RANDOM_BLOCK_MIN);
      const lo = block * 2 ** RANDOM_BLOCK_BITS;
      const hi = lo + 2 ** RANDOM_BLOCK_BITS;
      if (!(await this.blockInUse(lo, hi))) {
        this.next = lo;
        this.end = hi;
        return;
      }
    }
    throw new Error('Could not find a free id block in the store');
  }
}
