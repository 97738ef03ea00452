import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { projection } from '../../src/core/store/projection';
import { currentSchemas } from '../../src/core/store/schema';
import { teamItemsSchema } from '../../src/core/team/teamTable';

process.env.LANCEDB_LOG ??= 'error';

// The rows of an Arrow table as JSON, list cells (the vectors) as plain arrays.
function plain(t: { toArray(): unknown[] }): string {
  return JSON.stringify(t.toArray(), (_k, v: unknown) => (v && typeof v === 'object' && 'toArray' in v && typeof v.toArray === 'function' ? Array.from(v.toArray() as ArrayLike<number>) : v));
}

describe('store: read projections', () => {
  let dir: string;
  let table: lancedb.Table;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-projection-'));
    const db = await lancedb.connect(dir);
    // Column names that are SQL words elsewhere (type, text, key, value, status): a projection
    // names them bare, and they are read as the columns they name.
    table = await db.createTable('t', [
      { id: 1, type: 'decision', text: 'one', key: 'k1', value: 'u', status: 'active', vector: [0.5, 0.25] },
      { id: 2, type: 'note', text: "it's two", key: 'k2', value: 'v', status: 'suppressed', vector: [1, 0] },
    ]);
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('asks for plain columns as a projection of those columns, anything else as a list', () => {
    assert.deepEqual(projection(['id', 'type']), { id: 'id', type: 'type' });
    assert.deepEqual(projection(['node_id', '_distance']), ['node_id', '_distance']);
    assert.deepEqual(projection(['Title']), ['Title']);
    assert.deepEqual(projection([]), []);
  });

  it('reads the same rows, values, names and types as the list form', async () => {
    const columns = ['status', 'vector', 'text', 'key', 'value', 'type', 'id'];
    const listed = await table.query().where('id >= 1').select(columns).toArrow();
    const projected = await table.query().where('id >= 1').select(projection(columns)).toArrow();
    assert.equal(String(projected.schema), String(listed.schema));
    assert.equal(plain(projected), plain(listed));
    assert.match(plain(listed), /"vector":\[1,0\],"text":"it's two"/);
    assert.deepEqual(projected.schema.fields.map((f) => f.name), columns);
    const [row] = await table.query().where("text = 'it''s two'").select(projection(['id', 'value'])).toArray();
    assert.deepEqual({ ...row }, { id: 2, value: 'v' });
  });

  it("reads every column of the store's and the team's tables by its bare name", async () => {
    const db = await lancedb.connect(path.join(dir, 'schemas'));
    const schemas = { ...currentSchemas(8), team_items: teamItemsSchema(8) };
    for (const [name, schema] of Object.entries(schemas)) {
      const columns = schema.fields.map((f) => f.name);
      assert.ok(!Array.isArray(projection(columns)), `${name}: every column is a plain name`);
      const t = await db.createEmptyTable(name, schema);
      const read = await t.query().select(projection(columns)).outputSchema();
      assert.deepEqual(read.fields.map((f) => `${f.name}:${f.type}`), schema.fields.map((f) => `${f.name}:${f.type}`), name);
    }
  });
});
