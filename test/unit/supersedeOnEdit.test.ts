// An edit is weighed as a write is (README "Memories that stay true": an edit of a memory's title
// or text, from the Memories view or the engine's API, goes through the same supersession and
// conflict detection as `remember`): an edit that contradicts another memory about the same files
// retires it, one that disagrees about other files is flagged as a possible conflict, and the
// conflicts the edit reviewed are not flagged again.

import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Memory } from '../../src/core/model/records';
import { recallContext } from '../../src/core/tools/recallContext';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow, registerQuietCommands } from './extensionWindow';
import { openTestEngine, removeDir, scopeMaker, storedMemory, toolContext } from './mcpFixture';

const memory = storedMemory;
const openConflicts = (m: Memory): number[] => (m.conflicts ?? []).filter((c) => c.resolution === 'open').map((c) => c.id);

describe('an edit goes through the detection a write goes through (real engine)', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  const fresh = scopeMaker('edit-detect');

  before(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  it('an edit that contradicts an older memory about the same files supersedes it, as the same words written would', async () => {
    const scope = fresh();
    const files = ['orders/db.ts'];
    const a = await engine.remember({ memory_type: 'decision', title: 'Orders database', text: 'We use PostgreSQL for the orders service', files }, scope);
    const b = await engine.remember({ memory_type: 'note', title: 'Orders archive', text: 'Orders are archived every night.', files }, scope);
    assert.equal((await memory(engine, scope, a.id)).status, 'active', 'control: nothing said against A yet');
    const edited = await engine.editMemory(scope, b.id, { text: 'We moved the orders service to SQLite' });
    const a2 = await memory(engine, scope, a.id);
    assert.equal(a2.status, 'superseded');
    assert.equal(a2.superseded_by, b.id);
    assert.ok(a2.temporal_facts!.every((f) => f.status === 'closed'));
    assert.deepEqual(edited.supersedes, [a.id]);
    assert.deepEqual((await memory(engine, scope, b.id)).supersedes, [a.id]);
    const pack = await recallContext(toolContext(engine, scope), { query: 'which database does the orders service use' });
    assert.ok(!pack.items.some((i) => i.source_kind === 'memory' && i.source_id === a.id), pack.text);
  });

  it('an edit that disagrees with a memory about other files is flagged on both, and recall_context says so', async () => {
    const scope = fresh();
    const a = await engine.remember({ memory_type: 'decision', title: 'Orders database', text: 'We use PostgreSQL for the orders service', files: ['orders/db.ts'] }, scope);
    const b = await engine.remember({ memory_type: 'decision', title: 'Reports', text: 'Reports are built every night.', files: ['reports/query.ts'] }, scope);
    assert.deepEqual(openConflicts(await memory(engine, scope, a.id)), [], 'control');
    await engine.editMemory(scope, b.id, { text: 'Reporting: switched from PostgreSQL to DuckDB.' });
    assert.deepEqual(openConflicts(await memory(engine, scope, a.id)), [b.id]);
    assert.deepEqual(openConflicts(await memory(engine, scope, b.id)), [a.id]);
    assert.equal((await memory(engine, scope, a.id)).status, 'active', 'about other files: flagged, not retired');
    const pack = await recallContext(toolContext(engine, scope), { query: 'which database does the orders service use' });
    assert.match(pack.text, new RegExp(`\\(memory ${a.id}, [^)]*\\) \\[POSSIBLE CONFLICT with memory ${b.id}`), pack.text);
  });

  it("an edit's new words are its segment's in the topic's traces: its own and those of the memories said after it", async () => {
    const scope = fresh();
    const topic_key = 'release-train';
    const first = await engine.remember({ memory_type: 'note', title: 'Release train', text: 'Releases leave every second Tuesday.', topic_key }, scope);
    const second = await engine.remember({ memory_type: 'note', title: 'Release train, later', text: 'Releases leave every Thursday.', topic_key }, scope);
    assert.deepEqual((await memory(engine, scope, second.id)).topic_trace!.map((t) => t.id), [first.id, second.id], 'control: the trace');
    await engine.editMemory(scope, first.id, { title: 'Release train (fortnightly)', text: 'Releases left every second Wednesday.' });
    for (const holder of [first.id, second.id]) {
      const segment = (await memory(engine, scope, holder)).topic_trace!.find((t) => t.id === first.id)!;
      assert.deepEqual([segment.title, segment.summary], ['Release train (fortnightly)', 'Releases left every second Wednesday.'], `the trace of memory ${holder}`);
      assert.equal(segment.status, 'closed', 'still history of the topic');
    }
    const own = (await memory(engine, scope, second.id)).topic_trace!.find((t) => t.id === second.id)!;
    assert.deepEqual([own.title, own.status], ['Release train, later', 'current'], 'the other segments are as they were');
  });

  it('an edited title is weighed too', async () => {
    const scope = fresh();
    const files = ['jobs/queue.ts'];
    const a = await engine.remember({ memory_type: 'decision', title: 'Jobs', text: 'We use RabbitMQ for the job queue', files }, scope);
    const b = await engine.remember({ memory_type: 'note', title: 'Job retries', text: 'Failed jobs are retried.', files }, scope);
    await engine.editMemory(scope, b.id, { title: 'We moved the job queue to SQS' });
    assert.equal((await memory(engine, scope, a.id)).superseded_by, b.id);
  });

  it('the conflict an edit reviewed is closed as edited and not flagged again', async () => {
    const scope = fresh();
    const files = ['orders/lock.ts'];
    const a = await engine.remember({ memory_type: 'decision', title: 'Locking', text: 'Orders rely on optimistic locking.', files }, scope);
    const b = await engine.remember({ memory_type: 'decision', title: 'Locking again', text: 'We reverted to pessimistic row locks.', files }, scope);
    assert.deepEqual(openConflicts(await memory(engine, scope, b.id)), [a.id], 'control: flagged');
    const edited = await engine.editMemory(scope, b.id, { text: 'We reverted to pessimistic row locks for the refunds table only.' });
    assert.deepEqual(edited.conflicts!.map((c) => [c.id, c.resolution]), [[a.id, 'edited']]);
    assert.deepEqual((await memory(engine, scope, a.id)).conflicts!.map((c) => [c.id, c.resolution]), [[b.id, 'edited']]);
  });
});

describe('Edit One… in the Memories view weighs the edit (run as VS Code runs it, real engine)', function () {
  this.timeout(60_000);
  let w: TwoProjectWindow;
  let run: (id: string, ...args: unknown[]) => Promise<Any>;
  before(async () => {
    w = await openTwoProjectWindow();
    run = registerQuietCommands(w);
  });
  after(() => w.close());

  it('an edit of one side that disagrees with a third memory is flagged with it, as a write is', async () => {
    const files = ['deploy/schedule.ts'];
    const third = await w.engine.remember({ memory_type: 'decision', title: 'Build cache', text: 'We use Bazel for the build cache', files }, w.alpha);
    const older = await w.engine.remember({ memory_type: 'decision', title: 'Deploy on Fridays', text: 'We deploy on Fridays', files: ['deploy/days.ts'] }, w.alpha);
    const newer = await w.engine.remember({ memory_type: 'decision', title: 'Never deploy on Fridays', text: 'We never deploy on Fridays', files: ['deploy/days.ts'] }, w.alpha);
    const edited = await run('codeMemory.editConflictingMemory', { scope: w.alpha, older: older.id, newer: newer.id }, { id: newer.id, text: 'We moved the build cache to Nx. We deploy on Tuesdays.' });
    assert.ok(edited, w.state.errors.join('\n'));
    // The edited memory's files are deploy/days.ts: about other files than the third, so flagged.
    const t = (await w.engine.getMemories([third.id], w.alpha, { includeSuppressed: true }))[0];
    assert.deepEqual(openConflicts(t), [newer.id]);
  });
});
