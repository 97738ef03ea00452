import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { MemoryEngine } from '../../src/core/engine';
import { rowsToArrow } from '../../src/core/store/arrowRows';
import { StoreVersionError } from '../../src/core/store/migrations';
import { Schema } from 'apache-arrow';
import { MEMORY_V4_FIELDS, SCHEMA_VERSION, cellsSchema, memoriesSchema, metaSchema, observationsSchemaV1, sessionSummariesSchema } from '../../src/core/store/schema';
import { prepareIndexText } from '../../src/core/retrieve/textPrep';


/** A store as schema v1 wrote it: no dedupe/fingerprint columns, no graph or prompt tables. */
async function writeV1Store(dir: string): Promise<void> {
  const db = await lancedb.connect(dir);
  await db.createTable('meta', rowsToArrow(metaSchema(), [{ key: 'schema_version', value: '1' }]));
  const now = Date.now();
  const obs = {
    id: 7, memory_session_id: 's-old', content_session_id: null, project: 'legacy/app', type: 'edit',
    title: 'Old capybara refactor', subtitle: null, narrative: 'Moved the capybara parser.', facts: null, concepts: null,
    files_read: null, files_modified: '["src/capybara.ts"]', commit_sha: null, branch: 'main', status: 'active',
    created_at: new Date(now).toISOString(), created_at_epoch: now, last_accessed_epoch: null, discovery_tokens: 5,
    compressed_sources: null, search_extra: null,
  };
  await db.createTable('observations', rowsToArrow(observationsSchemaV1(), [obs]));
  await db.createTable('cells', rowsToArrow(cellsSchema(16), [{
    node_id: '0b6f5a4e-8a55-4d0c-9d1e-8f3a1c2b3d4e', layer: 'L0', source_kind: 'observation', source_id: 7, project: 'legacy/app',
    branch: 'main', type: 'edit', title: obs.title, text: obs.narrative, search_text: prepareIndexText({ title: obs.title, text: obs.narrative, files: ['src/capybara.ts'] }),
    files: obs.files_modified, commit_sha: null, session_id: 's-old', created_at_epoch: now, last_accessed_epoch: null, access_count: 0,
    status: 'active', embed_model: '', vector: new Float32Array(16),
  }]));
  await db.createEmptyTable('session_summaries', sessionSummariesSchema());
  await db.createEmptyTable('memories', memoriesSchema());
  db.close();
}

describe('store: schema versions', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-migrate-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('upgrades a v1 store on open and keeps its records', async () => {
    await writeV1Store(dir);
    const log: string[] = [];
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, logger: (m) => log.push(m) });
    try {
      assert.ok(log.some((l) => /v1 -> v2/.test(l)), log.join('\n'));
      assert.equal(await engine.store.getMeta('schema_version'), String(SCHEMA_VERSION));
      const fields = (await engine.store.table('observations').schema()).fields.map((f) => f.name);
      for (const f of ['dedupe_key', 'fingerprint', 'occurrences', 'updated_at_epoch']) assert.ok(fields.includes(f), f);
      const [old] = await engine.getObservations([7], { project: 'legacy/app' });
      assert.equal(old.title, 'Old capybara refactor');
      assert.equal((await engine.search('capybara', { scope: { project: 'legacy/app' } }))[0].cell.source_id, 7);
      // New writes use the new columns and never reuse an old id.
      const [fresh] = await engine.observe([{ type: 'commit', title: 'New capybara commit', dedupe_key: 'commit:1' }], { project: 'legacy/app' });
      assert.ok(fresh.id > 7);
      const again = await engine.observe([{ type: 'commit', title: 'New capybara commit', dedupe_key: 'commit:1' }], { project: 'legacy/app' });
      assert.equal(again[0].id, fresh.id);
      assert.equal((await engine.entities({ project: 'legacy/app' }, ['branch:main'])).entities.length, 0);
    } finally {
      await engine.close();
    }
    // Opening again is a no-op upgrade.
    const reopened = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    assert.equal((await reopened.stats(null)).observations, 2);
    await reopened.close();
  });

  it('drops the LanceDB full-text index older stores kept on the cells (its update stalled optimize at 1M cells); the fts experiment builds it on demand', async () => {
    await writeV1Store(dir);
    const db = await lancedb.connect(dir);
    await (await db.openTable('cells')).createIndex('search_text', { config: lancedb.Index.fts() });
    db.close();
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      const cells = engine.store.table('cells');
      const kinds = async (): Promise<string[]> => (await cells.listIndices()).map((i) => i.indexType);
      assert.ok(!(await kinds()).some((k) => /fts|inverted/i.test(k)), (await kinds()).join(', '));
      const scope = { project: 'legacy/app' };
      assert.equal((await engine.search('capybara', { scope }))[0].cell.source_id, 7);
      // The naive baseline of the retrieval tables: LanceDB's own full-text search.
      const previous = process.env.CODE_MEMORY_RETRIEVAL;
      process.env.CODE_MEMORY_RETRIEVAL = 'lexical=fts';
      try {
        assert.equal((await engine.search('capybara', { scope }))[0].cell.source_id, 7);
      } finally {
        if (previous === undefined) delete process.env.CODE_MEMORY_RETRIEVAL;
        else process.env.CODE_MEMORY_RETRIEVAL = previous;
      }
      assert.ok((await kinds()).some((k) => /fts|inverted/i.test(k)), 'built for the experiment');
    } finally {
      await engine.close();
    }
  });

  it('opens a new store another process is creating (its meta table without a version row yet, a table folder without a version)', async () => {
    // What a second process saw when two opened one new store at once: taken for the first
    // layout, the store was migrated, and the migration failed on the folder without a version.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-creating-'));
    try {
      const db = await lancedb.connect(dir);
      await db.createEmptyTable('meta', metaSchema());
      db.close();
      fs.mkdirSync(path.join(dir, 'session_prompts.lance', '_transactions'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'session_prompts.lance', '_transactions', '0-creating.txn'), 'x');
      const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      await engine.addPrompt({ project: 'p' }, 's1', 'a prompt');
      assert.deepEqual(await engine.recentPrompts({ project: 'p' }, 's1', 5), ['a prompt']);
      await engine.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a store from a newer version with a clear message and leaves it alone', async () => {
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    await engine.observe([{ type: 'note', title: 'kept' }], { project: 'p' });
    await engine.store.setMeta({ schema_version: String(SCHEMA_VERSION + 5) });
    await engine.close();
    await assert.rejects(
      MemoryEngine.open({ storeUri: dir, embedder: 'none' }),
      (e: unknown) => e instanceof StoreVersionError && new RegExp(`schema version ${SCHEMA_VERSION + 5}`).test(e.message) && /Update Code Memory/.test(e.message),
    );
    const db = await lancedb.connect(dir);
    const meta = await (await db.openTable('meta')).query().where("key = 'schema_version'").toArray();
    assert.equal(meta[0].value, String(SCHEMA_VERSION + 5));
    db.close();
  });

  it('upgrades a v3 store: memories get supersession columns and can be superseded', async () => {
    const db = await lancedb.connect(dir);
    await db.createTable('meta', rowsToArrow(metaSchema(), [{ key: 'schema_version', value: '3' }]));
    const v4 = new Set(MEMORY_V4_FIELDS().map((f) => f.name));
    const now = Date.now() - 60_000;
    const old = {
      id: 3, project: 'legacy/app', title: 'Database choice', text: 'We use PostgreSQL 14 for the orders service', memory_type: 'decision',
      created_at_epoch: now, updated_at_epoch: now, status: 'active', scope: 'project', classification: 'decision', classification_reason: 'saved explicitly',
      current_context_eligible: true, branch: null, files: null, session_id: null, topic_key: 'orders-db', topic_trace: null,
      temporal_facts: JSON.stringify([{ project: 'legacy/app', subject: 'orders service', predicate: 'uses', object: 'postgresql 14', learned_at_epoch: now, confidence: 1, status: 'current', valid_from_epoch: now, valid_to_epoch: null }]),
      last_accessed_epoch: null, access_count: 0, source_ids: null,
    };
    await db.createTable('memories', rowsToArrow(new Schema(memoriesSchema().fields.filter((f) => !v4.has(f.name))), [old]));
    db.close();
    const log: string[] = [];
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, logger: (m) => log.push(m) });
    try {
      assert.ok(log.some((l) => /v3 -> v4: added memory columns supersedes, superseded_by, valid_to_epoch, conflicts/.test(l)), log.join('\n'));
      assert.equal(await engine.store.getMeta('schema_version'), String(SCHEMA_VERSION));
      const scope = { project: 'legacy/app' };
      const [before] = await engine.getMemories([3], scope);
      assert.deepEqual([before.supersedes, before.superseded_by, before.valid_to_epoch, before.conflicts], [null, null, null, null]);
      const next = await engine.remember({ memory_type: 'decision', title: 'Database choice', text: 'We moved the orders service to SQLite', topic_key: 'orders-db' }, scope);
      assert.deepEqual(next.supersedes, [3]);
      const [after] = await engine.getMemories([3], scope);
      assert.equal(after.status, 'superseded');
      assert.equal(after.superseded_by, next.id);
    } finally {
      await engine.close();
    }
  });
});
