// The global options every command takes, parsed without loading the engine: `main.ts` and the
// help text need them before any command's implementation is loaded.

import { fileURLToPath } from 'node:url';
import { defaultStoreUri, expandHome, relativeFolder } from '../core/store/location';
import { ObjectStoreRefused, parseObjectLocation, requestBounds } from '../core/store/objectStorage';
import { requestLogRetention } from '../core/store/retention';
import type { RequestLogRetention } from '../core/store/retention';
import { DEFAULT_OPENAI_EMBEDDING } from '../core/embed/embedder';
import type { EmbedderConfig } from '../core/embed/factory';
import { MAX_RERANK_CANDIDATES } from '../core/retrieve/rerank';
import type { RerankerConfig } from '../core/retrieve/rerank';
import { errorMessage, fullDiskAdvice, leftStored, looksDamaged, looksLikeFullDisk, looksLikeNetwork, looksLikeRights } from '../core/errorText';

export { errorMessage, fullDiskAdvice, leftStored, looksDamaged, looksLikeFullDisk, looksLikeNetwork, looksLikeRights };

export interface GlobalOptions {
  store: string;
  /** A team store shared with others (--team-store, else $CODE_MEMORY_TEAM_STORE). */
  teamStore?: string;
  project?: string;
  branch?: string;
  json: boolean;
  embedder: string;
  /** What --embedder and --embedding-* name; null for none. */
  embedding: EmbedderConfig | null;
  /** The request log's retention (applied by whichever process holds the store's maintenance lease). */
  requestLogRetention: RequestLogRetention;
  /** Minutes without activity after which a session is summarised (--session-idle-minutes); undefined: the engine's 30. */
  sessionIdleMinutes?: number;
  /** The optional reranker (--rerank-endpoint, else $CODE_MEMORY_RERANK_ENDPOINT); null: off. */
  reranker: RerankerConfig | null;
  cwd: string;
}

/** Bad usage or input (exit 2). Told by its name: the commands bundle has a copy of this class of its own. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export function isUsageError(error: unknown): error is UsageError {
  return error instanceof Error && error.name === 'UsageError';
}

export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
}

export const EMBEDDERS = ['use-lite', 'hashed', 'openai', 'none'] as const;

/**
 * Whether `uri` names object storage (s3://, gs://, az://). What the URI or the environment gets
 * wrong in its shape (credentials or a query in the URI, no bucket, a CODE_MEMORY_STORE_TIMEOUT
 * that is no number of seconds) is bad input (exit 2), said before anything opens. The core
 * throws ObjectStoreRefused for these as for an endpoint that fails its probe, a failure (exit 1):
 * told apart here, where only the user's input has been read.
 */
function isObjectLocation(uri: string, env: NodeJS.ProcessEnv): boolean {
  try {
    if (!parseObjectLocation(uri)) return false;
    requestBounds(env);
    return true;
  } catch (error) {
    if (error instanceof ObjectStoreRefused) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * A file:// store as the folder path it names, percent-decoded (my%20store is 'my store'); a
 * folder starting with `~` or `~/` in the home folder, as the extension's settings have it (an
 * agent's config gives --store and the environment with no shell to expand them); other locations
 * as given. A file URI that names no local path is a usage error, not a crash later.
 */
function storeLocation(given: string, from: string, env: NodeJS.ProcessEnv): string {
  const uri = expandHome(given);
  // LanceDB takes other schemes too (memory:// keeps nothing once the process ends, others fail
  // later with its own words): only the ones the product promises are taken.
  if (!isObjectLocation(uri, env) && !uri.startsWith('file://') && /^[a-z][a-z0-9+.-]*:\/\//i.test(uri)) {
    const shown = uri.length > 200 ? `${uri.slice(0, 200)}...` : uri;
    throw new UsageError(`${from} '${shown}' is not s3://bucket/prefix, gs://, az:// or a folder`);
  }
  if (!uri.startsWith('file://')) return uri;
  try {
    return fileURLToPath(uri);
  } catch (error) {
    const shown = uri.length > 200 ? `${uri.slice(0, 200)}...` : uri;
    throw new UsageError(`${from} '${shown}' is not a file URI of a local folder (${errorMessage(error)}); give a folder path, or a file:///absolute/path URI with valid percent-encoding`);
  }
}

function teamStoreLocation(uri: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  return uri === undefined ? undefined : storeLocation(uri, '--team-store', env);
}

/**
 * A name the shell passed in bytes that are not UTF-8 reaches Node as U+FFFD, so two different
 * names would be one project (or branch): refused, as no name anyone typed holds that character.
 */
function utf8Name(value: string | undefined, from: string): string | undefined {
  if (value?.includes('\uFFFD')) throw new UsageError(`${from} holds bytes that are not UTF-8 (shown as U+FFFD): give the name in UTF-8`);
  return value;
}

/**
 * Whether --all-projects (stats, export) is given. It reads every project, so a --project or
 * --branch beside it would be ignored unseen: refused, as forget refuses --all with --project.
 */
export function allProjects(values: Record<string, unknown>): boolean {
  if (!values['all-projects']) return false;
  if (values.project !== undefined || values.branch !== undefined) throw new UsageError('--all-projects reads every project: give it without --project and --branch, or leave it out');
  return true;
}

/**
 * A number of at least 1 given as a flag or in the environment; undefined when neither is set.
 * Whole unless `fraction` (minutes, as the extension's codeMemory.session.idleMinutes setting takes
 * them: Copy Agent Configuration passes that setting on as it is, 2.5 too).
 */
function countOption(flag: string, value: unknown, envName: string, env: NodeJS.ProcessEnv, fraction = false): number | undefined {
  const [raw, from] = value !== undefined ? [String(value), `--${flag}`] : [env[envName]?.trim() || undefined, envName];
  if (raw === undefined) return undefined;
  const shape = fraction ? /^[0-9]{1,9}(\.[0-9]{1,9})?$/ : /^[0-9]{1,9}$/;
  if (!shape.test(raw) || Number(raw) < 1) throw new UsageError(`${from} must be ${fraction ? 'a number of minutes of at least 1 (such as 30 or 2.5)' : 'a whole number of at least 1'}, not '${raw.slice(0, 40)}'`);
  return Number(raw);
}

/** The --port of serve and doctor: 0 (a random free port) unless given. */
export function portOption(values: Record<string, unknown>): number {
  const raw = values.port === undefined ? '0' : String(values.port).trim();
  if (!/^[0-9]{1,5}$/.test(raw) || Number(raw) > 65535) throw new UsageError(`--port must be an integer from 0 to 65535, not '${raw.slice(0, 40)}'`);
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

/**
 * The embedder. `openai`: any OpenAI-compatible /embeddings server, with the same defaults as the
 * extension's codeMemory.embedding.* settings (Ollama's nomic-embed-text); the API key comes from
 * the environment only.
 */
function embeddingFrom(name: string, values: Record<string, unknown>, env: NodeJS.ProcessEnv): EmbedderConfig | null {
  const endpoint = (values['embedding-endpoint'] as string | undefined)?.trim() || env.CODE_MEMORY_EMBEDDING_ENDPOINT?.trim() || undefined;
  const model = (values['embedding-model'] as string | undefined)?.trim() || env.CODE_MEMORY_EMBEDDING_MODEL?.trim() || undefined;
  if (name !== 'openai') {
    if (values['embedding-endpoint'] !== undefined || values['embedding-model'] !== undefined) throw new UsageError('--embedding-endpoint and --embedding-model are for --embedder openai');
    return name === 'none' ? null : name === 'hashed' ? { provider: 'hashed' } : { provider: 'use-lite' };
  }
  if (endpoint && !/^https?:\/\/[^\s]+$/i.test(endpoint)) throw new UsageError(`the embedding endpoint must be an http(s) URL such as http://127.0.0.1:11434/v1, not '${endpoint.slice(0, 80)}'`);
  const apiKey = env.CODE_MEMORY_EMBEDDING_API_KEY?.trim() || undefined;
  return { provider: 'openai', baseUrl: endpoint ?? DEFAULT_OPENAI_EMBEDDING.baseUrl, model: model ?? DEFAULT_OPENAI_EMBEDDING.model, ...(apiKey ? { apiKey } : {}) };
}

/**
 * The reranker from --rerank-* (mcp, serve, search, eval) or $CODE_MEMORY_RERANK_*. The API key
 * comes from the environment only, so that it never shows in a process list or an agent config.
 */
function rerankerFrom(values: Record<string, unknown>, env: NodeJS.ProcessEnv): RerankerConfig | null {
  const endpoint = (values['rerank-endpoint'] as string | undefined)?.trim() || env.CODE_MEMORY_RERANK_ENDPOINT?.trim() || undefined;
  const model = (values['rerank-model'] as string | undefined) ?? env.CODE_MEMORY_RERANK_MODEL?.trim() ?? '';
  const candidates = countOption('rerank-candidates', values['rerank-candidates'], 'CODE_MEMORY_RERANK_CANDIDATES', env);
  if (!endpoint) {
    if (values['rerank-model'] !== undefined || values['rerank-candidates'] !== undefined) throw new UsageError('--rerank-model and --rerank-candidates need --rerank-endpoint (or $CODE_MEMORY_RERANK_ENDPOINT)');
    return null;
  }
  if (!/^https?:\/\/[^\s]+$/i.test(endpoint)) throw new UsageError(`the rerank endpoint must be an http(s) URL such as http://127.0.0.1:8080/v1, not '${endpoint.slice(0, 80)}'`);
  if (candidates !== undefined && (candidates < 2 || candidates > MAX_RERANK_CANDIDATES)) {
    // Named as countOption names it: the flag when given, else the variable it came from.
    const from = values['rerank-candidates'] !== undefined ? '--rerank-candidates' : 'CODE_MEMORY_RERANK_CANDIDATES';
    throw new UsageError(`${from} must be from 2 to ${MAX_RERANK_CANDIDATES}, not ${candidates}`);
  }
  const apiKey = env.CODE_MEMORY_RERANK_API_KEY?.trim() || undefined;
  return { endpoint, model, ...(candidates !== undefined ? { candidates } : {}), ...(apiKey ? { apiKey } : {}) };
}

export function globalOptionsFrom(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): GlobalOptions {
  // Trimmed, and empty counts as unset, as every other CODE_MEMORY_* variable does.
  const fromEnv = values.embedder === undefined ? env.CODE_MEMORY_EMBEDDER?.trim() || undefined : undefined;
  const embedder = (values.embedder as string | undefined) ?? fromEnv ?? 'use-lite';
  if (!(EMBEDDERS as readonly string[]).includes(embedder)) {
    throw new UsageError(`${fromEnv !== undefined ? '$CODE_MEMORY_EMBEDDER' : '--embedder'} must be one of ${EMBEDDERS.join(', ')}, not '${embedder.slice(0, 40)}'`);
  }
  const store = values.store as string | undefined;
  const storeFromEnv = env.CODE_MEMORY_STORE?.trim();
  // An agent's config starts the command in any folder: a relative store would be another store in each.
  if (store === undefined && storeFromEnv && relativeFolder(storeFromEnv)) {
    throw new UsageError(`CODE_MEMORY_STORE '${storeFromEnv.slice(0, 200)}' is a relative path: each folder a command starts in would have a store of its own; give an absolute path, ~/… or a URI`);
  }
  for (const flag of ['store', 'team-store', 'project', 'branch']) {
    if (typeof values[flag] === 'string' && !(values[flag] as string).trim()) throw new UsageError(`--${flag} needs a value, not an empty string`);
  }
  // As long as a branch the tools take (observe's and remember's branch).
  if (typeof values.branch === 'string' && [...values.branch].length > 256) throw new UsageError('--branch is at most 256 characters');
  return {
    store: store !== undefined ? storeLocation(store, '--store', env) : storeLocation(defaultStoreUri(env), 'CODE_MEMORY_STORE', env),
    teamStore: teamStoreLocation((values['team-store'] as string | undefined) ?? (env.CODE_MEMORY_TEAM_STORE?.trim() || undefined), env),
    // Trimmed as the variable is: `--project "alpha "` is alpha, not a project of its own.
    project: values.project !== undefined ? utf8Name((values.project as string).trim(), '--project') : utf8Name(env.CODE_MEMORY_PROJECT?.trim() || undefined, 'CODE_MEMORY_PROJECT'),
    branch: utf8Name(values.branch as string | undefined, '--branch'),
    json: Boolean(values.json),
    embedder,
    embedding: embeddingFrom(embedder, values, env),
    requestLogRetention: requestLogRetentionFrom(values, env),
    sessionIdleMinutes: countOption('session-idle-minutes', values['session-idle-minutes'], 'CODE_MEMORY_SESSION_IDLE_MINUTES', env, true),
    reranker: rerankerFrom(values, env),
    cwd: process.cwd(),
  };
}

