// Paragraphs of plain text as lines of index terms, the way the product prepares a question
// (src/core/retrieve/textPrep.ts: identifiers split into their words, stop words left out,
// Porter stems), so that the table's words are the index's own terms.
//   npx tsx scripts/word-neighbours/tokenize.ts IN.txt OUT.txt

import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { splitIdentifier, tokenize } from '../../src/core/retrieve/textPrep';

const stems = new Map<string, string[]>();

/** Only the words of each identifier (not the identifier whole: the table relates words). */
function terms(text: string): string[] {
  const out: string[] = [];
  for (const run of text.match(/[A-Za-z][A-Za-z0-9_]*/g) ?? []) {
    for (const part of splitIdentifier(run)) {
      let t = stems.get(part);
      if (!t) {
        t = /^[a-z]+$/.test(part) ? tokenize(part) : [];
        stems.set(part, t);
      }
      out.push(...t);
    }
  }
  return out;
}

async function main(): Promise<void> {
  const [input, output] = process.argv.slice(2);
  const out = createWriteStream(output);
  let paragraph: string[] = [];
  const flush = (): void => {
    const t = terms(paragraph.join(' '));
    if (t.length > 3) out.write(`${t.join(' ')}\n`);
    paragraph = [];
  };
  for await (const line of createInterface({ input: createReadStream(input) })) {
    if (line.trim()) paragraph.push(line);
    else flush();
  }
  flush();
  await new Promise<void>((resolve) => out.end(resolve));
}

void main();
