// recall(text, k=10, filter?): distance-ranked L0 node ids, nearest first, scoped to the caller.
// Pure read: no access times, no request log.

import * as z from 'zod/v4';
import type { NodeFilter } from '../api';
import type { Layer } from '../model/records';
import { LONE_SURROGATE, SHA_PATTERN } from '../store/filters';
import { epochMs } from './epoch';
import { MAX_QUERY_CHARS, ToolError, boundedText, errorResult, parseArgs, searchedQuery } from './types';
import type { ToolContext, ToolDefinition, ToolResult } from './types';

// The engine returns at most 200 hits per search.
const MAX_K = 200;
// Half a surrogate pair would be compared as U+FFFD, the store's spelling of it: refused, as the
// store's filters refuse it (sqlString), so a path or key never finds another.
// Counted in characters (code points), as the published maxLength is.
const shortText = boundedText(512, {
  refuse: (s) => (s.includes('\u0000') ? 'may not contain NUL characters' : LONE_SURROGATE.test(s) ? 'may not contain lone surrogates (text that is not valid Unicode)' : undefined),
});
// The store's own rule for type names (src/core/store/filters.ts): checked here so the caller gets a schema error.
const typeName = z.string().regex(/^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/, "letters, digits, '_', '-', '.', ':' only, starting with a letter");
const layer = z.enum(['L0', 'L1', 'L2']);

// Strict and bounded: a filter is data for the store's escaped prefilter, never SQL.
export const nodeFilterSchema = z
  .strictObject({
    layer: z.union([layer, z.array(layer).min(1).max(3)]).optional(),
    type: z.union([typeName, z.array(typeName).min(1).max(50)]).optional(),
    branch: shortText.optional(),
    files: z.array(shortText).min(1).max(100).optional(),
    commit_sha: z.string().regex(SHA_PATTERN, 'a hex commit SHA').optional(),
    session_id: shortText.optional(),
    since_epoch: epochMs.optional(),
    until_epoch: epochMs.optional(),
  })
  .describe('A NodeFilter: every given field must match; AND-ed after the caller\'s scope.');

export const recallInput = z.strictObject({
  text: boundedText(MAX_QUERY_CHARS).describe('The query text, embedded server-side.'),
  // The contract bounds k below only: a larger k is served as the most this server returns. Any
  // whole number from 1 (2^53 and 1e300 too: zod's int() stops at 2^53 - 1 and would publish that
  // maximum); JSON Schema's integer is the same: a number without a fraction.
  k: z
    .number()
    .min(1)
    .refine(Number.isInteger, { message: 'Invalid input: expected a whole number' })
    .meta({ type: 'integer' })
    .default(10)
    .transform((k) => Math.min(k, MAX_K))
    .describe(`Number of neighbours to return (minimum 1; at most ${MAX_K} are returned).`),
  filter: nodeFilterSchema.optional().describe("A convenience NodeFilter, AND-ed after the caller's access scope."),
});

export const recallOutput = z.strictObject({
  nodes: z.array(z.strictObject({ node_id: z.string(), distance: z.number() })),
});

export type RecallArgs = z.input<typeof recallInput>;
export type RecallOutput = z.output<typeof recallOutput>;

function asList<T>(value: T | T[] | undefined): T[] | undefined {
  return value === undefined ? undefined : Array.isArray(value) ? value : [value];
}

export async function recall(ctx: ToolContext, rawArgs: unknown): Promise<RecallOutput> {
  const args = parseArgs(recallInput, rawArgs);
  const filter: NodeFilter | undefined = args.filter ? { ...args.filter } : undefined;
  // recall reads layer L0; a filter naming other layers only narrows that to nothing.
  const wanted = asList(args.filter?.layer);
  if (wanted && !wanted.includes('L0')) return { nodes: [] };
  if (filter) delete filter.layer;
  const layers: Layer[] = ['L0'];
  let hits;
  try {
    // The ranking alone: recall answers node ids, so no hit's cell is read.
    hits = await ctx.engine.rank(searchedQuery(args.text), { scope: ctx.scope, layers, filter, limit: args.k });
  } catch (error) {
    if (error instanceof Error && error.name === 'FilterError') throw new ToolError('invalid_arguments', `filter: ${error.message}`);
    throw error;
  }
  const nodes = hits
    .map((hit) => ({ node_id: hit.node_id, distance: round(hit.distance) }))
    .sort((a, b) => a.distance - b.distance)
    .slice(0, args.k);
  return { nodes };
}

function round(n: number): number {
  return Number.isFinite(n) ? Math.round(n * 1e6) / 1e6 : 1;
}

export const recallTool: ToolDefinition = {
  name: 'recall',
  title: 'Recall similar memory cells',
  description:
    "Recall the k most-similar memory cells to a query at layer L0, scoped to the caller. The server embeds the query text and returns distance-ranked node ids, nearest first. Returns only {node_id, distance} pairs; read a cell's content through the REST API (GET /v1/nodes/{node_id}) or the CLI (`code-memory node <id>`). For a bounded text pack use recall_context; for a report use retrieve_memory.",
  inputSchema: recallInput,
  outputSchema: recallOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx: ToolContext, args: unknown): Promise<ToolResult> {
    try {
      const out = await recall(ctx, args);
      return { text: JSON.stringify(out), structured: out, isError: false };
    } catch (error) {
      return errorResult(error);
    }
  },
};
