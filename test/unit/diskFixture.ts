// What is on disk under a store folder, for the tests that promise a forgotten word is in no file.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';

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

/**
 * Garbles the middle third of every file of `table`'s scalar indexes (bitmap, btree: the index
 * folders without a vector index's auxiliary.idx), as a bad disk block would. Returns the files.
 */
export function garbleScalarIndexes(store: string, table: string): string[] {
  const indices = path.join(store, `${table}.lance`, '_indices');
  const garbled: string[] = [];
  for (const folder of fs.existsSync(indices) ? fs.readdirSync(indices) : []) {
    const names = fs.readdirSync(path.join(indices, folder));
    if (names.includes('auxiliary.idx')) continue;
    for (const name of names) {
      const file = path.join(indices, folder, name);
      const buf = fs.readFileSync(file);
      buf.fill(0x5a, Math.floor(buf.length / 3), Math.floor((2 * buf.length) / 3));
      fs.writeFileSync(file, buf);
      garbled.push(file);
    }
  }
  return garbled;
}

/**
 * A store of 400 notes in project 'annp' (no vectors) whose cells' scalar indexes hold them all,
 * then garbled (garbleScalarIndexes): the project's bitmap makes LanceDB 0.31 panic.
 */
export async function storeWithGarbledIndexes(store: string): Promise<void> {
  const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
  try {
    const words = ['parser', 'retry', 'theme', 'locale', 'cache', 'upload', 'token', 'schema'];
    await engine.observe(Array.from({ length: 400 }, (_, i) => ({ type: 'note', title: `${words[i % 8]} note ${i}`, narrative: `about the ${words[i % 8]} and ${words[(i * 3) % 8]}` })), { project: 'annp' });
    await engine.flush();
    await engine.optimize();
  } finally {
    await engine.close();
  }
  if (garbleScalarIndexes(store, 'cells').length === 0) throw new Error('no scalar index was built on the cells');
}

/** Fills the disk under `dir` but for about `room` bytes; returns the filler file, to remove to free the space. */
export function fillDisk(dir: string, room: number): string {
  const file = path.join(dir, 'filler.bin');
  const fd = fs.openSync(file, 'w');
  try {
    for (const size of [64 * 1024, 512]) {
      const chunk = Buffer.alloc(size, 1);
      try {
        for (;;) fs.writeSync(fd, chunk);
      } catch {
        // ENOSPC: the disk is full
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  fs.truncateSync(file, Math.max(0, fs.statSync(file).size - room));
  return file;
}

/** The files under `dir` holding each of `words` that any holds (none: an empty object). */
export function leaks(dir: string, words: string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const w of words) {
    const f = filesContaining(dir, w);
    if (f.length) out[w] = f;
  }
  return out;
}
