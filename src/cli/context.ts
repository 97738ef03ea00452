// What every CLI command shares: global options, the scope, opening the engine, output.

import { projectScopeFor } from '../core/capture/project';
import { WorkerEmbedder } from '../core/embed/workerEmbedder';
import { MemoryEngine } from '../core/engine';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MemoryEngineApi } from '../core/api';
import type { Embedder } from '../core/embed/embedder';
import type { EmbedderConfig } from '../core/embed/factory';
import type { Scope } from '../core/model/records';
import { defaultStoreUri } from '../core/store/location';
import { requestLogRetention } from '../core/store/repos/requestLog';
import type { RequestLogRetention } from '../core/store/repos/requestLog';

export interface GlobalOptions {
  store: string;
  project?: string;
  branch?: string;
  json: boolean;
  embedder: string;
  /** Applied by whichever process holds the store's maintenance lease. */
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
    project: (values.project as string | undefined) ?? (env.CODE_MEMORY_PROJECT?.trim() || undefined),
    branch: values.branch as string | undefined,
    json: Boolean(values.json),
    embedder,
    requestLogRetention: requestLogRetentionFrom(values, env),
    cwd: process.cwd(),
  };
}

/** The project a command reads and writes: --project, else the folder's git remote or name. */
export async function resolveScope(options: GlobalOptions, folder = options.cwd): Promise<Scope> {
  const project = options.project ?? (await projectScopeFor(path.resolve(folder)));
  return options.branch ? { project, branch: options.branch } : { project };
}

function embedderConfig(name: string): EmbedderConfig | null {
  if (name === 'none') return null;
  if (name === 'hashed') return { provider: 'hashed' };
  return { provider: 'use-lite' };
}

/**
 * Opens the engine on the store. `withEmbedder: false` for commands that never embed (stats,
 * node, export...), so they do not pay for loading a model.
 */
export async function openEngine(options: GlobalOptions, io: Io, withEmbedder: boolean): Promise<MemoryEngineApi> {
  process.env.LANCEDB_LOG ??= 'error';
  let embedder: Embedder | 'none' = 'none';
  const config = withEmbedder ? embedderConfig(options.embedder) : null;
  if (config) {
    try {
      embedder = await WorkerEmbedder.start(config);
    } catch (error) {
      io.stderr.write(
        `warning: the ${config.provider} embedder could not start (${error instanceof Error ? error.message : String(error)}); searching by full text only. Run \`code-memory doctor\`.\n`,
      );
    }
  }
  return MemoryEngine.open({ storeUri: options.store, embedder, requestLogRetention: options.requestLogRetention, logger: (m: string) => io.stderr.write(`${m}\n`) });
}

export function writeJson(io: Io, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
