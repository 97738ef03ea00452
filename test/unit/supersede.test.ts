import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { extractFacts } from '../../src/core/compress/facts';
import { TOPIC_TRACE_SEGMENTS } from '../../src/core/compress/supersede';
import type { ExtractedFact } from '../../src/core/compress/facts';
import type { MemoryEngine } from '../../src/core/engine';
import type { Memory, Scope } from '../../src/core/model/records';
import { getObservations } from '../../src/core/tools/getObservations';
import { recallContext } from '../../src/core/tools/recallContext';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { asksForHistory } from '../../src/core/tools/timeline';
import { rememberTool } from '../../src/core/tools/write';
import { openTestEngine, removeDir, toolContext } from './mcpFixture';

async function* linesOf(lines: string[]): AsyncIterable<string> {
  for (const l of lines) yield l;
}

async function memory(engine: MemoryEngine, scope: Scope, id: number): Promise<Memory> {
  const [m] = await engine.getMemories([id], scope, { includeSuppressed: true });
  assert.ok(m, `memory ${id}`);
  return m;
}

describe('facts from how people write decisions', () => {
  const cases: [string, string | null, ExtractedFact[]][] = [
    ['We use PostgreSQL 14 for the orders service', null, [{ subject: 'orders service', predicate: 'uses', object: 'postgresql 14' }]],
    ['We moved the orders service to SQLite with LiteFS', null, [{ subject: 'orders service', predicate: 'uses', object: 'sqlite with litefs' }]],
    ['The orders service uses SQLite', null, [{ subject: 'orders service', predicate: 'uses', object: 'sqlite' }]],
    ['Switched from Jest to Vitest for unit tests.', null, [{ subject: 'unit tests', predicate: 'uses', object: 'vitest', replaces: 'jest' }]],
    ['Switched from Jest to Vitest.', null, [{ subject: '', predicate: 'uses', object: 'vitest', replaces: 'jest' }]],
    ['We switched the build from webpack to esbuild', null, [{ subject: 'build', predicate: 'uses', object: 'esbuild', replaces: 'webpack' }]],
    ['We migrated from MySQL to PostgreSQL last sprint.', 'billing-db', [{ subject: 'billing-db', predicate: 'uses', object: 'postgresql', replaces: 'mysql' }]],
    ['We no longer use Moment.js for dates.', null, [{ subject: 'dates', predicate: 'no longer uses', object: 'moment.js', replaces: 'moment.js' }]],
    ['Stop using enums', 'typescript style', [{ subject: 'typescript style', predicate: 'no longer uses', object: 'enums', replaces: 'enums' }]],
    ['Moment.js is no longer used', null, [{ subject: '', predicate: 'no longer uses', object: 'moment.js', replaces: 'moment.js' }]],
    ['Lodash has been replaced by native array methods.', null, [{ subject: '', predicate: 'uses', object: 'native array methods', replaces: 'lodash' }]],
    ['Replace axios with fetch for HTTP calls', null, [{ subject: 'http calls', predicate: 'uses', object: 'fetch', replaces: 'axios' }]],
    ['Use Vitest instead of Jest for unit tests.', null, [{ subject: 'unit tests', predicate: 'uses', object: 'vitest', replaces: 'jest' }]],
    ['Going forward we use pnpm instead of npm', 'package manager', [{ subject: 'package manager', predicate: 'uses', object: 'pnpm', replaces: 'npm' }]],
    ['The REST client is deprecated in favour of the generated SDK.', null, [{ subject: '', predicate: 'uses', object: 'generated sdk', replaces: 'rest client' }]],
    ['Deprecated the v1 API.', null, [{ subject: '', predicate: 'no longer uses', object: 'v1 api', replaces: 'v1 api' }]],
    ['We dropped Redux in favor of Zustand', 'state management', [{ subject: 'state management', predicate: 'uses', object: 'zustand', replaces: 'redux' }]],
    ['Use pnpm for package management.', null, [{ subject: 'package management', predicate: 'uses', object: 'pnpm' }]],
    ['Nothing to see here', null, []],
  ];
  for (const [text, topic, expected] of cases) {
    it(`reads "${text}"${topic ? ` (topic ${topic})` : ''}`, () => {
      assert.deepEqual(extractFacts(text, topic), expected);
    });
  }

  it('tells history questions from questions about now', () => {
    for (const q of ['what did we use before SQLite?', 'when did we switch the orders database?', 'which database did the orders service use previously', 'history of the orders database']) assert.ok(asksForHistory(q), q);
    for (const q of ['which database does the orders service use', 'how do we run the unit tests', 'where is the retry policy']) assert.ok(!asksForHistory(q), q);
  });
});

describe('supersession and conflicts (real engine)', function () {
  this.timeout(60_000);
  let engine: MemoryEngine;
  let dir: string;
  let n = 0;
  // Each test its own project: supersession looks at the whole project.
  const fresh = (): Scope => ({ project: `github.com/acme/supersede-${++n}` });

  before(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  it('by topic_key: the older memory is superseded, its facts close, and remember says so', async () => {
    const scope = fresh();
    const ctx = toolContext(engine, scope);
    const first = await rememberTool.run(ctx, { memory_type: 'decision', title: 'Database choice', text: 'We use PostgreSQL 14 for the orders service', topic_key: 'orders-db', files: ['orders/db.ts'] });
    const firstId = Number(first.structured!.id);
    assert.deepEqual(first.structured!.superseded, []);
    const second = await rememberTool.run(ctx, { memory_type: 'decision', title: 'Database choice', text: 'We moved the orders service to SQLite with LiteFS', topic_key: 'orders-db' });
    const secondId = Number(second.structured!.id);
    assert.deepEqual(second.structured!.superseded, [firstId]);
    assert.match(second.text, new RegExp(`Superseded: memory ${firstId}`));

    const older = await memory(engine, scope, firstId);
    const newer = await memory(engine, scope, secondId);
    assert.equal(older.status, 'superseded');
    assert.equal(older.superseded_by, secondId);
    assert.equal(older.valid_to_epoch, newer.created_at_epoch);
    assert.deepEqual(older.temporal_facts!.map((f) => [f.object, f.status, f.valid_to_epoch]), [['postgresql 14', 'closed', newer.created_at_epoch]]);
    assert.equal(newer.status, 'active');
    assert.deepEqual(newer.supersedes, [firstId]);
    assert.deepEqual(newer.temporal_facts!.map((f) => [f.subject, f.object, f.status]), [['orders service', 'sqlite with litefs', 'current']]);
    // Each memory's own trace says the same of the older one: closed, read from either.
    assert.deepEqual((newer.topic_trace ?? []).map((t) => [t.id, t.status]), [[firstId, 'closed'], [secondId, 'current']]);
    assert.deepEqual((older.topic_trace ?? []).map((t) => [t.id, t.status]), [[firstId, 'closed']]);
    const details = await getObservations(ctx, { ids: [firstId] });
    assert.deepEqual((details.details[0] as { topic_trace: Array<{ id: number; status: string }> }).topic_trace.map((t) => [t.id, t.status]), [[firstId, 'closed']]);
    // Searching for now leaves the superseded memory out.
    const hits = await engine.search('orders service database', { scope });
    assert.deepEqual(hits.filter((h) => h.cell.source_kind === 'memory').map((h) => h.cell.source_id), [secondId]);
  });

  it('a topic written to again and again: each trace keeps the latest segments', async () => {
    // Every memory of a topic carried the whole history before it: a topic written to on every
    // turn grew its rows with the square of its length (get_observations: 178 KB for one memory at 300).
    const scope = fresh();
    const ids: number[] = [];
    for (let i = 0; i < TOPIC_TRACE_SEGMENTS + 5; i++) ids.push((await engine.remember({ memory_type: 'note', title: `Task status ${i}`, text: `Working on step ${i} of the parser`, topic_key: 'task-status' }, scope)).id);
    const latest = await memory(engine, scope, ids[ids.length - 1]);
    const trace = latest.topic_trace ?? [];
    assert.deepEqual(trace.map((t) => t.id), ids.slice(-TOPIC_TRACE_SEGMENTS));
    assert.deepEqual(trace.map((t) => t.segment_index), ids.slice(-TOPIC_TRACE_SEGMENTS).map((_, i) => i));
    assert.deepEqual(trace.map((t) => t.status), [...Array<string>(TOPIC_TRACE_SEGMENTS - 1).fill('closed'), 'current']);
    // The older segments are the older memories' own, reached through supersedes.
    assert.deepEqual(latest.supersedes, [ids[ids.length - 2]]);
    assert.deepEqual(((await memory(engine, scope, ids[4])).topic_trace ?? []).map((t) => [t.id, t.segment_index]), ids.slice(0, 5).map((id, i) => [id, i]));
    const details = await getObservations(toolContext(engine, scope), { ids: [latest.id] });
    assert.equal((details.details[0] as { topic_trace: unknown[] }).topic_trace.length, TOPIC_TRACE_SEGMENTS);
  });

  it('by subject and files: a contradicting fact about the same files supersedes; about other files it is a possible conflict', async () => {
    const scope = fresh();
    const a = await engine.remember({ memory_type: 'decision', title: 'Orders storage', text: 'We use PostgreSQL 14 for the orders service', files: ['orders/db.ts'] }, scope);
    const b = await engine.remember({ memory_type: 'decision', title: 'Orders storage moved', text: 'We moved the orders service to SQLite', files: ['orders/db.ts'] }, scope);
    assert.deepEqual(b.supersedes, [a.id]);
    assert.equal((await memory(engine, scope, a.id)).status, 'superseded');

    // Same subject, other files: not enough to decide, so both are flagged and both stay current.
    const c = await engine.remember({ memory_type: 'decision', title: 'Reporting copy', text: 'The orders service uses DuckDB', files: ['reports/orders.ts'] }, scope);
    assert.equal(c.supersedes, null);
    assert.deepEqual(c.conflicts!.map((x) => [x.id, x.resolution]), [[b.id, 'open']]);
    const bAfter = await memory(engine, scope, b.id);
    assert.equal(bAfter.status, 'active');
    assert.deepEqual(bAfter.conflicts!.map((x) => [x.id, x.resolution]), [[c.id, 'open']]);
    assert.equal(bAfter.temporal_facts![0].status, 'current');
  });

  it('by the words alone: "switched from A to B" ends the fact about A and takes its subject', async () => {
    const scope = fresh();
    const a = await engine.remember({ memory_type: 'convention', title: 'Test runner', text: 'Use Jest for unit tests.' }, scope);
    const b = await engine.remember({ memory_type: 'convention', title: 'Test runner change', text: 'Switched from Jest to Vitest.' }, scope);
    assert.deepEqual(b.supersedes, [a.id]);
    assert.deepEqual(b.temporal_facts!.map((f) => [f.subject, f.predicate, f.object]), [['unit tests', 'uses', 'vitest']]);
    const c = await engine.remember({ memory_type: 'convention', title: 'Dates', text: 'Use Moment.js for date formatting.' }, scope);
    const d = await engine.remember({ memory_type: 'convention', title: 'Dates again', text: 'Moment.js is no longer used.' }, scope);
    assert.deepEqual(d.supersedes, [c.id]);
    assert.deepEqual(d.temporal_facts!.map((f) => [f.subject, f.predicate, f.object]), [['date formatting', 'no longer uses', 'moment.js']]);
    // Saying what stopped is no conflict with what is used now.
    const e = await engine.remember({ memory_type: 'convention', title: 'Date library', text: 'Use date-fns for date formatting.' }, scope);
    assert.equal(e.conflicts, null);
    assert.equal((await memory(engine, scope, d.id)).status, 'active');
  });

  it('by an agent naming what it replaces; an id not in the project is an error and nothing is written', async () => {
    const scope = fresh();
    const a = await engine.remember({ memory_type: 'note', title: 'Deploys', text: 'Deploys happen on Fridays after the demo.' }, scope);
    const elsewhere = await engine.remember({ memory_type: 'note', title: 'Other project note', text: 'Unrelated.' }, fresh());
    const ctx = toolContext(engine, scope);
    const bad = await rememberTool.run(ctx, { title: 'Deploy day', text: 'Deploys are on Tuesdays now.', supersedes: [elsewhere.id] });
    assert.equal(bad.isError, true);
    assert.match(bad.text, /^invalid_arguments: supersedes: no memory \d+ in project/);
    assert.equal((await engine.listMemories(scope)).length, 1);
    const ok = await rememberTool.run(ctx, { title: 'Deploy day', text: 'Deploys are on Tuesdays now.', supersedes: [a.id] });
    assert.equal(ok.isError, false, ok.text);
    assert.deepEqual(ok.structured!.superseded, [a.id]);
    assert.equal((await memory(engine, scope, a.id)).superseded_by, Number(ok.structured!.id));
    assert.equal((await memory(engine, elsewhere.project === scope.project ? scope : { project: elsewhere.project }, elsewhere.id)).status, 'active');
    const again = await rememberTool.run(ctx, { title: 'Deploy day 2', text: 'x', supersedes: [a.id] });
    assert.match(again.text, /^invalid_arguments: supersedes: memory \d+ was already superseded by memory/);
  });

  it('flags decisions about the same files that change something without saying what, and records the review', async () => {
    const scope = fresh();
    const a = await engine.remember({ memory_type: 'decision', title: 'Locking', text: 'Orders rely on optimistic locking with a version column.', files: ['orders/db.ts'] }, scope);
    const b = await engine.remember({ memory_type: 'decision', title: 'Locking again', text: 'We reverted to pessimistic row locks.', files: ['orders/db.ts'] }, scope);
    assert.deepEqual(b.conflicts!.map((c) => [c.id, c.resolution]), [[a.id, 'open']]);
    const ctx = toolContext(engine, scope);
    const pack = await recallContext(ctx, { query: 'orders locking' });
    assert.match(pack.text, new RegExp(`POSSIBLE CONFLICT with memory ${a.id}`));

    await engine.resolveConflict(scope, a.id, b.id, 'keep_both');
    assert.deepEqual((await memory(engine, scope, a.id)).conflicts!.map((c) => [c.id, c.resolution]), [[b.id, 'kept_both']]);
    assert.equal((await memory(engine, scope, b.id)).conflicts![0].resolution, 'kept_both');
    assert.doesNotMatch((await recallContext(ctx, { query: 'orders locking' })).text, /POSSIBLE CONFLICT/);

    const c = await engine.remember({ memory_type: 'decision', title: 'Locking, third take', text: 'We switched orders to advisory locks.', files: ['orders/db.ts'] }, scope);
    assert.ok(c.conflicts!.some((x) => x.id === b.id && x.resolution === 'open'));
    await engine.resolveConflict(scope, b.id, c.id, 'superseded');
    const bAfter = await memory(engine, scope, b.id);
    assert.equal(bAfter.status, 'superseded');
    assert.equal(bAfter.superseded_by, c.id);
    assert.equal(bAfter.conflicts!.find((x) => x.id === c.id)!.resolution, 'superseded');

    const d = await engine.remember({ memory_type: 'decision', title: 'Locking, fourth take', text: 'We replaced that with nothing.', files: ['orders/db.ts'] }, scope);
    const open = d.conflicts!.filter((x) => x.resolution === 'open').map((x) => x.id);
    assert.ok(open.length > 0);
    const edited = await engine.editMemory(scope, d.id, { text: 'Orders use advisory locks, as decided.' });
    assert.ok(edited.conflicts!.every((x) => x.resolution === 'edited'));
    for (const id of open) assert.equal((await memory(engine, scope, id)).conflicts!.find((x) => x.id === d.id)!.resolution, 'edited');
    await assert.rejects(engine.resolveConflict(scope, a.id, 999_999, 'keep_both'), /No memory 999999/);
    await assert.rejects(engine.resolveConflict(scope, a.id, d.id, 'maybe' as never), /unknown choice/);
  });

  it('an edited title relabels the decision in the graph', async () => {
    const scope = fresh();
    const m = await engine.remember({ memory_type: 'decision', title: 'Use the zephyrqueue broker', text: 'Jobs go through a broker.', files: ['jobs/queue.ts'] }, scope);
    const label = async (): Promise<string | undefined> => (await engine.entities(scope, [`memory:${m.id}`])).entities[0]?.label;
    assert.equal(await label(), 'Use the zephyrqueue broker', 'control');
    await engine.editMemory(scope, m.id, { title: 'Use the SQS broker' });
    assert.equal(await label(), 'Use the SQS broker');
  });

  it('the issue example over the tools: SQLite first now, PostgreSQL only for a history question and as dated history', async () => {
    const scope = fresh();
    const ctx = toolContext(engine, scope);
    const first = await rememberTool.run(ctx, { memory_type: 'decision', title: 'Database choice', text: 'We use PostgreSQL 14 for the orders service', topic_key: 'orders-db', files: ['orders/db.ts'] });
    const second = await rememberTool.run(ctx, { memory_type: 'decision', title: 'Database choice', text: 'We moved the orders service to SQLite with LiteFS', topic_key: 'orders-db' });
    const pgId = Number(first.structured!.id);
    const sqliteId = Number(second.structured!.id);

    const now = await recallContext(ctx, { query: 'which database does the orders service use' });
    assert.equal(now.items[0].source_id, sqliteId, now.text);
    assert.ok(!now.items.some((i) => i.source_id === pgId), now.text);
    assert.doesNotMatch(now.text, /PostgreSQL/);

    const past = await recallContext(ctx, { query: 'what did the orders service use before SQLite?' });
    assert.deepEqual(past.items.map((i) => i.source_id).slice(0, 2), [sqliteId, pgId], past.text);
    const day = new Date().toISOString().slice(0, 10);
    assert.match(past.text, new RegExp(`\\[CURRENT since ${day}; replaces memory ${pgId}\\]`));
    assert.match(past.text, new RegExp(`\\(memory ${pgId}, ${day}\\) \\[HISTORY: superseded by memory ${sqliteId} on ${day}; held from ${day} to ${day}\\]\\nDatabase choice\\nWe use PostgreSQL 14`));

    const rmNow = await retrieveMemory(ctx, { prompt: 'which database does the orders service use' });
    assert.equal(rmNow.retrieval!.facts[0].source_path, `memory/${sqliteId}`);
    assert.ok(!rmNow.retrieval!.facts.some((f) => f.source_path === `memory/${pgId}`), rmNow.content_text);
    const rmPast = await retrieveMemory(ctx, { prompt: 'when did we switch the orders service database?' });
    const paths = rmPast.retrieval!.facts.map((f) => f.source_path);
    assert.ok(paths.indexOf(`memory/${sqliteId}`) < paths.indexOf(`memory/${pgId}`) && paths.includes(`memory/${pgId}`), rmPast.content_text);
    assert.match(rmPast.content_text!, /\[HISTORY: superseded by memory \d+ on \d{4}-\d\d-\d\d; held from/);

    // By id the superseded memory is still there, with its closed fact, within the contract's shape.
    const details = await getObservations(ctx, { ids: [pgId] });
    const d = details.details[0] as Record<string, unknown>;
    assert.equal(d.status, 'superseded');
    const fact = (d.temporal_facts as Array<Record<string, unknown>>)[0];
    assert.equal(fact.status, 'closed');
    assert.equal(typeof fact.valid_to_epoch, 'number');
    assert.ok(!('superseded_by' in d), 'get_observations keeps to MemoryDetailOutput');
  });

  it('export and import carry the links, also when the import renumbers the memories', async () => {
    const scope = fresh();
    const a = await engine.remember({ memory_type: 'decision', title: 'Queue choice', text: 'We use RabbitMQ for background jobs', topic_key: 'jobs' }, scope);
    const b = await engine.remember({ memory_type: 'decision', title: 'Queue choice', text: 'We moved background jobs to SQS', topic_key: 'jobs' }, scope);
    const c = await engine.remember({ memory_type: 'decision', title: 'Job retries', text: 'Background jobs use exponential backoff', files: ['jobs/retry.ts'] }, scope);
    const d = await engine.remember({ memory_type: 'decision', title: 'Job retries changed', text: 'We reverted retries to a fixed delay', files: ['jobs/retry.ts'] }, scope);
    assert.equal(d.conflicts![0].id, c.id);
    const lines: string[] = [];
    await engine.exportJsonl((l) => lines.push(l), scope);

    const target = await openTestEngine();
    try {
      // The target already holds memories with the same ids, so the import renumbers: its next
      // ids are set to the exported ones (each project's ids come from blocks of its own, so the
      // exported project's need not start at 1).
      fs.writeFileSync(path.join(target.dir, 'ids.next'), String(Math.min(a.id, b.id, c.id, d.id)));
      for (let i = 0; i < 6; i++) await target.engine.remember({ title: `filler ${i}`, text: 'filler' }, { project: 'filler' });
      await target.engine.importJsonl(linesOf(lines));
      const byTitle = new Map((await target.engine.listMemories(scope, { includeSuppressed: true })).map((m) => [m.text, m]));
      const a2 = byTitle.get(a.text)!;
      const b2 = byTitle.get(b.text)!;
      const c2 = byTitle.get(c.text)!;
      const d2 = byTitle.get(d.text)!;
      assert.notEqual(a2.id, a.id, 'the import renumbered');
      assert.equal(a2.status, 'superseded');
      assert.equal(a2.superseded_by, b2.id);
      assert.deepEqual(b2.supersedes, [a2.id]);
      assert.deepEqual(d2.conflicts!.map((x) => x.id), [c2.id]);
      assert.deepEqual(c2.conflicts!.map((x) => x.id), [d2.id]);
    } finally {
      await target.engine.close();
      removeDir(target.dir);
    }
  });

  it('forgetting a superseded memory keeps its successor intact; forgetting the successor makes the older one hold again', async () => {
    const scope = fresh();
    const a = await engine.remember({ memory_type: 'decision', title: 'Cache', text: 'We use Memcached for the session cache', topic_key: 'cache' }, scope);
    const b = await engine.remember({ memory_type: 'decision', title: 'Cache', text: 'We moved the session cache to Redis', topic_key: 'cache' }, scope);
    await engine.forget({ kind: 'memory', ids: [a.id] }, scope);
    const b2 = await memory(engine, scope, b.id);
    assert.equal(b2.status, 'active');
    assert.equal(b2.text, b.text);
    assert.equal(b2.supersedes, null);
    assert.deepEqual(b2.temporal_facts, b.temporal_facts);
    assert.ok(!(b2.topic_trace ?? []).some((t) => t.id === a.id));
    assert.equal((await engine.search('session cache', { scope }))[0].cell.source_id, b.id);

    const c = await engine.remember({ memory_type: 'decision', title: 'Cache', text: 'We moved the session cache to Valkey', topic_key: 'cache' }, scope);
    assert.equal((await memory(engine, scope, b.id)).status, 'superseded');
    await engine.forget({ kind: 'memory', ids: [c.id] }, scope);
    const b3 = await memory(engine, scope, b.id);
    assert.equal(b3.status, 'active');
    assert.equal(b3.superseded_by, null);
    assert.equal(b3.valid_to_epoch, null);
    assert.ok(b3.temporal_facts!.every((f) => f.status === 'current' && f.valid_to_epoch === null));
  });
});
