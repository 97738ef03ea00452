// A search's files filter is one clause however many paths it names (one regular expression of
// them all, not a LIKE per path read over every row; a path holding a double quote keeps a LIKE
// of its own), and finds exactly what a LIKE per path found: each path matched literally as a
// whole quoted JSON string, whatever characters it holds (%, _, quotes, the regular expressions'
// own characters, letters beyond ASCII).
import { strict as assert } from 'node:assert';
import { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { storedPath } from '../../src/core/capture/paths';
import { cellFilterWhere, projectWhere, sqlContains } from '../../src/core/store/filters';
import { removeDir, tempDir } from './mcpFixture';

const SCOPE: Scope = { project: 'github.com/acme/files' };

/** Paths the records hold: every character a LIKE or a regular expression reads otherwise. */
const STORED = [
  'src/a.ts',
  'src/aa.ts',
  'src/aXts',
  'src/100%_done.ts',
  'src/100x_done.ts',
  'src/a_b.ts',
  'src/aXb.ts',
  "it's/q\"uote.ts",
  'src/(x)[y]{z}.ts',
  'src/a.b+c*?^$|#&~-.ts',
  'src/a\\d+.ts',
  'docs/naïve café.md',
  'src/数据库.ts',
  'src/%',
  'src/_',
  'src/a|src/b.ts',
  ...Array.from({ length: 40 }, (_, i) => `pkg/module${i}/index.ts`),
];

/** A filter of 100 paths: some stored, some near misses that a wildcard or a pattern would take. */
const ASKED = [
  'src/a.ts',
  'src/100%_done.ts',
  'src/a_b.ts',
  "it's/q\"uote.ts",
  'src/(x)[y]{z}.ts',
  'src/a.b+c*?^$|#&~-.ts',
  'src\\a\\d+.ts',
  'docs/naïve café.md',
  'src/数据库.ts',
  'src/a|src/b.ts',
  '%',
  '_',
  'src/a',
  'src/a.t_',
  'src/100%',
  'src/.*',
  "it's",
  '"',
  'src/a.b+c*',
  'src/(x)',
  ...Array.from({ length: 20 }, (_, i) => `pkg/module${i * 2}/index.ts`),
  ...Array.from({ length: 60 }, (_, i) => `pkg/other${i}/index.ts`),
];

/** The clause each files filter was before: a LIKE per path, OR-ed. */
function likePerPath(files: string[]): string {
  return `(${files.map((f) => sqlContains('files', JSON.stringify(storedPath(f)))).join(' OR ')})`;
}

describe('the files filter of a search', function () {
  this.timeout(120_000);
  let dir: string;
  let engine: MemoryEngine;
  /** Record id -> its files, for the observations and the memory. */
  const filesOf = new Map<string, string[]>();

  before(async () => {
    dir = tempDir('files-filter');
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, summariseOrphanSessions: false });
    // One record per stored path, some with two, and one with none.
    const inputs = STORED.map((f, i) => ({ type: 'note', title: `roadmap note ${i}`, files_modified: i % 7 === 3 ? [f, STORED[(i + 5) % STORED.length]] : [f] }));
    const stored = await engine.observe([...inputs, { type: 'note', title: 'roadmap note without files' }], SCOPE);
    // As stored: backslashes read as slashes.
    for (const [i, o] of stored.entries()) filesOf.set(`observation:${o.id}`, i < inputs.length ? inputs[i].files_modified.map(storedPath) : []);
    const memory = await engine.remember({ title: 'roadmap memory', text: 'the roadmap', files: ['src/100%_done.ts', 'lib/x.ts'] }, SCOPE);
    filesOf.set(`memory:${memory.id}`, ['src/100%_done.ts', 'lib/x.ts']);
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  const cellsWhere = async (clause: string): Promise<string[]> =>
    (await engine.store.rows('cells', `${projectWhere(SCOPE)} AND ${clause}`, { select: ['source_kind', 'source_id'] })).map((r) => `${String(r.source_kind)}:${String(r.source_id)}`).sort();

  it('is one clause for 100 paths, and selects exactly the cells a LIKE per path selected', async () => {
    assert.equal(ASKED.length, 100);
    const where = cellFilterWhere({}, { files: ASKED });
    assert.equal(where.match(/regexp_like\(/g)?.length, 1, where);
    // Only the two paths holding a double quote (a backslash once quoted as JSON) keep a LIKE each.
    assert.equal(where.match(/ LIKE /g)?.length, 2, where);
    const now = await cellsWhere(where);
    const before = await cellsWhere(cellFilterWhere({}, undefined) + ` AND ${likePerPath(ASKED)}`);
    assert.deepEqual(now, before);
    // What both mean: a record holds one of the paths asked, exactly (backslashes read as slashes).
    const asked = new Set(ASKED.map(storedPath));
    const expected = [...filesOf].filter(([, files]) => files.some((f) => asked.has(f))).map(([id]) => id).sort();
    assert.deepEqual(now, expected);
    assert.ok(expected.length >= 30, `${expected.length} records match`);
    // Each near miss alone finds nothing; each stored path alone finds its records only.
    for (const path of ASKED) {
      const one = await cellsWhere(cellFilterWhere({}, { files: [path] }));
      assert.deepEqual(one, await cellsWhere(cellFilterWhere({}, undefined) + ` AND ${likePerPath([path])}`), path);
      assert.deepEqual(one, [...filesOf].filter(([, files]) => files.includes(storedPath(path))).map(([id]) => id).sort(), path);
    }
  });

  it('gives a search the same records as the filter of a LIKE per path', async () => {
    const hits = await engine.search('roadmap', { scope: SCOPE, filter: { files: ASKED }, limit: 100 });
    const asked = new Set(ASKED.map(storedPath));
    const expected = [...filesOf].filter(([, files]) => files.some((f) => asked.has(f))).map(([id]) => id).sort();
    assert.deepEqual(hits.map((h) => `${h.cell.source_kind}:${h.cell.source_id}`).sort(), expected);
  });
});
