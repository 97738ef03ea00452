// Where the store lives when nobody says otherwise: in the user's home, never inside the
// extension or package folder (which an update would wipe).

import * as os from 'node:os';
import * as path from 'node:path';

export function defaultStoreUri(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.CODE_MEMORY_STORE?.trim();
  if (fromEnv) return fromEnv;
  return path.join(os.homedir(), '.code-memory', 'store');
}

/** True for a local folder (a path or file:// URI), false for s3://, gs://, az://, db:// etc. */
export function isLocalUri(uri: string): boolean {
  if (uri.startsWith('file://')) return true;
  return !/^[a-z][a-z0-9+.-]*:\/\//i.test(uri);
}

export function localPath(uri: string): string {
  return uri.startsWith('file://') ? new URL(uri).pathname : path.resolve(uri);
}
