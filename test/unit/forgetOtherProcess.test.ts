// A forget run by another process (the CLI, another window) retires the session open here once,
// and only for a forget of this project: engine.noticeForgets compares the forgets' stamps.
// (The capture side, a save after such a forget, is in captureForget.test.ts.)
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import * as os from 'node:os';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import { removeDir, tempDir } from './mcpFixture';

const P = { project: 'github.com/acme/forget-other-p' };
const Q = { project: 'github.com/acme/forget-other-q' };

async function obs(e: MemoryEngine, scope: { project: string }, title: string): Promise<{ id: number; session: string }> {
  const [o] = await e.observe([{ type: 'edit', title, narrative: `${title} narrative text` }], scope);
  return { id: o.id, session: o.memory_session_id };
}

describe('a forget by another process and the sessions open here', function () {
  this.timeout(180_000);
  let dir: string;
  const engines: MemoryEngine[] = [];
  const kids: ChildProcess[] = [];
  beforeEach(() => {
    dir = tempDir('forget-other');
  });
  afterEach(async () => {
    for (const k of kids.splice(0)) k.kill();
    for (const e of engines.splice(0)) await e.close().catch(() => undefined);
    removeDir(dir);
  });
  async function open(): Promise<MemoryEngine> {
    const e = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, batchDelayMs: 20, summariseOrphanSessions: false });
    engines.push(e);
    return e;
  }
  /** What a forget of P by another process writes when it begins: its journal and its project's stamp. */
  async function foreignForgetBegins(e: MemoryEngine, owner: { pid: number; host: string }): Promise<void> {
    await e.store.setMeta({
      [`pending_forget:${randomUUID()}`]: JSON.stringify({ request: { kind: 'observation', ids: [987654321] }, scope: P, owner }),
      [`forgot_at:${createHash('sha256').update(P.project).digest('hex')}`]: String(Date.now()),
    });
  }

  for (const [what, owner] of [
    ['still running here', (): { pid: number; host: string } => ({ pid: spawnSleeper(kids), host: os.hostname() })],
    ['of another host (a store on object storage)', (): { pid: number; host: string } => ({ pid: 12345, host: 'another-host.example' })],
  ] as const) {
    it(`a forget ${what} retires the open session once, not at every write`, async () => {
      const a = await open();
      const first = await obs(a, P, 'first edit');
      await foreignForgetBegins(a, owner());
      const later = [await obs(a, P, 'second edit'), await obs(a, P, 'third edit'), await obs(a, P, 'fourth edit')];
      assert.notEqual(later[0].session, first.session, 'the forget retired the session');
      assert.deepEqual(new Set(later.map((o) => o.session)).size, 1, 'the writes after it went to one session');
    });
  }

  it('this process\'s own forget, then another process\'s forget in another project: the session opened since is kept', async () => {
    const a = await open();
    const b = await open();
    const p1 = await obs(a, P, 'edit to forget');
    await a.forget({ kind: 'observation', ids: [p1.id] }, P);
    const p2 = await obs(a, P, 'edit after own forget');
    assert.notEqual(p2.session, p1.session, 'control: the own forget retired its session');
    const q1 = await obs(b, Q, 'other project edit');
    await b.forget({ kind: 'observation', ids: [q1.id] }, Q);
    assert.equal((await obs(a, P, 'next edit')).session, p2.session);
  });

  it('another process\'s forget in the open session is not masked by an own forget of something else since', async () => {
    const a = await open();
    const b = await open();
    const p1 = await obs(a, P, 'edit forgotten by the CLI');
    const m = await a.remember({ title: 'unrelated note', text: 'some unrelated decision', memory_type: 'note' }, P);
    await b.forget({ kind: 'observation', ids: [p1.id] }, P);
    await a.forget({ kind: 'memory', ids: [m.id] }, P);
    assert.notEqual((await obs(a, P, 'next edit')).session, p1.session);
  });

  it('End Session after another process\'s forget summarises the session that holds what is kept', async () => {
    const a = await open();
    const b = await open();
    const kept = await obs(a, P, 'edit kept in session');
    const gone = await obs(a, P, 'edit to forget elsewhere');
    assert.equal(kept.session, gone.session);
    await b.forget({ kind: 'observation', ids: [gone.id] }, P);
    const { summary } = await a.endCurrentSession(P, 'request');
    assert.ok(summary, 'a summary of the session');
    assert.equal(summary.memory_session_id, kept.session);
    assert.doesNotMatch(JSON.stringify(summary), /edit to forget elsewhere/);
  });
});

function spawnSleeper(kids: ChildProcess[]): number {
  const sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
  kids.push(sleeper);
  return sleeper.pid!;
}
