// Temporal facts from decision and convention statements: "use pnpm for package management"
// becomes (package management, uses, pnpm). A later fact with the same subject and predicate
// but another object contradicts it, and the older one is closed, never deleted.

export interface ExtractedFact {
  subject: string;
  predicate: string;
  object: string;
}

function clean(s: string): string {
  return s
    .toLowerCase()
    .replace(/[`"'()[\]]/g, '')
    .replace(/[.;:!?,]+$/g, '')
    .replace(/^(?:the|a|an|our|all)\s+/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

// Qualifiers that end the subject or object: "use npm for packages from now on, because ...".
const TAIL = /\s+(?:from now on|going forward|from here on|for now|in this (?:repo|repository|project|codebase)|instead\b|because|since|when|so that|unless|until|rather|over|but|and then|which|as of)\b.*$/i;

function words(s: string, max: number): string {
  return clean(s.replace(TAIL, '')).split(' ').slice(0, max).join(' ');
}

const PATTERNS: { re: RegExp; predicate: string; subject: number | null; object: number }[] = [
  // use X for Y / use X as Y / use X to Y
  { re: /\b(?:use|uses|using|standardi[sz]e on)\s+([\w@./+-]+(?:\s+[\w@./+-]+)?)\s+(?:for|as|to)\s+([^.;\n]+)/i, predicate: 'uses', subject: 2, object: 1 },
  // switch to X for Y, go with X for Y
  { re: /\b(?:switch(?:ed)? to|moved? to|migrat\w* to|adopt(?:ed)?|chose|choose|going with|go with|settled on|opted for)\s+([\w@./+-]+)(?:\s+(?:for|as)\s+([^.;\n]+))?/i, predicate: 'uses', subject: 2, object: 1 },
  // prefer X over Y
  { re: /\bprefer(?:s|red)?\s+([\w@./+-]+(?:\s+[\w@./+-]+)?)\s+(?:over|to|instead of)\s+([^.;\n]+)/i, predicate: 'prefers', subject: null, object: 1 },
  // Y should be / must be / is X
  { re: /\b([\w@./+-]+(?:\s+[\w@./+-]+){0,3})\s+(?:should|must|will)\s+(?:be|use)\s+([^.;\n]+)/i, predicate: 'is', subject: 1, object: 2 },
];

/** The facts a statement makes; `topic` is the subject when the sentence names none. */
export function extractFacts(text: string, topic: string | null): ExtractedFact[] {
  const out: ExtractedFact[] = [];
  const seen = new Set<string>();
  for (const sentence of text.split(/(?<=[.!?])\s+|\n+/)) {
    for (const p of PATTERNS) {
      const m = p.re.exec(sentence);
      if (!m) continue;
      const subjectRaw = p.subject !== null ? m[p.subject] : undefined;
      const subject = subjectRaw ? words(subjectRaw, 6) : topic ? clean(topic) : '';
      const object = words(m[p.object] ?? '', 6);
      if (!subject || !object) continue;
      const key = `${subject}\u0000${p.predicate}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ subject, predicate: p.predicate, object });
      break;
    }
  }
  return out;
}
