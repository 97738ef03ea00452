// Token budgets use a real BPE tokenizer (o200k_base, the encoding of current OpenAI models),
// not characters / 4, so a budget means the same thing to every agent reading the output.
import type { TextDecoder } from 'node:util';
import type * as GptTokenizer from 'gpt-tokenizer';
import type * as GptSplit from 'gpt-tokenizer/encodingParams/constants';

// Loaded on first use: building the o200k tables takes a noticeable part of a process start,
// and a server's first answer (recall) or a CLI command often needs no token count at all.
let bpe: typeof GptTokenizer | undefined;
/** The tokenizer's own split of text into words (o200k_base), before it merges each word. */
let wordPattern: RegExp | undefined;
/** The one TextDecoder gpt-tokenizer decodes every call with (see prefixOfTokens). */
let sharedDecoder: TextDecoder | undefined;

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

function streamingDecoder(): TextDecoder {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded with the tokenizer
  sharedDecoder ??= (require('gpt-tokenizer/BytePairEncodingCore') as { decoder: TextDecoder }).decoder;
  return sharedDecoder;
}

function words(): RegExp {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded with the tokenizer
  wordPattern ??= (require('gpt-tokenizer/encodingParams/constants') as typeof GptSplit).O200K_TOKEN_SPLIT_REGEX;
  return wordPattern;
}

// Captured text may quote special tokens such as <|endoftext|>; gpt-tokenizer throws on them
// by default. They are ordinary text to us.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

// English and code average about 4 characters per token; a window of 6 characters per token
// covers the budget in one encode for nearly every input, and it grows on the rare miss.
const CHARS_PER_TOKEN_WINDOW = 6;

/**
 * The longest word (as the tokenizer splits text) encoded whole. The tokenizer merges a word's
 * pairs in time quadratic in its length: one run of a letter (a separator line, a blob of
 * zeros, a minified line) of 20,000 characters took 0.85 s, of 200,000 21 s, and a megabyte
 * never finished, blocking the event loop of every caller. A longer word is encoded in chunks
 * of this many characters, each on its own: linear, and its count is an estimate (a token that
 * would span two chunks counts as two: a run of one character within 1%, most exactly; random
 * letters about 0.2% high). Ordinary prose and code have no word this long and count exactly.
 */
const MAX_WORD_CHARS = 128;

/**
 * Whether `text` may hold a word longer than MAX_WORD_CHARS. A word of the tokenizer's split is
 * one character and a run of non-spaces, or a run of spaces, or punctuation followed by newlines
 * and slashes ('/' continues a run of either kind here): text whose runs are all this short has
 * no word over twice that, which the tokenizer encodes quickly and exactly. One pass, no regular
 * expression.
 */
function mayHoldLongWord(text: string): boolean {
  let run = 0;
  let spaces = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === SLASH || isSpace(c) === spaces) run++;
    else {
      spaces = !spaces;
      run = 1;
    }
    if (run > MAX_WORD_CHARS) return true;
  }
  return false;
}

const SLASH = 0x2f;

/** \s of a regular expression, by UTF-16 code. */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/**
 * `text` in pieces to encode one by one, in order: the stretches between long words whole (cut
 * where the tokenizer's own split cuts, so each counts as it does within the text), and each
 * word longer than MAX_WORD_CHARS in chunks (`chunk`: its count is an estimate).
 */
function* pieces(text: string): Generator<{ text: string; chunk: boolean }> {
  let from = 0;
  for (const match of text.matchAll(words())) {
    const word = match[0];
    if (word.length <= MAX_WORD_CHARS) continue;
    const at = match.index;
    if (at > from) yield { text: text.slice(from, at), chunk: false };
    for (let i = 0; i < word.length; ) {
      let end = Math.min(word.length, i + MAX_WORD_CHARS);
      // Not between the two halves of a surrogate pair: each chunk is text of its own.
      if (end < word.length && isHighSurrogate(word.charCodeAt(end - 1)) && end - 1 > i) end--;
      yield { text: word.slice(i, end), chunk: true };
      i = end;
    }
    from = at + word.length;
  }
  if (from < text.length) yield { text: from === 0 ? text : text.slice(from), chunk: false };
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/**
 * Where to cut `text` at most `at` UTF-16 units in: `at`, or one unit earlier when the unit
 * before it is the first half of a surrogate pair (an emoji, a character outside the Basic
 * Multilingual Plane), so no cut leaves half a character, which is not valid Unicode.
 */
export function codePointCut(text: string, at: number): number {
  const end = Math.max(0, Math.min(text.length, Math.floor(at)));
  return end > 0 && end < text.length && isHighSurrogate(text.charCodeAt(end - 1)) ? end - 1 : end;
}

/** The first `max` UTF-16 units of `text` at most, cut at a character boundary (see codePointCut). */
export function cutText(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, codePointCut(text, max));
}

/**
 * The o200k token count of `text`: exact, except for words over MAX_WORD_CHARS characters
 * (one run of a letter, a blob), estimated in linear time (see MAX_WORD_CHARS).
 */
export function countTokens(text: string): number {
  if (!text) return 0;
  const { countTokens: count } = tokenizer();
  if (!mayHoldLongWord(text)) return count(text, PLAIN_TEXT);
  let n = 0;
  for (const piece of pieces(text)) n += count(piece.text, PLAIN_TEXT);
  return n;
}

/**
 * The longest prefix of `text` that fits in `maxTokens` tokens. Only a prefix window is
 * encoded, so truncating a megabyte of log to a few hundred tokens stays cheap. Text with a
 * word over MAX_WORD_CHARS characters is cut piece by piece (see pieces), and the prefix counts
 * at most `maxTokens` by countTokens.
 */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (!text) return '';
  const max = Math.floor(maxTokens);
  if (!(max > 0)) return '';
  if (!mayHoldLongWord(text)) return prefixOf(text, max).text;
  // A prefix's count can differ by a token from the pieces' (a cut chunk encoded anew): the
  // budget shrinks by what it went over, which a few rounds settle.
  let budget = max;
  for (let round = 0; round < 4 && budget > 0; round++) {
    const cut = piecewisePrefix(text, budget);
    const over = countTokens(cut) - max;
    if (over <= 0) return cut;
    budget -= over;
  }
  return '';
}

/** The prefix of `text` that its pieces' first `max` tokens hold. */
function piecewisePrefix(text: string, max: number): string {
  const { encode } = tokenizer();
  let end = 0;
  let left = max;
  for (const piece of pieces(text)) {
    if (piece.chunk) {
      const tokens = encode(piece.text, PLAIN_TEXT);
      if (tokens.length > left) return text.slice(0, end) + prefixOfTokens(piece.text, tokens.slice(0, left));
      left -= tokens.length;
    } else {
      const cut = prefixOf(piece.text, left);
      if (cut.text.length < piece.text.length) return text.slice(0, end) + cut.text;
      left -= cut.tokens;
    }
    end += piece.text.length;
    if (left === 0) break;
  }
  return text.slice(0, end);
}

/**
 * The longest prefix of `text` (no word over twice MAX_WORD_CHARS) that fits in `max` tokens,
 * and its token count.
 */
function prefixOf(text: string, max: number): { text: string; tokens: number } {
  const { encode, encodeGenerator } = tokenizer();
  let window = max * CHARS_PER_TOKEN_WINDOW;
  while (window < text.length) {
    // The tokenizer splits text into words before merging, so cutting the window can only
    // change the last word or two; drop those chunks and the rest equals the full encode.
    const chunks = [...encodeGenerator(text.slice(0, window), PLAIN_TEXT)];
    const stable = chunks.slice(0, Math.max(0, chunks.length - 2)).flat();
    if (stable.length >= max) return { text: prefixOfTokens(text, stable.slice(0, max)), tokens: max };
    window *= 2;
  }
  const tokens = encode(text, PLAIN_TEXT);
  return tokens.length <= max ? { text, tokens: tokens.length } : { text: prefixOfTokens(text, tokens.slice(0, max)), tokens: max };
}

/**
 * The prefix of `text` that `tokens`, its first tokens, encode. gpt-tokenizer's decode keeps one
 * streaming TextDecoder for every call: a call whose tokens end inside a character leaves that
 * character's first bytes in it, and the next call's text began with them (a U+FFFD, and a
 * character lost); it is flushed before and after each call here. The decoded text is mapped back
 * by its UTF-8 length, so the prefix is always the text's own (a lone surrogate, which the
 * tokenizer encodes as U+FFFD, stays as the text has it) and ends at a character boundary.
 */
function prefixOfTokens(text: string, tokens: number[]): string {
  const decoder = streamingDecoder();
  decoder.decode();
  const bytes = Buffer.byteLength(tokenizer().decode(tokens), 'utf8');
  decoder.decode();
  return prefixOfBytes(text, bytes);
}

/** The longest prefix of `text` whose UTF-8 encoding (a lone surrogate as U+FFFD) holds at most `bytes` bytes. */
function prefixOfBytes(text: string, bytes: number): string {
  let used = 0;
  let i = 0;
  while (i < text.length) {
    const cp = text.codePointAt(i)!;
    const size = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (used + size > bytes) break;
    used += size;
    i += cp > 0xffff ? 2 : 1;
  }
  return text.slice(0, i);
}
