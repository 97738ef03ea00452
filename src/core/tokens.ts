// Token budgets use a real BPE tokenizer (o200k_base, the encoding of current OpenAI models),
// not characters / 4, so a budget means the same thing to every agent reading the output.
import type * as GptTokenizer from 'gpt-tokenizer';

// Loaded on first use: building the o200k tables takes a noticeable part of a process start,
// and a server's first answer (recall) or a CLI command often needs no token count at all.
let bpe: typeof GptTokenizer | undefined;

/**
 * Words whose merges the tokenizer remembers. Its default, 100,000, holds every distinct word a
 * long-lived server ever counted (identifiers, paths, hashes): about 28 MB of heap once full,
 * and slower than no cache at all on words that do not repeat. A project's common words fit
 * in this many.
 */
const MERGE_CACHE_WORDS = 10_000;

function tokenizer(): typeof GptTokenizer {
  if (!bpe) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a synchronous lazy load
    bpe = require('gpt-tokenizer') as typeof GptTokenizer;
    bpe.setMergeCacheSize(MERGE_CACHE_WORDS);
  }
  return bpe;
}

// Captured text may quote special tokens such as <|endoftext|>; gpt-tokenizer throws on them
// by default. They are ordinary text to us.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

// English and code average about 4 characters per token; a window of 6 characters per token
// covers the budget in one encode for nearly every input, and it grows on the rare miss.
const CHARS_PER_TOKEN_WINDOW = 6;

export function countTokens(text: string): number {
  if (!text) return 0;
  return tokenizer().countTokens(text, PLAIN_TEXT);
}

/**
 * The longest prefix of `text` that fits in `maxTokens` tokens. Only a prefix window is
 * encoded, so truncating a megabyte of log to a few hundred tokens stays cheap.
 */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (!text) return '';
  const max = Math.floor(maxTokens);
  if (!(max > 0)) return '';
  const { decode, encode, encodeGenerator } = tokenizer();
  let window = max * CHARS_PER_TOKEN_WINDOW;
  while (window < text.length) {
    // The tokenizer splits text into words before merging, so cutting the window can only
    // change the last word or two; drop those chunks and the rest equals the full encode.
    const chunks = [...encodeGenerator(text.slice(0, window), PLAIN_TEXT)];
    const stable = chunks.slice(0, Math.max(0, chunks.length - 2)).flat();
    if (stable.length >= max) return cleanTail(decode(stable.slice(0, max)));
    window *= 2;
  }
  const tokens = encode(text, PLAIN_TEXT);
  return tokens.length <= max ? text : cleanTail(decode(tokens.slice(0, max)));
}

// A cut can land inside a multi-byte character, which decodes to U+FFFD.
function cleanTail(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 0xfffd) end--;
  return s.slice(0, end);
}
