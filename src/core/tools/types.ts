// What every tool shares: the context it runs in, its result, and its error.
// Tools are plain async functions over MemoryEngineApi; src/mcp and src/cli adapt them.

import * as z from 'zod/v4';
import type { MemoryEngineApi } from '../api';
import type { Freshness } from '../capture/freshness';
import { redact } from '../capture/redact';
import { errorMessage, fullDiskAdvice, leftStored, looksDamaged, looksLikeFullDisk } from '../errorText';
import { cutText } from '../tokens';
import type { Scope } from '../model/records';

import { codePoints } from '../model/limits';

export interface ToolContext {
  engine: MemoryEngineApi;
  /** The one scope this server or connection serves; every read and write is confined to it. */
  scope: Scope;
  /** The transport's session id (Mcp-Session-Id or a per-connection id), used when a tool's own session_id is omitted. */
  transportSessionId?: string;
  /** retrieve_memory's budget; the contract gives 120 s. */
  retrieveTimeoutMs?: number;
  /** Checks records that name files and a commit against the repository's HEAD, where there is one. */
  freshness?: { check(sha: string | null | undefined, files: readonly string[]): Promise<Freshness | null> };
  log?: (message: string) => void;
}

export interface ToolResult {
  /** Agent-readable text (the `content[0].text` of the MCP result). */
  text: string;
  /** Machine-readable result; omitted on tool errors of tools whose output schema has no error shape. */
  structured?: Record<string, unknown>;
  isError: boolean;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  /** Strict schema of the arguments: unknown keys are an error. */
  inputSchema: z.ZodObject;
  outputSchema: z.ZodObject;
  /** JSON Schema to publish instead of the one derived from outputSchema (when a contract prints its own). */
  outputJsonSchema?: Record<string, unknown>;
  /**
   * The public MCP profile answers with the text alone: no output schema is published and no
   * structuredContent sent (recall_context's page: "the public MCP profile returns text, not a
   * structured object"). The structured result stays for the product's own callers.
   */
  textOnly?: boolean;
  annotations: ToolAnnotations;
  run(ctx: ToolContext, args: unknown): Promise<ToolResult>;
}

/** A failure the caller can act on; `code` is the machine-readable error code. */
/**
 * A failed call's own code and message. `cause`: the store's error it wraps, which the answer
 * tells after the message as it tells any store error (errorText).
 */
export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ToolError';
  }
}

/** The first 10 of `items`, named, then how many more: the message, and the request log that keeps it, stay short whatever the call held. */
function namedFew<T>(items: readonly T[], name: (item: T) => string, separator = ', '): string {
  const named = items.slice(0, 10).map(name).join(separator);
  return items.length <= 10 ? named : `${named}${separator}and ${items.length - 10} more`;
}

/**
 * Turns a zod failure into one sentence naming each bad field (the first 10), for agents to fix
 * their call. The names in it are the caller's (an unknown key, a key of a map in the path): each
 * is redacted, as the sentence reaches the client, stderr and logs, and a key can be a pasted token.
 */
export function describeIssues(error: z.ZodError): string {
  return namedFew(
    error.issues,
    (issue) => {
      const where = issue.path.length ? issue.path.map((p) => redact(String(p))).join('.') : 'arguments';
      if (issue.code === 'unrecognized_keys') return `unknown argument(s) ${namedFew(issue.keys, (k) => `'${redact(k)}'`)}${issue.path.length ? ` in ${where}` : ''}`;
      // Infinity (1e400 in JSON) or NaN: zod says 'expected number, received number'.
      if (issue.code === 'invalid_type' && issue.expected === 'number' && /received number/.test(issue.message)) return `${where}: must be a finite number`;
      return `${where}: ${issue.message}`;
    },
    '; ',
  );
}

/**
 * A string of `min` (default 1) to `max` characters, counted as the contracts and JSON Schema's
 * maxLength count them: code points, not UTF-16 units (an emoji is one character, not two).
 * A string over twice `max` units is refused without counting: a code point is at most two.
 * `refuse` gives the reason a value is refused for anything else, or undefined.
 */
export function boundedText(max: number, { min = 1, refuse }: { min?: number; refuse?: (value: string) => string | undefined } = {}): z.ZodString {
  let text = (min > 0 ? z.string().min(min) : z.string()).refine((v) => v.length <= max || (v.length <= 2 * max && codePoints(v) <= max), {
    message: `Too big: expected string to have <=${max} characters`,
  });
  if (refuse) {
    text = text.superRefine((v, ctx) => {
      const reason = refuse(v);
      if (reason) ctx.addIssue({ code: 'custom', message: reason });
    });
  }
  // Last: a refinement makes a copy of the schema without its metadata.
  return text.meta({ maxLength: max });
}

/** What recall and recall_context accept as a query: a pasted file is fine, a megabyte is refused. */
export const MAX_QUERY_CHARS = 100_000;
/** How much of a query is searched: the first 8,000 characters, the length retrieve_memory's prompt may have. */
export const SEARCHED_QUERY_CHARS = 8000;

/** The part of a query that is searched (code points, as `boundedText` counts them). */
export function searchedQuery(text: string): string {
  return text.length <= SEARCHED_QUERY_CHARS ? text : [...text].slice(0, SEARCHED_QUERY_CHARS).join('');
}

export function parseArgs<T extends z.ZodObject>(schema: T, args: unknown): z.output<T> {
  const parsed = schema.safeParse(args ?? {});
  if (!parsed.success) throw new ToolError('invalid_arguments', describeIssues(parsed.error));
  return parsed.data;
}

/**
 * The code a failed call answers: a ToolError's own, invalid_arguments for what the store layer
 * refuses as the caller's mistake (a FilterError: an id not in the project, a bad filter value),
 * else internal_error.
 */
export function errorCode(error: unknown): string {
  if (error instanceof ToolError) return error.code;
  if (error instanceof Error && error.name === 'FilterError') return 'invalid_arguments';
  return 'internal_error';
}

/**
 * LanceDB 0.31 panics on some damaged store files (a garbled bitmap index: "Panic in async
 * function", bitmap.rs/mask.rs unwraps); its message says nothing of the cause.
 */
const STORE_PANIC = /Panic in async function|panicked at/i;

/**
 * The message a failed call answers: the error's own for what the caller can mend; for anything
 * else (the store's) the message as the CLI shows it (errorMessage: no Rust source lines, no chain
 * of causes, a request object storage did not answer named as such), and for a store whose files
 * look damaged (LanceDB panics on some: "Panic in async function") one that says so and what to run;
 * a full disk is named as such, not taken for damage.
 */
export function errorText(error: unknown): string {
  const raw = error instanceof Error ? error.message : String(error);
  if (error instanceof ToolError && error.cause !== undefined) return `${raw}: ${errorText(error.cause)}`;
  if (errorCode(error) !== 'internal_error') return raw;
  const message = errorMessage(error);
  // The cause's own text is one line: no Rust location or backtrace reaches the client.
  const said = cutText(message.split('\n')[0], 200);
  if (looksLikeFullDisk(message)) return `the disk that holds the store is full (${said}): ${fullDiskAdvice(error)}`;
  // Whatever else failed: what the write left stored, when it could not take it back.
  const note = leftStored(error);
  const left = note ? `; ${note}` : '';
  if (!STORE_PANIC.test(raw) && !looksDamaged(message)) return `${message}${left}`;
  return `the store's files look damaged (${said}); run \`code-memory doctor\` with the same store: it names the damaged table or index, rebuilds a damaged index, and says how to recover the rest${left}`;
}

export function errorResult(error: unknown): ToolResult {
  return { text: `${errorCode(error)}: ${errorText(error)}`, isError: true };
}
