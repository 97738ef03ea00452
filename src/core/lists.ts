/**
 * Lists of any length passed on without spreading them into a call: `out.push(...items)`,
 * `Math.max(...values)` and the like pass each item as an argument, and a long enough list (a
 * session of 150,000 observations, an import of 200,000 records, a commit's 10,000 paths turned
 * into words) overflows the call stack ("Maximum call stack size exceeded").
 */

/** Appends `items` to `out` one by one; returns `out`. */
export function append<T>(out: T[], items: Iterable<T>): T[] {
  for (const item of items) out.push(item);
  return out;
}

/** The largest of `values`, as Math.max(...values) (-Infinity when there are none, NaN when one is). */
export function largest(values: Iterable<number>): number {
  let top = -Infinity;
  for (const v of values) {
    if (Number.isNaN(v)) return NaN;
    if (v > top) top = v;
  }
  return top;
}

/** The smallest of `values`, as Math.min(...values) (Infinity when there are none, NaN when one is). */
export function smallest(values: Iterable<number>): number {
  let low = Infinity;
  for (const v of values) {
    if (Number.isNaN(v)) return NaN;
    if (v < low) low = v;
  }
  return low;
}

/**
 * Adds `value` to the list `map` holds under `key` (a new list when none): in place, where
 * `map.set(key, [...(map.get(key) ?? []), value])` copies the list on every add, quadratic in a
 * long one (a session's 150,000 edits of one file).
 */
export function addToList<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
