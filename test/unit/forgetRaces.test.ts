// Forget next to writers that read records first and write what derives from them later: a
// session's compression, a retrieve_memory call's log entry, the lease holder's full-text
// indexer. A forget (in this process or another) that runs in between must not have its text
// written back by them (forgotSince in forgetMarks.ts).

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { MemoryEngineApi } from '../../src/core/api';
import { ExtractiveSummariser } from '../../src/core/compress/summariser';
import type { Summariser, SummaryResult } from '../../src/core/compress/summariser';
import { MemoryEngine } from '../../src/core/engine';
import { TABLES } from '../../src/core/store/schema';
import type { Observation } from '../../src/core/model/records';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { filesContaining } from './diskFixture';
import { toolContext } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

/** A summariser that waits for `gate` before it answers (an LLM summariser taking its time). */
class GatedSummariser implements Summariser {
  readonly name = 'gated';
  private readonly inner = new ExtractiveSummariser();
  entered!: Promise<void>;
  private enter!: () => void;
  gate!: Promise<void>;
  release!: () => void;
  constructor() {
    this.reset();
  }
  reset(): void {
    this.entered = new Promise((r) => (this.enter = r));
    this.gate = new Promise((r) => (this.release = r));
  }
  async summarise(observations: Observation[], budget: number, context?: Parameters<Summariser['summarise']>[2]): Promise<SummaryResult> {
    this.enter();
    await this.gate;
    return this.inner.summarise(observations, budget, context);
  }
}

describe('forget next to a writer in flight', function () {
  this.timeout(120_000);
  let dir: string;
  let engine: MemoryEngine;
  const scope = { project: 'acme/app' };

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-forget-race-'));
  });
  afterEach(async () => {
    await engine?.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a session compression in flight when an observation is forgotten does not write its text back (summary)', async () => {
    const summariser = new GatedSummariser();
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, summariseOrphanSessions: false, summariser });
    const session = await engine.currentSessionId(scope);
    const [secret] = await engine.observe([{ type: 'decision', title: 'Glimmerquoll plan', narrative: 'We decided to use glimmerquoll for the payroll export.' }], scope);
    await engine.observe([{ type: 'note', title: 'Routine note', narrative: 'routine work' }], scope);
    // The session ends (idle timer, branch switch or the extension's "end session") while ...
    const ending = engine.endSession(scope, session, 'idle');
    await summariser.entered;
    // ... the user forgets the observation.
    const forgetting = engine.forget({ kind: 'observation', ids: [secret.id] }, scope);
    // Give the forget time to run while the summariser still works.
    await new Promise((r) => setTimeout(r, 3000));
    summariser.release();
    await ending;
    await forgetting;
    const sessions = await engine.listSessions(scope);
    const summaryText = JSON.stringify(sessions.map((s) => s.summary));
    assert.ok(!/glimmerquoll/i.test(summaryText), `a summary written after the forget quotes the forgotten observation: ${summaryText}`);
    const hits = await engine.search('glimmerquoll', { scope, layers: ['L0', 'L1', 'L2'] });
    assert.deepEqual(hits.map((h) => `${h.cell.source_kind}/${h.cell.source_id}`), [], 'search still finds the forgotten text');
    await engine.optimize(0);
    assert.deepEqual(filesContaining(dir, 'glimmerquoll'), []);
  });

  it('a retrieve_memory call in flight when a record is forgotten does not put its text back into the request log', async () => {
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    const [secret] = await engine.observe([{ type: 'decision', title: 'Frobnoxite rollout plan', narrative: 'frobnoxite ships to the payments cluster', files_modified: ['src/rollout.ts'] }], scope);
    await engine.flush();
    // The engine as a slow retrieval sees it: the search has answered, the graph lookup that
    // follows it takes a while (a large graph, a remote team store, a reranker).
    let entered!: () => void;
    const inEntities = new Promise<void>((r) => (entered = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = new Proxy(engine as unknown as MemoryEngineApi, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (prop === 'entities') {
          return async (...args: unknown[]) => {
            entered();
            await gate;
            return (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          };
        }
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const asking = retrieveMemory(toolContext(slow, scope), { prompt: 'what is the frobnoxite rollout plan?', session_id: 's1' });
    await inEntities;
    await engine.forget({ kind: 'observation', ids: [secret.id] }, scope);
    release();
    const out = await asking;
    assert.match(out.content_text ?? '', /frobnoxite/i, 'control: the answer was found before the forget');
    const logged = (await engine.listRequests(scope, 100)).filter((e) => /frobnoxite/i.test(e.response + e.arguments));
    assert.deepEqual(logged.map((e) => e.request_id), [], 'the request log holds the forgotten record after forget returned');
    assert.deepEqual(filesContaining(dir, 'frobnoxite'), []);
  });
});

describe('forget next to the lease holder\'s full-text indexer (another engine on the store)', function () {
  this.timeout(120_000);
  let dir: string;
  let holder: MemoryEngine;
  let other: MemoryEngine | undefined;
  const scope = { project: 'acme/app' };

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-forget-lex-'));
  });
  afterEach(async () => {
    await other?.close().catch(() => undefined);
    await holder?.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a forget by another engine while the holder writes an index segment waits for it, and the segment does not bring the record\'s words back to disk', async () => {
    holder = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, lexiconMinDelta: 1, summariseOrphanSessions: false });
    assert.ok(holder.lease.isHeld, 'control: the first engine holds the maintenance lease');
    const filler = Array.from({ length: 20 }, (_, i) => ({ type: 'note', title: `ordinary note ${i}`, narrative: `routine work item ${i}` }));
    await holder.observe(filler, scope);
    const [secret] = await holder.observe([{ type: 'note', title: 'Vorpzank note', narrative: 'the vorpzank key rotates weekly' }], scope);
    await holder.flush();
    // The holder's indexer has read the project's rows and is about to write its segment ...
    const segments = holder.repos.lexicalSegments;
    const write = segments.write.bind(segments);
    let entered!: () => void;
    const inWrite = new Promise<void>((r) => (entered = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    segments.write = async (...args: Parameters<typeof write>) => {
      entered();
      await gate;
      return write(...args);
    };
    const indexing = holder.optimize(0);
    await inWrite;
    // ... when another engine on the same folder (its own store, taking the lock file as another
    // process would) forgets the record: it waits for the maintenance job under way (the forget lock).
    const logged: string[] = [];
    other = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, summariseOrphanSessions: false, logger: (m) => logged.push(m) });
    assert.equal(other.lease.isHeld, false, 'control: the second engine does not hold the lease');
    let done = false;
    const forgetting = other.forget({ kind: 'observation', ids: [secret.id] }, scope).finally(() => (done = true));
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(done, false, 'the forget ran beside the indexer');
    assert.equal(await other.store.count(TABLES.observations, `id = ${secret.id}`), 1, 'the forget deleted beside the indexer');
    // Its caller (the CLI prints the engine's log) is told why it waits, once.
    assert.equal(logged.filter((m) => /^forget: waiting for a maintenance job/.test(m)).length, 1, logged.join('\n'));
    release();
    await indexing;
    const report = await forgetting;
    assert.equal(report.observations, 1);
    assert.deepEqual(filesContaining(dir, 'vorpzank'), [], 'a file holds the forgotten words');
  });
});
