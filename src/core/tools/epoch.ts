// Times callers give (observation times, recall's since/until): milliseconds since 1970 that a
// Date can hold and print. A safe integer is not enough: past 8.64e15 ms no Date exists, and the
// write would fail half-way. The bound is the end of the year 9999, so that a time given in
// microseconds by mistake is refused instead of stored as the year 55,000.

import * as z from 'zod/v4';
import { ToolError } from './types';

export const MAX_EPOCH_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const EPOCH_RULE = `must be milliseconds since 1970, a whole number from 0 to ${MAX_EPOCH_MS} (the end of the year 9999)`;

/** Schema of an epoch field, for tools whose published schema may carry the bound. */
export const epochMs = z.number().int(EPOCH_RULE).min(0, EPOCH_RULE).max(MAX_EPOCH_MS, EPOCH_RULE);

/** The same rule checked in a handler, for contract tools whose published schema must not change. */
export function checkEpoch(where: string, value: number | undefined): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < 0 || value > MAX_EPOCH_MS) throw new ToolError('invalid_arguments', `${where}: ${EPOCH_RULE}`);
}
