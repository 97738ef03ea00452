// Two writers superseding at once (README "Memories that stay true", `remember`'s `supersedes`):
// a new memory reads the project's memories, decides what it retires and writes, as one step.
// Two `remember` calls at once (two tool calls to one server, or two processes on one store) must
// not both retire the same memory, nor both miss each other's topic_key: one topic keeps one
// current memory, and a memory named in `supersedes` that the other call retired first is refused
// as already superseded. The other writers of memories that read before they write take the same
// turn: an edit racing a remember that retires the memory keeps both the edit and the retirement,
// a suppression is not written over, and a forget of a chain's current end racing a remember of
// its topic leaves one current memory. Real LanceDB in temporary folders, real child processes.
import * as assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import type { Memory, Scope } from '../../src/core/model/records';
import { rememberTool } from '../../src/core/tools/write';
import { openTestEngine, removeDir, scopeMaker, storedMemory, tempDir, toolContext } from './mcpFixture';
import { raceAtOnce } from './fixtures/racers';

const WRITER = path.join(__dirname, 'fixtures', 'memoryWriter.ts');

/** What the memories of `scope` say of each other: current ones, and who retired whom. */
async function standing(engine: MemoryEngine, scope: Scope): Promise<{ current: number[]; retired: Map<number, number | null> }> {
  const all: Memory[] = await engine.listMemories(scope, { includeSuppressed: true });
  return {
    current: all.filter((m) => m.status === 'active').map((m) => m.id).sort((a, b) => a - b),
    retired: new Map(all.filter((m) => m.status === 'superseded').map((m) => [m.id, m.superseded_by])),
  };
}

describe('two writers superseding at once', function () {
  this.timeout(180_000);

  describe('two calls to one engine', () => {
    let engine: MemoryEngine;
    let dir: string;
    const fresh = scopeMaker('supersede-at-once');
    before(async () => ({ engine, dir } = await openTestEngine()));
    after(async () => {
      await engine.close();
      removeDir(dir);
    });

    it('the same topic_key: the older memory is retired once, and one of the two new ones is current', async () => {
      const scope = fresh();
      const a = await engine.remember({ memory_type: 'decision', title: 'Database', text: 'We use PostgreSQL.', topic_key: 'database' }, scope);
      const [b, c] = await Promise.all([
        engine.remember({ memory_type: 'decision', title: 'Database', text: 'We use MySQL.', topic_key: 'database' }, scope),
        engine.remember({ memory_type: 'decision', title: 'Database', text: 'We use SQLite.', topic_key: 'database' }, scope),
      ]);
      const { current, retired } = await standing(engine, scope);
      assert.equal(current.length, 1, `one current memory of the topic: ${JSON.stringify({ a: a.id, b: b.id, c: c.id, current, retired: [...retired] })}`);
      // A chain: A by the first one written, that one by the second.
      const [first, second] = [b, c].sort((x, y) => (x.supersedes?.includes(a.id) ? -1 : y.supersedes?.includes(a.id) ? 1 : 0));
      assert.deepEqual(first!.supersedes, [a.id]);
      assert.deepEqual(second!.supersedes, [first!.id]);
      assert.deepEqual(current, [second!.id]);
      assert.equal(retired.get(a.id), first!.id);
      assert.equal(retired.get(first!.id), second!.id);
    });

    it('naming the same memory in supersedes: one call retires it, the other is refused and stores nothing', async () => {
      const scope = fresh();
      const ctx = toolContext(engine, scope);
      const a = await engine.remember({ memory_type: 'note', title: 'Deploys', text: 'Deploys happen on Fridays.' }, scope);
      const results = await Promise.all([
        rememberTool.run(ctx, { title: 'Deploys', text: 'Deploys happen on Tuesdays.', supersedes: [a.id] }),
        rememberTool.run(ctx, { title: 'Deploys', text: 'Deploys happen on Wednesdays.', supersedes: [a.id] }),
      ]);
      const ok = results.filter((r) => !r.isError);
      const refused = results.filter((r) => r.isError);
      assert.equal(ok.length, 1, results.map((r) => r.text).join('\n'));
      assert.match(refused[0]!.text, new RegExp(`^invalid_arguments: supersedes: memory ${a.id} was already superseded by memory ${Number(ok[0]!.structured!.id)}`));
      const { current, retired } = await standing(engine, scope);
      assert.deepEqual(current, [Number(ok[0]!.structured!.id)]);
      assert.equal(retired.get(a.id), Number(ok[0]!.structured!.id));
    });

    it('an edit racing a remember that retires the memory: the edit and the retirement both stay', async () => {
      const scope = fresh();
      const a = await engine.remember({ memory_type: 'decision', title: 'Database', text: 'We use PostgreSQL.', topic_key: 'database' }, scope);
      const [, b] = await Promise.all([
        engine.editMemory(scope, a.id, { text: 'We use PostgreSQL 16.' }),
        engine.remember({ memory_type: 'decision', title: 'Database', text: 'We use MySQL.', topic_key: 'database' }, scope),
      ]);
      const stored = await storedMemory(engine, scope, a.id);
      assert.equal(stored.text, 'We use PostgreSQL 16.');
      assert.equal(stored.status, 'superseded');
      assert.equal(stored.superseded_by, b.id);
      assert.deepEqual((await standing(engine, scope)).current, [b.id]);
    });

    it('a suppression racing a remember that retires the memory: it stays suppressed', async () => {
      for (const delay of [0, 10, 30, 60]) {
        const scope = fresh();
        const a = await engine.remember({ memory_type: 'decision', title: 'Database', text: 'We use PostgreSQL.', topic_key: 'database' }, scope);
        // The suppression comes at a few points of the remember (it has no hook to wait on).
        const [, b] = await Promise.all([
          new Promise((resolve) => setTimeout(resolve, delay)).then(() => engine.setStatus('memory', a.id, 'suppressed', scope)),
          engine.remember({ memory_type: 'decision', title: 'Database', text: 'We use MySQL.', topic_key: 'database' }, scope),
        ]);
        // Suppressed first, it is no current memory for the remember to retire; retired first, it keeps the link.
        const stored = await storedMemory(engine, scope, a.id);
        assert.equal(stored.status, 'suppressed', JSON.stringify({ delay, stored }));
        assert.ok(stored.superseded_by === null || stored.superseded_by === b.id, JSON.stringify(stored));
        assert.deepEqual((await standing(engine, scope)).current, [b.id]);
      }
    });

    it("a forget of a chain's current end racing a remember of its topic: one current memory, the rest its history", async () => {
      for (const delay of [0, 20, 100]) {
        const scope = fresh();
        const a = await engine.remember({ memory_type: 'decision', title: 'Database', text: 'We use PostgreSQL.', topic_key: 'database' }, scope);
        const b = await engine.remember({ memory_type: 'decision', title: 'Database', text: 'We use MySQL.', topic_key: 'database' }, scope);
        // The remember starts at a few points of the forget (it has no hook to wait on).
        const [, c] = await Promise.all([
          engine.forget({ kind: 'memory', ids: [b.id] }, scope),
          new Promise((resolve) => setTimeout(resolve, delay)).then(() => engine.remember({ memory_type: 'decision', title: 'Database', text: 'We use SQLite.', topic_key: 'database' }, scope)),
        ]);
        const { current, retired } = await standing(engine, scope);
        assert.deepEqual(current, [c.id], JSON.stringify({ delay, a: a.id, b: b.id, c: c.id, current, retired: [...retired] }));
        assert.equal(retired.get(a.id), c.id);
      }
    });
  });

  describe('two processes on one store', () => {
    let dir: string;
    /** Where the racers' go files are made (not the store's folder). */
    let goes: string;
    let round = 0;
    const children: ChildProcess[] = [];
    before(() => {
      dir = tempDir('cm-supersede-procs-');
      goes = tempDir('cm-supersede-go-');
    });
    after(() => {
      for (const c of children) if (c.exitCode === null) c.kill();
      removeDir(dir);
      removeDir(goes);
    });

    /** Starts one writer per argument list, lets them all go at once, and returns what each printed. */
    async function race(project: string, args: string[][]): Promise<Array<{ id?: number; superseded?: number[]; error?: string }>> {
      const go = path.join(goes, `go-${++round}`);
      const outs = await raceAtOnce(WRITER, args.map((a) => [dir, project, go, ...a]), go, children, 'memory writer');
      return outs.map((o) => JSON.parse(o.split('\n').filter((l) => l.startsWith('{')).pop()!) as { id?: number; superseded?: number[]; error?: string });
    }

    it('the same topic_key and the same memory named, from two processes: one current memory each time', async () => {
      const open = (): Promise<MemoryEngine> => MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      const topicScope = { project: 'github.com/acme/procs-topic' };
      const namedScope = { project: 'github.com/acme/procs-named' };
      let engine = await open();
      const a = await engine.remember({ memory_type: 'decision', title: 'Deploy day', text: 'Deploys happen on Fridays.', topic_key: 'deploy-day' }, topicScope);
      const n = await engine.remember({ memory_type: 'decision', title: 'Deploy day', text: 'Deploys happen on Fridays.' }, namedScope);
      await engine.close();

      const byTopic = await race(topicScope.project, [['one', 'deploy-day'], ['two', 'deploy-day']]);
      const byName = await race(namedScope.project, [['one', '', String(n.id)], ['two', '', String(n.id)]]);

      engine = await open();
      try {
        const topic = await standing(engine, topicScope);
        assert.equal(topic.current.length, 1, JSON.stringify({ a: a.id, byTopic, current: topic.current, retired: [...topic.retired] }));
        assert.equal(topic.retired.size, 2);
        const named = await standing(engine, namedScope);
        const ok = byName.filter((r) => r.id !== undefined);
        assert.equal(ok.length, 1, JSON.stringify(byName));
        assert.match(byName.find((r) => r.error)!.error!, new RegExp(`memory ${n.id} was already superseded by memory ${ok[0]!.id}`));
        assert.deepEqual(named.current, [ok[0]!.id]);
        assert.equal(named.retired.get(n.id), ok[0]!.id);
      } finally {
        await engine.close();
      }
    });

    it('an edit and a remember that retires the memory, from two processes: the edit and the retirement both stay', async () => {
      const open = (): Promise<MemoryEngine> => MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      const scope = { project: 'github.com/acme/procs-edit' };
      let engine = await open();
      const a = await engine.remember({ memory_type: 'decision', title: 'Deploy day', text: 'Deploys happen on Fridays.', topic_key: 'deploy-day' }, scope);
      await engine.close();

      const [edit, remembered] = await race(scope.project, [[`edit:${a.id}`], ['two', 'deploy-day']]);

      engine = await open();
      try {
        assert.equal(edit!.id, a.id, JSON.stringify(edit));
        const stored = await storedMemory(engine, scope, a.id);
        assert.equal(stored.text, 'Deploys happen on day edited.');
        assert.equal(stored.status, 'superseded');
        assert.equal(stored.superseded_by, remembered!.id);
        assert.deepEqual((await standing(engine, scope)).current, [remembered!.id]);
      } finally {
        await engine.close();
      }
    });
  });
});
