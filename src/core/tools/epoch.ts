// The epoch rule (capture/prepare.ts) as the tools check it.

import * as z from 'zod/v4';
import { EPOCH_RULE, MAX_EPOCH_MS } from '../capture/prepare';
import { ToolError } from './types';

export { EPOCH_RULE, MAX_EPOCH_MS };

/** Schema of an epoch field, for tools whose published schema may carry the bound. */
export const epochMs = z.number().int(EPOCH_RULE).min(0, EPOCH_RULE).max(MAX_EPOCH_MS, EPOCH_RULE);

/** The same rule checked in a handler, for contract tools whose published schema must not change. */
export function checkEpoch(where: string, value: number | undefined): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < 0 || value > MAX_EPOCH_MS) throw new ToolError('invalid_arguments', `${where}: ${EPOCH_RULE}`);
}
