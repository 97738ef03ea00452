// recall_context(query, max_items=8, max_tokens=1500): the contract's literal text pack.
//
//   ### XMemo Context
//   Items: <n>
//   Budget: ...                      (only when an item was dropped or shortened)
//   Reference: <id> | Type: <type> | Location: <path>     (one per item)
//   Context:
//   <body, at most max_tokens tokens by the o200k tokenizer>
//
// or, with nothing found, the header, `Items: 0` and `No matching XMemo memory was found.`

import * as z from 'zod/v4';
import type { SearchHit } from '../api';
import type { Freshness } from '../capture/freshness';
import { freshnessWeight } from '../capture/freshness';
import { quotedLines } from '../model/quoted';
import type { Cell } from '../model/records';
import { countTokens, truncateToTokens } from '../tokens';
import { rankInTime, searchInTime } from './timeline';
import type { TimedHit } from './timeline';
import { MAX_QUERY_CHARS, boundedText, errorResult, parseArgs, searchedQuery } from './types';
import type { ToolContext, ToolDefinition, ToolResult } from './types';

export const NO_MATCH = 'No matching XMemo memory was found.';
const HEADER = '### XMemo Context';
// A shortened item must still say something; below this it is dropped instead.
const MIN_SHORTENED_TOKENS = 12;
// Candidates beyond max_items tell the Budget line how much was left out.
const EXTRA_CANDIDATES = 8;

export const recallContextInput = z.strictObject({
  query: boundedText(MAX_QUERY_CHARS).describe('Natural-language query the context pack is assembled for.'),
  max_items: z.number().int().min(1).max(50).default(8).describe('Maximum number of memories in the pack (1-50).'),
  max_tokens: z.number().int().min(1).max(12000).default(1500).describe('Maximum length of the generated context in tokens (1-12000).'),
});

const packItem = z.strictObject({
  reference: z.string(),
  type: z.string(),
  location: z.string(),
  source_kind: z.string(),
  source_id: z.number().int(),
  relevance: z.number(),
  shortened: z.boolean(),
  /** Present when a team store is searched: 'local' or 'team', and who shared a team item. */
  origin: z.enum(['local', 'team']).optional(),
  shared_by: z.string().optional(),
  /** Where the item names files and a commit: current, changed, off_branch or unknown. */
  freshness: z.string().optional(),
});

export const recallContextOutput = z.strictObject({
  text: z.string(),
  context_text: z.string(),
  used_items: z.number().int(),
  used_tokens: z.number().int(),
  budget: z.strictObject({
    max_items: z.number().int(),
    max_tokens: z.number().int(),
    dropped_items: z.number().int(),
    shortened_items: z.number().int(),
  }),
  items: z.array(packItem),
});

export type RecallContextOutput = z.output<typeof recallContextOutput>;

export function cellLocation(cell: Cell): string {
  const files = parseFiles(cell.files);
  if (files.length === 1) return files[0];
  if (files.length > 1) return `${files.slice(0, 3).join(', ')}${files.length > 3 ? ` (+${files.length - 3} more)` : ''}`;
  if (cell.commit_sha) return `commit ${cell.commit_sha.slice(0, 12)}`;
  return `${cell.source_kind}/${cell.source_id}`;
}

export function parseFiles(files: string | null): string[] {
  if (!files) return [];
  try {
    const parsed: unknown = JSON.parse(files);
    return Array.isArray(parsed) ? parsed.filter((f): f is string => typeof f === 'string') : [];
  } catch {
    return [];
  }
}

/** On one line whatever splits lines the reader uses: control characters (U+0085, U+001C-1E too) and line and paragraph separators. */
function oneLine(s: string): string {
  return s.replace(/[\p{Cc}\p{Zl}\p{Zp}|]+/gu, ' ').replace(/\s+/g, ' ').trim();
}

function itemBlock(index: number, cell: Cell, note: string | null, origin: SearchHit['origin'], freshness: Freshness | undefined): string {
  const date = new Date(cell.created_at_epoch).toISOString().slice(0, 10);
  const sha = cell.commit_sha ? `, commit ${cell.commit_sha.slice(0, 12)}` : '';
  const source = origin?.store === 'team' ? `team ${cell.source_kind}, shared by ${oneLine(origin.shared_by ?? 'unknown')}` : `${cell.source_kind} ${cell.source_id}`;
  // Short markers say how it stands in time and whether it still holds: the code may have moved on.
  const fresh = freshness && freshness.state !== 'unknown' ? ` [${freshness.marker}]` : '';
  const head = `[${index}] ${oneLine(cell.title) || cell.type} (${source}, ${date}${sha})${note ? ` [${oneLine(note)}]` : ''}${fresh}`;
  // The text is quoted: none of its lines reads as a line of the pack (a `Reference:`, an item head).
  return cell.text ? `${head}\n${quotedLines(cell.text.trim())}` : head;
}

/** Freshness of the hits that name files and a commit, by node id; empty without a repository. */
export async function freshnessOf(ctx: ToolContext, hits: SearchHit[]): Promise<Map<string, Freshness>> {
  const out = new Map<string, Freshness>();
  if (!ctx.freshness) return out;
  await Promise.all(
    hits.map(async (h) => {
      const f = await ctx.freshness?.check(h.cell.commit_sha, parseFiles(h.cell.files)).catch(() => null);
      if (f) out.set(h.cell.node_id, f);
    }),
  );
  return out;
}

/**
 * The order of both tools' items (recall_context's pack, retrieve_memory's facts), and the score
 * each reports: relevance, a changed or off-branch record's weighed a little lower (never out),
 * a replaced memory never above the memory that replaced it (rankInTime).
 */
export function rankedFresh(timed: TimedHit[], freshness: Map<string, Freshness>): TimedHit[] {
  return rankInTime(timed, (t) => freshnessWeight(freshness.get(t.hit.cell.node_id)?.state));
}

export async function recallContext(ctx: ToolContext, rawArgs: unknown): Promise<RecallContextOutput> {
  // Limits are checked before anything is read (the contract's 422).
  const args = parseArgs(recallContextInput, rawArgs);
  // Current memories; superseded ones only for a history question, marked, never above what replaced them.
  const timed = await searchInTime(ctx, searchedQuery(args.query), args.max_items + EXTRA_CANDIDATES);
  const freshness = await freshnessOf(ctx, timed.map((t) => t.hit));
  // The order retrieve_memory's facts have too.
  const hits = rankedFresh(timed, freshness);

  const blocks: string[] = [];
  const items: RecallContextOutput['items'] = [];
  let shortened = 0;
  let usedTokens = 0;
  const separatorTokens = countTokens('\n\n');
  for (const { hit, note } of hits.slice(0, args.max_items)) {
    const cell = hit.cell;
    const fresh = freshness.get(cell.node_id);
    const block = itemBlock(items.length + 1, cell, note, hit.origin, fresh);
    const cost = countTokens(block) + (blocks.length ? separatorTokens : 0);
    const room = args.max_tokens - usedTokens;
    let text = block;
    let wasShortened = false;
    if (cost > room) {
      const fit = room - (blocks.length ? separatorTokens : 0);
      if (fit < Math.min(MIN_SHORTENED_TOKENS, args.max_tokens)) break;
      text = truncateToTokens(block, fit).trimEnd();
      if (!text) break;
      wasShortened = true;
      shortened++;
    }
    blocks.push(text);
    usedTokens = countTokens(blocks.join('\n\n'));
    items.push({
      reference: cell.node_id,
      type: cell.type,
      location: cellLocation(cell),
      source_kind: cell.source_kind,
      source_id: cell.source_id,
      relevance: Math.round(hit.score * 1000) / 1000,
      shortened: wasShortened,
      ...(hit.origin ? { origin: hit.origin.store, ...(hit.origin.shared_by ? { shared_by: hit.origin.shared_by } : {}) } : {}),
      ...(fresh ? { freshness: fresh.state } : {}),
    });
    if (wasShortened) break;
  }
  let body = blocks.join('\n\n');
  // Token counts of joined text can differ by a token from the sum of the parts; the bound is on the whole.
  if (countTokens(body) > args.max_tokens) body = truncateToTokens(body, args.max_tokens);
  usedTokens = countTokens(body);
  const dropped = hits.length - items.length;
  // '+': the search was cut at what it fetched, so more candidates than those existed.
  const fetchedFull = timed.length >= args.max_items + EXTRA_CANDIDATES;

  const lines = [HEADER, `Items: ${items.length}`];
  if (items.length === 0) {
    lines.push(NO_MATCH);
  } else {
    if (dropped > 0 || shortened > 0) {
      lines.push(
        `Budget: used_items=${items.length} used_tokens=${usedTokens} max_items=${args.max_items} max_tokens=${args.max_tokens} dropped=${dropped}${fetchedFull ? '+' : ''} shortened=${shortened}`,
      );
    }
    for (const item of items) lines.push(`Reference: ${item.reference} | Type: ${oneLine(item.type)} | Location: ${oneLine(item.location)}`);
    lines.push('Context:', body);
  }
  const text = lines.join('\n');
  return {
    text,
    context_text: body,
    used_items: items.length,
    used_tokens: usedTokens,
    budget: { max_items: args.max_items, max_tokens: args.max_tokens, dropped_items: dropped, shortened_items: shortened },
    items,
  };
}

export const recallContextTool: ToolDefinition = {
  name: 'recall_context',
  title: 'Recall a bounded context pack',
  description:
    "Read a bounded multi-memory context pack for a natural-language query: the text starts with '### XMemo Context' and 'Items: <n>', adds a 'Budget: ...' line when results were dropped or shortened, one 'Reference: <id> | Type: <type> | Location: <path>' line per item, then 'Context:' and the context body within max_tokens (counted with the o200k tokenizer). Reports used_items and used_tokens. Use at the start of a session or task to restore project context; use recall for a quick single lookup. Out-of-range max_items (1-50) or max_tokens (1-12000) is an error and nothing is read. Writes nothing.",
  inputSchema: recallContextInput,
  outputSchema: recallContextOutput,
  textOnly: true,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx: ToolContext, args: unknown): Promise<ToolResult> {
    try {
      const out = await recallContext(ctx, args);
      return { text: out.text, structured: out, isError: false };
    } catch (error) {
      return errorResult(error);
    }
  },
};
