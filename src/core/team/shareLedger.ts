// The team node ids this personal store shared, kept next to the outbox (one file per item,
// `<state dir>/shared/<node id>.json`): which record of which project it is and the author it
// was shared as. Unshare and forget look a record's shares up here, so that they find them
// after the git author changed (the key is derived from the author) and whatever the key was
// derived from when it was shared. Only ids, the project, `<kind>/<id>` and the author are kept:
// no text of the record.

import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';

export interface LedgerEntry {
  node_id: string;
  project: string;
  /** `<source_kind>/<id>` in this personal store. */
  origin: string;
  /** The author it was shared as (the team row's shared_by). */
  shared_by: string;
}

const NODE_ID = /^[0-9a-f-]{36}$/;

function isEntry(x: unknown): x is LedgerEntry {
  const e = x as Partial<LedgerEntry> | null;
  return !!e && typeof e === 'object' && typeof e.node_id === 'string' && NODE_ID.test(e.node_id) && typeof e.project === 'string' && typeof e.origin === 'string' && typeof e.shared_by === 'string';
}

export class ShareLedger {
  private cached: { mtimeMs: number; entries: LedgerEntry[] } | null = null;

  constructor(readonly dir: string) {}

  private file(nodeId: string): string {
    return path.join(this.dir, `${nodeId}.json`);
  }

  /** Records a share (before it is queued: a crash in between leaves an entry for an item never sent, which costs an unshare that finds nothing). */
  async add(entry: LedgerEntry): Promise<void> {
    if (!NODE_ID.test(entry.node_id)) throw new Error(`'${entry.node_id}' is not a team node id`);
    await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = path.join(this.dir, `.${entry.node_id}.${process.pid}.${randomUUID()}.tmp`);
    await fsp.writeFile(tmp, JSON.stringify(entry), { mode: 0o600 });
    await fsp.rename(tmp, this.file(entry.node_id));
    this.cached = null;
  }

  async remove(nodeIds: Iterable<string>): Promise<void> {
    for (const id of nodeIds) if (NODE_ID.test(id)) await fsp.rm(this.file(id), { force: true });
    this.cached = null;
  }

  /** Every entry; without `fresh`, read again only when the folder changed (for searches). */
  async all(fresh = true): Promise<LedgerEntry[]> {
    const stat = await fsp.stat(this.dir).catch(() => null);
    if (!stat) return [];
    if (!fresh && this.cached && this.cached.mtimeMs === stat.mtimeMs) return this.cached.entries;
    const entries: LedgerEntry[] = [];
    for (const name of await fsp.readdir(this.dir).catch(() => [] as string[])) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      try {
        const e = JSON.parse(await fsp.readFile(path.join(this.dir, name), 'utf8')) as unknown;
        if (isEntry(e) && `${e.node_id}.json` === name) entries.push(e);
      } catch {
        // removed meanwhile, or unreadable: not an entry
      }
    }
    this.cached = { mtimeMs: stat.mtimeMs, entries };
    return entries;
  }

  /** The shares of one record (`<kind>/<id>`) of a project. */
  async of(project: string, origin: string): Promise<LedgerEntry[]> {
    return (await this.all()).filter((e) => e.project === project && e.origin === origin);
  }

  async get(nodeId: string): Promise<LedgerEntry | null> {
    if (!NODE_ID.test(nodeId)) return null;
    try {
      const e = JSON.parse(await fsp.readFile(this.file(nodeId), 'utf8')) as unknown;
      return isEntry(e) && e.node_id === nodeId ? e : null;
    } catch {
      return null;
    }
  }
}
