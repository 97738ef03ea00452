// What is on disk under a store folder, for the tests that promise a forgotten word is in no file.

import * as fs from 'node:fs';
import * as path from 'node:path';

/** Every file under `dir` whose bytes contain `needle` (ASCII, case-insensitive). */
export function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const lower = Buffer.from(needle.toLowerCase());
  const upperFirst = Buffer.from(needle);
  const walk = (d: string): void => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else {
        const bytes = fs.readFileSync(p);
        if (bytes.includes(lower) || bytes.includes(upperFirst) || bytes.toString('latin1').toLowerCase().includes(needle.toLowerCase())) hits.push(path.relative(dir, p));
      }
    }
  };
  walk(dir);
  return hits;
}

/** A word of letters only for n, unlike any English word (the index splits digits from letters and stems words). */
export function letterWord(n: number): string {
  let s = '';
  let v = n;
  do {
    s = String.fromCharCode(97 + (v % 26)) + s;
    v = Math.floor(v / 26);
  } while (v > 0);
  return `qz${s}t`;
}
