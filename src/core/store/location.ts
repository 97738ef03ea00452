// Where the store lives when nobody says otherwise: in the user's home, never inside the
// extension or package folder (which an update would wipe). The same on every OS:
// ~/.code-memory/store, i.e. C:\Users\<name>\.code-memory\store on Windows and
// /Users/<name>/.code-memory/store on macOS, shared by the extension and the CLI.

import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The path functions of one OS (path.win32 or path.posix); tests pass one explicitly. */
export type PathApi = Pick<typeof path, 'join' | 'resolve'>;

/**
 * The store CODE_MEMORY_STORE names, else ~/.code-memory/store. A relative folder there is not
 * used (the CLI refuses it, see relativeFolder): each folder a process starts in would have a
 * store of its own.
 */
export function defaultStoreUri(env: NodeJS.ProcessEnv = process.env, home: string = os.homedir(), paths: PathApi = path): string {
  const fromEnv = env.CODE_MEMORY_STORE?.trim();
  if (fromEnv && !relativeFolder(fromEnv, home)) return expandHome(fromEnv, home);
  return paths.join(home, '.code-memory', 'store');
}

/** Whether a store location as a user writes it is a folder relative to the current one (not `~/…`, a drive, file:// or a URI). */
export function relativeFolder(location: string, home: string = os.homedir()): boolean {
  const local = expandHome(location, home);
  return isLocalUri(local) && !/^file:\/\//i.test(local) && !path.isAbsolute(local) && !path.win32.isAbsolute(local);
}

/**
 * A location as a user writes it in a setting, an argument or the environment: a leading `~`
 * (alone, or before a slash or a backslash) is the home folder, the one the default store is in.
 * An agent's config passes `--store ~/x` or CODE_MEMORY_STORE=~/x with no shell to expand it, and
 * a folder named `~` in the current folder is never what was meant. `~user` and a later `~` stay.
 */
export function expandHome(location: string, home: string = os.homedir()): string {
  return /^~(?=$|[\\/])/.test(location) ? `${home}${location.slice(1)}` : location;
}

/** True for a local folder (a path or file:// URI), false for s3://, gs://, az://, db:// etc. */
export function isLocalUri(uri: string): boolean {
  if (/^file:\/\//i.test(uri)) return true;
  // A Windows drive path (C:\x, C:/x) is a local folder, not a URI with scheme "c".
  if (/^[a-z]:[\\/]/i.test(uri)) return true;
  return !/^[a-z][a-z0-9+.-]*:\/\//i.test(uri);
}

/** The folder of a local store URI: file:///C:/x is C:\x on Windows, file:///x/y is /x/y elsewhere. */
export function localPath(uri: string, platform: NodeJS.Platform = process.platform): string {
  const windows = platform === 'win32';
  if (/^file:\/\//i.test(uri)) return fileURLToPath(uri, { windows });
  return (windows ? path.win32 : path.posix).resolve(uri);
}

/** Refuses a file where a store's folder should be, by name: LanceDB would fail later with its own words ("Not a directory"). */
export async function refuseFile(dir: string): Promise<void> {
  const isFile = await fsp.stat(dir).then((s) => !s.isDirectory(), () => false);
  if (isFile) throw new Error(`the store location ${dir} is a file, not a folder: give a folder (it is created if missing)`);
}

/** Creates a local store's folder, or finds it there; only its owner may read it. */
export async function storeFolder(dir: string): Promise<void> {
  await refuseFile(dir);
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  await fsp.chmod(dir, 0o700).catch(() => undefined);
}
