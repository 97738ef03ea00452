// Import of JSON Lines against a store that already holds records: a file is checked whole before
// anything is written, references follow renumbered records, importing twice adds nothing, and
// a project filter is honoured.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import type { ImportReport } from '../../src/core/store/portability';

async function* linesOf(lines: string[]): AsyncIterable<string> {
  for (const l of lines) yield l;
}

type Line = { kind: string; record: Record<string, unknown> };
const at = 1_704_067_200_000;
const base = { memory_session_id: 's1', status: 'active', created_at: new Date(at).toISOString(), created_at_epoch: at };
const observation = (project: string, id: number, title: string, extra: Record<string, unknown> = {}): Line => ({ kind: 'observation', record: { ...base, project, id, type: 'note', title, ...extra } });
const memory = (project: string, id: number, title: string, extra: Record<string, unknown> = {}): Line => ({
  kind: 'memory',
  record: { project, id, title, text: `${title} text`, memory_type: 'decision', created_at_epoch: at, updated_at_epoch: at, status: 'active', scope: 'project', classification: 'decision', classification_reason: 'saved explicitly', current_context_eligible: true, ...extra },
});
const file = (lines: Line[]): string[] => [JSON.stringify({ kind: 'code-memory-export', schema_version: 4 }), ...lines.map((l) => JSON.stringify(l))];

describe('store: JSON Lines import into a store that holds records', function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  const open = async (): Promise<MemoryEngine> => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-import-'));
    dirs.push(dir);
    return MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  };
  after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  /** A store whose ids 1..4 are taken, so that a file's low ids are renumbered. */
  const crowded = async (): Promise<MemoryEngine> => {
    const engine = await open();
    await engine.observe(['one', 'two', 'three', 'four'].map((title) => ({ type: 'note', title })), { project: 'other' });
    return engine;
  };

  it('refuses a file with a bad line whole; fixed, or imported twice, it adds each record once', async () => {
    const engine = await crowded();
    const good = file([observation('B', 1, 'first of B'), observation('B', 2, 'second of B'), memory('B', 3, 'a decision of B')]);
    await assert.rejects(engine.importJsonl(linesOf([...good, '{"kind":"observation","rec'])), /line 5 is not JSON/);
    assert.equal((await engine.stats({ project: 'B' })).observations, 0, 'the lines before the bad one were written');
    assert.equal(await engine.importJsonl(linesOf(good)), 3);
    let report: ImportReport | undefined;
    assert.equal(await engine.importJsonl(linesOf(good), { onReport: (r) => (report = r) }), 0);
    assert.deepEqual(report, { imported: 0, already_there: 3, other_projects: 0 });
    const stats = await engine.stats({ project: 'B' });
    assert.deepEqual([stats.observations, stats.memories], [2, 1]);
    await engine.close();
  });

  it('points references at a renumbered record whatever the order of the file', async () => {
    const engine = await crowded();
    const scope = { project: 'B' };
    const source = { compressed_observation_id: 9, source_observation_id: 2, source_hash: 'h', source_created_at_epoch: at, compression_session_id: 'c', created_at_epoch: at };
    const trace = { id: 4, topic_key: 'db', title: 't', summary: 's', status: 'active', segment_index: 0, covered_from_event_id: 2, covered_to_event_id: 2, evidence_event_ids: [2], files: null, created_at_epoch: at, updated_at_epoch: at };
    // Everything that names observation 2 or memory 4 comes before them in the file.
    const lines = file([
      observation('B', 9, 'merged', { type: 'merged', compressed_sources: JSON.stringify([source]) }),
      memory('B', 3, 'older decision', { status: 'superseded', superseded_by: 4, source_ids: JSON.stringify([2]) }),
      { kind: 'session_summary', record: { ...base, project: 'B', id: 5, request: 'work', source_ids: JSON.stringify([2]) } },
      memory('B', 4, 'newer decision', { supersedes: JSON.stringify([3]), topic_trace: JSON.stringify([trace]) }),
      observation('B', 2, 'the source'),
    ]);
    assert.equal(await engine.importJsonl(linesOf(lines)), 5);
    const observations = await engine.listObservations(scope, { limit: 10 });
    const src = observations.find((o) => o.title === 'the source')!;
    const merged = observations.find((o) => o.title === 'merged')!;
    assert.notEqual(src.id, 2, 'precondition: the source was renumbered');
    assert.deepEqual(merged.compressed_sources?.map((s) => [s.compressed_observation_id, s.source_observation_id]), [[merged.id, src.id]]);
    const memories = await engine.listMemories(scope, { includeSuppressed: true });
    const older = memories.find((m) => m.title === 'older decision')!;
    const newer = memories.find((m) => m.title === 'newer decision')!;
    assert.deepEqual([older.superseded_by, newer.supersedes], [newer.id, [older.id]]);
    assert.deepEqual(newer.topic_trace?.map((t) => [t.id, t.covered_from_event_id, t.evidence_event_ids]), [[newer.id, src.id, [src.id]]]);
    // Forgetting the source takes the merged observation that quotes it.
    await engine.forget({ kind: 'observation', ids: [src.id] }, scope);
    assert.deepEqual((await engine.listObservations(scope, { limit: 10 })).map((o) => o.title), []);
    await engine.close();
  });

  it('imports only the project asked for, and a row of one project never replaces another project\'s', async () => {
    const engine = await open();
    const entity = (project: string, label: string): Line => ({ kind: 'entity', record: { project, id: 'file:src/a.ts', label, type: 'file', properties: '{}', updated_at_epoch: at } });
    await engine.importJsonl(linesOf(file([entity('Q', 'kept label')])));
    let report: ImportReport | undefined;
    const lines = file([observation('P', 1, 'of P'), observation('Q', 2, 'of Q'), entity('P', 'label of P'), entity('Q', 'label from the file')]);
    assert.equal(await engine.importJsonl(linesOf(lines), { project: 'P', onReport: (r) => (report = r) }), 2);
    assert.deepEqual(report, { imported: 2, already_there: 0, other_projects: 2 });
    assert.equal((await engine.stats({ project: 'Q' })).observations, 0);
    const exported: string[] = [];
    await engine.exportJsonl((l) => exported.push(l), null);
    const labels = exported.slice(1).map((l) => JSON.parse(l) as Line).filter((l) => l.kind === 'entity').map((l) => `${String(l.record.project)}:${String(l.record.label)}`);
    assert.deepEqual(labels.sort(), ['P:label of P', 'Q:kept label']);
    await engine.close();
  });

  it('refuses records the store cannot hold, with their line number, and writes nothing', async () => {
    const engine = await open();
    const cases: [Line[], RegExp][] = [
      [[observation('Z', 1, 'fine'), { kind: 'observation', record: { id: 7, project: 'Z' } }], /line 3: the observation record has no memory_session_id, type, status, created_at, created_at_epoch/],
      [[{ kind: 'memory', record: { id: 9, project: 'Z' } }], /line 2: the memory record has no title, text, memory_type/],
      [[observation('Z', 1, 'fine'), observation('Z', Number.NaN, 'NaN id')], /line 3: the observation record has no id/],
      [[observation('Z', 1, 'fine'), observation('Z', 2, 'text id', { id: 'abc' })], /line 3: the observation record id "abc" is not an integer/],
      [[observation('Z', 1, 'fine'), observation('Z', 2, 'a date in words', { created_at_epoch: 'yesterday' })], /line 3: .*created_at_epoch "yesterday" is not an integer/],
      [[observation('', 1, 'no project')], /line 2: the observation record has no project/],
      [[observation('Z', 1, 'fine'), observation('Z', 1, 'same id')], /line 3: a second observation with id 1 \(the first is on line 2\)/],
      [[observation('Z', 1, 'fine'), observation('Z', 2, 'no type', { type: '' })], /line 3: the observation record type is empty/],
      [[observation('Z', 1, 'fine', { memory_session_id: ' ' })], /line 2: the observation record memory_session_id is empty/],
      [[memory('Z', 9, '')], /line 2: the memory record title is empty/],
      [[observation('acme/AKIAZQ9PROJECTNAME77', 1, 'a project named with a key')], /line 2: the observation record project: a project name must not hold a secret/],
      [[memory('Z', 9, 'a wish', { memory_type: 'wish' })], /line 2: the memory record memory_type "wish" is not one of decision, convention, fact, preference, note/],
    ];
    for (const [lines, message] of cases) await assert.rejects(engine.importJsonl(linesOf(file(lines))), message);
    const stats = await engine.stats({ project: 'Z' });
    assert.deepEqual([stats.observations, stats.memories], [0, 0]);
    await engine.close();
  });
});
