// The saves windows made, for the other windows on the same files. A file saved in one window is
// stored by that window as its edit; every other window's file watcher sees the file change on
// disk, and the one holding the folder's lease (folderLeases.ts) cannot tell that save from a
// write by another process (`git checkout`, another editor): it would store it again, as changed
// on disk. So each window notes its saves here, and a window leaves out a change on disk when the
// file is, byte for byte, as another window saved it moments ago, before the change was seen (a
// save after it, even of the same text, does not explain it: an external write then a Ctrl+S).
//
// One file per store (windows on other stores each record their own, as with the leases), beside
// the leases: lines of JSON, each appended in one write (O_APPEND: lines of windows saving at once
// do not mix). What it holds is hashed (the file's path, its content), so that it names no file.
// Bounded: past MAX_BYTES it is rewritten with its newest live entries (written aside, then renamed over
// it; a save noted by another window in between may be lost, and its change is then stored twice,
// as before). Entries expire after TTL_MS; a line that is not an entry is skipped, and a journal
// larger than MAX_READ (not one this code wrote) is not read at all.

import { createHash, randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { captureLeaseDir } from './folderLeases';

/** How long a save explains a change on disk: the other windows' watchers and queues (1.5 s) see it well within. */
const TTL_MS = 120_000;
/** Past this size the journal is rewritten with its live entries. */
const MAX_BYTES = 64 * 1024;
/** Entries kept when it is rewritten, the newest: far more saves than windows make in TTL_MS, and well under MAX_BYTES. */
const MAX_ENTRIES = 256;
/** A journal larger than this is not this code's: ignored, and replaced at the next save. */
const MAX_READ = 1024 * 1024;
/** Files up to this size are known by a hash of their content; larger ones by their size and time. */
const MAX_HASH_BYTES = 2 * 1024 * 1024;

/** A save as noted: the window, the file (hash of its path), its content's hash (or null), size, time on disk, and when it was noted. */
interface Entry {
  w: string;
  f: string;
  h: string | null;
  s: number;
  m: number;
  t: number;
}

function sha(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex').slice(0, 32);
}

/** A file's path as a key: two windows on the same file name it alike (case-insensitive file systems aside). */
function pathKey(fsPath: string): string {
  const resolved = path.resolve(fsPath);
  return sha(process.platform === 'win32' || process.platform === 'darwin' ? resolved.toLowerCase() : resolved);
}

function isEntry(x: unknown): x is Entry {
  const e = x as Entry;
  return typeof e === 'object' && e !== null && typeof e.w === 'string' && typeof e.f === 'string' && (e.h === null || typeof e.h === 'string') && typeof e.s === 'number' && typeof e.m === 'number' && typeof e.t === 'number';
}

/** A file as it is on disk now: its size, time and (small enough) content hash; undefined where it cannot be read. */
async function fileState(fsPath: string): Promise<{ h: string | null; s: number; m: number } | undefined> {
  try {
    const st = await fsp.stat(fsPath);
    if (!st.isFile()) return undefined;
    const h = st.size <= MAX_HASH_BYTES ? sha(await fsp.readFile(fsPath)) : null;
    return { h, s: st.size, m: st.mtimeMs };
  } catch {
    return undefined;
  }
}

/** Whether the file now is the one a save noted: the same content, or (too large to hash) the same size and time. */
function sameFile(entry: Entry, now: { h: string | null; s: number; m: number }): boolean {
  if (entry.h !== null && now.h !== null) return entry.h === now.h;
  return entry.s === now.s && entry.m === now.m;
}

/** A change on disk as a window saw it: the local file, and when. */
export interface SeenChange {
  file: string;
  at: number;
}

export class SaveJournal {
  /** This window, in its entries: its own saves are not another window's. */
  private readonly window = randomUUID();
  /** Notes being written, so that a checkpoint can wait for them. */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    /** The store the events go to: windows on other stores each record their own. */
    private readonly storeUri: () => string,
    private readonly dir = captureLeaseDir(),
    private readonly now: () => number = Date.now,
  ) {}

  /** The journal of the current store. */
  get file(): string {
    return path.join(this.dir, `${sha(this.storeUri())}.saves`);
  }

  /** Notes that this window saved the local file `fsPath` (as it is on disk now). Never throws. */
  noteSave(fsPath: string): Promise<void> {
    const p = this.append(fsPath).catch(() => undefined);
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
    return p;
  }

  /** Waits for the saves being noted. */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  /**
   * For each change, whether it is a save another window noted in the last TTL_MS: the file is now
   * as that save left it, written (its time on disk) no later than the change was seen. Never
   * throws (none is, then).
   */
  async savedByAnotherWindow(changes: readonly SeenChange[]): Promise<boolean[]> {
    const entries = (await this.read()).filter((e) => e.w !== this.window);
    const states = new Map<string, Promise<{ h: string | null; s: number; m: number } | undefined>>();
    return Promise.all(
      changes.map(async ({ file, at }) => {
        const key = pathKey(file);
        const noted = entries.filter((e) => e.f === key && e.m <= at);
        if (noted.length === 0) return false;
        if (!states.has(file)) states.set(file, fileState(file));
        const now = await states.get(file);
        return now !== undefined && noted.some((e) => sameFile(e, now));
      }),
    );
  }

  private async append(fsPath: string): Promise<void> {
    const state = await fileState(fsPath);
    if (!state) return;
    await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const entry: Entry = { w: this.window, f: pathKey(fsPath), ...state, t: this.now() };
    const file = this.file;
    const line = `${JSON.stringify(entry)}\n`;
    await fsp.appendFile(file, line, { mode: 0o600 });
    if ((await fsp.stat(file)).size > MAX_BYTES) await this.compact(file, line);
  }

  /**
   * The journal rewritten with its live entries (and `line`, the save just noted, which a journal
   * too large to read has not): written aside, then renamed over it (one step for the readers).
   */
  private async compact(file: string, line: string): Promise<void> {
    const lines = new Set((await this.read()).map((e) => `${JSON.stringify(e)}\n`));
    lines.add(line);
    const live = [...lines].slice(-MAX_ENTRIES).join('');
    const aside = `${file}.${randomUUID()}.tmp`;
    try {
      await fsp.writeFile(aside, live, { mode: 0o600 });
      await fsp.rename(aside, file);
    } catch {
      await fsp.rm(aside, { force: true }).catch(() => undefined);
    }
  }

  /** The live entries of the journal; none where it is missing, unreadable or too large. */
  private async read(): Promise<Entry[]> {
    let text: string;
    try {
      const file = this.file;
      if ((await fsp.stat(file)).size > MAX_READ) return [];
      text = await fsp.readFile(file, 'utf8');
    } catch {
      return [];
    }
    const since = this.now() - TTL_MS;
    const out: Entry[] = [];
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        const e: unknown = JSON.parse(line);
        // An entry from the future (a clock set back) expires as one from now would.
        if (isEntry(e) && e.t >= since && e.t <= this.now() + TTL_MS) out.push(e);
      } catch {
        // A line cut or mixed (a crash mid-write, another program): skipped.
      }
    }
    return out;
  }
}
