// The objects of one LanceDB table as files (a store on disk) or objects (S3, Azure Blob): to
// list, read and delete what LanceDB itself does not, such as data files that no version
// references (abandonedFiles.ts, team/tableObjects.ts).

import { append } from '../lists';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isLocalUri, localPath } from './location';
import { listKeys, objectClient, parseObjectLocation } from './objectStorage';

/** The objects of one table (keys relative to the table's folder), to list, read and delete. */
export interface TableObjects {
  list(): Promise<string[]>;
  /** The object's bytes as text (UTF-8), or null when it is gone. */
  read(key: string): Promise<string | null>;
  remove(key: string): Promise<void>;
}

export function tableObjects(uri: string, storageOptions: Record<string, string> | undefined, table: string): TableObjects | null {
  if (isLocalUri(uri)) {
    const root = path.join(localPath(uri), `${table}.lance`);
    const walk = async (dir: string): Promise<string[]> => {
      const out: string[] = [];
      for (const e of await fsp.readdir(dir, { withFileTypes: true }).catch(() => [])) {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) append(out, await walk(full));
        else out.push(path.relative(root, full).split(path.sep).join('/'));
      }
      return out;
    };
    return {
      list: () => walk(root),
      read: (key) => fsp.readFile(path.join(root, key), 'utf8').catch(() => null),
      remove: (key) => fsp.rm(path.join(root, key), { force: true }),
    };
  }
  const location = parseObjectLocation(uri);
  const client = location ? objectClient(location, storageOptions ?? {}, 10_000) : null;
  if (!location || !client) return null;
  const base = [location.prefix, `${table}.lance`].filter(Boolean).join('/');
  return {
    list: async () => (await listKeys(`the objects of ${table}`, client.send, client.listing, `${base}/`)).map((k) => k.slice(base.length + 1)),
    read: async (key) => {
      const got = await client.send('GET', `${base}/${key}`, {}, Buffer.alloc(0), {});
      if (got.status === 404) return null;
      if (got.status !== 200) throw new Error(`could not read ${key} of ${table}: HTTP ${got.status}`);
      return got.body;
    },
    remove: async (key) => {
      const got = await client.send('DELETE', `${base}/${key}`, {}, Buffer.alloc(0), {});
      if (got.status >= 300 && got.status !== 404) throw new Error(`could not delete ${key} of ${table}: HTTP ${got.status}`);
    },
  };
}
