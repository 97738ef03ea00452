// The request log's retention as a user sets it: no store code, so the CLI can check its flags
// before it loads anything (see src/cli/options.ts).

import { FilterError } from './filters';

export interface RequestLogRetention {
  maxAgeMs: number;
  maxRows: number;
}

export const DAY_MS = 24 * 3600_000;

export const DEFAULT_REQUEST_LOG_RETENTION: RequestLogRetention = { maxAgeMs: 30 * DAY_MS, maxRows: 10_000 };

/**
 * The retention a user sets (the `codeMemory.requestLog.*` settings, the CLI's
 * `--request-log-days` / `--request-log-max-rows`): whole days and a row count, each defaulted
 * when absent. Throws FilterError naming the value and its range.
 */
export function requestLogRetention(days: number | undefined, maxRows: number | undefined): RequestLogRetention {
  const check = (value: number | undefined, name: string, max: number, fallback: number): number => {
    if (value === undefined) return fallback;
    if (!Number.isInteger(value) || value < 1 || value > max) throw new FilterError(`${name} must be a whole number from 1 to ${max}, not ${String(value)}`);
    return value;
  };
  return {
    maxAgeMs: check(days, 'the request log retention in days', 36_500, DEFAULT_REQUEST_LOG_RETENTION.maxAgeMs / DAY_MS) * DAY_MS,
    maxRows: check(maxRows, 'the request log row limit', 10_000_000, DEFAULT_REQUEST_LOG_RETENTION.maxRows),
  };
}
