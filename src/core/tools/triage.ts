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
// Opening words that usually lean on the previous turn.
const FOLLOW_UP_START = /^(and|also|but|so|then|what about|how about|why|why not|and why|same|what else|which one|where|when)\b/i;
const PRONOUN = /\b(it|its|that|this|those|these|they|them|there|he|she|the same|the former|the latter)\b/i;
const MAX_REWRITE_CHARS = 2000;

function words(s: string): string[] {
  return s.trim().split(/\s+/).filter(Boolean);
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
  const count = words(text).length;
  const followUp = recent.length > 0 && count <= 14 && (FOLLOW_UP_START.test(text) || PRONOUN.test(text));
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
