// Deterministic synthetic observations for benchmarks: topic-clustered texts made of code
// identifiers, paths and prose words, so that embeddings have the clustered structure of a
// real store rather than the uniform noise of random vectors (which flatters nothing and
// punishes ANN indexes unrealistically).

export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    // xorshift32
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x100000000;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ter', 'son', 'ra', 'vel', 'di', 'pro', 'cess', 'han', 'dle', 'par', 'se', 'con', 'fig', 'ren', 'der', 'cache', 'sync', 'auth', 'tok', 'en', 'que', 'ue', 'map', 'tree', 'node', 'git', 'diff'];
const PROSE = ['fix', 'add', 'remove', 'update', 'refactor', 'when', 'the', 'a', 'in', 'for', 'after', 'before', 'error', 'test', 'slow', 'crash', 'retry', 'timeout', 'value', 'user', 'request', 'response', 'file', 'read', 'write', 'store', 'index', 'search', 'session', 'branch', 'commit', 'merge', 'build', 'deploy', 'config', 'option', 'default', 'null', 'empty', 'list', 'missing', 'duplicate', 'invalid', 'handle', 'support'];
const TYPES = ['change', 'bugfix', 'feature', 'refactor', 'decision', 'discovery', 'commit'];

function word(r: () => number, parts: number): string {
  let w = '';
  for (let i = 0; i < parts; i++) w += SYLLABLES[Math.floor(r() * SYLLABLES.length)];
  return w;
}

export interface SyntheticCorpus {
  /** One text per document. */
  texts: string[];
  titles: string[];
  types: string[];
  topics: number[];
  /** Queries: paraphrase-like samples from the topics of random documents. */
  queries: string[];
}

export function syntheticCorpus(count: number, queryCount = 50, seed = 42, topicCount = Math.max(20, Math.round(count / 250))): SyntheticCorpus {
  const r = rng(seed);
  const topics: string[][] = [];
  for (let t = 0; t < topicCount; t++) {
    const vocab: string[] = [];
    for (let k = 0; k < 24; k++) {
      const a = word(r, 2);
      const b = word(r, 2);
      const shape = r();
      vocab.push(shape < 0.3 ? `${a}${b[0].toUpperCase()}${b.slice(1)}` : shape < 0.5 ? `src/${a}/${b}.ts` : shape < 0.6 ? `${a}_${b}` : a);
    }
    topics.push(vocab);
  }
  const sample = (topic: number, length: number): string[] => {
    const out: string[] = [];
    for (let i = 0; i < length; i++) {
      out.push(r() < 0.55 ? topics[topic][Math.floor(r() * r() * 24)] : PROSE[Math.floor(r() * PROSE.length)]);
    }
    return out;
  };
  const texts: string[] = [];
  const titles: string[] = [];
  const types: string[] = [];
  const topicOf: number[] = [];
  for (let i = 0; i < count; i++) {
    const topic = Math.floor(r() * topicCount);
    const words = sample(topic, 15 + Math.floor(r() * 45));
    titles.push(words.slice(0, 6).join(' '));
    texts.push(words.join(' '));
    types.push(TYPES[Math.floor(r() * TYPES.length)]);
    topicOf.push(topic);
  }
  const queries: string[] = [];
  for (let q = 0; q < queryCount; q++) queries.push(sample(topicOf[Math.floor(r() * count)], 6 + Math.floor(r() * 6)).join(' '));
  return { texts, titles, types, topics: topicOf, queries };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** A plain fixed-width table for the terminal. */
export function table(rows: Array<Record<string, unknown>>): string {
  if (rows.length === 0) return '';
  const cols = Object.keys(rows[0]);
  const cell = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]): string => vals.map((v, i) => v.padEnd(widths[i])).join('  ');
  return [line(cols), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n');
}

const ENGLISH = (
  'the a to of and in for on with when after before from by is was are be not it this that we ' +
  'fix add remove update refactor rename move split merge handle support allow prevent avoid ' +
  'error bug crash failure timeout retry request response server client user session token ' +
  'login password cache memory file folder path config setting option default value list ' +
  'test tests build release version branch commit change changes code function method class ' +
  'module package import export type interface field column table index query search result ' +
  'slow fast large small empty missing invalid duplicate wrong correct new old first last ' +
  'read write open close save load start stop run call return send receive parse format ' +
  'database store queue worker thread process event editor window panel view tree command ' +
  'because so that while which should would could now also only still again instead'
).split(' ');

/** Plain English developer prose (commit-message-like), for model throughput numbers. */
export function englishTexts(count: number, words: number, seed = 9): string[] {
  const r = rng(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const w: string[] = [];
    for (let k = 0; k < words; k++) w.push(ENGLISH[Math.floor(r() * ENGLISH.length)]);
    out.push(w.join(' '));
  }
  return out;
}

/** Runs a benchmark's main: exit 0 when it ends, 1 with the error printed when it throws. */
/** Prints a bench's progress: on stdout, or on stderr when stdout carries its JSON report. */
export function sayer(json: boolean): (line: string) => void {
  return (line) => void (json ? process.stderr.write(`${line}\n`) : console.log(line));
}

/** Runs a bench's main and exits with its code (0 when it returns none), or 1 with the error. */
export function runBench(main: () => Promise<void | number>): void {
  main().then(
    (code) => process.exit(code ?? 0),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
