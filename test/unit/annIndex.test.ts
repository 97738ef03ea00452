import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { syntheticCorpus } from '../../bench/synthetic';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { currentIndexKind, ensureAnnIndex, hasVectorIndex, tuneVectorQuery, vectorIndexKind } from '../../src/core/store/annIndex';
import { rowsToArrow } from '../../src/core/store/arrowRows';
import { cellsSchema } from '../../src/core/store/schema';

process.env.LANCEDB_LOG ??= 'error';

const DIM = 128;
const ROWS = 4000;

describe('ANN index on cells.vector', function () {
  this.timeout(300_000);
  let cells: lancedb.Table;
  let queries: Float32Array[];
  const embedder = new HashedEmbedder(DIM);
  const scopeOf = (project: string): string => `project = '${project}' AND embed_model = '${embedder.name}'`;
  const scope = scopeOf('p0');

  before(async () => {
    const corpus = syntheticCorpus(ROWS, 40, 7);
    const vectors = await embedder.embed(corpus.texts);
    queries = await embedder.embed(corpus.queries);
    const schema = cellsSchema(DIM);
    const rows = corpus.texts.map((text, i) => ({
      node_id: `n${i}`, layer: 'L0', source_kind: 'observation', source_id: i,
      project: i % 100 === 1 ? 'tiny' : i % 3 === 0 ? 'p1' : 'p0', branch: null, type: corpus.types[i], title: corpus.titles[i], text,
      search_text: text, files: null, commit_sha: null, session_id: null, created_at_epoch: i,
      last_accessed_epoch: null, access_count: 0, status: 'active',
      // A few cells still wait for their vector: zero, and excluded by the embed_model scope.
      embed_model: i % 50 === 0 ? '' : embedder.name,
      vector: i % 50 === 0 ? new Float32Array(DIM) : vectors[i],
    }));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-ann-'));
    const db = await lancedb.connect(dir, { readConsistencyInterval: 0 });
    cells = await db.createTable('cells', rowsToArrow(schema, rows), { schema });
  });

  async function exactTop10(q: Float32Array, where = scope): Promise<string[]> {
    const rows = await cells.vectorSearch(Array.from(q)).distanceType('dot').where(where).bypassVectorIndex().select(['node_id']).limit(10).toArray();
    return rows.map((r: { node_id: string }) => r.node_id);
  }

  async function annTop10(q: Float32Array, where = scope): Promise<string[]> {
    const rows = await tuneVectorQuery(cells.vectorSearch(Array.from(q)), 10, await vectorIndexKind(cells)).where(where).select(['node_id']).toArray();
    return rows.map((r: { node_id: string }) => r.node_id);
  }

  it('builds nothing below the threshold, counting only cells that have their vector', async () => {
    assert.equal(await ensureAnnIndex(cells, { threshold: ROWS + 1 }), 'below-threshold');
    // 4,000 cells, 80 of which still wait for embedding.
    assert.equal(await ensureAnnIndex(cells, { threshold: ROWS - 50 }), 'below-threshold');
    assert.equal(await hasVectorIndex(cells), false);
  });

  it('builds one index past the threshold, once, even when asked twice at the same time', async () => {
    const logs: string[] = [];
    const [first, second] = await Promise.all([
      ensureAnnIndex(cells, { threshold: 1000, logger: (m) => logs.push(m) }),
      ensureAnnIndex(cells, { threshold: 1000 }),
    ]);
    assert.deepEqual([first, second], ['built', 'busy']);
    assert.equal(await hasVectorIndex(cells), true);
    assert.match(logs.join('\n'), /vector index \(hnsw_sq\) built over 3920 cells/);
    assert.equal(await ensureAnnIndex(cells, { threshold: 1000 }), 'exists');
    const [index] = (await cells.listIndices()).filter((i) => i.columns.includes('vector'));
    assert.equal(index.indexType, 'IvfHnswSq');
  });

  async function recallAt10(project: string): Promise<number> {
    let hits = 0;
    let total = 0;
    for (const q of queries) {
      const truth = new Set(await exactTop10(q, scopeOf(project)));
      const got = await annTop10(q, scopeOf(project));
      total += truth.size;
      hits += got.filter((id) => truth.has(id)).length;
    }
    assert.ok(total > 0);
    return hits / total;
  }

  it('answers scoped queries through the index with recall@10 of at least 0.95 against exact search', async () => {
    const plan = await tuneVectorQuery(cells.vectorSearch(Array.from(queries[0])), 10, 'hnsw_sq').where(scope).explainPlan();
    assert.match(plan, /ANNSubIndex/, 'the tuned query uses the index');
    // A large project and a tiny one (1% of the cells): narrow prefilters must not lose neighbours.
    for (const project of ['p0', 'tiny']) {
      const recall = await recallAt10(project);
      assert.ok(recall >= 0.95, `${project}: recall@10 ${recall.toFixed(3)}`);
    }
  });

  it('answers through the index with more candidates than its default search list (limit x refine > ef)', async () => {
    // The hybrid search asks for 50 candidates; with refineFactor 4 that is 200 > ef 120.
    const rows = await tuneVectorQuery(cells.vectorSearch(Array.from(queries[1])), 50, 'hnsw_sq').where(scopeOf('tiny')).select(['node_id']).toArray();
    assert.equal(rows.length, Math.min(50, await cells.countRows(scopeOf('tiny'))));
    const many = await tuneVectorQuery(cells.vectorSearch(Array.from(queries[1])), 200, 'hnsw_sq').where(scope).select(['node_id']).toArray();
    assert.equal(many.length, 200);
  });

  it('finds cells written after the build, before and after optimize', async () => {
    const schema = cellsSchema(DIM);
    const probe = queries[3];
    await cells.add(rowsToArrow(schema, [{
      node_id: 'fresh', layer: 'L0', source_kind: 'observation', source_id: ROWS, project: 'p0', branch: null,
      type: 'change', title: 'fresh', text: 'fresh', search_text: 'fresh', files: null, commit_sha: null,
      session_id: null, created_at_epoch: ROWS, last_accessed_epoch: null, access_count: 0, status: 'active',
      embed_model: embedder.name, vector: probe,
    }]));
    assert.equal((await annTop10(probe))[0], 'fresh');
    await cells.optimize({ cleanupOlderThan: new Date() });
    assert.equal((await annTop10(probe))[0], 'fresh');
    const [index] = (await cells.listIndices()).filter((i) => i.columns.includes('vector'));
    const stats = await cells.indexStats(index.name);
    assert.equal(stats?.numUnindexedRows, 0, 'optimize folds new rows into the index');
  });

  it('replaces the graph by IVF_PQ once the table passes ivfPqFrom, answers through it, and never goes back', async () => {
    const logs: string[] = [];
    const before = await currentIndexKind(cells);
    assert.equal(before, 'hnsw_sq');
    assert.equal(await ensureAnnIndex(cells, { threshold: 1000, ivfPqFrom: ROWS + 100 }), 'exists', 'below ivfPqFrom the graph stays');
    assert.equal(await ensureAnnIndex(cells, { threshold: 1000, ivfPqFrom: 3000, logger: (m) => logs.push(m) }), 'built');
    assert.match(logs.join('\n'), /vector index \(ivf_pq\) built over 3921 cells .*replacing the hnsw_sq index/);
    assert.equal(await vectorIndexKind(cells), 'ivf_pq');
    // Looked up again after a build in this process; other processes within KIND_TTL_MS.
    assert.equal(await currentIndexKind(cells), 'ivf_pq');
    assert.equal(await ensureAnnIndex(cells, { threshold: 1000, ivfPqFrom: ROWS * 10 }), 'exists', 'never back to a graph');
    assert.equal(await vectorIndexKind(cells), 'ivf_pq');

    const plan = await tuneVectorQuery(cells.vectorSearch(Array.from(queries[0])), 10, 'ivf_pq').where(scope).explainPlan();
    assert.match(plan, /ANNSubIndex|ANNIvfPartition/, 'the tuned query uses the index');
    for (const project of ['p0', 'tiny']) {
      const recall = await recallAt10(project);
      assert.ok(recall >= 0.95, `${project}: recall@10 ${recall.toFixed(3)}`);
    }
  });
});
