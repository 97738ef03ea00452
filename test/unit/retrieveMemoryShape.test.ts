// retrieve_memory's structuredContent as the README and the contract page define it:
// readiness_state labels the project's memory (not a query's hits), documents[].source_path is
// `<source_kind>/<id>`, relationships join entities that are listed, and the report's "Sections
// searched" line and diagnostics.sections_searched name the same sections.
import * as assert from 'node:assert/strict';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { startHttpServer } from '../../src/mcp/httpServer';
import { OTHER, SCOPE, connectClient, httpToolHarness } from './httpToolHarness';
import type { CallResult } from './httpToolHarness';
import { makeGitRepo, removeDir, seed } from './mcpFixture';
import type { TestRepo } from './mcpFixture';

type Retrieval = {
  facts: Array<{ source_path: string }>;
  entities: Array<{ label: string; type: string; properties: Record<string, string> }>;
  relationships: Array<{ source: string; target: string; type: string; weight: number }>;
  documents: Array<{ title: string; source_path: string }>;
  total_items: number;
};
type Out = { memory_ready: boolean; readiness_state: string; retrieval: Retrieval; phase1: { targeted_sections: Array<{ tree_path: string }> }; diagnostics: { sections_searched: string[] } };

const out = (r: CallResult): Out => r.structuredContent as unknown as Out;
const text = (r: CallResult): string => r.content[0]?.text ?? '';

describe('retrieve_memory: readiness_state is a label of the project\'s memory', function () {
  this.timeout(240_000);
  const h = httpToolHarness({
    fill: async (engine) => {
      await seed(engine, SCOPE, OTHER);
      await engine.observe(
        Array.from({ length: 60 }, (_, i) => ({
          type: 'note',
          title: `Pelican export job ${i}`,
          narrative: `The pelican export job number ${i} runs every hour and uploads a snapshot to the archive bucket.`,
        })),
        SCOPE,
      );
      await engine.flush();
    },
  });
  const { call } = h;

  it('the same label for a prompt matching a few records, one matching none and one matching many', async () => {
    const few = out(await call('retrieve_memory', { prompt: 'o200k gpt-tokenizer' }));
    const none = out(await call('retrieve_memory', { prompt: 'zebra giraffe quantum marmalade' }));
    const many = out(await call('retrieve_memory', { prompt: 'pelican export job archive bucket' }));
    assert.ok(few.retrieval.total_items >= 1 && few.retrieval.total_items < 5, `a prompt matching 1-4 records: ${few.retrieval.total_items}`);
    assert.ok(many.retrieval.total_items >= 5, `${many.retrieval.total_items}`);
    assert.deepEqual(
      [few, none, many].map((o) => [o.memory_ready, o.readiness_state]),
      [
        [true, 'ready_rich'],
        [true, 'ready_rich'],
        [true, 'ready_rich'],
      ],
      `total_items: ${few.retrieval.total_items} / ${none.retrieval.total_items} / ${many.retrieval.total_items}`,
    );
  });

  it('a project with a few records is ready_sparse whatever matches; one with none is empty', async () => {
    await h.engine.observe([{ type: 'note', title: 'Lonely note about flamingos', narrative: 'Flamingos are pink.' }], OTHER);
    await h.engine.flush();
    for (const [scope, want] of [
      [OTHER, 'ready_sparse'],
      [{ project: 'github.com/acme/nothing-yet' }, 'empty'],
    ] as const) {
      const server = await startHttpServer({ engine: h.engine, scope });
      const client = await connectClient(server);
      try {
        for (const prompt of ['flamingos pink', 'zebra giraffe quantum marmalade']) {
          const o = out(await h.call('retrieve_memory', { prompt }, client));
          assert.equal(o.readiness_state, want, `${scope.project}: ${prompt}`);
          assert.equal(o.memory_ready, want !== 'empty', `${scope.project}: ${prompt}`);
        }
      } finally {
        await client.close();
        await server.close();
      }
    }
  });
});

describe('retrieve_memory: documents, relationships and sections', function () {
  this.timeout(240_000);
  let repo: TestRepo;
  const h = httpToolHarness({
    fill: async (engine) => {
      await seed(engine, SCOPE, OTHER);
      repo = makeGitRepo();
      await importGitHistory(engine, repo.dir, { scope: SCOPE });
      await engine.flush();
    },
  });
  after(() => repo && removeDir(repo.dir));
  const { call } = h;

  it('every documents[].source_path is exactly <source_kind>/<id>, usable with get_observations', async () => {
    const docs = out(await call('retrieve_memory', { prompt: 'Which vector store did we decide on?' })).retrieval.documents;
    assert.ok(docs.length > 0, 'no documents');
    for (const d of docs) {
      assert.match(d.source_path, /^(observation|session_summary|memory)\/\d+$/, d.source_path);
      const [kind, id] = d.source_path.split('/');
      const g = await call('get_observations', { ids: [Number(id)], source: kind });
      assert.equal(g.isError, false, text(g));
    }
  });

  it('every relationship\'s source and target is the label of an entity listed, and a commit fact\'s commit is listed', async () => {
    const r = await call('retrieve_memory', { prompt: 'CSV line parser for the import wizard' });
    h.assertValid('retrieve_memory', r);
    const { entities, relationships } = out(r).retrieval;
    const labels = new Set(entities.map((e) => e.label));
    assert.ok(relationships.length > 0, JSON.stringify({ entities, relationships }));
    for (const rel of relationships) {
      assert.ok(labels.has(rel.source) && labels.has(rel.target), JSON.stringify({ rel, labels: [...labels] }));
    }
    const sha12 = repo.shas.parser.slice(0, 12);
    assert.ok(entities.some((e) => e.type === 'commit' && e.label === sha12), JSON.stringify(entities));
    assert.ok(relationships.some((rel) => rel.source === sha12 && rel.target === 'src/parser/csvParser.ts' && rel.type === 'modified'), JSON.stringify(relationships));
  });

  it('the report\'s "Sections searched" and diagnostics.sections_searched name the same sections, those of phase1', async () => {
    const r = await call('retrieve_memory', { prompt: 'CSV line parser for the import wizard' });
    const s = out(r);
    const line = text(r).split('\n').find((l) => l.startsWith('**Sections searched:** '));
    assert.ok(line, text(r));
    const inText = line.slice('**Sections searched:** '.length).split(', ');
    assert.ok(s.diagnostics.sections_searched.length > 0);
    assert.deepEqual(inText, s.diagnostics.sections_searched.map((p) => p.split(' > ').slice(1).join(' > ')));
    assert.deepEqual(s.diagnostics.sections_searched, s.phase1.targeted_sections.map((t) => t.tree_path));
    for (const p of s.diagnostics.sections_searched) assert.equal(p.split(' > ')[0], SCOPE.project, p);
  });
});
