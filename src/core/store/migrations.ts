// Forward migrations between schema versions. Each step is idempotent (a crash halfway, or two
// processes upgrading at once, leaves a store the next open can finish), and the version in the
// meta table is written only after the step succeeded. A table a new version adds is created by
// the store's open where it is missing; only the records tables (RECORD_TABLES in schema.ts), which
// every store has, are never created in a store that has a schema version (the open refuses it).

import { addToList } from '../lists';
import type { Connection, Table } from '@lancedb/lancedb';
import type { FixedSizeList } from 'apache-arrow';
import { closeConflictsOf, givenTopicKey, markSuperseded } from '../compress/supersede';
import { projectWideBranch } from '../model/branches';
import type { Memory } from '../model/records';
import { plainRow, rowsToArrow } from './arrowRows';
import { memoryCell } from './cells';
import { sqlIntList, sqlStringList } from './filters';
import { memoryToRow, parseJson, rowToMemory } from './mapping';
import { projection } from './projection';
import { retryConflicts } from './retry';
import { MEMORY_V4_FIELDS, OBSERVATION_V2_FIELDS, SCHEMA_VERSION, TABLES } from './schema';

export class StoreVersionError extends Error {
  constructor(
    readonly storeVersion: number,
    readonly supportedVersion: number,
    uri: string,
  ) {
    super(
      `The memory store at ${uri} uses schema version ${storeVersion}, but this Code Memory understands ` +
        `versions up to ${supportedVersion}. Update Code Memory (extension or CLI) to open it, or point ` +
        `the store setting (CODE_MEMORY_STORE) at another folder. The store was not modified.`,
    );
    this.name = 'StoreVersionError';
  }
}

type Step = (db: Connection, log: (m: string) => void) => Promise<void>;

/**
 * A table to migrate, or null when there is none: not listed, or listed without a version yet
 * (another process creating a new store shows a table's folder first, and its meta table before
 * the schema version is written; a new table is of the current layout, with nothing to migrate).
 */
async function openExisting(db: Connection, name: string): Promise<Table | null> {
  if (!(await db.tableNames()).includes(name)) return null;
  return db.openTable(name).catch(() => null);
}

/** steps[n] upgrades a store from version n to n + 1. */
const steps: Record<number, Step> = {
  1: async (db, log) => {
    const table = await openExisting(db, TABLES.observations);
    if (!table) return;
    const have = new Set((await table.schema()).fields.map((f) => f.name));
    const missing = OBSERVATION_V2_FIELDS().filter((f) => !have.has(f.name));
    if (missing.length > 0) {
      await table.addColumns(missing);
      log(`schema v1 -> v2: added observation columns ${missing.map((f) => f.name).join(', ')}`);
    }
    // Tables new in v2 (entities, relationships, ...) are created by the store's open.
  },
  2: async (db, log) => {
    // v2 prompts have no project, so no caller can be shown them safely: they are dropped (they
    // only feed follow-up rewriting and expire after 30 days) and the open re-creates the table.
    const table = await openExisting(db, TABLES.sessionPrompts);
    if (!table) return;
    const hasProject = (await table.schema()).fields.some((f) => f.name === 'project');
    table.close();
    if (!hasProject) {
      await db.dropTable(TABLES.sessionPrompts);
      log('schema v2 -> v3: session prompts are kept per project; earlier prompts were dropped');
    }
  },
  3: async (db, log) => {
    // Supersession links and conflicts: every existing memory starts with none. Memories of one
    // topic_key are then retired as remember retires them by the open that follows (the store's
    // meta does not say TOPICS_RETIRED_KEY yet: see retireSameTopics).
    const table = await openExisting(db, TABLES.memories);
    if (!table) return;
    try {
      const have = new Set((await table.schema()).fields.map((f) => f.name));
      const missing = MEMORY_V4_FIELDS().filter((f) => !have.has(f.name));
      if (missing.length > 0) {
        await table.addColumns(missing);
        log(`schema v3 -> v4: added memory columns ${missing.map((f) => f.name).join(', ')}`);
      }
    } finally {
      table.close();
    }
  },
};

/**
 * Meta key: the store's memories were replayed by retireSameTopics (the value is the rule's
 * version). A store without it (new, from before v4, or taken to v4 by a build whose upgrade did
 * not replay: several current memories of one topic_key) is replayed by its next open, which
 * then writes it; an open of a store that has it reads nothing more.
 */
export const TOPICS_RETIRED_KEY = 'topics_retired';
export const TOPICS_RETIRED_VERSION = '1';

/** Where retireSameTopics reads and writes. */
export interface TopicTables {
  memories: Table;
  /** The search cells, when the store has them. */
  cells: Table | null;
  /** Runs a write of a table (the store's RewriteGate; at an open, nothing else writes). */
  mutate?: <T>(table: string, work: () => Promise<T>) => Promise<T>;
}

/** The columns that tell which memories share a topic_key in one project and scope. */
const TOPIC_COLUMNS = ['id', 'project', 'branch', 'topic_key'];

/**
 * Builds before v4 never retired a memory, nor did the upgrade of the first v4 builds, nor does
 * an import of such a store's export: a project can hold several current memories of one
 * topic_key in one scope, which the tools then all return as current. The rule remember applies
 * (compress/supersede.ts) is applied to them, as if they had been remembered in the order they
 * were said: a memory given a topic_key retires the current memories of that key said before it,
 * of its project and scope (project-wide, or one branch), with markSuperseded's fields and links.
 * Suppressed memories are left as a person left them. Only `projects`' memories where given.
 *
 * Which memories share a key is read from a few narrow columns; only those memories (and the
 * other sides of their open conflicts) are read whole. The search cells are written first and
 * the memories last, in one commit: until that commit a second run makes the same plan again,
 * after it there is nothing left to retire. Returns how many memories it retired.
 */
export async function retireSameTopics(tables: TopicTables, log: (m: string) => void, projects?: readonly string[]): Promise<number> {
  const { memories } = tables;
  const mutate = tables.mutate ?? (<T>(_table: string, work: () => Promise<T>): Promise<T> => work());
  const where = [`status = 'active'`, 'topic_key IS NOT NULL', ...(projects ? [projects.length > 0 ? `project IN ${sqlStringList(projects)}` : 'false'] : [])].join(' AND ');
  const topics = new Map<string, number[]>();
  for (const raw of await memories.query().where(where).select(projection(TOPIC_COLUMNS)).toArray()) {
    const r = plainRow(raw as Record<string, unknown>);
    const key = JSON.stringify([r.project, projectWideBranch(r.branch as string | null) ? null : r.branch, r.topic_key]);
    addToList(topics, key, Number(r.id));
  }
  const shared = [...topics.values()].filter((ids) => ids.length > 1).flat();
  if (shared.length === 0) return 0;
  const rows = new Map<number, Record<string, unknown>>();
  const all = new Map<number, Memory>();
  const read = async (ids: number[]): Promise<void> => {
    for (let i = 0; i < ids.length; i += 500) {
      for (const raw of await memories.query().where(`id IN ${sqlIntList(ids.slice(i, i + 500))}`).toArray()) {
        const r = plainRow(raw as Record<string, unknown>);
        rows.set(Number(r.id), r);
        all.set(Number(r.id), rowToMemory(r));
      }
    }
  };
  await read(shared);
  // The other sides of their open conflicts, which a retirement closes too.
  const sides = [...all.values()].flatMap((m) => (m.conflicts ?? []).filter((c) => c.resolution === 'open').map((c) => c.id));
  await read([...new Set(sides)].filter((id) => !all.has(id)));
  const changed = new Map<number, Memory>();
  let retired = 0;
  for (const ids of topics.values()) {
    const said = ids.map((id) => all.get(id)).filter((m): m is Memory => m !== undefined && m.status === 'active');
    if (said.length < 2) continue;
    said.sort((a, b) => a.created_at_epoch - b.created_at_epoch || a.id - b.id);
    let current: Memory[] = [];
    for (const m of said) {
      if (givenTopicKey(m)) {
        for (const older of current) {
          markSuperseded(older, m, m.created_at_epoch);
          retired++;
          changed.set(older.id, older).set(m.id, m);
          const lookup = (id: number): Memory | undefined => (all.get(id)?.project === older.project ? all.get(id) : undefined);
          for (const o of closeConflictsOf(older, lookup)) changed.set(o.id, o);
        }
        current = [];
      }
      current.push(m);
    }
  }
  if (changed.size === 0) return 0;

  const { cells } = tables;
  if (cells) {
    const schema = await cells.schema();
    const dimension = (schema.fields.find((f) => f.name === 'vector')?.type as FixedSizeList).listSize;
    const ids = [...changed.keys()];
    const stale: Record<string, unknown>[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      const found = await cells.query().where(`source_kind = 'memory' AND source_id IN ${sqlIntList(ids.slice(i, i + 500))}`).toArray();
      for (const raw of found) {
        const cell = plainRow(raw as Record<string, unknown>);
        const m = changed.get(Number(cell.source_id));
        if (!m || m.project !== cell.project) continue;
        const now = memoryCell(m, dimension);
        const fields = ['title', 'text', 'search_text', 'status', 'type'] as const;
        if (fields.every((f) => cell[f] === now[f])) continue;
        // As MemoryRepository.rewrite updates a cell: its text and status anew, to be embedded again.
        stale.push({ ...cell, ...Object.fromEntries(fields.map((f) => [f, now[f]])), embed_model: '', vector: new Float32Array(dimension) });
      }
    }
    if (stale.length > 0) await mutate(TABLES.cells, () => retryConflicts(() => cells.mergeInsert('node_id').whenMatchedUpdateAll().execute(rowsToArrow(schema, stale))));
  }
  const written = [...changed.values()].map((m) => {
    const prev = rows.get(m.id) as Record<string, unknown>;
    return memoryToRow(m, {
      source_ids: prev.source_ids ? parseJson<number[]>(prev.source_ids, []) : undefined,
      access_count: Number(prev.access_count ?? 0),
      last_accessed_epoch: prev.last_accessed_epoch === null || prev.last_accessed_epoch === undefined ? null : Number(prev.last_accessed_epoch),
    });
  });
  const schema = await memories.schema();
  // Rows that are stored only: a memory forgotten meanwhile is not written back.
  await mutate(TABLES.memories, () => retryConflicts(() => memories.mergeInsert('id').whenMatchedUpdateAll().execute(rowsToArrow(schema, written))));
  log(`${retired} older memories of a topic_key retired by the newer one, as remember retires them`);
  return retired;
}

export async function migrate(db: Connection, from: number, log: (m: string) => void): Promise<number> {
  let version = from;
  while (version < SCHEMA_VERSION) {
    const step = steps[version];
    if (!step) throw new Error(`No migration from schema version ${version}`);
    await step(db, log);
    version++;
  }
  return version;
}
