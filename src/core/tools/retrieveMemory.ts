// retrieve_memory(prompt, session_id?): a markdown report in content and the contract's full
// structuredContent. Only prompt and session_id are accepted (anything else: invalid_arguments);
// prompts over 8,000 characters are rejected; retrieval has a 120 s budget (retrieval_timeout);
// the session's last 5 prompts are kept and its last 3 feed triage; every call is logged.

import { randomUUID } from 'node:crypto';
import * as z from 'zod/v4';
import type { SearchHit } from '../api';
import type { ForgetMark } from '../store/forgetMarks';
import type { Cell, Entity } from '../model/records';
import { DOCUMENT_TYPE } from '../model/records';
import { matches } from '../model/limits';
import { quotedLines } from '../model/quoted';
import { sessionKey } from '../capture/prepare';
import { redact, redactKey } from '../capture/redact';
import { countTokens, cutText, truncateToTokens } from '../tokens';
import { freshnessOf, parseFiles, rankedFresh } from './recallContext';
import type { Freshness } from '../capture/freshness';
import { searchInTime } from './timeline';
import type { TimedHit } from './timeline';
import { triage } from './triage';
import type { TriageResult } from './triage';
import { ToolError, boundedText, describeIssues, errorCode, errorText } from './types';
import type { ToolContext, ToolDefinition, ToolResult } from './types';

export const MAX_PROMPT_CHARS = 8000;
export const RETRIEVE_TIMEOUT_MS = 120_000;
const MAX_FACTS = 12;
const MAX_DOCUMENTS = 3;
const DOCUMENT_TOKENS = 400;
const PRIOR_PROMPTS = 3;

export const retrieveMemoryInput = z.strictObject({
  prompt: boundedText(MAX_PROMPT_CHARS).describe('Natural-language description of the context your agent needs. Maximum length: 8,000 characters.'),
  session_id: z
    .string()
    .optional()
    .describe('Optional stable conversation ID. When omitted (or empty), the server falls back to the MCP session id. The last 5 prompts per session are kept for 30 days; the last 3 may feed triage.'),
});

const fact = z.strictObject({ statement: z.string(), relevance_score: z.number(), source_path: z.string() });
const entity = z.strictObject({ label: z.string(), type: z.string(), properties: z.record(z.string(), z.string()) });
const relationship = z.strictObject({ source: z.string(), target: z.string(), type: z.string(), weight: z.number() });
const document = z.strictObject({ title: z.string(), source_path: z.string(), excerpt: z.string(), truncated: z.boolean() });
const section = z.strictObject({ tree_path: z.string(), relevance_reason: z.string() });

// One object for both outcomes: on success everything but the error fields is present; on error
// status, error_code and error_message are (the SDK publishes one object schema per tool).
export const retrieveMemoryOutput = z.strictObject({
  status: z.enum(['ok', 'error']),
  error_code: z.string().optional(),
  error_message: z.string().optional(),
  memory_ready: z.boolean().optional(),
  readiness_state: z.string().optional(),
  content_text: z.string().optional(),
  triage: z.strictObject({ decision: z.string(), reasoning: z.string(), rewritten_query: z.string().nullable() }).optional(),
  phase1: z.strictObject({ search_strategy: z.string(), estimated_tokens: z.number().int(), targeted_sections: z.array(section) }).optional(),
  retrieval: z
    .strictObject({
      context_summary: z.string(),
      facts: z.array(fact),
      entities: z.array(entity),
      relationships: z.array(relationship),
      documents: z.array(document),
      total_items: z.number().int(),
      avg_relevance_score: z.number(),
      coverage_assessment: z.string(),
    })
    .optional(),
  diagnostics: z
    .strictObject({
      request_id: z.string(),
      duration_ms: z.number().int(),
      estimated_tokens: z.number().int(),
      sections_searched: z.array(z.string()),
      avg_relevance_score: z.number(),
    })
    .optional(),
});
export type RetrieveMemoryOutput = z.output<typeof retrieveMemoryOutput>;

const LAYER_LABEL: Record<string, string> = { L0: 'Observations', L1: 'Session summaries', L2: 'Memories' };

function treePath(project: string, cell: Cell): string {
  return `${project} > ${LAYER_LABEL[cell.layer] ?? cell.layer} > ${cell.type}`;
}

/** `<source_kind>/<id>` for the personal store; a team item: `team/<node id> (shared by <author>)`. */
function sourcePath(cell: Cell, origin?: SearchHit['origin']): string {
  if (origin?.store === 'team') return `team/${cell.node_id} (shared by ${origin.shared_by ?? 'unknown'})`;
  return `${cell.source_kind}/${cell.source_id}`;
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

function oneLine(s: string, max = 300): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${cutText(flat, max - 1)}…` : flat;
}

function statementOf(cell: Cell, note: string | null, freshness: Freshness | undefined): string {
  const title = oneLine(cell.title || cell.type, 200);
  const body = oneLine(cell.text ?? '', 240);
  const extra = cell.commit_sha ? ` (commit ${cell.commit_sha.slice(0, 12)})` : '';
  const fresh = freshness && freshness.state !== 'unknown' ? freshness.marker : null;
  const mark = [note, fresh].filter((m): m is string => !!m).map((m) => `[${oneLine(m, 300)}] `).join('');
  if (!body || body === title || body.startsWith(title)) return `${mark}${body || title}${extra}`;
  return `${mark}${title}${extra}: ${body}`;
}

function coverage(hits: SearchHit[], avg: number): string {
  if (hits.length === 0) return 'none';
  if (hits.length >= 5 && avg >= 0.5) return 'comprehensive';
  if (hits.length >= 2) return 'partial';
  return 'minimal';
}

function strategy(query: string): string {
  const n = query.split(/\s+/).filter(Boolean).length;
  return n <= 4 ? 'focused' : n <= 20 ? 'moderate' : 'broad';
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ToolError('retrieval_timeout', `retrieval did not finish within ${Math.round(ms / 1000)} s; narrow the prompt and try again`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

interface Found {
  hits: SearchHit[];
  /** Sections of the project's own documents (README, docs, doc comments) that match. */
  documents: SearchHit[];
  timed: TimedHit[];
  /** Freshness of the facts that name files and a commit, by node id. */
  freshness: Map<string, Freshness>;
  entities: Entity[];
  relationships: z.output<typeof relationship>[];
  memoryReady: boolean;
  readiness: string;
}

/** Labels of the project's memory, not of a query's hits: `ready_rich` from this many records (observations, session summaries, memories). */
export const RICH_RECORDS = 50;

/** memory_ready and readiness_state: what the project's store holds, whatever the prompt. */
async function readinessOf(ctx: ToolContext): Promise<{ memoryReady: boolean; readiness: string }> {
  const records = await ctx.engine.recordCount(ctx.scope);
  return { memoryReady: records > 0, readiness: records === 0 ? 'empty' : records >= RICH_RECORDS ? 'ready_rich' : 'ready_sparse' };
}

async function find(ctx: ToolContext, query: string, decision: TriageResult['decision'], prompt: string): Promise<Found> {
  // Current memories; superseded ones only when the prompt asks for history. The store's label is
  // counted while the search runs.
  const [[searched, documents], ready] = await Promise.all([
    decision === 'skip'
      ? ([[], []] as [TimedHit[], SearchHit[]])
      : Promise.all([searchInTime(ctx, query, MAX_FACTS, prompt), ctx.engine.search(query, { scope: ctx.scope, filter: { type: DOCUMENT_TYPE }, limit: MAX_DOCUMENTS }).then(matches)]),
    readinessOf(ctx),
  ]);
  // A fact whose files changed since its commit (or that is off this branch) says so; facts are
  // ranked and scored as recall_context ranks the same records (rankedFresh).
  const freshness = await freshnessOf(ctx, searched.map((t) => t.hit));
  const timed = rankedFresh(searched, freshness);
  const hits = timed.map((t) => t.hit);
  // A team store's hit is memory the project can read even where its own store holds nothing yet.
  const memoryReady = ready.memoryReady || hits.length > 0;
  const readiness = ready.memoryReady || hits.length === 0 ? ready.readiness : 'ready_sparse';
  const { entities, relationships } = await graphOf(ctx, hits);
  return { hits, timed, freshness, documents, entities, relationships, memoryReady, readiness };
}

const MAX_ENTITIES = 40;
const MAX_RELATIONSHIPS = 40;

/**
 * The graph around the best hits' files and commits: the entities they name, the edges between
 * entities (strongest first), and each edge's two entities, so that every relationship's source
 * and target is the label of an entity listed. The graph enriches the report; a failure there
 * must not fail the retrieval.
 */
async function graphOf(ctx: ToolContext, hits: SearchHit[]): Promise<{ entities: Entity[]; relationships: { source: string; target: string; type: string; weight: number }[] }> {
  const names = new Set<string>();
  for (const hit of hits.slice(0, 5)) {
    for (const file of parseFiles(hit.cell.files).slice(0, 5)) names.add(`file:${file}`);
    // The graph keeps a commit by its first 12 hex digits.
    if (hit.cell.commit_sha) names.add(`commit:${hit.cell.commit_sha.slice(0, 12)}`);
  }
  if (names.size === 0) return { entities: [], relationships: [] };
  try {
    const found = await ctx.engine.entities(ctx.scope, [...names]);
    const byId = new Map(found.entities.map((e) => [e.id, e]));
    const listed = new Map<string, Entity>();
    for (const e of found.entities) if (listed.size < MAX_ENTITIES) listed.set(e.id, e);
    const edges = [...found.relationships].sort((a, b) => b.weight - a.weight).slice(0, MAX_RELATIONSHIPS);
    // The far ends of the edges, read by id.
    const missing = [...new Set(edges.flatMap((r) => [r.source, r.target]))].filter((id) => !byId.has(id));
    if (missing.length > 0) for (const e of (await ctx.engine.entities(ctx.scope, missing)).entities) if (!byId.has(e.id)) byId.set(e.id, e);
    const relationships: { source: string; target: string; type: string; weight: number }[] = [];
    for (const r of edges) {
      const a = byId.get(r.source);
      const b = byId.get(r.target);
      if (!a || !b) continue;
      const room = MAX_ENTITIES - listed.size - (listed.has(a.id) ? 0 : 1) - (listed.has(b.id) || a.id === b.id ? 0 : 1);
      if (room < 0) continue;
      listed.set(a.id, a);
      listed.set(b.id, b);
      relationships.push({ source: a.label, target: b.label, type: r.type, weight: r.weight });
    }
    return { entities: [...listed.values()], relationships };
  } catch (error) {
    ctx.log?.(`retrieve_memory: entity lookup failed: ${error instanceof Error ? error.message : String(error)}`);
    return { entities: [], relationships: [] };
  }
}

function report(prompt: string, out: RetrieveMemoryOutput, facts: z.output<typeof fact>[]): string {
  const t = out.triage!;
  const r = out.retrieval!;
  const lines = ['# Retrieved Company Context', '', `**Query:** ${oneLine(prompt, 500)}`, '', `**Summary:** ${r.context_summary}`, ''];
  lines.push('## How This Context Was Found', `**Reasoning:** ${t.reasoning}`);
  if (t.rewritten_query && t.rewritten_query !== prompt.trim()) lines.push(`**Rewritten query:** ${oneLine(t.rewritten_query, 500)}`);
  lines.push(`**Sections searched:** ${out.phase1!.targeted_sections.map((s) => s.tree_path.split(' > ').slice(1).join(' > ')).join(', ') || 'none'}`, '');
  if (facts.length) {
    lines.push('## Relevant Facts', '');
    for (const f of facts) lines.push(`- [${Math.round(f.relevance_score * 100)}%] **${f.statement}** (source: ${f.source_path})`);
    lines.push('');
  }
  if (r.documents.length) {
    lines.push('## Documents', '');
    // An excerpt is quoted: none of its lines reads as a heading, fact or rule of the report.
    for (const d of r.documents) lines.push(`### ${d.title} (source: ${d.source_path})`, '', quotedLines(d.excerpt) + (d.truncated ? ' […]' : ''), '');
  }
  lines.push('---', `*Retrieved ${r.total_items} items | Avg relevance: ${Math.round(r.avg_relevance_score * 100)}% | Coverage: ${r.coverage_assessment}*`);
  return lines.join('\n');
}

/** What the request log keeps of a call's arguments: see loggedArguments. */
const LOG_DEPTH = 8;
const LOG_ENTRIES = 100;
const LOG_VALUES = 2_000;
const LOG_STRING_CHARS = 2 * MAX_PROMPT_CHARS; // a valid prompt's code points, in UTF-16 units
const LOG_TOTAL_CHARS = 100_000;
const LOG_KEY_CHARS = 256;

/**
 * The arguments of a call as JSON for the request log, bounded: objects and lists at most
 * LOG_DEPTH deep and LOG_ENTRIES long, strings cut at LOG_STRING_CHARS (all of them at
 * LOG_TOTAL_CHARS), with a note where something was left out. Valid arguments (a prompt of at
 * most 8,000 characters and a session id) are logged whole. Built with a stack of its own: JSON
 * nested thousands deep, which JSON.parse takes, overflowed JSON.stringify's call stack, and the
 * call went unlogged. A string is redacted before it is cut (a secret cut in two would pass for
 * text), and the log redacts what it writes as ever (keys that name a secret hide their values).
 */
function loggedArguments(args: unknown): string {
  try {
    return boundedJson(args);
  } catch {
    // A getter or a proxy of an in-process caller that throws.
    return JSON.stringify({ '[not logged]': 'arguments that could not be read' });
  }
}

function boundedJson(args: unknown): string {
  const root: { value?: unknown } = {};
  const work: { value: unknown; depth: number; put: (v: unknown) => void }[] = [{ value: args, depth: 0, put: (v) => (root.value = v) }];
  let values = 0;
  let chars = 0;
  while (work.length > 0) {
    const { value, depth, put } = work.pop()!;
    if (++values > LOG_VALUES) put(`[not logged: more than ${LOG_VALUES} values]`);
    else if (typeof value === 'string') {
      const room = Math.min(LOG_STRING_CHARS, Math.max(0, LOG_TOTAL_CHARS - chars));
      const kept = value.length <= room ? value : `${room > 0 ? cutText(redact(value), room) : ''}… [cut: ${value.length} characters]`;
      chars += Math.min(value.length, room);
      put(kept);
    } else if (typeof value === 'bigint') put(String(value));
    else if (value === null || typeof value !== 'object') put(value); // undefined and functions: left out, as JSON leaves them
    else if (depth >= LOG_DEPTH) put(`[not logged: ${Array.isArray(value) ? 'a list' : 'an object'} nested deeper than ${LOG_DEPTH} levels]`);
    else if (Array.isArray(value)) {
      const out: unknown[] = new Array<unknown>(Math.min(value.length, LOG_ENTRIES)).fill(null);
      if (value.length > LOG_ENTRIES) out.push(`[not logged: ${value.length - LOG_ENTRIES} more items]`);
      put(out);
      for (let i = Math.min(value.length, LOG_ENTRIES) - 1; i >= 0; i--) work.push({ value: value[i] as unknown, depth: depth + 1, put: (v) => (out[i] = v) });
    } else {
      // No prototype: a key '__proto__' stays a key.
      const out = Object.create(null) as Record<string, unknown>;
      const entries = Object.entries(value);
      const shown = entries.slice(0, LOG_ENTRIES);
      for (const [key] of shown) out[logKey(key)] = null; // the keys in their order
      if (entries.length > LOG_ENTRIES) out['[not logged]'] = `${entries.length - LOG_ENTRIES} more keys`;
      put(out);
      for (let i = shown.length - 1; i >= 0; i--) {
        const [key, v] = shown[i];
        const name = logKey(key);
        // A key cut short might no longer name the secret its value is: the value is left out.
        const under = name === key ? v : '[not logged: the value of a key cut short]';
        work.push({ value: under, depth: depth + 1, put: (x) => (out[name] = x) });
      }
    }
  }
  return JSON.stringify(root.value) ?? '{}';
}

function logKey(key: string): string {
  return key.length <= LOG_KEY_CHARS ? key : `${cutText(redactKey(key), LOG_KEY_CHARS)}… [cut: ${key.length} characters]`;
}

/**
 * A call as its steps see it: its forget mark, taken before anything is read (the log entry
 * quotes what the search finds; see logRequest), and whether it has answered already (out of
 * time: what is left of its steps writes nothing, as a forget that follows the answer could no
 * longer take a late write back).
 */
type Call = { mark?: ForgetMark; answered?: boolean };

/**
 * The answer to a valid prompt: the session's earlier prompts (none where they cannot be read:
 * the prompt is then taken as it is), the triage, the search. The prompt is written to the
 * session's history while the search runs; the next call's read of it waits for the write.
 */
async function answer(ctx: ToolContext, prompt: string, sessionId: string | null, requestId: string, started: number, call: Call): Promise<RetrieveMemoryOutput> {
  call.mark = await ctx.engine.forgetMark().catch(() => undefined);
  const note = (what: string) => (error: unknown) => ctx.log?.(`retrieve_memory: prompt history ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
  const prior = sessionId ? await ctx.engine.recentPrompts(ctx.scope, sessionId, PRIOR_PROMPTS).catch((error: unknown) => (note('read')(error), [])) : [];
  const decided = triage(prompt, prior);
  if (call.answered) throw new ToolError('retrieval_timeout', 'answered already');
  if (sessionId) void ctx.engine.addPrompt(ctx.scope, sessionId, prompt).catch(note('write'));
  const found = await find(ctx, decided.rewritten_query, decided.decision, prompt);
  return build(ctx, prompt, decided, found, requestId, started);
}

export async function retrieveMemory(ctx: ToolContext, rawArgs: unknown): Promise<RetrieveMemoryOutput> {
  const started = Date.now();
  const requestId = randomUUID();
  const parsed = retrieveMemoryInput.safeParse(rawArgs ?? {});
  const raw = (rawArgs && typeof rawArgs === 'object' ? rawArgs : {}) as Record<string, unknown>;
  // Own arguments only: nothing inherited is an argument.
  const given = Object.prototype.hasOwnProperty.call(raw, 'session_id') ? raw.session_id : undefined;
  const sessionId = (typeof given === 'string' && given ? sessionKey(given) : null) || ctx.transportSessionId || null;
  let out: RetrieveMemoryOutput;
  // The contract's budget is the whole call's: every read below runs within it.
  const deadline = started + (ctx.retrieveTimeoutMs ?? RETRIEVE_TIMEOUT_MS);
  const left = (): number => Math.max(0, deadline - Date.now());
  const call: Call = {};
  try {
    if (!parsed.success) throw new ToolError('invalid_arguments', `${describeIssues(parsed.error)}. Only 'prompt' (at most ${MAX_PROMPT_CHARS.toLocaleString('en-US')} characters) and 'session_id' are accepted.`);
    const { prompt } = parsed.data;
    out = await withTimeout(answer(ctx, prompt, sessionId, requestId, started, call), left());
  } catch (error) {
    call.answered = true;
    out = { status: 'error', error_code: errorCode(error), error_message: errorText(error) };
  }
  const logged = ctx.engine
    .logRequest(
      {
        request_id: requestId,
        tool: 'retrieve_memory',
        project: ctx.scope.project,
        session_id: sessionId,
        arguments: loggedArguments(rawArgs ?? {}),
        response: JSON.stringify(out),
        status: out.status,
        duration_ms: Date.now() - started,
        created_at_epoch: started,
      },
      call.mark,
    )
    .catch((error: unknown) => ctx.log?.(`retrieve_memory: request log write failed: ${error instanceof Error ? error.message : String(error)}`));
  // Written before the answer within the budget; a write that outlasts it ends after the answer.
  await withTimeout(logged, left()).catch(() => undefined);
  return out;
}

function build(ctx: ToolContext, prompt: string, decided: TriageResult, found: Found, requestId: string, started: number): RetrieveMemoryOutput {
  const { hits } = found;
  const project = ctx.scope.project;
  const facts = found.timed.map((t) => ({ statement: statementOf(t.hit.cell, t.note, found.freshness.get(t.hit.cell.node_id)), relevance_score: round2(t.hit.score), source_path: sourcePath(t.hit.cell, t.hit.origin) }));
  const avg = hits.length ? round2(hits.reduce((s, h) => s + h.score, 0) / hits.length) : 0;
  // The project's documents first, then excerpts of the best facts.
  const documents = [...found.documents, ...hits].slice(0, MAX_DOCUMENTS).map((h) => {
    const excerpt = truncateToTokens(h.cell.text ?? '', DOCUMENT_TOKENS);
    return { title: oneLine(h.cell.title || h.cell.type, 200), source_path: sourcePath(h.cell, h.origin), excerpt, truncated: excerpt.length < (h.cell.text ?? '').length };
  });
  const bySection = new Map<string, number>();
  for (const h of hits) bySection.set(treePath(project, h.cell), (bySection.get(treePath(project, h.cell)) ?? 0) + 1);
  const targeted = [...bySection].map(([tree_path, n]) => ({
    tree_path,
    relevance_reason: `${n} ${n === 1 ? 'record' : 'records'} of this kind matched the query.`,
  }));
  // The sections the facts came from, as the page's diagnostics list them: full tree paths (the
  // report's "Sections searched" line names the same ones below the project).
  const searched = targeted.map((t) => t.tree_path);
  const summary =
    decided.decision === 'skip'
      ? 'Project memory was not needed for this prompt.'
      : !found.memoryReady
        ? `No memory has been captured for project '${project}' yet; run \`code-memory import-git\` or work in the editor to build it.`
        : hits.length === 0
          ? `Nothing in project '${project}' memory matched this prompt.`
          : `Found ${hits.length} related ${hits.length === 1 ? 'record' : 'records'} in project '${project}'; the best match: ${oneLine(hits[0].cell.title || hits[0].cell.type, 160)}.`;
  const candidateTokens = hits.reduce((s, h) => s + countTokens(h.cell.text ?? '') + countTokens(h.cell.title ?? ''), 0);
  const out: RetrieveMemoryOutput = {
    status: 'ok',
    memory_ready: found.memoryReady,
    readiness_state: found.readiness,
    content_text: '',
    triage: { decision: decided.decision, reasoning: decided.reasoning, rewritten_query: decided.rewritten_query },
    phase1: { search_strategy: decided.decision === 'skip' ? 'none' : strategy(decided.rewritten_query), estimated_tokens: candidateTokens, targeted_sections: targeted },
    retrieval: {
      context_summary: summary,
      facts,
      entities: found.entities.map((e) => ({ label: e.label, type: e.type, properties: { ...e.properties } })),
      relationships: found.relationships,
      documents,
      total_items: hits.length,
      avg_relevance_score: avg,
      coverage_assessment: decided.decision === 'skip' ? 'not_needed' : coverage(hits, avg),
    },
  };
  const text = report(prompt, out, facts);
  out.content_text = text;
  out.diagnostics = { request_id: requestId, duration_ms: Date.now() - started, estimated_tokens: countTokens(text), sections_searched: searched, avg_relevance_score: avg };
  return out;
}

export function retrieveMemoryText(out: RetrieveMemoryOutput): string {
  return out.status === 'ok' ? (out.content_text ?? '') : `${out.error_code}: ${out.error_message}`;
}

export const retrieveMemoryTool: ToolDefinition = {
  name: 'retrieve_memory',
  title: 'Retrieve project memory',
  description:
    "Retrieve this project's memory for a prompt: a markdown report (summary, how the context was found, ranked facts with relevance and source, document excerpts, counts and coverage) plus structuredContent {status, memory_ready, readiness_state, content_text, triage, phase1, retrieval, diagnostics}. Pass a prompt whenever the task may depend on the project's history: past changes and commits, decisions, conventions, who changed what and why, earlier sessions. Only prompt (at most 8,000 characters) and session_id are accepted; anything else returns invalid_arguments. session_id is optional (the MCP session is used when omitted); the last 5 prompts per session are kept for 30 days and the last 3 help rewrite follow-ups. Retrieval must finish within 120 s (retrieval_timeout). Every call is kept in a request log the user can review (GET /v1/dev/mcp-requests). Does not change memory.",
  inputSchema: retrieveMemoryInput,
  outputSchema: retrieveMemoryOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(ctx: ToolContext, args: unknown): Promise<ToolResult> {
    const out = await retrieveMemory(ctx, args);
    return { text: retrieveMemoryText(out), structured: out, isError: out.status === 'error' };
  },
};
