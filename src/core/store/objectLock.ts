// The store's lock on object storage (Store.exclusive in an s3:// or az:// store), for what the
// lock file does on disk (lockFile.ts): a read-then-write that must not interleave with another
// process's, such as an import's check for commits already stored and their write.
//
// Object storage has no lock, but it has an exclusive create: a PUT with `If-None-Match: *` fails
// (S3: 412; Azure Blob: 409 or 412) when the object exists (an S3 endpoint was probed for it at
// open: objectStorage.ts; Azure honours it natively). A lock
// is a sequence of generations, objects `<store prefix>/.locks/<name>/<n>`. Taking it means
// creating the generation after the newest one, once that one is free (its holder wrote it
// released, or ended on this host, or stopped touching it LOCK_STALE_MS ago by the server's own
// clock, whoever it is: over a network a release can fail while its process lives on). Of two
// processes creating the same generation exactly one succeeds, and nothing is deleted to take a
// lock, so no one can remove another's. The holder rewrites its generation every
// LOCK_HEARTBEAT_MS while it holds it and writes it released at the end; generations older than
// the previous one are removed by whoever takes the next, and a taker that finds a newer
// generation than its own right after creating it (it acted on a listing read before a stall)
// gives its own back. Every request is retried on busy answers and network errors.
// Cost: about six requests a locked write (list, read, create, list, remove, release).
// A holder stalled past LOCK_STALE_MS (a suspended machine) loses the lock, as on another host
// on disk; it cannot be told to stop.

import { randomUUID } from 'node:crypto';
import { ObjectStoreUnreachable, retried } from './objectRequests';
import type { Listing, ObjectAnswer, ObjectSend } from './objectRequests';
import { listKeys, objectClient, parseObjectLocation } from './objectStorage';
import { describeProcess, isProcessRef, processState, thisProcess } from './processRef';
import type { ProcessRef } from './processRef';

const LOCK_STALE_MS = 30_000;
const LOCK_HEARTBEAT_MS = 5_000;
const LOCK_WAIT_MS = 120_000;
const TIMEOUT_MS = 10_000;

interface Holder extends ProcessRef {
  token: string;
  released?: boolean;
}

function parseHolder(text: string): Holder | null {
  try {
    const h = JSON.parse(text) as Partial<Holder> | null;
    return isProcessRef(h) && typeof h?.token === 'string' ? (h as Holder) : null;
  } catch {
    return null;
  }
}

/** The requests the lock makes, to S3 or to Azure Blob; each retried on busy answers and network errors. */
interface LockObjects {
  request(method: 'GET' | 'PUT' | 'DELETE', key: string, headers?: Record<string, string>, body?: Buffer): Promise<ObjectAnswer>;
  /** Every key under `prefix` (which ends with '/'). */
  list(prefix: string): Promise<string[]>;
}

function lockObjects(where: string, send: ObjectSend, listing: Listing): LockObjects {
  const call: ObjectSend = (...request) => retried(where, true, () => send(...request));
  return {
    request: (method, key, headers = {}, body = Buffer.alloc(0)) => call(method, key, headers, body, {}),
    list: (prefix) => listKeys(where, send, listing, prefix),
  };
}

/**
 * The lock `name` of the store at `uri` (opened with `storageOptions`): on s3://, and on az:// with
 * a key or SAS in them (objectStorageOptions); null elsewhere (gs://, or Azure through another sign-in).
 */
export function objectLock(uri: string, storageOptions: Record<string, string>, name: string, options: ObjectLockOptions = {}): ObjectLock | null {
  const location = parseObjectLocation(uri);
  if (!location) return null;
  const dir = [location.prefix, '.locks', name].filter(Boolean).join('/');
  const where = `the lock ${dir}`;
  const client = objectClient(location, storageOptions, TIMEOUT_MS);
  return client ? new ObjectLock(lockObjects(where, client.send, client.listing), dir, options) : null;
}

export interface ObjectLockOptions {
  staleMs?: number;
  waitMs?: number;
  /** Called each time the lock is found held by another holder. */
  onWait?: () => void;
}

export class ObjectLock {
  private readonly staleMs: number;
  private readonly waitMs: number;
  private readonly onWait: () => void;

  constructor(
    private readonly objects: LockObjects,
    private readonly dir: string,
    options: ObjectLockOptions = {},
  ) {
    this.staleMs = options.staleMs ?? LOCK_STALE_MS;
    this.waitMs = options.waitMs ?? LOCK_WAIT_MS;
    this.onWait = options.onWait ?? (() => undefined);
  }

  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    const holder: Holder = { ...thisProcess(), token: randomUUID() };
    const generation = await this.acquire(holder);
    // One heartbeat at a time, none after the release (a late one would take the release back).
    let stopped = false;
    let beat: Promise<void> = Promise.resolve();
    const heartbeat = setInterval(() => {
      beat = beat.then(() => (stopped ? undefined : this.write(generation, holder))).catch(() => undefined);
    }, LOCK_HEARTBEAT_MS);
    heartbeat.unref?.();
    try {
      return await fn();
    } finally {
      stopped = true;
      clearInterval(heartbeat);
      await beat;
      await this.giveBack(generation, holder);
    }
  }

  private key(generation: number): string {
    return `${this.dir}/${String(generation).padStart(12, '0')}`;
  }

  private async acquire(holder: Holder): Promise<number> {
    const deadline = Date.now() + this.waitMs;
    let delay = 50;
    let seen = '';
    for (;;) {
      const generations = await this.generations();
      const newest = generations.at(-1) ?? 0;
      const held = newest > 0 ? await this.heldBy(newest, holder) : null;
      // Ours: a create whose answer was lost and that was sent again (412 the second time).
      if (held === 'ours') return newest;
      if (held === null) {
        const created = await this.objects.request('PUT', this.key(newest + 1), { 'if-none-match': '*' }, Buffer.from(JSON.stringify(holder)));
        if (created.status >= 200 && created.status < 300) {
          try {
            // A listing read long ago may name a generation since removed, which the create then
            // made again below a newer holder's: that generation is given back, and the loop goes on.
            if (((await this.generations()).at(-1) ?? 0) > newest + 1) {
              await this.giveBack(newest + 1, holder);
              continue;
            }
          } catch (e) {
            await this.giveBack(newest + 1, holder);
            throw e;
          }
          void this.removeOld(generations.filter((g) => g < newest));
          return newest + 1;
        }
        // Another process created it first (412; Azure: 409), or S3 has a conditional write in flight on it (409).
        if (created.status !== 412 && created.status !== 409) throw new ObjectStoreUnreachable(`could not take the lock ${this.key(newest + 1)}: HTTP ${created.status}`);
      } else {
        seen = held;
        this.onWait();
      }
      if (Date.now() > deadline) throw new Error(`Timed out waiting for the lock ${this.dir} in the store, held by ${seen || 'another process'}.`);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 1000);
    }
  }

  /** Who holds this generation: null when it is free, 'ours' when `self` does. */
  private async heldBy(generation: number, self: Holder): Promise<string | null> {
    const got = await this.objects.request('GET', this.key(generation));
    // Gone: removed by a process that took a later generation; the listing is looked at again.
    if (got.status === 404) return 'a newer holder';
    if (got.status !== 200) throw new ObjectStoreUnreachable(`could not read the lock ${this.key(generation)}: HTTP ${got.status}`);
    const holder = parseHolder(got.body);
    if (holder?.token === self.token) return holder.released ? null : 'ours';
    if (holder?.released || (holder && processState(holder) === 'ended')) return null;
    // Otherwise the heartbeat decides, for a running process of this host too: a generation whose
    // release or creation answered an error names a process that no longer holds it.
    if ((got.date ?? Date.now()) - (got.lastModified ?? 0) >= this.staleMs) return null;
    return describeProcess(holder);
  }

  private async write(generation: number, holder: Holder): Promise<void> {
    const put = await this.objects.request('PUT', this.key(generation), {}, Buffer.from(JSON.stringify(holder)));
    if (put.status < 200 || put.status >= 300) throw new ObjectStoreUnreachable(`could not write the lock ${this.key(generation)}: HTTP ${put.status}`);
  }

  /** Writes the generation released; when that fails, it frees itself once untouched for the stale time. */
  private async giveBack(generation: number, holder: Holder): Promise<void> {
    await this.write(generation, { ...holder, released: true }).catch(() => undefined);
  }

  /** Removes generations older than the previous one, a few at a time (a burst of deletes helps no one). */
  private async removeOld(generations: number[]): Promise<void> {
    for (const g of generations.slice(0, 20)) await this.objects.request('DELETE', this.key(g)).catch(() => undefined);
  }

  private async generations(): Promise<number[]> {
    const out: number[] = [];
    // Keys right under the lock's folder only: an object further down (put there by hand) is no
    // generation. Told by the depth, as the prefix may come back XML-escaped.
    const depth = `${this.dir}/`.split('/').length;
    for (const key of await this.objects.list(`${this.dir}/`)) {
      const last = key.slice(key.lastIndexOf('/') + 1);
      const n = Number(last);
      if (key.split('/').length === depth && /^[0-9]+$/.test(last) && Number.isSafeInteger(n) && n > 0) out.push(n);
    }
    return out.sort((a, b) => a - b);
  }
}
