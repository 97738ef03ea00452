// Retrieval settings. The defaults are what the README's ablation table measured best; the
// CODE_MEMORY_RETRIEVAL environment variable ("key=value,key=value") overrides them so that
// the evaluation can switch single levers off and measure what each one is worth.

export interface RetrievalSettings {
  /** Lexical engine: the in-process BM25 over search_text, or LanceDB's own FTS. */
  lexical: 'bm25' | 'fts';
  k1: number;
  b: number;
  /** Pseudo-relevance feedback: top documents read, terms added, weight of the added terms. */
  prfDocs: number;
  prfTerms: number;
  prfWeight: number;
  /**
   * Document expansion: the best `docExpansionDocs` sections of the project's documents for the
   * query add their `docExpansionTerms` most distinctive terms to it, at up to
   * `docExpansionWeight` each. 0 documents turns it off (the default: it did not pay on either public set).
   */
  docExpansionDocs: number;
  docExpansionTerms: number;
  docExpansionWeight: number;
  /** What the documents lend: their titles (headings, symbol names) or their whole text. */
  docExpansionField: 'title' | 'text';
  /** Lexical weight used to find the documents (0: by their vectors alone). */
  docExpansionLexical: number;
  /**
   * Abbreviations from the store's own vocabulary: a query word also matches the short forms
   * the code uses for it (environment ~ env, package ~ pkg), when the two co-occur in the store
   * at least `abbrevLift` times more often than chance. Weight 0 turns it off.
   */
  abbrevWeight: number;
  abbrevLift: number;
  abbrevMax: number;
  /**
   * Related words for the question's rare words (wordNeighbours.ts): a query word in at most
   * `relatedDf` of the project's records (a fraction) also matches its `relatedMax` nearest
   * neighbours in software documentation that the project uses, those at least `relatedMin`
   * similar, at `relatedWeight` times their similarity. Weight 0 turns it off.
   */
  relatedWeight: number;
  relatedDf: number;
  relatedMin: number;
  relatedMax: number;
  /**
   * Two consecutive words of the question joined as code writes them (host name ~ hostname,
   * terminal width ~ terminalWidth; textPrep.joinedTerms) also match the project's word, at
   * `joinedWeight`. 0 turns it off.
   */
  joinedWeight: number;
  /** BM25 weight of the extra section (a commit's diff text) relative to the message. */
  extraWeight: number;
  /**
   * Fusion. 'z' (calibrated): each list's scores as standard scores over its candidates,
   * weighted and summed, through a logistic; 'score': BM25 scaled to [0, 1] by the best hit,
   * plus vectorWeight times the dot similarity; 'rrf': weighted reciprocal rank of the two lists.
   */
  fusion: 'score' | 'rrf' | 'z';
  lexicalWeight: number;
  vectorWeight: number;
  /**
   * Weight, in calibrated fusion, of how near a candidate's words are as a whole to the
   * question's in word vectors trained on software documentation (wordVectors.ts). 0 turns it off.
   */
  wordVectorWeight: number;
  /**
   * Fusion also takes the nearest neighbours that the words did not find (one vector query
   * more); off (the default: at 100k cells the query doubled recall's time for one question of
   * hit@10 on one public set), they are only looked for when the words found too little.
   */
  vectorList: boolean;
  // Index text (applied when a cell is written).
  splitIdentifiers: boolean;
  stem: boolean;
  stopWords: boolean;
  titleRepeat: number;
  pathRepeat: number;
  /** Weight of the diff text: 1 keeps it as it is, 0 leaves it out. */
  diffText: boolean;
}

export const DEFAULT_RETRIEVAL_SETTINGS: RetrievalSettings = {
  lexical: 'bm25',
  k1: 1.2,
  b: 0.75,
  prfDocs: 0,
  prfTerms: 10,
  prfWeight: 0.3,
  docExpansionDocs: 0,
  docExpansionTerms: 10,
  docExpansionWeight: 0.3,
  docExpansionField: 'text',
  docExpansionLexical: 1,
  abbrevWeight: 0.5,
  abbrevLift: 2,
  abbrevMax: 2,
  relatedWeight: 1,
  relatedDf: 0.002,
  relatedMin: 0.55,
  relatedMax: 5,
  joinedWeight: 0.5,
  extraWeight: 0.5,
  fusion: 'z',
  lexicalWeight: 1,
  vectorWeight: 0.3,
  wordVectorWeight: 0.7,
  vectorList: false,
  splitIdentifiers: true,
  stem: true,
  stopWords: true,
  titleRepeat: 3,
  pathRepeat: 1,
  diffText: true,
};

let cached: { raw: string | undefined; settings: RetrievalSettings } | null = null;

function parse(raw: string | undefined): RetrievalSettings {
  const s: RetrievalSettings = { ...DEFAULT_RETRIEVAL_SETTINGS };
  if (!raw) return s;
  for (const pair of raw.split(',')) {
    const [key, value] = pair.split('=').map((x) => x.trim());
    if (!key) continue;
    if (!(key in s)) throw new Error(`CODE_MEMORY_RETRIEVAL: unknown setting '${key}' (known: ${Object.keys(s).join(', ')})`);
    const current = (s as unknown as Record<string, unknown>)[key];
    const rec = s as unknown as Record<string, unknown>;
    if (typeof current === 'boolean') rec[key] = value === '1' || value === 'true' || value === 'on';
    else if (typeof current === 'number') {
      const n = Number(value);
      if (!Number.isFinite(n)) throw new Error(`CODE_MEMORY_RETRIEVAL: '${key}' needs a number`);
      rec[key] = n;
    } else rec[key] = value;
  }
  return s;
}

/** The settings in force: the defaults with CODE_MEMORY_RETRIEVAL applied. */
export function retrievalSettings(env: NodeJS.ProcessEnv = process.env): RetrievalSettings {
  const raw = env.CODE_MEMORY_RETRIEVAL;
  if (!cached || cached.raw !== raw) cached = { raw, settings: parse(raw) };
  return cached.settings;
}
