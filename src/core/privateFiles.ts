// Files only their owner may read (a server's token, an export of the memory). A mode given at
// open applies only when the file is created, and a path may be a symlink planted to redirect the
// write, so both helpers write a new file and rename it over the path. writePrivateLines writes
// into a pipe or a device at its path instead (a reader of a named pipe, /dev/null), and refuses
// a folder or a socket: a rename would put a file in their place. A temporary file names its
// writer's pid: one a killed writer left is removed by the next write into its folder.

import { closeSync, constants, createWriteStream, fstatSync, lstatSync, open, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { Stats, WriteStream } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { processStartedAt, processState } from './store/processRef';

/** A path no lines can be written to as a file (a folder, a socket): refused, left as it is. */
export class UnwritableTargetError extends Error {
  override name = 'UnwritableTargetError';
  constructor(
    readonly file: string,
    what: string,
  ) {
    super(`cannot write ${file}: it is ${what}`);
  }
}

/** What is at `file` without following a symlink; undefined when nothing is. */
function lstatOrNothing(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ENOTDIR: a file on the way, which the write then reports as it did.
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** A pipe or a character device (a terminal, /dev/null): written into, never replaced. */
const isStream = (st: Stats): boolean => st.isFIFO() || st.isCharacterDevice();

/**
 * Writes the lines `produce` gives to a new 0600 file renamed over `file` once all of them are
 * written: whatever was there (a world-readable file, a symlink planted to redirect the write) is
 * replaced, never written through, and a failed write leaves it as it was. A named pipe or a
 * character device at `file` (a reader's FIFO, /dev/null) is written into as it is, neither
 * created nor replaced; a folder, a socket or another special file is refused with an
 * UnwritableTargetError and left as it is. Resolves to what `produce` resolves to.
 */
export async function writePrivateLines<T>(file: string, produce: (write: (line: string) => void) => Promise<T>): Promise<T> {
  const st = lstatOrNothing(file);
  if (st && !st.isFile() && !st.isSymbolicLink()) {
    if (isStream(st)) return writeLinesInto(file, produce);
    throw new UnwritableTargetError(file, st.isDirectory() ? 'a folder' : st.isSocket() ? 'a socket' : 'no regular file, pipe or terminal');
  }
  removeStaleTemps(file);
  const tmp = tmpNameFor(file);
  const out = createWriteStream(tmp, { flags: 'wx', mode: 0o600, encoding: 'utf8' });
  try {
    await once(out, 'open');
    const value = await writeAll(out, produce);
    renameSync(tmp, file);
    return value;
  } catch (error) {
    out.destroy();
    rmSync(tmp, { force: true });
    throw error;
  }
}

/**
 * Writes the lines into the pipe or device at `file`, opened for writing only: never created,
 * truncated, or followed through a symlink put there since it was looked at. Opening a named
 * pipe waits for its reader, as writing to a pipe does.
 */
async function writeLinesInto<T>(file: string, produce: (write: (line: string) => void) => Promise<T>): Promise<T> {
  // Off the main thread: a FIFO's open blocks until its reader comes.
  const fd = await promisify(open)(file, constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NOCTTY);
  let isStill: boolean;
  try {
    isStill = isStream(fstatSync(fd));
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (!isStill) {
    closeSync(fd);
    // A file put there since it was looked at is not written through.
    throw new UnwritableTargetError(file, 'no longer the pipe or device it was');
  }
  const out = createWriteStream(file, { fd, encoding: 'utf8' });
  try {
    return await writeAll(out, produce);
  } catch (error) {
    out.destroy();
    throw error;
  }
}

/**
 * Writes what `produce` gives to the open `out`, one line each, and ends it once all is written.
 * A write that fails (the reader of a pipe gone) fails the next line and the whole, never waits
 * for a drain or a finish that will not come.
 */
async function writeAll<T>(out: WriteStream, produce: (write: (line: string) => void) => Promise<T>): Promise<T> {
  let failed: Error | undefined;
  const failure = new Promise<never>((_, reject) =>
    out.on('error', (error) => {
      failed ??= error;
      reject(failed);
    }),
  );
  failure.catch(() => undefined);
  // One wait for a drain at a time, however many writes found the buffer full.
  let pending: Promise<void> | undefined;
  const value = await produce((line) => {
    if (failed) throw failed;
    if (!out.write(line.endsWith('\n') ? line : `${line}\n`) && !pending)
      pending = new Promise<void>((resolve) =>
        out.once('drain', () => {
          pending = undefined;
          resolve();
        }),
      );
  });
  if (pending) await Promise.race([pending, failure]);
  out.end();
  await Promise.race([new Promise<void>((resolve) => out.once('finish', () => resolve())), failure]);
  return value;
}

/** `<file>.<pid>.<12 hex>.tmp`: the writer's pid, so that one it left when killed is told from one being written. */
function tmpNameFor(file: string): string {
  return `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
}

/** A temporary file of tmpNameFor: the file it is written for and its writer's pid. */
const TEMP_NAME = /^(.+)\.(\d{1,10})\.[0-9a-f]{12}\.tmp$/;
/** A temporary file of an earlier build (`<file>.<12 hex>.tmp`, no pid). */
const UNNAMED_TEMP_NAME = /^(.+)\.[0-9a-f]{12}\.tmp$/;
/** How old an earlier build's temporary file must be before it is taken for one a dead writer left. */
const UNNAMED_TEMP_STALE_MS = 60_000;

/**
 * Removes the temporary files that writers killed mid-write (kill -9, a crash, a power cut) left
 * in `file`'s folder: never renamed, they held part of what was written (a whole export of the
 * memory, mode 0600) and nothing else removes them. Only files of this user, mode 0600, named as
 * tmpNameFor names them, whose writer no longer runs (its pid free, or now naming a process that
 * started after the file was last written); an earlier build's (no pid in the name) for this
 * same `file` only, once a minute old. A live writer's file is left. Best effort: what cannot be
 * looked at or removed stays.
 */
function removeStaleTemps(file: string): void {
  const dir = path.dirname(path.resolve(file));
  const base = path.basename(file);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const named = TEMP_NAME.exec(name);
    const unnamed = named ? null : UNNAMED_TEMP_NAME.exec(name);
    if (!named && !(unnamed && unnamed[1] === base)) continue;
    const temp = path.join(dir, name);
    try {
      const st = lstatSync(temp);
      if (!st.isFile() || (st.mode & 0o777) !== 0o600 || (uid !== undefined && st.uid !== uid)) continue;
      if (named) {
        const pid = Number(named[2]);
        if (pid === process.pid) continue;
        const state = processState({ pid, host: os.hostname() });
        const started = state === 'running' ? processStartedAt(pid) : undefined;
        // A pid handed to a later process: that process is not the writer (2 s: the boot time is to the second).
        if (state !== 'ended' && !(started !== undefined && started > st.mtimeMs + 2000)) continue;
      } else if (Date.now() - st.mtimeMs <= UNNAMED_TEMP_STALE_MS) continue;
      rmSync(temp, { force: true });
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
}

/**
 * Writes `text` to `file` as a new 0600 file renamed over it: whatever was there (a world-readable
 * file, a symlink planted to redirect the write) is replaced, never written through.
 */
export function writePrivateFile(file: string, text: string): void {
  removeStaleTemps(file);
  const tmp = tmpNameFor(file);
  try {
    writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' });
    renameSync(tmp, file);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}
