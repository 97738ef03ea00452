// Index and query text preparation. LanceDB's full-text tokenizer neither splits identifiers
// (parseArgs, exit_process) nor stems, so the cells table indexes a prepared `search_text`,
// and queries go through the same pipeline so that both sides meet on the same terms.

import { append } from '../lists';
import { retrievalSettings } from './settings';
import type { RetrievalSettings } from './settings';
import { stem } from './stemmer';

/** A general English stop list (the common function words; nothing specific to any repository). */
const STOP_WORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have ' +
    'having he her here hers herself him himself his how i if in into is it its itself just me more most ' +
    'my myself no nor not now of off on once only or other our ours ourselves out over own same she should ' +
    'so some such than that the their theirs them themselves then there these they this those through to ' +
    'too under until up very was we were what when where which while who whom why will with would you your ' +
    'yours yourself yourselves also get got us via instead rather whether whose e g eg ie etc one'
  ).split(' '),
);

const MAX_TOKEN_LENGTH = 40;

/**
 * The version of this preparation, kept in the store's meta table: a store whose cells were
 * prepared by an earlier one has them prepared again (Maintenance.reprepareText). 2: letters of
 * every alphabet, Chinese, Japanese and Korean in pairs of characters (1 read ASCII only). 3:
 * numbers of 5 to 7 digits (2 dropped numbers over 4 digits). 4: Thai, Lao, Khmer and Myanmar in
 * pairs of characters too (3 kept each of their runs whole).
 */
export const TEXT_PREP_VERSION = 4;

/** The longest number that is a term: issue and pull-request numbers (#48213) are; timestamps and other ids are not. */
const MAX_NUMBER_DIGITS = 7;

/** Upper bound on the prepared index text, so one huge commit cannot dominate the index. */
export const MAX_INDEX_CHARS = 12_000;

/**
 * Splits an identifier into its words: camelCase, PascalCase, ACRONYMCase, snake_case,
 * kebab-case and digit boundaries, in any alphabet that has cases. Returns lowercase parts;
 * empty for non-identifiers.
 */
export function splitIdentifier(token: string): string[] {
  if (isAscii(token)) {
    return token
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      // Written so that each capital is looked at once: ([A-Z]+)([A-Z][a-z]) rescans a run of capitals from each of its letters.
      .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1 ')
      .replace(/([a-zA-Z])([0-9])/g, '$1 $2')
      .replace(/([0-9])([a-zA-Z])/g, '$1 $2')
      .split(/[^A-Za-z0-9]+/)
      .filter((p) => p.length > 0)
      .map((p) => p.toLowerCase());
  }
  // The same in every alphabet that has cases (slower: kept for the tokens that need it).
  return token
    .replace(/([\p{Ll}\p{Nd}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(?=\p{Lu}\p{Ll})/gu, '$1 ')
    .replace(/(\p{L})(\p{Nd})/gu, '$1 $2')
    .replace(/(\p{Nd})(\p{L})/gu, '$1 $2')
    .split(/[^\p{L}\p{N}\p{M}]+/u)
    .filter((p) => p.length > 0)
    .map((p) => p.toLowerCase());
}

function isAscii(text: string): boolean {
  // eslint-disable-next-line no-control-regex -- the ASCII range
  return !/[^\x00-\x7f]/.test(text);
}

/** Letters no decomposition takes apart, written as the ASCII a reader types for them (Straße ~ strasse). */
const FOLDED: Record<string, string> = { ß: 'ss', ẞ: 'SS', æ: 'ae', Æ: 'AE', œ: 'oe', Œ: 'OE', ø: 'o', Ø: 'O', đ: 'd', Đ: 'D', ł: 'l', Ł: 'L', þ: 'th', Þ: 'Th', ı: 'i' };
const FOLDED_LETTERS = new RegExp(`[${Object.keys(FOLDED).join('')}]`, 'g');

/** `text` with the letters no decomposition takes apart spelt out as foldText spells them (ß ~ ss). */
export function foldLetters(text: string): string {
  return text.replace(FOLDED_LETTERS, (c) => FOLDED[c]);
}

/**
 * Text as the index compares it: compatibility forms made plain (ﬁ, full-width Ａ, ²), the
 * accents of Latin, Greek and Cyrillic letters dropped (café ~ cafe, precomposed or not), and a
 * few letters spelt out (Straße ~ strasse). Other scripts' marks stay (they are part of the
 * letter); Hangul and kana are recomposed. ASCII text is returned as it is.
 */
export function foldText(text: string): string {
  if (isAscii(text)) return text;
  // Each run of other characters alone (a decomposition never reaches past one, and the accent
  // of an ASCII letter is a run of its own): most of a text with a few of them is not copied twice.
  // eslint-disable-next-line no-control-regex -- the ASCII range
  return text.replace(/[^\x00-\x7f]+/g, (run) =>
    foldLetters(run.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').normalize('NFC')),
  );
}

/**
 * Scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer, Myanmar;
 * Korean joins its particles to words): their runs are indexed as overlapping pairs of
 * characters, as search engines do without a dictionary, so that a word of two characters or
 * more is found inside a sentence.
 */
const UNSPACED = '\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}\\p{sc=Hangul}\\u30fc\\p{sc=Thai}\\p{sc=Lao}\\p{sc=Khmer}\\p{sc=Myanmar}';
const UNSPACED_RUN = new RegExp(`[${UNSPACED}]+`, 'gu');
const UNSPACED_ONLY = new RegExp(`^[${UNSPACED}]+$`, 'u');
/** A character as a reader counts it: a letter with the marks written on it (Thai ข้, Myanmar မြ), or marks alone. */
const CHARACTER = /\P{M}\p{M}*|\p{M}+/gu;

function characterPairs(run: string): string[] {
  const chars = run.match(CHARACTER) ?? [];
  if (chars.length === 1) return chars;
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
  return out;
}

type TextSettings = Pick<RetrievalSettings, 'splitIdentifiers' | 'stem' | 'stopWords'>;

function normalise(word: string, s: TextSettings): string | null {
  if (word.length < 2 || word.length > MAX_TOKEN_LENGTH) return null;
  if (s.stopWords && STOP_WORDS.has(word)) return null;
  // Long pure numbers and hex runs (hashes, timestamps) carry no meaning for a question.
  if (/^[0-9]+$/.test(word) && word.length > MAX_NUMBER_DIGITS) return null;
  if (/^[0-9a-f]{12,}$/.test(word) && /[0-9]/.test(word)) return null;
  return s.stem ? stem(word) : word;
}

/**
 * Identifier-like runs of a text: letters, digits, marks, `_` and `$`, joined by single `-` or
 * `.`. Found with a pattern of ASCII classes that takes any other character in (several times
 * faster than Unicode property classes over a long text); the few runs holding such characters
 * are matched again with the property classes.
 */
function wordRuns(text: string): string[] {
  const rough = text.match(/[A-Za-z0-9_$\u0080-\uffff]+(?:[-.][A-Za-z0-9_$\u0080-\uffff]+)*/g) ?? [];
  if (rough.every(isAscii)) return rough;
  const out: string[] = [];
  for (const run of rough) {
    if (isAscii(run)) out.push(run);
    else append(out, run.match(/[\p{L}\p{N}\p{M}_$]+(?:[-.][\p{L}\p{N}\p{M}_$]+)*/gu) ?? []);
  }
  return out;
}

/**
 * Terms of a text: each identifier-like run is kept whole (lowercased) and also split into its
 * words; stop words go, the rest is stemmed. Letters of every alphabet count (see foldText);
 * runs of the scripts written without spaces give their pairs of characters (see UNSPACED).
 */
export function tokenize(text: string, s: TextSettings = retrievalSettings()): string[] {
  const out: string[] = [];
  const ascii = isAscii(text);
  const spaced = ascii ? text : foldText(text).replace(UNSPACED_RUN, ' $& ');
  for (const run of wordRuns(spaced)) {
    for (const raw of run.split(/[.$]+/)) {
      // Commit hashes and other long hex runs name nothing a question would use.
      if (!raw || (raw.length >= 7 && /^[0-9a-f]+$/i.test(raw) && /[0-9]/.test(raw) && /[a-f]/i.test(raw))) continue;
      if (!ascii && UNSPACED_ONLY.test(raw)) {
        append(out, characterPairs(raw));
        continue;
      }
      if (!s.splitIdentifiers) {
        for (const p of raw.toLowerCase().split(/[^\p{L}\p{N}\p{M}]+/u)) {
          const t = normalise(p, s);
          if (t) out.push(t);
        }
        continue;
      }
      const parts = splitIdentifier(raw);
      if (parts.length === 0) continue;
      const whole = parts.join('');
      if (parts.length > 1) {
        const t = normalise(whole, s);
        if (t) out.push(t);
      }
      for (const p of parts) {
        const t = normalise(p, s);
        if (t) out.push(t);
      }
    }
  }
  return out;
}

/** Terms of file paths: every path segment and the file's base name, split like identifiers. */
export function pathTerms(files: string[], s: TextSettings = retrievalSettings()): string[] {
  const out: string[] = [];
  for (const f of files) {
    const base = f.split('/').pop() ?? f;
    const noExt = base.replace(/\.[A-Za-z0-9]+$/, '');
    append(out, tokenize(f.replace(/\.[A-Za-z0-9]+$/, '').replace(/\//g, ' '), s));
    if (noExt !== base) append(out, tokenize(noExt, s));
  }
  return out;
}

function repeat(terms: string[], times: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < times; i++) append(out, terms);
  return out;
}

/**
 * Separates the extra section (what a diff says) in search_text, so that BM25 can weigh it
 * below the message. Punctuation, so LanceDB's own tokenizer ignores it.
 */
export const EXTRA_MARK = '|';

/**
 * The search_text of a cell: title, paths, text and extra (e.g. what a commit's diff says),
 * as prepared terms. Title and paths are weighted by repetition; the extra section follows
 * EXTRA_MARK.
 */
export function prepareIndexText(parts: { title: string; text: string; files?: string[]; extra?: string }): string {
  const s = retrievalSettings();
  const title = tokenize(parts.title ?? '', s);
  const text = tokenize(parts.text ?? '', s);
  const files = pathTerms(parts.files ?? [], s);
  const extra = s.diffText ? tokenize(parts.extra ?? '', s) : [];
  const all = [...repeat(title, s.titleRepeat), ...repeat(files, s.pathRepeat), ...text];
  if (extra.length > 0) {
    all.push(EXTRA_MARK);
    append(all, extra);
  }
  let joined = all.join(' ');
  if (joined.length > MAX_INDEX_CHARS) {
    joined = joined.slice(0, MAX_INDEX_CHARS);
    const cut = joined.lastIndexOf(' ');
    if (cut > 0) joined = joined.slice(0, cut);
  }
  return joined;
}

/**
 * Consecutive words of a text joined as code writes them (host name ~ hostname, terminal width ~
 * terminalWidth, line break ~ linebreak). Stop words are skipped; a sentence's end breaks the
 * run. Stemmed like the index, whose identifiers are also kept whole (see tokenize).
 */
export function joinedTerms(text: string, s: TextSettings = retrievalSettings()): string[] {
  const out = new Set<string>();
  for (const sentence of foldText(text).split(/[.?!;:()[\]{}"]+(?:\s|$)/)) {
    const words = (sentence.toLowerCase().match(/[a-z][a-z0-9]*/g) ?? []).filter((w) => w.length > 1 && !STOP_WORDS.has(w));
    for (let i = 0; i + 1 < words.length; i++) {
      const term = normalise(words[i] + words[i + 1], s);
      if (term) out.add(term);
    }
  }
  return [...out];
}

/** The query's terms, prepared like the index text, each once. */
export function prepareQueryText(query: string): string {
  return [...new Set(tokenize(query))].join(' ');
}
