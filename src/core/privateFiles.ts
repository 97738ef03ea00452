// Files only their owner may read (a server's token, an export of the memory). A mode given at
// open applies only when the file is created, and a path may be a symlink planted to redirect the
// write, so both helpers write a new file and rename it over the path.

import { createWriteStream, renameSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';

/**
 * Writes the lines `produce` gives to a new 0600 file renamed over `file` once all of them are
 * written: whatever was there (a world-readable file, a symlink planted to redirect the write) is
 * replaced, never written through, and a failed write leaves it as it was. Resolves to what
 * `produce` resolves to.
 */
export async function writePrivateLines<T>(file: string, produce: (write: (line: string) => void) => Promise<T>): Promise<T> {
  const tmp = tmpNameFor(file);
  const out = createWriteStream(tmp, { flags: 'wx', mode: 0o600, encoding: 'utf8' });
  try {
    await once(out, 'open');
    let pending: Promise<unknown> = Promise.resolve();
    const result = await produce((line) => {
      if (!out.write(line.endsWith('\n') ? line : `${line}\n`)) pending = once(out, 'drain');
    });
    await pending;
    out.end();
    await once(out, 'finish');
    renameSync(tmp, file);
    return result;
  } catch (error) {
    out.destroy();
    rmSync(tmp, { force: true });
    throw error;
  }
}

function tmpNameFor(file: string): string {
  return `${file}.${randomBytes(6).toString('hex')}.tmp`;
}

/**
 * Writes `text` to `file` as a new 0600 file renamed over it: whatever was there (a world-readable
 * file, a symlink planted to redirect the write) is replaced, never written through.
 */
export function writePrivateFile(file: string, text: string): void {
  const tmp = tmpNameFor(file);
  try {
    writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' });
    renameSync(tmp, file);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}
