// recall_context's answer as an agent reads it over MCP: the public profile sends the text pack
// alone (no structuredContent), so what a test checks of it is read from that text.
import * as assert from 'node:assert/strict';
import { countTokens } from '../../src/core/tokens';

export interface TextPackItem {
  reference: string;
  type: string;
  location: string;
}

export interface TextPack {
  text: string;
  used_items: number;
  /** The body's tokens: the Budget line's count when there is one, else counted (o200k). */
  used_tokens: number;
  /** The Budget line, when items were dropped or shortened. */
  budget: { max_items: number; max_tokens: number; dropped: number; more: boolean; shortened: number } | null;
  items: TextPackItem[];
  /** The body after `Context:` ('' with no match). */
  context_text: string;
}

type Answer = { content: Array<{ type?: string; text?: string }>; structuredContent?: unknown; isError?: boolean };

/** Reads recall_context's MCP answer (asserting it is text alone) into its parts. */
export function textPack(r: Answer): TextPack {
  assert.notEqual(r.isError, true, r.content[0]?.text);
  assert.equal(r.structuredContent, undefined, 'recall_context over MCP answers with text, not a structured object');
  assert.equal(r.content.length, 1);
  const text = r.content[0].text ?? '';
  const lines = text.split('\n');
  assert.equal(lines[0], '### XMemo Context', text);
  const used = /^Items: (\d+)$/.exec(lines[1] ?? '');
  assert.ok(used, text);
  const b = /^Budget: used_items=(\d+) used_tokens=(\d+) max_items=(\d+) max_tokens=(\d+) dropped=(\d+)(\+?) shortened=(\d+)$/m.exec(text);
  const items = lines
    .map((l) => /^Reference: (\S+) \| Type: (\S+) \| Location: (.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ reference: m[1], type: m[2], location: m[3] }));
  const at = text.indexOf('\nContext:\n');
  const context_text = at < 0 ? '' : text.slice(at + '\nContext:\n'.length);
  return {
    text,
    used_items: Number(used[1]),
    used_tokens: b ? Number(b[2]) : countTokens(context_text),
    budget: b ? { max_items: Number(b[3]), max_tokens: Number(b[4]), dropped: Number(b[5]), more: b[6] === '+', shortened: Number(b[7]) } : null,
    items,
    context_text,
  };
}
