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
const TAIL = /(?<!\s)\s+(?:again|from now on|going forward|from here on|for now|in this (?:repo|repository|project|codebase)|instead\b|because|since|when|so that|unless|until|rather|over|but|and then|which|as of|anymore|any more|in favou?r of|everywhere|last|yesterday|today|this (?:week|sprint|month|quarter|year)|in (?:19|20)\d\d|on \w+day)\b.*$/i;

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
  /** The group that comes before the verb ("the team never uses X"): its words are read by the guard too. */
  lead?: number;
  /** The subject and object as stored, where they are not one group's words (a number's digits, a verb's lemma). */
  read?: (m: RegExpExecArray) => { subject: string; object: string };
}

// Numbers a decision sets: "the request timeout is 10 seconds", "retry failed uploads twice".
// A number word counts as its digits, so that "five times" and "5 times" are one value.
const NUMBER_WORDS = new Map(
  Object.entries({
    one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
    fifteen: 15, twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, hundred: 100, thousand: 1000,
  }),
);
/** How many times: "retry ... twice". */
const TIMES_WORDS = new Map(Object.entries({ once: 1, twice: 2, thrice: 3 }));
const NUMBER = String.raw`(?:\d+(?:\.\d+)?|${[...NUMBER_WORDS.keys()].join('|')})`;
/** A unit after a number ("seconds", "ms", "%"), never another number word ("five hundred" is no value read here). */
const UNIT = String.raw`(?!(?:${[...NUMBER_WORDS.keys()].join('|')})\b)[a-z%]{1,12}`;
/** Where a number's value ends: the clause does ("is 10 seconds, because ..."), not a word more ("is 3 days old"). */
const VALUE_END = String.raw`(?=\s*(?:[.;,!:]|$))`;

function digits(n: string): string {
  const w = n.toLowerCase();
  return String(NUMBER_WORDS.get(w) ?? TIMES_WORDS.get(w) ?? w);
}

/** "10 seconds" from a number and its unit as written. */
function quantity(n: string, unit: string | undefined): string {
  return unit ? `${digits(n)} ${unit.toLowerCase()}` : digits(n);
}

const STOP = 'to|from|for|onto|with|instead|over|by|in';

// Something turned on or off: "enable request logging in production", "source maps are disabled
// in production builds". Its state is a value of what is turned (with where, when named: "in
// production" and "in staging" are two switches), so the opposite state ends the older decision.
/** A verb or state that turns something off: disable(d), deactivate(d), turn(ed) / switch(ed) off. */
const OFF = /^(?:disabl|deactivat)|\soff$/i;
const TOGGLE_VERB = String.raw`(?:enabl(?:e|ed|es|ing)|disabl(?:e|ed|es|ing)|activat(?:e|ed|es|ing)|deactivat(?:e|ed|es|ing)|(?:turn|switch)(?:ed|s|es|ing)?\s+(?:on|off))`;
const TOGGLE_STATE = String.raw`(?:enabled|disabled|activated|deactivated|(?:turned|switched)\s+(?:on|off))`;
/**
 * Where the switch is turned ("in production", "for the TypeScript build"), and the end of the
 * clause ("by default" and "again" say nothing more): "enabled for 10% of users" or "in production
 * for API routes" says more than one switch.
 */
const TOGGLE_WHERE = String.raw`(?:\s+((?:in|for|on)\s+${PHRASE(STOP, 3)}))?(?:\s+by\s+default|\s+again)?${VALUE_END}`;

function toggled(subject: string, where: string | undefined, verb: string): { subject: string; object: string } {
  return { subject: words(where ? `${subject} ${where}` : subject, 6), object: OFF.test(verb) ? 'disabled' : 'enabled' };
}

/**
 * Done with or without something: "retry failed uploads with backoff" is (retry failed uploads,
 * with, backoff), "... without backoff" (..., with, no backoff). Only the two sides of one thing
 * exclude each other: "with backoff" and "with jitter" both hold.
 */
export const WITH = 'with';

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
    lead: 1,
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
    lead: 1,
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
    lead: 1,
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
    lead: 1,
  },
  // prefer X over Y
  { re: /\bprefer(?:s|red)?\s+([\w@./+-]+(?:\s+[\w@./+-]+)?)\s+(?:over|to|instead of)\s+([^.;\n]+)/i, predicate: 'prefers', subject: 0, object: 1, replaces: 0 },
  // S is / should be disabled (in Q): the sentence starts with S.
  {
    re: new RegExp(String.raw`^\s*(${T}(?:\s+${T}){0,4}?)\s+(?:is|are|was|were|(?:should|must|will)\s+be|stays?|remains?)\s+(?:now\s+|always\s+)?(${TOGGLE_STATE})${TOGGLE_WHERE}`, 'i'),
    predicate: 'is',
    subject: 1,
    object: 2,
    replaces: 0,
    lead: 1,
    read: (m) => toggled(m[1], m[3], m[2]),
  },
  // enable / turn off X (in Q)
  {
    re: new RegExp(String.raw`\b(${TOGGLE_VERB})\s+(${PHRASE(STOP, 3)})${TOGGLE_WHERE}`, 'i'),
    predicate: 'is',
    subject: 2,
    object: 1,
    replaces: 0,
    read: (m) => toggled(m[2], m[3], m[1]),
  },
  // Y should be / must be / is X; "must be thirty seconds" and "is 30 seconds" name one value.
  {
    re: new RegExp(String.raw`${RUN_WORD_START}(${T}(?:\s+${T}){0,3})\s+(?:should|must|will)\s+(?:be|use)\s+([^.;\n]+)`, 'i'),
    predicate: 'is',
    subject: 1,
    object: 2,
    replaces: 0,
    lead: 1,
    read: (m) => ({ subject: words(m[1], 6), object: words(m[2], 6).replace(/^[a-z]+(?= |$)/, (w) => String(NUMBER_WORDS.get(w) ?? w)) }),
  },
  // S is N (unit): "the request timeout is 10 seconds"; the sentence starts with S, a number ends it.
  {
    re: new RegExp(String.raw`^\s*(${T}(?:\s+${T}){0,4}?)\s+(?:is|are|was|were)\s+(?:now\s+|set\s+to\s+|at\s+)?(${NUMBER})(?:\s+(${UNIT}))?${VALUE_END}`, 'i'),
    predicate: 'is',
    subject: 1,
    object: 2,
    replaces: 0,
    lead: 1,
    read: (m) => ({ subject: words(m[1], 6), object: quantity(m[2], m[3]) }),
  },
  // set / raise / lower S to N (unit)
  {
    re: new RegExp(String.raw`\b(?:set|setting|chang(?:e|ed|es|ing)|rais(?:e|ed|es|ing)|lower(?:ed|s|ing)?|increas(?:e|ed|es|ing)|decreas(?:e|ed|es|ing)|bump(?:ed|s|ing)?|reduc(?:e|ed|es|ing)|cap(?:ped|s)?|limit(?:ed|s)?)\s+(${PHRASE('to', 4)})\s+to\s+(${NUMBER})(?:\s+(${UNIT}))?${VALUE_END}`, 'i'),
    predicate: 'is',
    subject: 1,
    object: 2,
    replaces: 0,
    read: (m) => ({ subject: words(m[1], 6), object: quantity(m[2], m[3]) }),
  },
  // retry X N times / twice: how many times is a value of "retry X"
  {
    re: new RegExp(String.raw`\b(?:retr(?:y|ies|ied|ying)|re-tr(?:y|ies|ied|ying))\s+((?:${T}\s+){1,3}?)(?:(${NUMBER})\s+times|(once|twice|thrice))\b`, 'i'),
    predicate: 'is',
    subject: 1,
    object: 2,
    replaces: 0,
    read: (m) => ({ subject: words(`retry ${m[1]}`, 6), object: `${digits(m[2] ?? m[3])} times` }),
  },
  // (we) do S with / without X, X ending the clause: "retry failed uploads without backoff".
  {
    re: new RegExp(String.raw`^\s*(?:(?:we|i|you|they|always)\s+)?(?!(?:it|this|that|there|he|she)\b)(${T}(?:\s+${T}){0,4}?)\s+(with|without)\s+(${T}(?:\s+${T}){0,2})${VALUE_END}`, 'i'),
    predicate: WITH,
    subject: 1,
    object: 3,
    replaces: 0,
    lead: 1,
    read: (m) => ({ subject: words(m[1], 6), object: `${m[2].toLowerCase() === 'without' ? 'no ' : ''}${words(m[3], 4)}` }),
  },
];

// What a sentence says the project does, and what it only mentions. "We decided not to use
// Redis for caching", "Never use moment.js", "Avoid using lodash", "We will not migrate from A to
// B", "We considered switching ...", "Rejected: use GraphQL ...", "Should we use Kafka ...?",
// 'Bob suggested "use MongoDB ..."' all hold a pattern's words, and none says the project uses
// it. One guard decides before a match is taken: a question or a condition says nothing as a
// whole; a match that starts inside quotes is another's words; and the words before the verb, in
// its own clause, must not negate it (not, n't, never, no, avoid, against) nor make it a mere
// possibility, proposal or rejection (could, would, might, maybe, considered, suggested,
// rejected, should we, if, whether). "No longer" is not a negation here: it is the statement
// that something stopped, read by its own patterns (and "don't use A" / "do not use A" stay
// theirs too, the guard only reads what comes before a match). Every check runs in time linear
// in the sentence.
const WORD_START = String.raw`(?<![\w'’-])`;
const WORD_END = String.raw`(?![\w'’-])`;
const HEDGE = new RegExp(
  String.raw`${WORD_START}(?:not|never|no(?!\s+longer${WORD_END})|nobody|cannot|avoid(?:s|ed|ing)?|against|if|unless|whether|maybe|perhaps|possibly|might|could|would|consider(?:s|ed|ing)?|propos(?:e|es|ed|ing|al|als)|suggest(?:s|ed|ing|ion|ions)?|reject(?:s|ed|ing)?|(?:should|shall|can|could|would|will|do|does|did|must)\s+(?:we|i|you|they))${WORD_END}|n['’]t${WORD_END}`,
  'i',
);
/** Where a new clause starts, with words of its own before its verb: "because X did not ..., we switched to Y". */
const CLAUSE = /;|,\s+(?=(?:we|i|you|they|the team|so|but)\b)|\b(?:but|so|because|although|though|whereas)\b/gi;
/** A sentence that as a whole is a condition or a question: "If the replica lags, use the primary". */
const CONDITION = /^\W*(?:if|unless|in case|whether|suppose|supposing|assuming|should|could|would|might)\b/i;
/** Quoted words (straight or curly double quotes; single quotes that are not apostrophes). */
const QUOTED = /"[^"\n]*"|“[^“”\n]*”|‘[^‘’\n]*’|(?<![\w'])'[^'\n]*'(?![\w'])/g;

function isQuestion(sentence: string): boolean {
  let i = sentence.length - 1;
  while (i >= 0 && /[\s"'”’)\]]/.test(sentence[i])) i--;
  return sentence[i] === '?';
}

function insideQuotes(sentence: string, at: number): boolean {
  for (const q of sentence.matchAll(QUOTED)) {
    if (q.index >= at) return false;
    if (at < q.index + q[0].length) return true;
  }
  return false;
}

/** Whether match `m` of pattern `p` in `sentence` is negated, hedged or quoted rather than stated. */
function hedged(sentence: string, m: RegExpExecArray, p: Pattern): boolean {
  if (insideQuotes(sentence, m.index)) return true;
  const before = sentence.slice(0, m.index);
  let start = 0;
  for (const c of before.matchAll(CLAUSE)) start = c.index + c[0].length;
  return HEDGE.test(`${before.slice(start)} ${p.lead ? (m[p.lead] ?? '') : ''}`);
}

// A leading time phrase is when, not what: "As of 2026-03-01 the orders service uses SQLite" is
// about the orders service. Anchored at the start, and tried a bounded number of times.
const MONTH = 'jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?';
const WEEKDAY = '(?:mon|tues|wednes|thurs|fri|satur|sun)day';
const PERIOD = String.raw`(?:this|last|next)\s+(?:week|sprint|month|quarter|year|release)`;
const WHEN = String.raw`(?:\d{4}-\d\d(?:-\d\d)?|\d{1,2}/\d{1,2}/\d{2,4}|(?:${MONTH})(?:\s+\d{1,2}(?:st|nd|rd|th)?)?(?:,?\s+\d{4})?|\d{1,2}(?:st|nd|rd|th)?\s+(?:${MONTH})(?:\s+\d{4})?|(?:19|20)\d\d|${WEEKDAY}|today|tomorrow|yesterday|tonight|now|v?\d+(?:\.\d+)+|v\d+|${PERIOD}|q[1-4](?:\s+\d{4})?)`;
const LEADING_TIME = new RegExp(
  String.raw`^\s*(?:(?:as of|as from|starting(?:\s+(?:from|on|in))?|beginning(?:\s+(?:from|on|in))?|effective(?:\s+(?:from|on))?|since|from|after|on|in)\s+${WHEN}(?:\s+on(?:wards)?)?|today|tonight|now|nowadays|currently|these days|recently|lately|going forward|from now on|from here on|yesterday|${PERIOD}|${WEEKDAY})\b\s*,?\s*`,
  'i',
);

function withoutLeadingTime(sentence: string): string {
  let s = sentence;
  for (let i = 0; i < 3; i++) {
    const next = s.replace(LEADING_TIME, '');
    if (next === s) break;
    s = next;
  }
  return s;
}

/** The facts a statement makes; `topic` is the subject when the sentence names none. */
export function extractFacts(text: string, topic: string | null): ExtractedFact[] {
  const out: ExtractedFact[] = [];
  const seen = new Set<string>();
  for (const said of text.split(/(?<=[.!?])\s+|\n+/)) {
    const sentence = withoutLeadingTime(said);
    if (isQuestion(sentence) || CONDITION.test(sentence)) continue;
    for (const p of PATTERNS) {
      const m = p.re.exec(sentence);
      if (!m || hedged(sentence, m, p)) continue;
      const group = (Array.isArray(p.subject) ? p.subject : [p.subject]).find((g) => g > 0 && m[g]);
      const read = p.read?.(m);
      let subject = read ? read.subject : group ? words(m[group], 6) : '';
      if (PRONOUN.test(subject)) subject = '';
      if (!subject && topic) subject = clean(topic);
      const replaces = p.replaces ? words(m[p.replaces], 4) : '';
      let object = read ? read.object : p.object ? words(m[p.object], 6) : '';
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

// "X must be A" names a value of X ("30 s", "utc", "written in go") or a property X has
// ("documented", "backwards compatible", "thread-safe"). Values of X exclude each other;
// properties do not: an API can be both documented and backwards compatible. A phrase ending in
// an adjective names the property that adjective names ("fully documented" is about being
// documented). Opposite adjectives name one property too: "public" and "private" are its two
// values. Read from the words alone, so a name that looks like an adjective ("memcached")
// counts as one: where the words cannot tell (see objectRelation) the two are flagged, not retired.
const ADJECTIVE = /(?:ed|ible|able|ful|less|ous|ive|ant|ent|ic|al|safe|proof|free|aware|only|ready|compliant|friendly|based|backed|driven|agnostic)$/;
const PLAIN_ADJECTIVES = new Set(['fast', 'quick', 'slow', 'small', 'short', 'long', 'simple', 'secure', 'pure', 'async', 'sync', 'private', 'strict', 'lazy', 'lean', 'clean', 'correct', 'accurate', 'robust', 'green', 'up-to-date']);

// Opposites that share no stem, so that no prefix or suffix shows them (those that do:
// mutable/immutable, sync/async, blocking/non-blocking, stateful/stateless). Kept to pairs that
// are two values of one property whenever a requirement names them; "fast"/"slow" and the like
// are not here, since a requirement names those about different things.
const ANTONYMS: [string, string][] = [
  ['public', 'private'],
  ['internal', 'external'],
  ['implicit', 'explicit'],
  ['optional', 'required'],
  ['optional', 'mandatory'],
  ['enabled', 'disabled'],
  ['allowed', 'forbidden'],
  ['permitted', 'forbidden'],
  ['local', 'remote'],
  ['online', 'offline'],
  ['lazy', 'eager'],
  ['open', 'closed'],
  ['visible', 'hidden'],
  ['static', 'dynamic'],
];
const OPPOSITE = new Map<string, Set<string>>();
for (const [a, b] of ANTONYMS) {
  for (const [x, y] of [[a, b], [b, a]]) OPPOSITE.set(x, (OPPOSITE.get(x) ?? new Set<string>()).add(y));
}
// Prefixes that negate an adjective: unsafe, invalid, immutable, illegal, irreversible,
// non-blocking, asynchronous, disallowed.
const NEGATIONS = ['non-', 'non', 'un', 'in', 'im', 'il', 'ir', 'dis', 'a'];
// Endings an adjective is made with, stripped to find the stem two adjectives may share.
const ENDINGS = /(?:ably|ibly|able|ible|ally|ness|less|ful|ous|ive|ing|ed|al|ic|ly|e)$/;

/** The adjective an 'is' object ends in (the property it names), or '' for a value of the subject itself. */
function propertyOf(object: string): string {
  const last = object.split(' ').pop() ?? '';
  if (/\d/.test(object)) return '';
  return ADJECTIVE.test(last) || PLAIN_ADJECTIVES.has(last) || OPPOSITE.has(last) ? last : '';
}

/** Whether adjective `b` is `a` with a negating prefix ("mutable", "immutable"). */
function negates(a: string, b: string): boolean {
  return NEGATIONS.some((p) => b === `${p}${a}` && a.length >= 4);
}

/** Whether two different adjectives are the two values of one property. */
function opposites(a: string, b: string): boolean {
  if (OPPOSITE.get(a)?.has(b) || negates(a, b) || negates(b, a)) return true;
  // stateful / stateless, useful / useless.
  const [ful, less] = a.endsWith('ful') ? [a, b] : [b, a];
  return ful.endsWith('ful') && less.endsWith('less') && ful.slice(0, -3) === less.slice(0, -4) && ful.length > 5;
}

/** The stems an adjective may share with another, with and without a negating prefix. */
function stems(word: string): string[] {
  const bare = [word, ...NEGATIONS.filter((p) => p !== 'a' && word.startsWith(p)).map((p) => word.slice(p.length))];
  return bare.map((w) => w.replace(ENDINGS, '')).filter((s) => s.length >= 4);
}

/**
 * How two different objects of one subject and predicate stand: 'exclusive' (two values of one
 * thing: the newer replaces the older), 'independent' (both can hold), or 'unclear' (the words do
 * not tell: a person should look). Objects of any predicate but 'is' exclude each other; of 'is'
 * ("must be", "should be") values of one property do: two values ("30 s", "10 s"), one adjective
 * ("fully documented", "partly documented"), or opposites ("public", "private"; "stateful",
 * "stateless"). Two adjectives that share a stem otherwise ("configured", "configurable"), or an
 * adjective against a bare word the list may not know as one ("closed", "shut"), are unclear.
 * Objects of 'with' exclude each other only as the two sides of one thing ("backoff", "no backoff").
 */
export function objectRelation(predicate: string, a: string, b: string): 'exclusive' | 'independent' | 'unclear' {
  if (a === b) return 'exclusive';
  if (predicate === WITH) return a === `no ${b}` || b === `no ${a}` ? 'exclusive' : 'independent';
  if (predicate !== 'is') return 'exclusive';
  const pa = propertyOf(a);
  const pb = propertyOf(b);
  if (pa === pb || (pa && pb && opposites(pa, pb))) return 'exclusive';
  if (pa && pb) return stems(pa).some((s) => stems(pb).includes(s)) ? 'unclear' : 'independent';
  const value = pa ? b : a;
  return /^[a-z][a-z-]*$/.test(value) ? 'unclear' : 'independent';
}

/** Whether two different objects of one subject and predicate exclude each other (see objectRelation). */
export function exclusiveObjects(predicate: string, a: string, b: string): boolean {
  return objectRelation(predicate, a, b) === 'exclusive';
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
