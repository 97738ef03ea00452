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
import { parseObjectLocation } from '../core/store/objectStorage';
import { gitAuthor } from '../core/team/shareRows';

export interface GlobalOptions {
  store: string;
  /** A team store shared with others (--team-store, else $CODE_MEMORY_TEAM_STORE). */
  teamStore?: string;
  project?: string;
  branch?: string;
  json: boolean;
  embedder: string;
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
  const team = options.teamStore ? { uri: options.teamStore, author: await gitAuthor(options.cwd) } : undefined;
  return MemoryEngine.open({ storeUri: options.store, embedder, team, logger: (m: string) => io.stderr.write(`${m}\n`) });
}

export function writeJson(io: Io, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
