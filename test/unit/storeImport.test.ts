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

/** The files of `cases` that the import did not refuse (ImportFileError) with the message expected. */
async function unrefused(engine: MemoryEngine, cases: [string[], RegExp][]): Promise<string[]> {
  const wrong: string[] = [];
  for (const [lines, message] of cases) {
    const outcome = await engine.importJsonl(linesOf(lines)).then(
      (n) => `imported ${n}`,
      (e: Error) => (e.name === 'ImportFileError' ? e.message : `${e.name}: ${e.message}`),
    );
    if (!message.test(outcome)) wrong.push(`${lines.join(' / ')}: ${outcome}`);
  }
  return wrong;
}

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
      // A time no Date holds fails every read that prints it; NUL cannot be named by any filter.
      [[observation('Z', 1, 'fine'), observation('Z', 2, 'far future', { created_at_epoch: Number.MAX_SAFE_INTEGER })], /line 3: .*created_at_epoch 9007199254740991 must be milliseconds since 1970/],
      [[memory('Z', 9, 'before 1970', { updated_at_epoch: -5 })], /line 2: .*updated_at_epoch -5 must be milliseconds since 1970/],
      [[observation('Z', 1, 'fine', { last_accessed_epoch: 8_640_000_000_000_001 })], /line 2: .*last_accessed_epoch 8640000000000001 must be/],
      [[observation('Z', 1, 'fine'), observation('Z', 2, 'nul session', { memory_session_id: 's\u0000x' })], /line 3: .*memory_session_id may not contain NUL/],
      [[observation('Z', 1, 'nul content session', { content_session_id: 'c\u0000x' })], /line 2: .*content_session_id may not contain NUL/],
      [[observation('Z', 1, 'nul branch', { branch: 'ma\u0000in' })], /line 2: .*branch may not contain NUL/],
      [[observation('Z', 1, 'nul dedupe key', { dedupe_key: 'k\u0000' })], /line 2: .*dedupe_key may not contain NUL/],
      [[memory('Z', 9, 'nul topic', { topic_key: 't\u0000' })], /line 2: .*topic_key may not contain NUL/],
      [[observation('Z', 1, 'nul path', { files_modified: ['src/a\u0000b.ts'] })], /line 2: .*files_modified may not contain NUL/],
      [[memory('Z', 9, 'nul path', { files: JSON.stringify(['src/a\u0000b.ts']) })], /line 2: .*files may not contain NUL/],
      [[observation('a\u0000b', 1, 'nul project')], /line 2: the observation record project: a project name may not contain NUL/],
      [[observation('Z', 1, 'fine'), observation('Z', 2, 'sql sha', { commit_sha: "abc' OR 1=1" })], /line 3: .*commit_sha "abc' OR 1=1" is not 4 to 64 hex digits/],
      [[observation('Z', 1, 'undead', { status: 'zombie' })], /line 2: the observation record status "zombie" is not one of active, suppressed, merged, superseded/],
      [[memory('Z', 9, 'undead', { status: 'zombie' })], /line 2: the memory record status "zombie" is not one of/],
      // What the views show as a class name and as memory ids: markup in them reached the details panel.
      [[observation('Z', 1, 'markup type', { type: 'x" data-evil="1' })], /line 2: the observation record type: invalid type/],
      [[memory('Z', 9, 'markup link', { supersedes: JSON.stringify(['<img src=x onerror=alert(1)>']) })], /line 2: the memory record supersedes is not a JSON list of memory ids/],
      [[memory('Z', 9, 'markup conflict', { conflicts: JSON.stringify([{ id: '<a data-msg=x>', reason: 'r', resolution: 'open' }]) })], /line 2: the memory record conflicts is not a JSON list/],
      // Every reader of an observation's facts and concepts takes a list of texts: a text, numbers or no JSON failed the import half-way ("items.map is not a function").
      [[observation('Z', 1, 'fine'), observation('Z', 2, 'facts in prose', { facts: JSON.stringify('just text') })], /line 3: the observation record facts is not a JSON list of texts/],
      [[observation('Z', 1, 'numbered facts', { facts: JSON.stringify([1, 2]) })], /line 2: the observation record facts is not a JSON list of texts/],
      [[observation('Z', 1, 'facts not JSON', { facts: '[unclosed' })], /line 2: the observation record facts is not a JSON list of texts/],
      [[observation('Z', 1, 'concepts as an object', { concepts: JSON.stringify({ a: 'b' }) })], /line 2: the observation record concepts is not a JSON list of texts/],
    ];
    assert.deepEqual(await unrefused(engine, cases.map(([lines, message]) => [file(lines), message])), []);
    const stats = await engine.stats({ project: 'Z' });
    assert.deepEqual([stats.observations, stats.memories], [0, 0]);
    await engine.close();
  });

  it('refuses a line that is not a record object, or a header without a whole schema version, naming the line', async () => {
    const engine = await open();
    const [header, good] = file([observation('Z', 1, 'fine')]);
    const cases: [string[], RegExp][] = [
      ...['null', '[1,2]', '42', '"observation"', 'true'].map((line): [string[], RegExp] => [[header, good, line], /^Import line 3 is not a JSON object/]),
      [[header, '{"kind":"observation"}'], /^Import line 2: the observation line has no record object/],
      [[header, '{"kind":"observation","record":[]}'], /^Import line 2: the observation line has no record object/],
      [[header, '{"record":{}}'], /^Import line 2: no record kind/],
      [['{"kind":"code-memory-export","schema_version":"abc"}', good], /^Import line 1: the header's schema version "abc" is not a positive whole number/],
      [['{"kind":"code-memory-export","schema_version":2.5}', good], /^Import line 1: the header's schema version 2.5/],
      [['{"kind":"code-memory-export"}', good], /^Import line 1: the header's schema version null/],
    ];
    assert.deepEqual(await unrefused(engine, cases), []);
    assert.equal((await engine.stats({ project: 'Z' })).observations, 0);
    await engine.close();
  });

  it('stores an imported commit SHA in lower case, as capture does', async () => {
    const engine = await open();
    assert.equal(await engine.importJsonl(linesOf(file([observation('Z', 1, 'a commit', { commit_sha: 'DA39A3EE5E6B' })]))), 1);
    assert.deepEqual((await engine.listObservations({ project: 'Z' })).map((o) => o.commit_sha), ['da39a3ee5e6b']);
    await engine.close();
  });
});
