// get_observations(ids, source='memory', project?, include_suppressed=false): {details: [...]}
// exactly per the contract's output schema, records last-accessed time (required for
// memories, best effort for observations). Any missing id or unknown source is a tool error.

import * as z from 'zod/v4';
import type { CompressedSource, Memory, Observation, SessionSummary, TemporalFact, TopicTrace } from '../model/records';
import { observationDetailsOutputJsonSchema } from './getObservationsContractSchema';
import { codePoints } from '../model/limits';
import { cutText } from '../tokens';
import { ToolError, boundedText, errorResult, parseArgs } from './types';
import type { ToolContext, ToolDefinition, ToolResult } from './types';

const MAX_IDS = 200;
/** How much of an unknown source its error quotes: the message stays short however long the source. */
const SOURCE_QUOTED = 64;
const int = z.number().int();
const str = z.string();
const nstr = z.string().nullable();

export const getObservationsInput = z.strictObject({
  ids: z.array(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER)).max(MAX_IDS).describe('List of observation IDs to fetch'),
  // A plain string of any length so that every unknown source is this tool's error
  // (invalid_source), not a schema rejection; the message quotes at most SOURCE_QUOTED characters.
  source: z.string().default('memory').describe("Source type: 'memory', 'observation', or 'session_summary' (default: 'memory')"),
  // Counted in characters (code points), as the published maxLength is; empty is allowed as before.
  project: boundedText(512, { min: 0 }).optional().describe('Project name filter'),
  include_suppressed: z.boolean().default(false).describe('Include policy-suppressed memories (default false)'),
});

const temporalFact = z.strictObject({
  project: str, subject: str, predicate: str, object: str, learned_at_epoch: int, confidence: z.number(), status: str,
  valid_from_epoch: int.nullable().optional(), valid_to_epoch: int.nullable().optional(),
});
const topicTrace = z.strictObject({
  id: int, topic_key: str, title: str, summary: str, status: str, segment_index: int,
  covered_from_event_id: int, covered_to_event_id: int, evidence_event_ids: z.array(int),
  files: z.array(str).nullable().optional(), created_at_epoch: int, updated_at_epoch: int,
});
const memoryDetail = z.strictObject({
  id: int, project: str, title: str, text: str, memory_type: str, created_at_epoch: int, updated_at_epoch: int,
  status: str, scope: str, classification: str, classification_reason: str, current_context_eligible: z.boolean(),
  branch: nstr.optional(), files: nstr.optional(), session_id: nstr.optional(), topic_key: nstr.optional(),
  topic_trace: z.array(topicTrace).nullable().optional(), temporal_facts: z.array(temporalFact).nullable().optional(),
});
const compressedSource = z.strictObject({
  compressed_observation_id: int, source_observation_id: int, source_hash: str, source_created_at_epoch: int,
  compression_session_id: str, created_at_epoch: int,
});
const observationDetail = z.strictObject({
  id: int, memory_session_id: str, type: str, created_at: str, created_at_epoch: int, status: str,
  branch: nstr.optional(), commit_sha: nstr.optional(), compressed_sources: z.array(compressedSource).nullable().optional(),
  concepts: nstr.optional(), content_session_id: nstr.optional(), discovery_tokens: int.nullable().optional(),
  facts: nstr.optional(), files_modified: nstr.optional(), files_read: nstr.optional(),
  last_accessed_epoch: int.nullable().optional(), narrative: nstr.optional(), project: nstr.optional(),
  subtitle: nstr.optional(), title: nstr.optional(),
});
const sessionSummaryDetail = z.strictObject({
  id: int, memory_session_id: str, created_at: str, created_at_epoch: int,
  completed: nstr.optional(), decisions: nstr.optional(), learned: nstr.optional(), next_steps: nstr.optional(),
  preferences: nstr.optional(), project: nstr.optional(), request: nstr.optional(),
});

export const getObservationsOutput = z.strictObject({
  details: z.array(z.union([memoryDetail, observationDetail, sessionSummaryDetail])),
});
export type GetObservationsOutput = z.output<typeof getObservationsOutput>;

export const SOURCES = ['memory', 'observation', 'session_summary'] as const;
export type DetailSource = (typeof SOURCES)[number];

// Records carry more than the contract shows (and may grow); copy exactly the published fields.
function pick<T extends object>(record: T, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const source = record as Record<string, unknown>;
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}

const MEMORY_KEYS = ['id', 'project', 'title', 'text', 'memory_type', 'created_at_epoch', 'updated_at_epoch', 'status', 'scope', 'classification', 'classification_reason', 'current_context_eligible', 'branch', 'files', 'session_id', 'topic_key'] as const;
const FACT_KEYS = ['project', 'subject', 'predicate', 'object', 'learned_at_epoch', 'confidence', 'status', 'valid_from_epoch', 'valid_to_epoch'] as const;
const TRACE_KEYS = ['id', 'topic_key', 'title', 'summary', 'status', 'segment_index', 'covered_from_event_id', 'covered_to_event_id', 'evidence_event_ids', 'files', 'created_at_epoch', 'updated_at_epoch'] as const;
const OBSERVATION_KEYS = ['id', 'memory_session_id', 'type', 'created_at', 'created_at_epoch', 'status', 'branch', 'commit_sha', 'concepts', 'content_session_id', 'discovery_tokens', 'facts', 'files_modified', 'files_read', 'last_accessed_epoch', 'narrative', 'project', 'subtitle', 'title'] as const;
const SOURCE_KEYS = ['compressed_observation_id', 'source_observation_id', 'source_hash', 'source_created_at_epoch', 'compression_session_id', 'created_at_epoch'] as const;
const SUMMARY_KEYS = ['id', 'memory_session_id', 'created_at', 'created_at_epoch', 'completed', 'decisions', 'learned', 'next_steps', 'preferences', 'project', 'request'] as const;

/**
 * The entries of a record's JSON list (temporal facts, topic trace, compressed sources) that are
 * what the contract's schema says. Capture writes them so; an imported file (another version's,
 * or edited) may hold an entry of another shape, for which the SDK refused the whole answer
 * (-32602, "Output validation error") every time the record was asked for: such an entry is left out.
 */
function conforming<T extends object>(entries: readonly T[], keys: readonly string[], schema: z.ZodType): Record<string, unknown>[] {
  return entries.map((e) => (typeof e === 'object' && e !== null ? pick(e, keys) : null)).filter((e): e is Record<string, unknown> => e !== null && schema.safeParse(e).success);
}

export function memoryDetailOf(memory: Memory): Record<string, unknown> {
  const out = pick(memory, MEMORY_KEYS);
  out.topic_trace = Array.isArray(memory.topic_trace) ? conforming<TopicTrace>(memory.topic_trace, TRACE_KEYS, topicTrace) : null;
  out.temporal_facts = Array.isArray(memory.temporal_facts) ? conforming<TemporalFact>(memory.temporal_facts, FACT_KEYS, temporalFact) : null;
  return out;
}

export function observationDetailOf(observation: Observation): Record<string, unknown> {
  const out = pick(observation, OBSERVATION_KEYS);
  out.compressed_sources = Array.isArray(observation.compressed_sources) ? conforming<CompressedSource>(observation.compressed_sources, SOURCE_KEYS, compressedSource) : null;
  return out;
}

export function sessionSummaryDetailOf(summary: SessionSummary): Record<string, unknown> {
  return pick(summary, SUMMARY_KEYS);
}

function inOrder<T extends { id: number }>(ids: number[], rows: T[], source: string, filterProject: string | undefined, project: (row: T) => string | null): T[] {
  const byId = new Map(rows.filter((r) => filterProject === undefined || project(r) === filterProject).map((r) => [r.id, r]));
  const missing = [...new Set(ids.filter((id) => !byId.has(id)))];
  if (missing.length) {
    throw new ToolError(
      'not_found',
      `no ${source} with id ${missing.join(', ')} in this scope${filterProject !== undefined ? ` (project '${filterProject}')` : ''}; pass ids and the source exactly as a search returned them`,
    );
  }
  return ids.map((id) => byId.get(id) as T);
}

/**
 * The most one answer holds, as JSON: it goes out twice in one message (as text and as
 * structuredContent), and the MCP SDK's stdio reader drops a connection whose message passes
 * 10 MiB. 200 records of long narratives pass it.
 */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** Refuses, before any access is recorded, an answer larger than MAX_ANSWER_BYTES, saying how many of the ids asked fit. */
function refuseTooLarge(details: Record<string, unknown>[]): Record<string, unknown>[] {
  let total = 0;
  let fit = 0;
  for (const detail of details) {
    total += Buffer.byteLength(JSON.stringify(detail)) + 1;
    if (total <= MAX_ANSWER_BYTES) fit++;
  }
  if (total > MAX_ANSWER_BYTES) {
    throw new ToolError(
      'response_too_large',
      `the ${details.length} records asked for are ${(total / 2 ** 20).toFixed(1)} MB as JSON, more than the ${MAX_ANSWER_BYTES / 2 ** 20} MB one answer holds; ask for fewer ids at once (the first ${fit} fit); no access was recorded`,
    );
  }
  return details;
}

export async function getObservations(ctx: ToolContext, rawArgs: unknown): Promise<GetObservationsOutput> {
  const args = parseArgs(getObservationsInput, rawArgs);
  const source = args.source as DetailSource;
  if (!SOURCES.includes(source)) {
    const shown = cutText(args.source, SOURCE_QUOTED);
    throw new ToolError('invalid_source', `unknown source '${shown}${shown.length < args.source.length ? `…' (${codePoints(args.source)} characters)` : "'"}; use 'memory', 'observation' or 'session_summary'`);
  }
  // One detail per id asked, in the order asked (an id asked twice, twice); each row read once.
  const asked = args.ids;
  const ids = [...new Set(asked)];
  if (ids.length === 0) return { details: [] } as GetObservationsOutput;
  const { engine, scope } = ctx;
  if (source === 'memory') {
    const rows = inOrder(asked, await engine.getMemories(ids, scope, { includeSuppressed: args.include_suppressed }), 'memory', args.project, (r) => r.project);
    const details = refuseTooLarge(rows.map(memoryDetailOf));
    // Required: a failed access update fails the call.
    try {
      await engine.touch('memory', ids, scope);
    } catch (error) {
      throw new ToolError('access_update_failed', `could not record access to memories ${ids.join(', ')}`, error);
    }
    return { details } as GetObservationsOutput;
  }
  if (source === 'observation') {
    const rows = inOrder(asked, await engine.getObservations(ids, scope, { includeSuppressed: args.include_suppressed }), 'observation', args.project, (r) => r.project);
    refuseTooLarge(rows.map(observationDetailOf));
    const now = Date.now();
    let touched = true;
    try {
      // Best effort by contract: written with the next batch of access times, off this call's path.
      await engine.touch('observation', ids, scope, { background: true });
    } catch (error) {
      touched = false;
      ctx.log?.(`get_observations: access update failed for observations ${ids.join(', ')}: ${error instanceof Error ? error.message : String(error)}`);
    }
    const details = rows.map((row) => observationDetailOf(touched ? { ...row, last_accessed_epoch: Math.max(now, row.last_accessed_epoch ?? 0) } : row));
    return { details } as GetObservationsOutput;
  }
  const rows = inOrder(asked, await engine.getSessionSummaries(ids, scope, { includeSuppressed: args.include_suppressed }), 'session_summary', args.project, (r) => r.project);
  return { details: refuseTooLarge(rows.map(sessionSummaryDetailOf)) } as GetObservationsOutput;
}

export const getObservationsTool: ToolDefinition = {
  name: 'get_observations',
  title: 'Get Observation Details',
  description:
    "Fetch full details for explicit IDs and record last-accessed metadata for returned memory or observation rows. Use after search, not for discovery; prompt-time anchors may also direct this exact lookup. Pass selected IDs and the exact source from the result. source defaults to 'memory'; source='memory' returns curated memory details and requires its access update to succeed, source='observation' returns current extracted observations and records its access update best-effort (a failed update is logged but details still return), and source='session_summary' returns exact safe session-summary rows without confusing their IDs with observation IDs. Unsupported sources, any missing requested ID, detail-read failures, or memory access-update failures return a tool error.",
  inputSchema: getObservationsInput,
  outputSchema: getObservationsOutput,
  outputJsonSchema: observationDetailsOutputJsonSchema as unknown as Record<string, unknown>,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run(ctx: ToolContext, args: unknown): Promise<ToolResult> {
    try {
      const out = await getObservations(ctx, args);
      return { text: JSON.stringify(out), structured: out, isError: false };
    } catch (error) {
      return errorResult(error);
    }
  },
};
