// Triage for retrieve_memory: does this prompt need project memory at all, and if it is a
// follow-up, what self-contained query should be searched? Deterministic and cheap: no model
// call per request.

import { cutText } from '../tokens';

export interface TriageResult {
  decision: 'retrieve' | 'skip';
  reasoning: string;
  rewritten_query: string;
}

const SMALL_TALK = /^(hi|hello|hey|thanks|thank you|thx|ok|okay|cool|great|nice|good (morning|afternoon|evening)|bye|goodbye|yes|no|sure|lol)[\s!.?]*$/i;
// Opening words that carry on from the previous turn ("and why?", "what about the tests?").
const FOLLOW_UP_START = /^(?:and|also|but|so|then|what about|how about|why not|same|what else|which one|or)\b/i;
// Words that stand for something said earlier when they stand alone ("why was it added?", "and that?").
const REFERRING = new Set(['it', 'its', 'they', 'them', 'their', 'theirs', 'he', 'him', 'his', 'she', 'her', 'hers']);
// Words that point back when they stand alone ("why that?") and are determiners when a word of
// content follows ("this project", "that file"): then the question names what it asks about.
const DEMONSTRATIVE = new Set(['this', 'that', 'these', 'those', 'there']);
const REFERRING_PHRASE = /\bthe (?:same|former|latter)\b/i;
// Auxiliaries after which "that" is the subject of a participle ("was that chosen?", "is this used?").
const AUXILIARY = new Set(['is', 'was', 'are', 'were', 'be', 'been', 'has', 'have', 'had', 'does', 'did', 'do', 'will', 'would', 'can', 'could', 'should', 'may', 'might', 'must']);
const PARTICIPLE = /(?:ed|en|wn)$/;
// Words that carry no subject of their own: a prompt made of these and one or two others leans on the turn before.
const FUNCTION_WORDS = new Set([
  ...REFERRING, ...DEMONSTRATIVE, ...AUXILIARY,
  'a', 'an', 'the', 'and', 'or', 'but', 'so', 'then', 'also', 'too', 'not', 'no', 'yes',
  'what', 'which', 'who', 'whom', 'whose', 'why', 'how', 'where', 'when',
  'i', 'me', 'my', 'we', 'us', 'our', 'you', 'your', 'one', 'ones', 'else', 'same', 'former', 'latter',
  'of', 'in', 'on', 'at', 'to', 'for', 'from', 'by', 'with', 'about', 'into', 'over', 'as', 'than',
  'again', 'instead', 'just', 'only', 'still', 'really', 'exactly', 'more', 'less', 'any', 'some', 'all',
  's', 't', 'd', 'll', 're', 've', 'm', 'don', 'doesn', 'didn', 'isn', 'wasn',
]);
// At most this many words of its own, and a follow-up needs what came before to be understood.
const MAX_OWN_WORDS = 3;
const MAX_REWRITE_CHARS = 2000;

function words(s: string): string[] {
  return s.toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter(Boolean);
}

/**
 * Whether a prompt leans on the turns before it: it opens as a continuation ("and ...", "what
 * about ...") or says "it", "they", or a "that" / "this" / "there" standing alone ("why that?",
 * "was that chosen?"), and has few words of content of its own. A question that names its
 * subject ("What retry policy does the HTTP client in this project use?": "this project" is a
 * determiner and a noun) is self-contained, whatever pronoun it holds.
 */
export function isFollowUp(prompt: string): boolean {
  const all = words(prompt);
  const own = all.filter((w) => !FUNCTION_WORDS.has(w)).length;
  if (own === 0) return true; // "why?", "and that one?"
  if (own > MAX_OWN_WORDS) return false;
  if (FOLLOW_UP_START.test(prompt.trim())) return true;
  if (REFERRING_PHRASE.test(prompt)) return true;
  return all.some((w, i) => {
    if (REFERRING.has(w)) return true;
    if (!DEMONSTRATIVE.has(w)) return false;
    const next = all[i + 1];
    // Standing alone, or the subject of a participle after an auxiliary: it points back.
    if (next === undefined || FUNCTION_WORDS.has(next)) return true;
    return i > 0 && AUXILIARY.has(all[i - 1]) && PARTICIPLE.test(next) && i + 2 >= all.length;
  });
}

/** `prior` holds the session's previous prompts, newest first, as the store keeps them (at most 3 are used). */
export function triage(prompt: string, prior: string[]): TriageResult {
  const text = prompt.trim();
  if (SMALL_TALK.test(text)) {
    return { decision: 'skip', reasoning: 'The prompt is a greeting or acknowledgement; it does not depend on project memory.', rewritten_query: text };
  }
  if (!/[\p{L}\p{N}]/u.test(text)) {
    return { decision: 'skip', reasoning: 'The prompt has no words to search for.', rewritten_query: text };
  }
  const recent = prior.slice(0, 3);
  const followUp = recent.length > 0 && isFollowUp(text);
  if (followUp) {
    const context = recent.join(' / ');
    const rewritten = cutText(`${text} (follow-up to: ${context})`, MAX_REWRITE_CHARS);
    return {
      decision: 'retrieve',
      reasoning: `The prompt reads as a follow-up to the session's previous ${recent.length === 1 ? 'prompt' : `${recent.length} prompts`}, so the search query includes them.`,
      rewritten_query: rewritten,
    };
  }
  return {
    decision: 'retrieve',
    reasoning: 'The prompt may depend on this project\'s history (code changes, decisions, sessions), so project memory was searched.',
    rewritten_query: text,
  };
}
