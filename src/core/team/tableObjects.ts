// What an unshare checks after its purge: which objects of the team table still hold the rows it
// removed, found by their node ids' bytes (a node id is a UUID, written as it is in every data
// file that holds the row).
//
// Two writers purging at once (each unshare rewrites the fragments holding deleted rows, then
// compacts and prunes) left a removed item in the bucket: a teammate's rewrite or compaction that
// read the table before our delete writes the item's row into a new data file, then loses its
// commit to our delete; that file is referenced by no version, and LanceDB's cleanup keeps such
// files for seven days (they might belong to a write still in flight). Or its commit is rebased
// over ours and a kept version references a fragment holding the row. So the purge is checked: a
// data object that holds a removed row and that no manifest left references is such an abandoned
// write, and is deleted here (a write holding a row deleted before it committed can only fail);
// one that a manifest references means the purge must run again.
//
// A node id's bytes are not only the row's: a row still stored may quote it in its text (a
// teammate's memory citing `team/<node id>`, as retrieve_memory names a team item), and another
// project's item may have the same id. Such an occurrence is that row's value, written whole
// around the id: it holds nothing removed. Taking it for the removed row kept an unshare purging
// for ever, and would delete a teammate's write still in flight. So only an occurrence that is
// not inside a value a stored row has counts.
//
// Data objects are read whole: a team table holds shared memories and summaries (kilobytes each).

import { tableObjects } from '../store/tableObjects';

export interface Leftovers {
  /** Data objects a version left references that hold a removed row: the purge must run again. */
  referenced: string[];
  /** Data objects no version references that held a removed row: deleted. */
  removed: string[];
}

/**
 * The data objects of `table` that hold any of `nodeIds` other than inside a value of a row
 * still stored (`storedValues`: the text values of the stored rows that contain one of the ids,
 * read once some object holds one): those no manifest references are deleted (abandoned
 * writes), those referenced are returned. Null where the objects cannot be listed (gs://, Azure
 * through another sign-in).
 */
export async function purgeLeftovers(uri: string, storageOptions: Record<string, string> | undefined, table: string, nodeIds: string[], storedValues: () => Promise<string[]>): Promise<Leftovers | null> {
  const objects = tableObjects(uri, storageOptions, table);
  if (!objects || nodeIds.length === 0) return objects ? { referenced: [], removed: [] } : null;
  const candidates: Array<{ key: string; bytes: string }> = [];
  for (const key of (await objects.list()).filter((k) => k.startsWith('data/'))) {
    const bytes = await objects.read(key);
    if (bytes !== null && nodeIds.some((id) => bytes.includes(id))) candidates.push({ key, bytes });
  }
  if (candidates.length === 0) return { referenced: [], removed: [] };
  // Read the rows after the data: a row committed in between is stored, and one deleted in
  // between no longer explains its bytes (a referenced object holding it is purged again).
  const values = await storedValues();
  const holders = candidates.filter((c) => nodeIds.some((id) => holdsBeyond(c.bytes, id, values))).map((c) => c.key);
  if (holders.length === 0) return { referenced: [], removed: [] };
  // Read the manifests after the data: a version committed in between is seen.
  const manifests: string[] = [];
  for (const key of (await objects.list()).filter((k) => k.startsWith('_versions/') && k.endsWith('.manifest'))) {
    const text = await objects.read(key);
    if (text !== null) manifests.push(text);
  }
  const leftovers: Leftovers = { referenced: [], removed: [] };
  for (const key of holders) {
    const name = key.slice('data/'.length);
    if (manifests.some((m) => m.includes(name))) leftovers.referenced.push(key);
    else {
      await objects.remove(key);
      leftovers.removed.push(key);
    }
  }
  return leftovers;
}

/** Whether `bytes` hold `id` somewhere other than inside one of `values` (each a value containing the id, written whole). */
export function holdsBeyond(bytes: string, id: string, values: string[]): boolean {
  const around = values.flatMap((value) => offsets(value, id).map((at) => ({ value, at })));
  return offsets(bytes, id).some((p) => !around.some(({ value, at }) => p >= at && bytes.startsWith(value, p - at)));
}

function offsets(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) out.push(i);
  return out;
}
