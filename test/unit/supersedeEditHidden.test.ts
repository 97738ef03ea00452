// An edit of a memory, current, hidden or history (README "Memories that stay true", Edit): its
// facts are read from its new words whatever its status, and a topic key it took from its old
// words goes with them, so that what it says when it holds again (Unsuppress, or its successor
// forgotten) is what is weighed and answered, never the facts or subject of words a person replaced.

import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Memory, Scope } from '../../src/core/model/records';
import { openTestEngine, removeDir, scopeMaker, storedMemory } from './mcpFixture';

const memory = storedMemory;
const factsOf = (m: Memory): string[] => (m.temporal_facts ?? []).map((f) => `${f.subject} ${f.predicate} ${f.object} ${f.status}`);

describe('an edit, whatever the memory\'s status: its facts and the topic it took follow its new words (real engine)', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  const fresh = scopeMaker('edit-hidden');

  before(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  const decide = (scope: Scope, text: string): Promise<Memory> => engine.remember({ memory_type: 'decision', title: 'Storage', text, files: ['src/db.ts'] }, scope);

  it('a suppressed memory edited has the facts of its new words, and holds with them when unsuppressed', async () => {
    const scope = fresh();
    const a = await decide(scope, 'We use PostgreSQL 14 for the orders service');
    await engine.setStatus('memory', a.id, 'suppressed', scope);
    await engine.editMemory(scope, a.id, { text: 'We use Redis for the session cache' });
    assert.deepEqual(factsOf(await memory(engine, scope, a.id)), ['session cache uses redis current']);
    await engine.setStatus('memory', a.id, 'active', scope);
    const a2 = await memory(engine, scope, a.id);
    assert.equal(a2.status, 'active');
    assert.deepEqual(factsOf(a2), ['session cache uses redis current']);
  });

  it('a superseded memory edited, its successor forgotten: it holds again with the facts of its new words', async () => {
    const scope = fresh();
    const a = await decide(scope, 'We use PostgreSQL 14 for the orders service');
    const b = await decide(scope, 'We moved the orders service to SQLite');
    assert.equal((await memory(engine, scope, a.id)).superseded_by, b.id, 'control');
    await engine.editMemory(scope, a.id, { text: 'We use Redis for the session cache' });
    const edited = await memory(engine, scope, a.id);
    assert.deepEqual(factsOf(edited), ['session cache uses redis closed']);
    const [fact] = edited.temporal_facts ?? [];
    assert.equal(fact?.valid_to_epoch, edited.valid_to_epoch, 'closed when A became history');
    assert.ok((fact?.valid_from_epoch ?? Infinity) <= (fact?.valid_to_epoch ?? 0), 'held before it closed');
    await engine.forget({ kind: 'memory', ids: [b.id] }, scope);
    const a2 = await memory(engine, scope, a.id);
    assert.equal(a2.status, 'active');
    assert.deepEqual(factsOf(a2), ['session cache uses redis current']);
  });

  // The topic key a memory took from its first fact (remember keeps it, givenTopicKey reads it so)
  // goes with the words it was taken from: kept after an edit to other words, it read as a key a
  // person gave, and Unsuppress retired the memory by it as history of a newer memory of the old subject.
  it('a memory edited to other words, then suppressed and unsuppressed, is not retired by the subject it no longer speaks of', async () => {
    const scope = fresh();
    const a = await decide(scope, 'We use PostgreSQL 14 for the orders service');
    await engine.editMemory(scope, a.id, { text: 'We use Redis for the session cache' });
    const b = await engine.remember({ memory_type: 'decision', title: 'Orders', text: 'We moved the orders service to SQLite', files: ['src/orders.ts'] }, scope);
    assert.equal((await memory(engine, scope, a.id)).status, 'active', 'control: the write of B leaves A current');
    await engine.setStatus('memory', a.id, 'suppressed', scope);
    await engine.setStatus('memory', a.id, 'active', scope);
    const a2 = await memory(engine, scope, a.id);
    assert.equal(a2.status, 'active', `A is current again, not history of B (superseded by ${a2.superseded_by})`);
    assert.equal((await memory(engine, scope, b.id)).status, 'active');
  });

  it('a suppressed memory edited to other words, unsuppressed after a newer memory of its old subject: current', async () => {
    const scope = fresh();
    const a = await decide(scope, 'We use PostgreSQL 14 for the orders service');
    await engine.setStatus('memory', a.id, 'suppressed', scope);
    await engine.editMemory(scope, a.id, { text: 'We use Redis for the session cache' });
    await engine.remember({ memory_type: 'decision', title: 'Orders', text: 'We moved the orders service to SQLite', files: ['src/orders.ts'] }, scope);
    await engine.setStatus('memory', a.id, 'active', scope);
    assert.equal((await memory(engine, scope, a.id)).status, 'active');
  });

  it('a topic_key given at remember stays through an edit (control)', async () => {
    const scope = fresh();
    const a = await engine.remember({ memory_type: 'decision', title: 'Storage', text: 'We use PostgreSQL 14 for the orders service', topic_key: 'storage-choice' }, scope);
    await engine.editMemory(scope, a.id, { text: 'We use Redis for the session cache' });
    assert.equal((await memory(engine, scope, a.id)).topic_key, 'storage-choice');
  });
});
