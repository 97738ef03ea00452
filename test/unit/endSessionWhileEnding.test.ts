// "End Session Now" (endCurrentSession) while the idle timer is ending the same session: the
// session is off the open list while it is compressed, and the command found nothing open, made
// a new empty session, ended it and reported that one, with no summary. It reports the session
// being ended, with its summary, once ended, and makes no other. Real engine on a temp store.
import { strict as assert } from 'node:assert';
import { MemoryEngine } from '../../src/core/engine';
import { removeDir, tempDir } from './mcpFixture';

describe('engine: ending the current session while it is being ended', function () {
  this.timeout(120_000);
  let dir: string;
  let engine: MemoryEngine;
  const scope = { project: 'shop', branch: 'main' };

  beforeEach(async () => {
    dir = tempDir('end-while-ending');
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  });
  afterEach(async () => {
    await engine.close();
    removeDir(dir);
  });

  it('reports the session the idle end is ending, with its summary, and makes no empty one', async () => {
    await engine.observe([{ type: 'note', title: 'prices triple', narrative: 'the price function now triples' }], scope);
    const id = await engine.currentSessionId(scope);
    const idle = engine.endSession(scope, id, 'idle');
    const now = await engine.endCurrentSession(scope, 'request');
    const summary = await idle;
    assert.equal(now.sessionId, id);
    assert.ok(summary, 'the idle end wrote a summary');
    assert.equal(now.summary?.id, summary.id);
    const sessions = await engine.listSessions({ project: scope.project }, 100);
    assert.deepEqual(sessions.map((s) => s.memory_session_id), [id]);
  });

  it('with nothing open or being ended, ends a new session, as before', async () => {
    const now = await engine.endCurrentSession(scope, 'request');
    assert.match(now.sessionId, /^s-/);
    assert.equal(now.summary, null);
  });
});
