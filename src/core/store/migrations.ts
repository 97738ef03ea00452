// Forward migrations between schema versions. Each step is idempotent (a crash halfway, or two
// processes upgrading at once, leaves a store the next open can finish), and the version in the
// meta table is written only after the step succeeded. A table a new version adds is created by
// the store's open where it is missing; only the records tables (RECORD_TABLES in schema.ts), which
// every store has, are never created in a store that has a schema version (the open refuses it).

import type { Connection, Table } from '@lancedb/lancedb';
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
    // Supersession links and conflicts: every existing memory starts with none.
    const table = await openExisting(db, TABLES.memories);
    if (!table) return;
    const have = new Set((await table.schema()).fields.map((f) => f.name));
    const missing = MEMORY_V4_FIELDS().filter((f) => !have.has(f.name));
    if (missing.length > 0) {
      await table.addColumns(missing);
      log(`schema v3 -> v4: added memory columns ${missing.map((f) => f.name).join(', ')}`);
    }
    table.close();
  },
};

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
