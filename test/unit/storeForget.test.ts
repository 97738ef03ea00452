import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { processStarted } from '../../src/core/store/processRef';
import { TABLES } from '../../src/core/store/schema';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { pruneSessionPrompts } from '../../src/core/store/repos/prompts';
import { filesContaining } from './diskFixture';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { commitAll, git } from './gitImportFixture';
import { toolContext } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

describe('store: forget', function () {
  this.timeout(120_000);
  let dir: string;
  let engine: MemoryEngine;
  const scope = { project: 'acme/app', branch: 'main' };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-forget-'));
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  });
  afterEach(async () => {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("forgetting a whole project leaves neither its text nor its name in any file (the forget's own journal included)", async () => {
    const gone = { project: 'acme/secretproject-okapi' };
    await engine.remember({ title: 'Plan', text: 'the launch of narwhalorbit in May' }, gone);
    await engine.remember({ title: 'Kept', text: 'kept text stays here' }, scope);
    await engine.flush();
    await engine.forget({ project: gone.project }, null);
    assert.deepEqual(filesContaining(dir, 'narwhalorbit'), []);
    assert.deepEqual(filesContaining(dir, 'secretproject-okapi'), []);
    assert.equal((await engine.search('kept text', { scope })).length > 0, true, 'the other project stays');
  });

  it('removes a forgotten observation from results and from every file on disk', async () => {
    const filler = Array.from({ length: 200 }, (_, i) => ({ type: 'note', title: `ordinary note number ${i}`, narrative: `routine work item ${i}` }));
    await engine.observe(filler.slice(0, 100), scope);
    const [secret] = await engine.observe(
      [{ type: 'note', title: 'Quokkaphrase migration', narrative: 'We decided to use quokkaphrase for the ledger. Quokkaphrase wins.', facts: ['quokkaphrase is fast'] }],
      scope,
    );
    await engine.observe(filler.slice(100), scope);
    // Compact first: the hard case is a forgotten row inside a big, already compacted fragment.
    await engine.optimize(0);
    assert.equal((await engine.search('quokkaphrase', { scope })).length, 1);
    assert.ok(filesContaining(dir, 'quokkaphrase').length > 0, 'the control failed: the text should be on disk before forget');

    const report = await engine.forget({ kind: 'observation', ids: [secret.id] }, scope);
    assert.equal(report.observations, 1);
    assert.ok(report.pruned);
    assert.equal((await engine.search('quokkaphrase', { scope })).length, 0);
    assert.deepEqual(await engine.getObservations([secret.id], scope), []);
    assert.deepEqual(filesContaining(dir, 'quokkaphrase'), []);
    // Everything else survived, and the store still works.
    assert.equal((await engine.stats(scope)).observations, 200);
    assert.equal((await engine.search('routine work item', { scope, limit: 3 })).length, 3);
    await engine.observe([{ type: 'note', title: 'after forget' }], scope);
    assert.equal((await engine.search('after forget', { scope })).length, 1);
  });

  it('forgets the request log quoting a record dated after the request (a client\'s or a commit\'s date)', async () => {
    const future = Date.now() + 365 * 24 * 3600_000;
    const [o] = await engine.observe([{ type: 'decision', title: 'Futurewombat rollout plan', narrative: 'futurewombat goes live', created_at_epoch: future }], scope);
    await engine.flush();
    const out = await retrieveMemory(toolContext(engine, scope), { prompt: 'what is the rollout plan?', session_id: 't1' });
    assert.match(out.content_text ?? '', /Futurewombat/, 'control: retrieve_memory quotes the record');
    await engine.forget({ kind: 'observation', ids: [o.id] }, scope);
    assert.deepEqual((await engine.listRequests(scope, 100)).filter((e) => /futurewombat/i.test(e.response)).map((e) => e.request_id), []);
    assert.deepEqual(filesContaining(dir, 'futurewombat'), []);
  });

  describe('rows deleted before the forget (a request log aged out, a prompt expired) keep their text in their fragments', () => {
    /** Reopens the engine with a request log kept for `maxAgeMs`, and asks retrieve_memory about `word` until the record is quoted. */
    async function quoted(word: string, project: { project: string }, maxAgeMs: number): Promise<number> {
      await engine.close();
      engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, requestLogRetention: { maxAgeMs, maxRows: 10_000 } });
      const [o] = await engine.observe([{ type: 'decision', title: `${word} rollout`, narrative: `${word} goes live on Friday` }], project);
      await engine.observe([{ type: 'note', title: 'other project note', narrative: 'other stays' }], { project: 'other/app' });
      await engine.flush();
      const out = await retrieveMemory(toolContext(engine, project), { prompt: `when does ${word} go live?`, session_id: 's1' });
      assert.match(out.content_text ?? '', new RegExp(word, 'i'), 'control: the answer quotes the record');
      await engine.flush();
      return o.id;
    }

    it('forgetting a record takes them out of the files (the project had no log or prompt rows left to delete)', async () => {
      const id = await quoted('Wombatquill', scope, 200);
      await new Promise((r) => setTimeout(r, 400));
      await engine.maintenance.pruneRequestLog();
      assert.equal((await engine.listRequests(scope, 100)).length, 0, 'control: the entry aged out');
      // 31 days later the prompts have expired too.
      await pruneSessionPrompts(engine.store, Date.now() + 31 * 24 * 3600_000);
      assert.ok(filesContaining(dir, 'wombatquill').some((f) => f.startsWith('request_log') || f.startsWith('session_prompts')), 'control: the deleted rows are on disk');
      await engine.forget({ kind: 'observation', ids: [id] }, scope);
      assert.deepEqual(filesContaining(dir, 'wombatquill'), []);
    });

    it('forgetting the project takes them, and its name, out of the files', async () => {
      const gone = { project: 'acme/secretproj-kestrelfin' };
      await quoted('Ibexmarrow', gone, 200);
      await new Promise((r) => setTimeout(r, 400));
      await engine.maintenance.pruneRequestLog();
      await engine.forget({ project: gone.project }, null);
      assert.deepEqual(filesContaining(dir, 'ibexmarrow'), []);
      assert.deepEqual(filesContaining(dir, 'kestrelfin'), []);
    });
  });

  it('leaves no older copy of a record that was read or edited after compaction (an update leaves it in its fragment)', async () => {
    const filler = Array.from({ length: 200 }, (_, i) => ({ type: 'note', title: `ordinary note number ${i}`, narrative: `routine work item ${i}` }));
    await engine.observe(filler.slice(0, 100), scope);
    const [read] = await engine.observe([{ type: 'note', title: 'Dugongledger migration', narrative: 'We chose dugongledger for the ledger.' }], scope);
    await engine.observe(filler.slice(100), scope);
    const edited = await engine.remember({ title: 'Rotate the dugongtitle keys', text: 'We rotate the dugongtext keys monthly.' }, scope);
    await engine.observe([{ type: 'note', title: 'other project note', narrative: 'dugongkeep stays' }], { project: 'other/app' });
    await engine.flush();
    // Compacted: each record sits in one big fragment with the others.
    await engine.optimize(0);
    // An agent reads one (get_observations records the access: its row and cell are updated),
    // and the memory is edited.
    await engine.touch('observation', [read.id], scope);
    await engine.editMemory(scope, edited.id, { title: 'Rotate the keys' });
    assert.ok(filesContaining(dir, 'dugongtitl').length > 0, 'control: the old title is on disk');
    await engine.forget({ kind: 'observation', ids: [read.id] }, scope);
    await engine.forget({ kind: 'memory', ids: [edited.id] }, scope);
    await engine.close();
    assert.deepEqual(['dugongledg', 'dugongtitl', 'dugongtext'].flatMap((w) => filesContaining(dir, w)), []);
    assert.ok(filesContaining(dir, 'dugongkeep').length > 0, 'the other project keeps its record');
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  });

  it("forgetting a symbol's doc comment takes it out of the commits indexed with it, and leaves their own words", async () => {
    const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-forget-repo-'));
    try {
      git(repo, ['init', '-q', '-b', 'main']);
      const doc = '    """Frobnicate the widgets with the manateepolicy, checked nightly."""\n';
      commitAll(repo, { subject: 'Add the frobnicator module', time: 1767600000, files: { 'widget/frob.py': `def frobnicate_widget(items):\n${doc}    return sum(items)\n` } });
      // Later commits change the body only: the doc comment reaches them as the symbol's documentation.
      for (let i = 1; i <= 2; i++) {
        commitAll(repo, { subject: `Tune the frobnication loop ${i}`, time: 1767600000 + 3600 * i, files: { 'widget/frob.py': `def frobnicate_widget(items):\n${doc}    return sum(items) * ${i} + ${i}\n` } });
      }
      await importGitHistory(engine, repo, { scope });
      const all = await engine.listObservations(scope, { limit: 100 });
      const documents = all.filter((o) => o.type === 'document' && o.narrative?.includes('manateepolicy'));
      const first = all.find((o) => o.title === 'Add the frobnicator module')!;
      assert.equal(documents.length, 1, 'control: the doc comment is a document');
      assert.ok(filesContaining(dir, 'manateepolici').length > 0, 'control: on disk');
      await engine.forget({ kind: 'observation', ids: [first.id, documents[0].id] }, scope);
      const tuned = (await engine.search('frobnication loop tune', { scope, limit: 10 })).filter((h) => h.cell.title.startsWith('Tune'));
      assert.equal(tuned.length, 2, 'the later commits are still found by their own words');
      await engine.close();
      assert.deepEqual(filesContaining(dir, 'manateepolici'), []);
      engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    } finally {
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });

  it('forgets what was derived from an observation (its session summary) too', async () => {
    const session = await engine.currentSessionId(scope);
    const [o] = await engine.observe([{ type: 'note', title: 'Wombatcache decision', narrative: 'We decided to use wombatcache instead of redis.' }], scope);
    await engine.observe([{ type: 'edit', title: 'Edited the cache layer', files_modified: ['src/cache.ts'] }], scope);
    const summary = await engine.endSession(scope, session, 'request');
    assert.match(summary?.decisions ?? '', /wombatcache/);
    const report = await engine.forget({ ids: [o.id] }, scope);
    assert.equal(report.session_summaries, 1);
    assert.equal((await engine.search('wombatcache', { scope, layers: ['L0', 'L1', 'L2'] })).length, 0);
    assert.deepEqual(filesContaining(dir, 'wombatcache'), []);
  });

  it('forgetting a session summary forgets the session: nothing writes the summary again', async () => {
    await engine.close();
    // Sessions idle at once, so that the sweep looks at every one.
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, summariseOrphanSessions: false, sessionIdleMs: 1 });
    const session = await engine.currentSessionId(scope);
    await engine.observe([{ type: 'decision', title: 'Wombatledger decision', narrative: 'We decided to use wombatledger instead of the old ledger.' }], scope);
    await engine.observe([{ type: 'edit', title: 'Edited the ledger', files_modified: ['src/ledger.ts'] }], scope);
    const other = await engine.observe([{ type: 'note', title: 'Another session stays', memory_session_id: 'other-session' }], scope);
    const summary = await engine.endSession(scope, session, 'request');
    assert.match(summary?.decisions ?? '', /wombatledger/);
    const report = await engine.forget({ kind: 'session_summary', ids: [summary!.id] }, scope);
    assert.deepEqual([report.session_summaries, report.observations], [1, 2]);
    // Its observations were what the summary compressed: kept, the sweep of sessions a crashed
    // process never ended (run after every open) or the session's next end wrote it again.
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(await engine.endOrphanSessions(), 1, 'only the other session is left to end');
    assert.equal(await engine.endSession(scope, session, 'request'), null);
    assert.deepEqual((await engine.listSessions(scope)).map((s) => s.memory_session_id), ['other-session']);
    assert.equal((await engine.getObservations([other[0].id], scope)).length, 1);
    assert.deepEqual(filesContaining(dir, 'wombatledger'), []);
  });

  it('forgetting a memory takes from its successor the subject the successor took over from it', async () => {
    const older = await engine.remember({ title: 'Orders database', text: 'The quixbarrow service uses PostgreSQL 14.', memory_type: 'decision' }, scope);
    const filler = [];
    for (let i = 0; i < 30; i++) filler.push(await engine.remember({ title: `Convention ${i}`, text: `Routine convention number ${i}.` }, scope));
    // "Switched from A to B" names no subject: it took the subject of the fact it ends.
    const newer = await engine.remember({ title: 'Database move', text: 'We switched from PostgreSQL to SQLite.', memory_type: 'decision' }, scope);
    assert.equal((await engine.getMemories([older.id], scope, { includeSuppressed: true }))[0].status, 'superseded', 'control');
    assert.match(JSON.stringify(await engine.getMemories([newer.id], scope)), /quixbarrow/, 'control: the successor took the subject');
    await engine.optimize(0);
    await engine.forget({ kind: 'memory', ids: [older.id] }, scope);
    const [kept] = await engine.getMemories([newer.id], scope);
    assert.ok(!/quixbarrow/i.test(JSON.stringify(kept)), JSON.stringify(kept));
    assert.match(JSON.stringify(kept.temporal_facts), /sqlite/, 'its own words stay');
    assert.deepEqual(filesContaining(dir, 'quixbarrow'), []);
  });

  it('forgets a whole project and leaves the others', async () => {
    await engine.observe([{ type: 'note', title: 'Platypusplan for project one' }], { project: 'one' });
    await engine.observe([{ type: 'note', title: 'Echidnaplan for project two' }], { project: 'two' });
    await engine.forget({ project: 'one' }, null);
    assert.equal((await engine.search('platypusplan', { scope: { project: 'one' } })).length, 0);
    assert.equal((await engine.search('echidnaplan', { scope: { project: 'two' } })).length, 1);
    assert.deepEqual(filesContaining(dir, 'platypusplan'), []);
    await assert.rejects(engine.forget({ project: 'two' }, { project: 'one' }), /cannot forget project/);
  });

  it('forgets everything', async () => {
    await engine.observe([{ type: 'note', title: 'Numbatnote everywhere' }], { project: 'one' });
    await engine.remember({ title: 'Numbatnote memory', text: 'numbatnote' }, { project: 'one' });
    // A caller scoped to one project cannot forget the others.
    await assert.rejects(engine.forget({ all: true }, { project: 'two' }), /not for a caller scoped to project 'two'/);
    assert.equal((await engine.stats(null)).memories, 1);
    await engine.forget({ all: true }, null);
    const stats = await engine.stats(null);
    assert.equal(stats.observations + stats.memories + stats.cells, 0);
    assert.deepEqual(filesContaining(dir, 'numbatnote'), []);
  });
  it("a forget in one process does not drop another running process's journal (that process then crashes: its forget is still finished)", async () => {
    const filler = Array.from({ length: 100 }, (_, i) => ({ type: 'note', title: `ordinary note number ${i}`, narrative: `routine work item ${i}` }));
    await engine.observe(filler, scope);
    const [secret] = await engine.observe([{ type: 'decision', title: 'The wombatmigration', narrative: 'We decided to use wombatmigration for the ledger.' }], scope);
    await engine.flush();
    await engine.optimize(0);
    const other = { project: 'acme/other', branch: 'main' };
    const [mine] = await engine.observe([{ type: 'note', title: 'Other project note', narrative: 'a note in the other project' }], other);
    await engine.flush();
    assert.ok(filesContaining(dir, 'wombatmigration').length > 0, 'control');

    // Process B (still running) journalled its forget of `secret` and deleted the rows; its purge is to come.
    const b = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      const journal = {
        request: { kind: 'observation', ids: [secret.id] },
        scope,
        owner: { pid: b.pid as number, host: os.hostname() },
        closure: { doomed: { observation: [secret.id], session_summary: [], memory: [] }, entities: [], restore: [] },
      };
      await engine.store.setMeta({ pending_forget: JSON.stringify(journal) });
      await engine.store.delete(TABLES.observations, `project = 'acme/app' AND id IN (${secret.id})`);
      await engine.store.delete(TABLES.cells, `project = 'acme/app' AND source_kind = 'observation' AND source_id IN (${secret.id})`);
      // Meanwhile this process (A) forgets something else.
      await engine.forget({ kind: 'observation', ids: [mine.id] } as never, other);
      await engine.close();
    } finally {
      // B crashes before its purge.
      b.kill('SIGKILL');
      await new Promise((resolve) => b.once('exit', resolve));
    }
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    assert.deepEqual(filesContaining(dir, 'wombatmigration'), [], "README: a forget a crash interrupted is finished by the next open; B's journal was overwritten/removed by A's forget");
  });

  describe('interrupted by a crash', () => {
    /** A store holding a note about `word`, quoted in the request log, among 200 others; compacted. */
    async function seed(word: string): Promise<number> {
      const filler = Array.from({ length: 200 }, (_, i) => ({ type: 'note', title: `ordinary note number ${i}`, narrative: `routine work item ${i}` }));
      await engine.observe(filler.slice(0, 100), scope);
      const [secret] = await engine.observe([{ type: 'decision', title: `The ${word} migration`, narrative: `We decided to use ${word} for the ledger.` }], scope);
      await engine.observe(filler.slice(100), scope);
      await engine.flush();
      await retrieveMemory(toolContext(engine, scope), { prompt: `what did we decide about ${word}?`, session_id: 's1' });
      await engine.optimize(0);
      assert.ok(filesContaining(dir, word).length > 0, 'control: the word is on disk before forget');
      return secret.id;
    }

    /** The state a forget killed after its deletes and before its purge leaves: the journal as it writes it, the rows gone, their text still in the files. */
    async function crashAfterDeletes(id: number, owner: { pid: number; host: string; started?: string }): Promise<void> {
      const journal = {
        request: { kind: 'observation', ids: [id] },
        scope,
        owner,
        closure: { doomed: { observation: [id], session_summary: [], memory: [] }, entities: [], restore: [] },
      };
      await engine.store.setMeta({ 'pending_forget:test-journal': JSON.stringify(journal) });
      await engine.store.delete(TABLES.observations, `project = 'acme/app' AND id IN (${id})`);
      await engine.store.delete(TABLES.cells, `project = 'acme/app' AND source_kind = 'observation' AND source_id IN (${id})`);
      await engine.close();
    }

    function deadPid(): number {
      const child = spawnSync(process.execPath, ['-e', '']);
      return child.pid as number;
    }

    it('the next open finishes it: the text is in no file, the request log quoting it is gone', async () => {
      const id = await seed('quollmigration');
      await crashAfterDeletes(id, { pid: deadPid(), host: os.hostname() });
      engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      assert.equal(await engine.store.getMeta('pending_forget:test-journal'), null);
      assert.deepEqual(await engine.getObservations([id], scope), []);
      assert.deepEqual((await engine.listRequests(scope, 100)).filter((e) => /quollmigration/i.test(e.response + e.arguments)).map((e) => e.request_id), []);
      assert.equal((await engine.stats(scope)).observations, 200);
      assert.deepEqual(filesContaining(dir, 'quollmigration'), []);
    });

    it('a forget whose pid now names another process (its own ended, as before a reboot) is finished by the next open', async function () {
      const id = await seed('numbatmigration');
      const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
      try {
        await once(other, 'spawn');
        const started = processStarted(other.pid as number);
        if (!started) this.skip(); // no start times here (not Linux): the pid alone decides
        await crashAfterDeletes(id, { pid: other.pid as number, host: os.hostname(), started: started.replace(/\/\d+$/, '/1') });
        engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
        assert.equal(await engine.store.getMeta('pending_forget:test-journal'), null, `the forget waited for pid ${other.pid}, which is not its process`);
        assert.deepEqual(filesContaining(dir, 'numbatmigration'), []);
      } finally {
        other.kill('SIGKILL');
        await once(other, 'exit');
      }
    });

    it('a forget whose process still runs is its own: another process\'s open leaves it, and finishes it once that process is gone', async () => {
      const id = await seed('bilbymigration');
      const owner = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
      try {
        await crashAfterDeletes(id, { pid: owner.pid as number, host: os.hostname() });
        engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
        assert.notEqual(await engine.store.getMeta('pending_forget:test-journal'), null, 'the running forget keeps its journal');
        assert.ok(filesContaining(dir, 'bilbymigration').length > 0, 'and its purge is left to it');
        await engine.close();
      } finally {
        owner.kill('SIGKILL');
        await new Promise((resolve) => owner.once('exit', resolve));
      }
      engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      assert.equal(await engine.store.getMeta('pending_forget:test-journal'), null);
      assert.deepEqual(filesContaining(dir, 'bilbymigration'), []);
    });
  });
});
