// Files only their owner may read (a server's token, an export of the memory). A mode given at
// open applies only when the file is created: one that already exists keeps its mode, so both
// helpers narrow it themselves.

import { createWriteStream, fchmodSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

/** A write stream to `file`, created 0600 or narrowed to 0600 before anything is written into it. */
export function privateWriteStream(file: string): ReturnType<typeof createWriteStream> {
  const fd = openSync(file, 'w', 0o600);
  try {
    fchmodSync(fd, 0o600);
  } catch (error) {
    // Windows has no POSIX modes to narrow; there the file is the user's by its folder's ACL.
    if (process.platform !== 'win32') throw error;
  }
  return createWriteStream('', { fd, encoding: 'utf8' });
}

/**
 * Writes `text` to `file` as a new 0600 file renamed over it: whatever was there (a world-readable
 * file, a symlink planted to redirect the write) is replaced, never written through.
 */
export function writePrivateFile(file: string, text: string): void {
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' });
    renameSync(tmp, file);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}
