// The epoch rule (capture/prepare.ts) as the tools check it.

import * as z from 'zod/v4';
import { EPOCH_RULE, MAX_EPOCH_MS } from '../capture/prepare';

export { EPOCH_RULE, MAX_EPOCH_MS };

/** Schema of an epoch field: its bound is published with the tool's schema. */
export const epochMs = z.number().int(EPOCH_RULE).min(0, EPOCH_RULE).max(MAX_EPOCH_MS, EPOCH_RULE);

