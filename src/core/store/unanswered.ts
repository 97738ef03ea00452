// A store on object storage whose endpoint stops answering: each request is bounded (see
// requestBounds), yet a command that goes on after one got no answer made a request at each of
// its later steps (its session's end, its graph, its close), and each waited the bound again:
// an `observe` black-holed after its first commit took 35 times the bound to exit. So once a
// request got no answer, the calls made within UNANSWERED_HOLD bounds after it fail at once with
// the same reason, without asking; the first call after that asks again, so a store whose
// endpoint is back answers again within that time. (One bound was too short: the calls of a
// write still under way when the first failed went on failing for a bound or two, and the
// command's close then found the latch open again.)
//
// One mechanism for every LanceDB call the store makes: the connection is wrapped, and so is
// every table, query, merge builder and batch stream reached from it.

import * as lancedb from '@lancedb/lancedb';
import { unansweredRequest } from '../errorText';

/** How many request bounds the calls after a request that got no answer fail at once. */
export const UNANSWERED_HOLD = 3;

/** When a request to the store last got no answer, and which endpoint it was. */
export class UnansweredLatch {
  private since = -Infinity;
  private origin = '';

  constructor(private readonly holdMs: number) {}

  /** Throws at once while the latch is closed (a request got no answer less than the hold ago). */
  check(): void {
    const ago = Date.now() - this.since;
    if (ago >= this.holdMs) return;
    throw new Error(
      `the object store at ${this.origin} did not answer ${(ago / 1000).toFixed(1)} s ago; not asked again for ${((this.holdMs - ago) / 1000).toFixed(1)} s (check the network, a VPN or proxy, and the endpoint)`,
    );
  }

  /**
   * Takes note of the failure of a call made at `started`: a request that got no answer closes
   * the latch. A call made before the latch last closed tells nothing new (it was under way in
   * the same silence, and may end long after the endpoint is back: a listing is tried six times).
   */
  failed(error: unknown, started: number): void {
    const origin = unansweredRequest(error);
    if (origin === null || started < this.since) return;
    this.since = Date.now();
    this.origin = origin;
  }
}

/**
 * How a method makes requests: 'stream' when it starts a stream of batches (a query's
 * asyncIterator or execute), 'call' when it answers a promise (an async method, a stream's next),
 * null when it makes none (a builder's where, select, limit).
 */
function asks(fn: (...args: unknown[]) => unknown, key: string | symbol): 'call' | 'stream' | null {
  const kind = fn.constructor?.name;
  if (kind === 'AsyncFunction' || key === 'next') return 'call';
  return kind === 'AsyncGeneratorFunction' || key === Symbol.asyncIterator || key === 'execute' ? 'stream' : null;
}

/** What a call returns that leads to more requests: a table, a query, a merge builder, a stream. */
function leadsOn(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  if (value instanceof lancedb.Table || value instanceof lancedb.QueryBase || value instanceof lancedb.MergeInsertBuilder) return true;
  return typeof (value as AsyncIterator<unknown>).next === 'function' && Symbol.asyncIterator in value;
}

/** `target` (a LanceDB connection, or anything reached from it), its calls under `latch`. */
export function underLatch<T extends object>(target: T, latch: UnansweredLatch): T {
  const wrapped = new WeakMap<object, object>();
  const wrap = <U extends object>(object: U): U => {
    const known = wrapped.get(object);
    if (known) return known as U;
    const proxy = new Proxy(object, {
      get(on, key) {
        const value = Reflect.get(on, key, on) as unknown;
        if (typeof value !== 'function') return value;
        const fn = value as (...args: unknown[]) => unknown;
        const asking = asks(fn, key);
        return (...args: unknown[]): unknown => {
          if (asking) {
            try {
              latch.check();
            } catch (e) {
              // A stream fails at its first batch, as a failed request would; a call, at once.
              return asking === 'stream' ? failingStream(e) : Promise.reject(e);
            }
          }
          const started = Date.now();
          const result = fn.apply(on, args);
          if (result === on) return proxy;
          if (result instanceof Promise) {
            return result.then(
              (v: unknown) => (leadsOn(v) ? wrap(v) : v),
              (e: unknown) => {
                latch.failed(e, started);
                throw e;
              },
            );
          }
          return leadsOn(result) ? wrap(result) : result;
        };
      },
    });
    wrapped.set(object, proxy);
    return proxy;
  };
  return wrap(target);
}

/** A stream of batches whose first batch fails with `error`. */
function failingStream(error: unknown): AsyncIterableIterator<never> {
  const stream: AsyncIterableIterator<never> = {
    next: () => Promise.reject(error),
    [Symbol.asyncIterator]: () => stream,
  };
  return stream;
}
