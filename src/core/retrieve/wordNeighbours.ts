// Words that go together in software documentation, for the question words a project never uses.
// A question asks in everyday words ("signing credential", "serializer", "lowercase"); the
// project's history names the thing in its own ("secret_key", "json", "case-insensitive"). The
// table maps a word (stemmed like the index, see textPrep.ts) to its nearest words in vectors
// trained on permissively licensed software documentation (Python, Rust, PostgreSQL, SQLite and
// a few hundred Python libraries' manuals, and the READMEs of this product's npm dependencies):
// `scripts/word-neighbours/` rebuilds it. It holds no text of theirs, only word lists.

import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

export const WORD_NEIGHBOURS_FILE = path.join('data', 'word-neighbours.txt');

/**
 * `word<TAB>neighbour:similarity,neighbour:similarity...`, one word a line, nearest first. Only
 * where each line starts is read up front (about 10 ms for the shipped table; parsing every
 * line cost 200 ms of the first question); a line is parsed when its word is asked for.
 */
export class NeighbourTable {
  private readonly starts = new Map<string, number>();
  private readonly parsed = new Map<string, ReadonlyArray<readonly [string, number]>>();

  constructor(private readonly text: string) {
    let at = 0;
    while (at < text.length) {
      let end = text.indexOf('\n', at);
      if (end < 0) end = text.length;
      const tab = text.indexOf('\t', at);
      if (tab > at && tab < end) this.starts.set(text.slice(at, tab), tab + 1);
      at = end + 1;
    }
  }

  get size(): number {
    return this.starts.size;
  }

  words(): IterableIterator<string> {
    return this.starts.keys();
  }

  /** The word's neighbours with their similarity, nearest first; empty for a word not in the table. */
  get(word: string): ReadonlyArray<readonly [string, number]> {
    const done = this.parsed.get(word);
    if (done) return done;
    const from = this.starts.get(word);
    if (from === undefined) return [];
    let end = this.text.indexOf('\n', from);
    if (end < 0) end = this.text.length;
    const list: Array<[string, number]> = [];
    for (const item of this.text.slice(from, end).split(',')) {
      const colon = item.lastIndexOf(':');
      const sim = Number(item.slice(colon + 1));
      if (colon > 0 && Number.isFinite(sim) && sim > 0 && sim <= 1) list.push([item.slice(0, colon), sim]);
    }
    this.parsed.set(word, list);
    return list;
  }
}

/** A data file shipped with the product (`data/...`): found from the bundle (dist/) or the sources (src/core/retrieve/). */
export function locateDataFile(file: string): string | null {
  let dir = __dirname;
  for (let up = 0; up < 5; up++) {
    const candidate = path.join(dir, file);
    if (existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  return null;
}

let loaded: NeighbourTable | null = null;

/** The shipped table, read once; empty (the lever off) when the file is missing or unreadable. */
export function wordNeighbours(): NeighbourTable {
  if (loaded) return loaded;
  const file = locateDataFile(WORD_NEIGHBOURS_FILE);
  try {
    loaded = new NeighbourTable(file ? readFileSync(file, 'utf8') : '');
  } catch {
    loaded = new NeighbourTable('');
  }
  return loaded;
}
