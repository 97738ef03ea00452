// The global options every command takes, parsed without loading the engine: `main.ts` and the
// help text need them before any command's implementation is loaded.

import { fileURLToPath } from 'node:url';
import { defaultStoreUri } from '../core/store/location';
import { parseObjectLocation } from '../core/store/objectStorage';
import { requestLogRetention } from '../core/store/retention';
import type { RequestLogRetention } from '../core/store/retention';

export interface GlobalOptions {
  store: string;
  /** A team store shared with others (--team-store, else $CODE_MEMORY_TEAM_STORE). */
  teamStore?: string;
  project?: string;
  branch?: string;
  json: boolean;
  embedder: string;
  /** The request log's retention (applied by whichever process holds the store's maintenance lease). */
  requestLogRetention: RequestLogRetention;
  cwd: string;
}

export class UsageError extends Error {}

export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
}

export const EMBEDDERS = ['use-lite', 'hashed', 'none'] as const;

/**
 * A file:// store as the folder path it names, percent-decoded (my%20store is 'my store'); other
 * locations as given. A file URI that names no local path is a usage error, not a crash later.
 */
function storeLocation(uri: string, from: string): string {
  if (!uri.startsWith('file://')) return uri;
  try {
    return fileURLToPath(uri);
  } catch (error) {
    const shown = uri.length > 200 ? `${uri.slice(0, 200)}...` : uri;
    throw new UsageError(`${from} '${shown}' is not a file URI of a local folder (${errorMessage(error)}); give a folder path, or a file:///absolute/path URI with valid percent-encoding`);
  }
}

function teamStoreLocation(uri: string | undefined): string | undefined {
  if (uri === undefined) return undefined;
  if (!parseObjectLocation(uri) && !uri.startsWith('file://') && /^[a-z][a-z0-9+.-]*:\/\//i.test(uri)) {
    throw new UsageError(`--team-store '${uri}' is not s3://bucket/prefix, gs://, az:// or a folder`);
  }
  return storeLocation(uri, '--team-store');
}

/** A whole number given as a flag or in the environment; undefined when neither is set. */
function countOption(flag: string, value: unknown, envName: string, env: NodeJS.ProcessEnv): number | undefined {
  const [raw, from] = value !== undefined ? [String(value), `--${flag}`] : [env[envName]?.trim() || undefined, envName];
  if (raw === undefined) return undefined;
  if (!/^[0-9]{1,9}$/.test(raw) || Number(raw) < 1) throw new UsageError(`${from} must be a whole number of at least 1, not '${raw.slice(0, 40)}'`);
  return Number(raw);
}

function requestLogRetentionFrom(values: Record<string, unknown>, env: NodeJS.ProcessEnv): RequestLogRetention {
  const days = countOption('request-log-days', values['request-log-days'], 'CODE_MEMORY_REQUEST_LOG_DAYS', env);
  const rows = countOption('request-log-max-rows', values['request-log-max-rows'], 'CODE_MEMORY_REQUEST_LOG_MAX_ROWS', env);
  try {
    return requestLogRetention(days, rows);
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
}

export function globalOptionsFrom(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): GlobalOptions {
  const embedder = (values.embedder as string | undefined) ?? env.CODE_MEMORY_EMBEDDER ?? 'use-lite';
  if (!(EMBEDDERS as readonly string[]).includes(embedder)) throw new UsageError(`--embedder must be one of ${EMBEDDERS.join(', ')}`);
  const store = values.store as string | undefined;
  return {
    store: store !== undefined ? storeLocation(store, '--store') : storeLocation(defaultStoreUri(env), 'CODE_MEMORY_STORE'),
    teamStore: teamStoreLocation((values['team-store'] as string | undefined) ?? (env.CODE_MEMORY_TEAM_STORE?.trim() || undefined)),
    project: (values.project as string | undefined) ?? (env.CODE_MEMORY_PROJECT?.trim() || undefined),
    branch: values.branch as string | undefined,
    json: Boolean(values.json),
    embedder,
    requestLogRetention: requestLogRetentionFrom(values, env),
    cwd: process.cwd(),
  };
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
