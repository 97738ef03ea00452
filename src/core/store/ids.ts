// int64 id allocation that stays unique when several processes write one store.
// Local stores: a counter file advanced in blocks under an O_EXCL lock file, so a process takes
// the lock once per block, not per id. Object storage has no exclusive create we can rely on
// from here, so there each process claims a random block far above the local range and checks
// that no record already uses it.
//
// The counter is advanced under the store's lock file (lockFile.ts), never taken from a live
// holder: two processes that read the same counter would hand out the same ids.
// The counter and its temporary files are readable by their owner only.
//
// Ids are JavaScript numbers: past Number.MAX_SAFE_INTEGER (2^53 - 1) two ids can be the same
// number. No allocator hands out an id above it: a claim that would pass it is refused
// (IdSpaceError), and an import keeps its records' ids only up to MAX_KEPT_ID.

import { largest } from '../lists';
import { randomInt } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { LockFile } from './lockFile';

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

const OWNER_ONLY = 0o600;

/**
 * How far past the stored ids a claim starts when the counter cannot be trusted (missing,
 * unreadable, or behind what is stored: deleted, or restored from an older copy while processes
 * run): past what blocks other processes claimed and have not used up yet may hold.
 */
const DISTRUST_GAP = 2 ** 20;

/**
 * The end of the last block any allocator of this process claimed, by counter file: a process
 * has an allocator per project (Store.idsFor), and a counter found behind never hands one of them
 * ids another still holds.
 */
const claimedUpTo = new Map<string, number>();

/**
 * The largest id an import keeps (2^52): a record with a larger id gets a fresh one. Keeping an
 * id moves the local counter past it, so a kept id near 2^53 would leave the store a handful of
 * ids before they pass Number.MAX_SAFE_INTEGER (an old build then handed out the same id twice).
 * Up to 2^52, at least 2^52 ids (4.5e15) stay free above any kept id. A local store counts from 1,
 * so its own exports never come near it; an export of a store on object storage holds ids of
 * random blocks up to 2^53 - 1 (see RandomBlockAllocator), and those above 2^52 are renumbered
 * like any id taken: the file is not refused.
 */
export const MAX_KEPT_ID = 2 ** 52;

/** The store has no id left below Number.MAX_SAFE_INTEGER for a claim (nothing was written). */
export class IdSpaceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IdSpaceError';
  }
}

/** Block allocator over a counter file in a local store folder. */
export class LocalBlockAllocator implements IdAllocator {
  private next = 0;
  private end = 0;
  private readonly lock: LockFile;
  private readonly counterFile: string;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly rangeUsed?: (lo: number, hi: number) => Promise<boolean>;

  constructor(
    dir: string,
    private readonly initialFloor: () => Promise<number>,
    private readonly blockSize = 256,
    /** `rangeUsed`: whether a stored record holds an id in [lo, hi), checked on every claim. */
    options: { onLockWait?: () => void; rangeUsed?: (lo: number, hi: number) => Promise<boolean> } = {},
  ) {
    this.rangeUsed = options.rangeUsed;
    this.lock = new LockFile(path.join(dir, 'ids.lock'), { onWait: options.onLockWait });
    this.counterFile = path.join(dir, 'ids.next');
  }

  allocate(count: number): Promise<number[]> {
    // Serialise callers inside this process; the lock file serialises processes.
    const run = this.chain.then(() => this.allocateNow(count));
    this.chain = run.catch(() => undefined);
    return run;
  }

  async ensureAtLeast(floor: number): Promise<void> {
    if (!Number.isSafeInteger(floor)) throw new IdSpaceError(`The id counter cannot move to ${floor}: ids go up to ${Number.MAX_SAFE_INTEGER} (nothing was written)`);
    await this.lock.withLock(async () => {
      const current = await this.readCounter();
      if (current < floor) await this.writeCounter(floor);
    });
  }

  async reserve(ids: number[]): Promise<[number, number] | null> {
    if (ids.length === 0) return null;
    // The counter moves past the largest: one near 2^53 would use the store's ids up.
    const wrong = ids.find((id) => !(Number.isSafeInteger(id) && id >= 1 && id <= MAX_KEPT_ID));
    if (wrong !== undefined) throw new IdSpaceError(`An import can keep ids from 1 to ${MAX_KEPT_ID} only, not ${wrong}: give that record a fresh id (nothing was reserved)`);
    return this.lock.withLock(async () => {
      const floor = await this.nextFree();
      const top = largest(ids) + 1;
      if (top <= floor) return null;
      await this.writeCounter(top);
      return [floor, top];
    });
  }

  private async allocateNow(count: number): Promise<number[]> {
    if (!(Number.isSafeInteger(count) && count >= 0)) throw new RangeError(`Cannot allocate ${count} ids`);
    const ids: number[] = [];
    while (ids.length < count) {
      if (this.next >= this.end) await this.claim(Math.max(this.blockSize, count - ids.length));
      while (this.next < this.end && ids.length < count) ids.push(this.next++);
    }
    return ids;
  }

  private async claim(size: number): Promise<void> {
    await this.lock.withLock(async () => {
      let start = await this.nextFree();
      // A counter file damaged or restored from an older copy would hand out ids that stored
      // records hold: a block some record already uses starts past every stored id instead.
      if (this.rangeUsed && (await this.rangeUsed(start, start + size))) start = Math.max(start, (await this.initialFloor()) + DISTRUST_GAP);
      // Past 2^53 - 1 ids are no longer distinct numbers: refused before the counter moves.
      if (!(Number.isSafeInteger(start) && start + size <= Number.MAX_SAFE_INTEGER)) {
        throw new IdSpaceError(
          `The store has no ids left: the next ${size} would pass ${Number.MAX_SAFE_INTEGER}, the largest id Code Memory hands out ` +
            `(the next free id is ${start}: an import by an older build kept a record's id that high). Nothing was written.`,
        );
      }
      await this.writeCounter(start + size);
      claimedUpTo.set(this.counterFile, Math.max(claimedUpTo.get(this.counterFile) ?? 0, start + size));
      this.next = start;
      this.end = start + size;
    });
  }

  /** The lowest id no block has claimed: the counter's, or past this process's own last block. */
  private async nextFree(): Promise<number> {
    return Math.max(await this.readCounter(), claimedUpTo.get(this.counterFile) ?? 0);
  }

  private async readCounter(): Promise<number> {
    try {
      const value = Number((await fsp.readFile(this.counterFile, 'utf8')).trim());
      if (Number.isSafeInteger(value) && value > 0) return value;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    // No counter yet (a new store, or one copied without it), or one deleted or garbled: start
    // past every stored id, and, in a store that has some, past the blocks others may hold.
    const floor = await this.initialFloor();
    return floor > 1 ? floor + DISTRUST_GAP : 1;
  }

  private async writeCounter(value: number): Promise<void> {
    const tmp = `${this.counterFile}.${process.pid}.tmp`;
    const handle = await fsp.open(tmp, 'w', OWNER_ONLY);
    try {
      await handle.chmod(OWNER_ONLY); // a temporary file left by a crash keeps its old mode
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
