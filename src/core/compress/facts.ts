// Temporal facts from decision and convention statements: "use pnpm for package management"
// becomes (package management, uses, pnpm). A later fact with the same subject and predicate
// but another object contradicts it, and the older one is closed, never deleted.
//
// People rarely write a change as "X uses Y": they write "we moved X to Y", "switched from A to
// B", "A was replaced by B", "use B instead of A", "A is deprecated", "we no longer use A". Such
// a fact also names what it `replaces` (A), which closes an older fact whose object is A even
// when the sentence names no subject; the subject is then taken from that older fact.

export interface ExtractedFact {
  /** Empty when the sentence names none and no topic was given (resolved against older facts). */
  subject: string;
  predicate: string;
  object: string;
  /** The object this statement says is no longer used (switched from, replaced, deprecated, ...). */
  replaces?: string;
}

export const NO_LONGER = 'no longer uses';

function clean(s: string): string {
  return s
    .toLowerCase()
    .replace(/[`"'()[\]]/g, '')
    .replace(/(?<![.;:!?,])[.;:!?,]+$/g, '')
    .replace(/^(?:the|a|an|our|all|its|their|old|existing)\s+/, '')
    .replace(/^(?:the|a|an|our|all|its|their|old|existing)\s+/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

// Qualifiers that end the subject or object: "use npm for packages from now on, because ...".
const TAIL = /(?<!\s)\s+(?:from now on|going forward|from here on|for now|in this (?:repo|repository|project|codebase)|instead\b|because|since|when|so that|unless|until|rather|over|but|and then|which|as of|anymore|any more|in favou?r of|everywhere|last|yesterday|today|this (?:week|sprint|month|quarter|year)|in (?:19|20)\d\d|on \w+day)\b.*$/i;

function words(s: string | undefined, max: number): string {
  if (!s) return '';
  return clean(s.replace(TAIL, '')).split(' ').slice(0, max).join(' ');
}

// Building blocks: a token, a short phrase that does not run into the next keyword.
const T = String.raw`[\w@./+-]+`;
/**
 * Where a phrase that no keyword introduces may start: where a run of token characters does.
 * Every pattern runs in time linear in the text (a remembered file, a pasted log): started inside
 * a run, a pattern would rescan the rest of it from every position; a match found from inside a
 * run is found from its start too (the continuation after the run is the same), so the facts are
 * the same.
 */
const RUN_START = String.raw`(?<![\w@./+-])`;
/** The same for a phrase that starts at a word boundary: the run's first word character (its leading '@', '.'... are left out). */
const RUN_WORD_START = String.raw`\b(?<=(?:^|[^\w@./+-])[@./+-]*)`;
const PHRASE = (stop: string, max = 4): string => String.raw`(?!(?:${stop})\b)${T}(?:\s+(?!(?:${stop})\b)${T}){0,${max}}`;
const PRONOUN = /^(?:we|i|you|they|it|this|that|he|she|team|the team|everyone)$/;

interface Pattern {
  re: RegExp;
  /** Groups holding the subject (the first that matched), the new object and the replaced object (0: none). */
  subject: number | number[];
  object: number;
  replaces: number;
  predicate: string;
}

const STOP = 'to|from|for|onto|with|instead|over|by|in';

const PATTERNS: Pattern[] = [
  // switched from A to B (for S); moved S from A to B
  {
    re: new RegExp(String.raw`\b(?:switch(?:ed|ing)?|mov(?:e|ed|ing)|migrat(?:e|ed|ing)|chang(?:e|ed|ing)|port(?:ed|ing)?|went|go(?:ne)?|transition(?:ed)?|upgrad(?:e|ed))\s+(?:(${PHRASE(STOP)})\s+)?from\s+(${PHRASE(STOP, 2)})\s+(?:to|onto)\s+(${PHRASE('for', 3)})(?:\s+for\s+([^.;\n]+))?`, 'i'),
    subject: [1, 4],
    object: 3,
    replaces: 2,
    predicate: 'uses',
  },
  // use B instead of A (for S)
  {
    re: new RegExp(String.raw`\b(?:use|uses|using|used|pick(?:ed)?|chose|choose|adopt(?:ed)?|went with|go with)\s+(${PHRASE(STOP, 2)})\s+(?:instead of|rather than|in place of|over)\s+(${PHRASE('for', 2)})(?:\s+for\s+([^.;\n]+))?`, 'i'),
    subject: 3,
    object: 1,
    replaces: 2,
    predicate: 'uses',
  },
  // A was replaced by B (for S)
  {
    re: new RegExp(String.raw`${RUN_START}(${T}(?:\s+${T}){0,2})\s+(?:has been|have been|was|were|is|are|got|gets|will be|is being)\s+(?:replaced|superseded|succeeded)\s+(?:by|with)\s+(${PHRASE('for', 3)})(?:\s+for\s+([^.;\n]+))?`, 'i'),
    subject: 3,
    object: 2,
    replaces: 1,
    predicate: 'uses',
  },
  // replace A with B (for S)
  {
    re: new RegExp(String.raw`\breplac(?:e|ed|ing)\s+(${PHRASE(STOP, 2)})\s+(?:with|by)\s+(${PHRASE('for', 3)})(?:\s+for\s+([^.;\n]+))?`, 'i'),
    subject: 3,
    object: 2,
    replaces: 1,
    predicate: 'uses',
  },
  // A is deprecated (in favour of B)
  {
    re: new RegExp(String.raw`${RUN_START}(${T}(?:\s+${T}){0,2})\s+(?:is|are|was|were|has been|have been|is now|are now)\s+deprecated(?:\s+in favou?r of\s+([^.;\n]+))?`, 'i'),
    subject: 0,
    object: 2,
    replaces: 1,
    predicate: 'uses',
  },
  // deprecate / drop / retire A (in favour of B)
  {
    re: new RegExp(String.raw`\b(?:deprecat(?:e|ed|ing)|drop(?:ped|ping)?|retir(?:e|ed|ing)|abandon(?:ed|ing)?|phas(?:e|ed|ing) out)\s+(${PHRASE('in', 3)})(?:\s+in favou?r of\s+([^.;\n]+))?`, 'i'),
    subject: 0,
    object: 2,
    replaces: 1,
    predicate: 'uses',
  },
  // we no longer use A (for S); stop using A; don't use A anymore
  {
    re: new RegExp(String.raw`\b(?:no longer|not longer|don'?t|do not|stop(?:ped)?|quit)\s+(?:use|using|uses|rely on|relying on|need)\s+(${PHRASE(STOP, 2)})(?:\s+(?:anymore|any more))?(?:\s+(?:for|in)\s+([^.;\n]+))?`, 'i'),
    subject: 2,
    object: 0,
    replaces: 1,
    predicate: NO_LONGER,
  },
  // A is no longer used (for S)
  {
    re: new RegExp(String.raw`${RUN_START}(${T}(?:\s+${T}){0,2})\s+(?:is|are)\s+no longer\s+(?:used|needed)(?:\s+(?:for|in)\s+([^.;\n]+))?`, 'i'),
    subject: 2,
    object: 0,
    replaces: 1,
    predicate: NO_LONGER,
  },
  // we moved S to B; migrated S over to B
  {
    re: new RegExp(String.raw`\b(?:mov(?:e|ed|ing)|migrat(?:e|ed|ing)|switch(?:ed|ing)?|port(?:ed|ing)?|convert(?:ed|ing)?)\s+(${PHRASE(STOP)})\s+(?:over\s+)?(?:to|onto)\s+([^.;\n]+)`, 'i'),
    subject: 1,
    object: 2,
    replaces: 0,
    predicate: 'uses',
  },
  // use X for Y / use X as Y / use X to Y
  { re: /\b(?:use|uses|using|standardi[sz]e on)\s+([\w@./+-]+(?:\s+[\w@./+-]+)?)\s+(?:for|as|to)\s+([^.;\n]+)/i, predicate: 'uses', subject: 2, object: 1, replaces: 0 },
  // switch to X for Y, go with X for Y
  {
    re: /\b(?:switch(?:ed)? to|moved? to|migrat\w* to|adopt(?:ed)?|chose|choose|going with|go with|settled on|opted for)\s+([\w@./+-]+)(?:\s+(?:for|as)\s+([^.;\n]+))?/i,
    predicate: 'uses',
    subject: 2,
    object: 1,
    replaces: 0,
  },
  // S uses / runs on / is backed by X
  {
    re: new RegExp(String.raw`^\s*(?:now\s+)?(${T}(?:\s+${T}){0,4}?)\s+(?:now\s+)?(?:uses|runs on|is built on|is backed by|is stored in|lives in|talks to)\s+([^.;\n]+)`, 'i'),
    predicate: 'uses',
    subject: 1,
    object: 2,
    replaces: 0,
  },
  // prefer X over Y
  { re: /\bprefer(?:s|red)?\s+([\w@./+-]+(?:\s+[\w@./+-]+)?)\s+(?:over|to|instead of)\s+([^.;\n]+)/i, predicate: 'prefers', subject: 0, object: 1, replaces: 0 },
  // Y should be / must be / is X
  { re: new RegExp(String.raw`${RUN_WORD_START}(${T}(?:\s+${T}){0,3})\s+(?:should|must|will)\s+(?:be|use)\s+([^.;\n]+)`, 'i'), predicate: 'is', subject: 1, object: 2, replaces: 0 },
];

/** The facts a statement makes; `topic` is the subject when the sentence names none. */
export function extractFacts(text: string, topic: string | null): ExtractedFact[] {
  const out: ExtractedFact[] = [];
  const seen = new Set<string>();
  for (const sentence of text.split(/(?<=[.!?])\s+|\n+/)) {
    for (const p of PATTERNS) {
      const m = p.re.exec(sentence);
      if (!m) continue;
      const group = (Array.isArray(p.subject) ? p.subject : [p.subject]).find((g) => g > 0 && m[g]);
      let subject = group ? words(m[group], 6) : '';
      if (PRONOUN.test(subject)) subject = '';
      if (!subject && topic) subject = clean(topic);
      const replaces = p.replaces ? words(m[p.replaces], 4) : '';
      let object = p.object ? words(m[p.object], 6) : '';
      let predicate = p.predicate;
      // "A is deprecated" with no successor named: A is no longer used.
      if (!object && replaces) {
        object = replaces;
        predicate = NO_LONGER;
      }
      if (!object || (!subject && !replaces)) continue;
      if (predicate !== NO_LONGER && replaces === object) continue;
      const key = `${subject}\u0000${predicate}\u0000${replaces}`;
      if (seen.has(key)) break;
      seen.add(key);
      out.push(replaces ? { subject, predicate, object, replaces } : { subject, predicate, object });
      break;
    }
  }
  return out;
}

/** Whether two objects name the same thing ("postgresql" and "postgresql 14"). */
export function sameObject(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b} `) || b.startsWith(`${a} `);
}

/** The fact as stored: a statement with no subject reads as what it says of the replaced object. */
export function storedFact(e: ExtractedFact): { subject: string; predicate: string; object: string } {
  if (e.subject || !e.replaces) return { subject: e.subject, predicate: e.predicate, object: e.object };
  if (e.predicate === NO_LONGER) return { subject: e.replaces, predicate: 'is', object: 'no longer used' };
  return { subject: e.replaces, predicate: 'replaced by', object: e.object };
}
