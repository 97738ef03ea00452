// Protects the entity graph's one row per key (entities by project and id, relationships by
// project, source, target and type) when processes write it at once. LanceDB's merge does not see
// another process's insert of a key committed meanwhile, so two processes adding the graph of the
// same files at once can both store a row. Readers (the neighbourhood that retrieve_memory shows)
// must still show each entity and edge once, the next write of such a key must leave one row, and
// a forget must remove every copy. An export of a store holding copies (or any file naming a key
// twice) imports as one row per key, and imports again without failing (LanceDB refuses a merge
// in which two given rows match one stored row).
import { strict as assert } from 'node:assert';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { sqlString } from '../../src/core/store/filters';
import { GraphCache, GraphRepository } from '../../src/core/store/repos/graph';
import { TABLES } from '../../src/core/store/schema';
import { Store } from '../../src/core/store/store';
import type { Row } from '../../src/core/store/store';
import { racedObservation } from './fixtures/graphKeyRacer';
import { raceAtOnce } from './fixtures/racers';

process.env.LANCEDB_LOG ??= 'error';

const RACER = path.join(__dirname, 'fixtures', 'graphKeyRacer.ts');
const P = 'github.com/acme/graph-race';

/** The keys stored more than once in `table` of project P, with their row counts. */
async function copies(store: Store, table: typeof TABLES.entities | typeof TABLES.relationships): Promise<Array<[string, number]>> {
  const on = table === TABLES.entities ? ['id'] : ['source', 'target', 'type'];
  const perKey = new Map<string, number>();
  for (const r of await store.rows(table, `project = ${sqlString(P)}`, { select: on })) {
    const key = on.map((c) => String(r[c])).join(' ');
    perKey.set(key, (perKey.get(key) ?? 0) + 1);
  }
  return [...perKey].filter(([, n]) => n > 1);
}

/** Each entity and edge of the neighbourhood of `names` once. */
async function assertShownOnce(store: Store, names: string[]): Promise<{ entities: number; relationships: number }> {
  const shown = await new GraphRepository(store, P, new GraphCache()).neighbourhood(names);
  const ids = shown.entities.map((e) => e.id);
  assert.deepEqual(ids.filter((id, i) => ids.indexOf(id) !== i), [], 'an entity shown more than once');
  const edges = shown.relationships.map((r) => `${r.source} ${r.target} ${r.type}`);
  assert.deepEqual(edges.filter((e, i) => edges.indexOf(e) !== i), [], 'an edge shown more than once');
  return { entities: ids.length, relationships: edges.length };
}

describe('graph: two processes adding the same new entities and edges at once', function () {
  this.timeout(600_000);
  let dir: string;
  let children: ChildProcess[];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-graph-race-'));
    children = [];
  });
  afterEach(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the neighbourhood shows each entity and edge once; the next write of the keys leaves one row each', async () => {
    const N = 30;
    const uri = path.join(dir, 'store');
    (await Store.open({ uri, dimension: 8 })).close();
    const go = path.join(dir, 'go');
    await raceAtOnce(RACER, [0, 1].map(() => [uri, String(N), P, go]), go, children, 'graph racer');
    const store = await Store.open({ uri, dimension: 8 });
    try {
      const names = Array.from({ length: N }, (_, i) => `src/race/f${i}.ts`);
      const raced = (await copies(store, TABLES.entities)).length + (await copies(store, TABLES.relationships)).length;
      console.log(`      (${raced} keys stored more than once by the race)`);
      const shown = await assertShownOnce(store, names);
      assert.equal(shown.entities, N);
      // Each file: modified by its commit, about the concept.
      assert.equal(shown.relationships, 2 * N);
      // The next process writing these keys (a new window's cache knows none of them).
      await new GraphRepository(store, P, new GraphCache()).add(Array.from({ length: N }, (_, i) => racedObservation(P, i)));
      assert.deepEqual(await copies(store, TABLES.entities), []);
      assert.deepEqual(await copies(store, TABLES.relationships), []);
      await assertShownOnce(store, names);
    } finally {
      store.close();
    }
  });
});

describe('graph: keys already stored twice', function () {
  this.timeout(120_000);
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-graph-twice-'));
    store = await Store.open({ uri: path.join(dir, 'store'), dimension: 8 });
    // The graph of one change, then each of its rows again, as two racing writers leave it.
    await new GraphRepository(store, P, new GraphCache()).add([racedObservation(P, 1)]);
    for (const table of [TABLES.entities, TABLES.relationships]) {
      const rows = await store.rows(table, `project = ${sqlString(P)}`);
      await store.add(table, rows.map((r): Row => ({ ...r, ...(table === TABLES.relationships ? { weight: Number(r.weight) + 5 } : {}) })));
    }
    assert.notDeepEqual(await copies(store, TABLES.entities), []);
    assert.notDeepEqual(await copies(store, TABLES.relationships), []);
  });
  afterEach(() => {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the neighbourhood shows each once, with the greatest weight of its copies, before and after compaction', async () => {
    for (const when of ['as written', 'compacted']) {
      await assertShownOnce(store, ['src/race/f1.ts']);
      const shown = await new GraphRepository(store, P, new GraphCache()).neighbourhood(['src/race/f1.ts']);
      for (const r of shown.relationships) assert.equal(r.weight, 6, `${when}: ${JSON.stringify(r)}`);
      await store.optimize(0, [TABLES.entities, TABLES.relationships]);
    }
  });

  it('an upsert of the keys leaves one row each; a delete of a key (as forget deletes) removes every copy', async () => {
    const repo = new GraphRepository(store, P, new GraphCache());
    await repo.add([racedObservation(P, 1)]);
    assert.deepEqual(await copies(store, TABLES.entities), []);
    assert.deepEqual(await copies(store, TABLES.relationships), []);
    await store.add(TABLES.entities, await store.rows(TABLES.entities, `project = ${sqlString(P)}`));
    await repo.entities.delete(`id = 'file:src/race/f1.ts'`);
    assert.equal(await store.count(TABLES.entities, `id = 'file:src/race/f1.ts'`), 0);
  });
});

describe('graph: an export holding a key twice, and a forget of a key stored twice', function () {
  this.timeout(120_000);
  let dir: string;
  const scope = { project: P, branch: 'main' };
  const open = (name: string): Promise<MemoryEngine> => MemoryEngine.open({ storeUri: path.join(dir, name), embedder: 'none', maintenanceIntervalMs: 0, summariseOrphanSessions: false });
  const exported = async (e: MemoryEngine): Promise<string[]> => {
    const out: string[] = [];
    await e.exportJsonl((l) => void out.push(l), null);
    return out;
  };
  async function* linesOf(lines: string[]): AsyncIterable<string> {
    for (const l of lines) yield l;
  }
  /** A store at `name` whose graph holds each entity and edge of one commit twice. */
  async function storeWithCopies(name: string): Promise<number> {
    const engine = await open(name);
    let id: number;
    try {
      [{ id }] = await engine.observe([{ type: 'edit', title: 'Tuned the pool', files_modified: ['src/pool.ts', 'src/conf.ts'], commit_sha: 'abcdef012345abcdef012345abcdef012345abcd', concepts: ['pooling'] }], scope);
      await engine.drainGraph();
    } finally {
      await engine.close();
    }
    const store = await Store.open({ uri: path.join(dir, name), dimension: 8 });
    try {
      for (const table of [TABLES.entities, TABLES.relationships]) await store.add(table, await store.rows(table, `project = ${sqlString(P)}`));
      assert.notDeepEqual(await copies(store, TABLES.entities), []);
    } finally {
      store.close();
    }
    return id;
  }
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-graph-copies-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('imports one row per key, and imports again without failing', async () => {
    await storeWithCopies('src');
    const src = await open('src');
    const dst = await open('dst');
    try {
      const lines = await exported(src);
      assert.ok(lines.filter((l) => l.includes('"file:src/pool.ts"') && l.includes('"entity"')).length > 1, 'control: the export holds the copies');
      await dst.importJsonl(linesOf(lines));
      await dst.importJsonl(linesOf(lines));
      const again = await exported(dst);
      const graphLines = again.filter((l) => /"kind":"(entity|relationship)"/.test(l)).map((l) => {
        const { kind, record } = JSON.parse(l) as { kind: string; record: Record<string, unknown> };
        return kind === 'entity' ? `${kind} ${String(record.id)}` : `${kind} ${String(record.source)} ${String(record.target)} ${String(record.type)}`;
      });
      assert.ok(graphLines.length > 0);
      assert.deepEqual(graphLines.filter((k, i) => graphLines.indexOf(k) !== i), [], 'a key stored more than once');
    } finally {
      await src.close();
      await dst.close();
    }
  });

  it('a forget of the observation leaves no copy of its entities and edges', async () => {
    const id = await storeWithCopies('store');
    const engine = await open('store');
    try {
      await engine.forget({ kind: 'observation', ids: [id] }, scope);
      const left = (await exported(engine)).filter((l) => l.includes('pool.ts') || l.includes('conf.ts') || l.includes('pooling'));
      assert.deepEqual(left, []);
    } finally {
      await engine.close();
    }
  });
});
