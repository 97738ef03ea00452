// Which fragments of a LanceDB table hold deleted rows, told by their deletion files. A delete or
// an update (a delete and an append) leaves the row's bytes in its fragment, marked deleted,
// until that fragment is rewritten: what forget and unshare must rewrite to leave no copy.

import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isLocalUri, localPath } from './location';
import { listKeys, objectClient, parseObjectLocation } from './objectStorage';

/** A deletion file is named <fragment id>-<read version>-<random>.arrow (or .bin). */
const DELETION_FILE = /(?:^|\/)(\d+)-\d+-\d+\.(?:arrow|bin)$/;

/**
 * The fragments of table `name` in the store at `uri` that have a deletion file: on disk, or
 * listed in the bucket (s3://, az:// with a key or SAS); 'all' where they cannot be listed.
 */
export async function fragmentsWithDeletions(uri: string, storageOptions: Record<string, string> | undefined, name: string): Promise<Set<bigint> | 'all'> {
  const fragments = (keys: string[]): Set<bigint> => new Set(keys.flatMap((k) => DELETION_FILE.exec(k)?.[1] ?? []).map(BigInt));
  if (isLocalUri(uri)) return fragments(await fsp.readdir(path.join(localPath(uri), `${name}.lance`, '_deletions')).catch(() => []));
  const location = parseObjectLocation(uri);
  const client = location ? objectClient(location, storageOptions ?? {}, 10_000) : null;
  if (!location || !client) return 'all';
  const prefix = [location.prefix, `${name}.lance`, '_deletions'].filter(Boolean).join('/');
  return fragments(await listKeys(`the deletions of ${name}`, client.send, client.listing, `${prefix}/`));
}
