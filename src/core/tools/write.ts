// The write tools agents need beyond the four read contracts: `remember` stores a curated
// memory (layer L2), `observe` ingests observations (layer L0) as an agent hook would.

import * as z from 'zod/v4';
import type { ObservationInput } from '../api';
import { IDENTIFIER_TEXT } from '../capture/prepare';
import { MEMORY_TYPES } from '../model/records';
import { SHA_PATTERN, typeProblem } from '../store/filters';
import { epochMs } from './epoch';
import { MAX_MEMORY_TEXT_CHARS, MAX_MEMORY_TITLE_CHARS, MAX_PATH_CHARS, MAX_RECORD_PATHS } from '../model/limits';
import { boundedText, errorResult, parseArgs } from './types';
import type { ToolContext, ToolDefinition, ToolResult } from './types';

// What the engine would refuse is refused here too, so that a call (or `code-memory observe`'s
// stdin, which the CLI writes in chunks) fails whole, before anything is stored.
const noNul = (value: string): string | undefined => (IDENTIFIER_TEXT.test(value) ? undefined : IDENTIFIER_TEXT.message);
const text = (max: number) => boundedText(max, { min: 0 });
/** A branch, session id or key: filters must be able to name it again. */
const key = (max: number) => boundedText(max, { min: 0, refuse: noNul });
const paths = z.array(boundedText(MAX_PATH_CHARS, { refuse: noNul })).max(MAX_RECORD_PATHS);

export const MAX_OBSERVATIONS_PER_CALL = 500;

export const rememberInput = z.strictObject({
  title: boundedText(MAX_MEMORY_TITLE_CHARS).describe('A short title for the memory.'),
  text: boundedText(MAX_MEMORY_TEXT_CHARS).describe('What to remember, in a few sentences.'),
  memory_type: z.enum(MEMORY_TYPES).default('note').describe('Kind of memory.'),
  files: paths.optional().describe('Workspace-relative paths the memory is about.'),
  branch: key(256).optional().describe('Branch the memory applies to, if only one.'),
  topic_key: key(256).optional().describe('Stable key grouping memories on one topic: a newer memory with the same key supersedes the older one.'),
  session_id: key(256).optional().describe('Session the memory came from.'),
  supersedes: z.array(z.number().int().min(0)).max(50).optional().describe('Ids of memories this one replaces (from recall_context or get_observations); they become superseded.'),
});

export const rememberOutput = z.strictObject({
  id: z.number().int(),
  project: z.string(),
  title: z.string(),
  memory_type: z.string(),
  status: z.string(),
  created_at_epoch: z.number().int(),
  superseded: z.array(z.number().int()).describe('Memories this one superseded (by topic_key, by a contradicting fact about the same subject and files, or named in supersedes).'),
  possible_conflicts: z.array(z.number().int()).describe('Memories that may disagree with this one; a person reviews them in the Memories view.'),
});

export const observationInputSchema = z.strictObject({
  type: boundedText(64, { refuse: typeProblem }),
  title: text(500).optional(),
  subtitle: text(500).optional(),
  narrative: text(20000).optional(),
  facts: z.array(text(2000)).max(100).optional(),
  concepts: z.array(text(200)).max(100).optional(),
  files_read: paths.optional(),
  files_modified: paths.optional(),
  commit_sha: z.string().regex(SHA_PATTERN).optional(),
  branch: key(256).optional(),
  memory_session_id: key(256).optional(),
  content_session_id: key(256).optional(),
  created_at_epoch: epochMs.optional(),
  search_extra: text(20000).optional(),
  dedupe_key: key(512).optional(),
});

export const observeInput = z.strictObject({
  observations: z.array(observationInputSchema).min(1).max(MAX_OBSERVATIONS_PER_CALL).describe('Observations to store, oldest first.'),
});

export const observeOutput = z.strictObject({
  stored: z.number().int(),
  ids: z.array(z.number().int()),
});

export async function remember(ctx: ToolContext, rawArgs: unknown): Promise<z.output<typeof rememberOutput>> {
  const args = parseArgs(rememberInput, rawArgs);
  const memory = await ctx.engine.remember(args, ctx.scope);
  return {
    id: memory.id,
    project: memory.project,
    title: memory.title,
    memory_type: memory.memory_type,
    status: memory.status,
    created_at_epoch: memory.created_at_epoch,
    superseded: memory.supersedes ?? [],
    possible_conflicts: (memory.conflicts ?? []).filter((c) => c.resolution === 'open').map((c) => c.id),
  };
}

export async function observe(ctx: ToolContext, rawArgs: unknown): Promise<z.output<typeof observeOutput>> {
  const args = parseArgs(observeInput, rawArgs);
  const { observations, written } = await ctx.engine.observeReport(args.observations as ObservationInput[], ctx.scope);
  // `stored` counts what the call wrote anew: an entry whose dedupe_key was stored already (by
  // this call or an earlier one), or that a near-duplicate or a grow key found, answers the
  // stored observation's id and is not counted. The tool, REST and the CLI count alike.
  return { stored: written.length, ids: observations.map((o) => o.id) };
}

export const rememberTool: ToolDefinition = {
  name: 'remember',
  title: 'Remember',
  description:
    "Store a curated, durable memory for this project (a decision, convention, fact, preference or note), searchable at once by retrieve_memory, recall_context and get_observations (source 'memory'). A newer memory supersedes an older one with the same topic_key, one whose facts it contradicts about the same subject and files (\"we moved X to Y\", \"switched from A to B\"), or one named in supersedes; superseded memories leave current answers and stay as history. Memories that may disagree without saying so are reported as possible_conflicts for the user to review. Use after the user approves something worth keeping across sessions; do not store secrets.",
  inputSchema: rememberInput,
  outputSchema: rememberOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(ctx: ToolContext, args: unknown): Promise<ToolResult> {
    try {
      const out = await remember(ctx, args);
      const lines = [`Remembered memory ${out.id} (${out.memory_type}): ${out.title}`];
      if (out.superseded.length > 0) lines.push(`Superseded: memory ${out.superseded.join(', ')} (now history; memory ${out.id} is current).`);
      if (out.possible_conflicts.length > 0) lines.push(`Possible conflict with memory ${out.possible_conflicts.join(', ')}: not decided; the user can review it in the Memories view.`);
      return { text: lines.join('\n'), structured: out, isError: false };
    } catch (error) {
      return errorResult(error);
    }
  },
};

export const observeTool: ToolDefinition = {
  name: 'observe',
  title: 'Record observations',
  description:
    "Record what an agent did in this project (files read or modified, commands, decisions) as observations, the raw layer that sessions and memories are compressed from. Secrets are redacted before storage; an observation with a dedupe_key already stored is skipped. At most 500 per call.",
  inputSchema: observeInput,
  outputSchema: observeOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(ctx: ToolContext, args: unknown): Promise<ToolResult> {
    try {
      const out = await observe(ctx, args);
      return { text: `Stored ${out.stored} observation(s): ${out.ids.join(', ')}`, structured: out, isError: false };
    } catch (error) {
      return errorResult(error);
    }
  },
};
