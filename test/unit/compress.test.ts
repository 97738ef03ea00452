import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { openEngine } from '../../src/cli/context';
import { globalOptionsFrom } from '../../src/cli/options';
import { MemoryEngine } from '../../src/core/engine';
import type { MemoryEngineOptions } from '../../src/core/engine';
import { ExtractiveSummariser } from '../../src/core/compress/summariser';
import type { Summariser } from '../../src/core/compress/summariser';
import { extractFacts } from '../../src/core/compress/facts';
import type { Observation } from '../../src/core/model/records';
import { countTokens } from '../../src/core/tokens';

process.env.LANCEDB_LOG ??= 'error';

function obs(partial: Partial<Observation> & { type: string }): Observation {
  return {
    id: 1, memory_session_id: 's', content_session_id: null, project: 'p', title: null, subtitle: null, narrative: null, facts: null,
    concepts: null, files_read: null, files_modified: null, commit_sha: null, branch: null, status: 'active', created_at: '',
    created_at_epoch: 0, last_accessed_epoch: null, discovery_tokens: null, compressed_sources: null, ...partial,
  };
}

async function until<T>(probe: () => Promise<T | null | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await probe();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never happened: ${what}`);
}

describe('compress: extractive summariser', () => {
  it('fills every field deterministically from the observations', async () => {
    const input = [
      obs({ id: 1, type: 'task', title: 'Add rate limiting to the API', created_at_epoch: 1 }),
      obs({ id: 2, type: 'read', title: 'Read middleware', files_read: '["src/middleware.ts"]', narrative: 'The middleware chain runs auth before routing.', created_at_epoch: 2 }),
      obs({ id: 3, type: 'edit', title: 'Edit limiter', files_modified: '["src/limiter.ts"]', narrative: 'We decided to use a token bucket instead of a fixed window.', created_at_epoch: 3 }),
      obs({ id: 4, type: 'note', title: 'Style', narrative: 'Always return 429 with a Retry-After header.', created_at_epoch: 4 }),
      obs({ id: 5, type: 'note', title: 'Follow-up', narrative: 'TODO: add per-user limits next.', created_at_epoch: 5 }),
      obs({ id: 6, type: 'commit', title: 'Add token bucket limiter', commit_sha: 'abc', created_at_epoch: 6 }),
    ];
    const s = new ExtractiveSummariser();
    const a = await s.summarise(input, 400, { prompts: ['Please add rate limiting'] });
    const b = await s.summarise([...input].reverse(), 400, { prompts: ['Please add rate limiting'] });
    assert.deepEqual(a, b);
    assert.match(a.request ?? '', /rate limiting/);
    assert.match(a.completed ?? '', /Add token bucket limiter/);
    assert.match(a.completed ?? '', /src\/limiter\.ts/);
    assert.match(a.decisions ?? '', /token bucket instead of a fixed window/);
    assert.match(a.preferences ?? '', /Retry-After/);
    assert.match(a.next_steps ?? '', /per-user limits/);
    assert.match(a.learned ?? '', /middleware chain/);
  });

  it('stays within its token budget however long the session', async () => {
    const many = Array.from({ length: 400 }, (_, i) =>
      obs({ id: i, type: 'note', title: `note ${i}`, narrative: `We decided to use library number ${i} for subsystem ${i}. Learned that module ${i} is slow.`, created_at_epoch: i }),
    );
    const fields = await new ExtractiveSummariser().summarise(many, 300);
    const total = Object.values(fields).reduce((n, v) => n + (v ? countTokens(v) : 0), 0);
    assert.ok(total <= 300, `${total} tokens`);
    assert.ok(total > 100);
  });
});

describe('compress: temporal facts', () => {
  it('extracts subject, predicate and object', () => {
    assert.deepEqual(extractFacts('Use pnpm for package management.', null), [{ subject: 'package management', predicate: 'uses', object: 'pnpm' }]);
    assert.deepEqual(extractFacts('We switched to vitest for unit tests', null), [{ subject: 'unit tests', predicate: 'uses', object: 'vitest' }]);
    assert.deepEqual(extractFacts('Prefer tabs over spaces', 'indentation'), [{ subject: 'indentation', predicate: 'prefers', object: 'tabs' }]);
    assert.deepEqual(extractFacts('Nothing to see here', null), []);
  });
});

describe('compress: sessions, merging and promotion', function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  const engines: MemoryEngine[] = [];
  const open = async (options: Partial<MemoryEngineOptions> = {}, dir?: string): Promise<MemoryEngine> => {
    const d = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'cm-compress-'));
    if (!dir) dirs.push(d);
    const e = await MemoryEngine.open({ storeUri: d, embedder: 'none', maintenanceIntervalMs: 0, ...options });
    engines.push(e);
    return e;
  };
  after(async () => {
    for (const e of engines) await e.close().catch(() => undefined);
    dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true }));
  });
  const scope = { project: 'acme/app', branch: 'main' };

  it('ends a session on request: summary row, L1 cell, merged observations with their sources', async () => {
    const engine = await open();
    const session = await engine.currentSessionId(scope);
    await engine.addPrompt(scope, session, 'Make the exporter stream rows');
    const edits = [0, 1, 2, 3].map((i) => ({ type: 'edit', title: `Edit exporter step ${i}`, files_modified: ['src/exporter.ts'], narrative: `Step ${i}: stream rows in batches.` }));
    const stored = await engine.observe([...edits, { type: 'note', title: 'Decision', narrative: 'We decided to use async iterators instead of arrays.' }], scope);
    const summary = await engine.endSession(scope, session, 'request');
    assert.ok(summary);
    assert.match(summary.request ?? '', /stream rows/);
    assert.match(summary.decisions ?? '', /async iterators/);
    assert.equal((await engine.getSessionSummaries([summary.id], scope))[0].memory_session_id, session);
    const l1 = await engine.search('exporter stream', { scope, layers: ['L1'] });
    assert.equal(l1[0].cell.source_kind, 'session_summary');
    assert.equal(l1[0].cell.source_id, summary.id);

    const merged = (await engine.listObservations(scope)).filter((o) => o.type === 'merged');
    assert.equal(merged.length, 1);
    const sources = merged[0].compressed_sources ?? [];
    assert.deepEqual(sources.map((s) => s.source_observation_id).sort(), stored.slice(0, 4).map((o) => o.id).sort());
    assert.ok(sources.every((s) => s.compressed_observation_id === merged[0].id && s.compression_session_id === session && s.source_hash.length > 0));
    // The sources leave search results; the merged observation stands in for them.
    const l0 = await engine.search('exporter', { scope, layers: ['L0'] });
    assert.deepEqual(l0.map((h) => h.cell.source_id), [merged[0].id]);
    assert.equal((await engine.getObservations([stored[0].id], scope))[0].status, 'merged');
    const sessions = await engine.listSessions(scope);
    assert.equal(sessions[0].memory_session_id, session);
    assert.equal(sessions[0].summary?.id, summary.id);
    // After the end a new session starts.
    assert.notEqual(await engine.currentSessionId(scope), session);
  });

  it('ends a session on a branch switch, on idle and on shutdown', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-compress-'));
    dirs.push(dir);
    const engine = await open({ sessionIdleMs: 1000 }, dir);
    const first = await engine.currentSessionId(scope);
    await engine.observe([{ type: 'note', title: 'work on main' }], scope);
    await engine.observe([{ type: 'note', title: 'work on feature' }], { ...scope, branch: 'feature/x' });
    const second = await engine.currentSessionId({ ...scope, branch: 'feature/x' });
    assert.notEqual(second, first);
    await until(async () => (await engine.listSessions(scope)).find((s) => s.memory_session_id === first)?.summary, 'branch-switch summary');
    // Idle: nothing happens for longer than sessionIdleMs.
    await until(async () => (await engine.listSessions({ project: scope.project })).find((s) => s.memory_session_id === second)?.summary, 'idle summary');

    const third = await engine.currentSessionId(scope);
    await engine.observe([{ type: 'note', title: 'last words before shutdown' }], scope);
    await engine.close();
    const reopened = await open({}, dir);
    const sessions = await reopened.listSessions({ project: scope.project });
    assert.ok(sessions.find((s) => s.memory_session_id === third)?.summary, 'shutdown summary');
  });

  it('promotes a recurring decision to a memory, and a newer contradicting one closes it', async () => {
    const engine = await open();
    const s1 = await engine.currentSessionId(scope);
    await engine.observe([{ type: 'note', title: 'tooling', narrative: 'We decided to use pnpm for package management.' }], scope);
    await engine.endSession(scope, s1, 'request');
    assert.equal((await engine.listMemories(scope)).length, 0, 'said once: not yet a memory');
    const s2 = await engine.currentSessionId(scope);
    await engine.observe([{ type: 'note', title: 'tooling again', narrative: 'We decided to use pnpm for package management.' }], scope);
    await engine.endSession(scope, s2, 'request');
    const [pnpm] = await engine.listMemories(scope);
    assert.ok(pnpm, 'recurring decision promoted');
    assert.equal(pnpm.memory_type, 'decision');
    assert.deepEqual(pnpm.temporal_facts?.map((f) => [f.subject, f.predicate, f.object, f.status]), [['package management', 'uses', 'pnpm', 'current']]);
    assert.equal((await engine.search('pnpm', { scope, layers: ['L2'] }))[0].cell.source_id, pnpm.id);

    const npm = await engine.remember({ title: 'Package manager', text: 'Use npm for package management from now on.', memory_type: 'decision' }, scope);
    const [old] = await engine.getMemories([pnpm.id], scope);
    assert.equal(old.status, 'superseded');
    const fact = old.temporal_facts?.[0];
    assert.equal(fact?.status, 'closed');
    assert.equal(fact?.valid_to_epoch, npm.created_at_epoch);
    assert.equal(npm.temporal_facts?.[0].status, 'current');
    // The topic's trace records its history: pnpm first (closed), then npm.
    assert.equal(npm.topic_key, 'package management');
    assert.deepEqual(npm.topic_trace?.map((t) => [t.segment_index, t.status, t.title]), [
      [0, 'closed', pnpm.title],
      [1, 'current', 'Package manager'],
    ]);
    assert.ok((pnpm.topic_trace?.[0].evidence_event_ids.length ?? 0) >= 2, 'evidence of a recurring decision: its observations');
    // Superseded memories are kept (history) but leave search.
    const hits = await engine.search('package management', { scope, layers: ['L2'] });
    assert.deepEqual(hits.map((h) => h.cell.source_id), [npm.id]);
  });

  it('calls the summariser once per session with the budget', async () => {
    const calls: { n: number; budget: number }[] = [];
    const counting: Summariser = {
      name: 'counting',
      async summarise(observations, budget) {
        calls.push({ n: observations.length, budget });
        return { request: 'r', learned: null, completed: null, decisions: null, next_steps: null, preferences: null };
      },
    };
    const engine = await open({ summariser: counting, summaryBudgetTokens: 123 });
    const session = await engine.currentSessionId(scope);
    for (let i = 0; i < 50; i++) engine.enqueue({ type: 'note', title: `event ${i}` }, scope);
    await engine.flush();
    assert.equal(calls.length, 0);
    await engine.endSession(scope, session, 'request');
    assert.deepEqual(calls, [{ n: 50, budget: 123 }]);
  });
});

describe('compress: sessions left open by a process that died', function () {
  this.timeout(60_000);
  it('are summarised once idle', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-orphan-'));
    const scope = { project: 'acme/app' };
    const first = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    const long = Date.now() - 3600_000;
    await first.observe([{ type: 'note', title: 'left behind', memory_session_id: 'crashed-session', created_at_epoch: long }], scope);
    // No close(): the process "dies" with the session open.
    const second = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, sessionIdleMs: 60_000 });
    assert.equal(await second.endOrphanSessions(), 1);
    const [session] = await second.listSessions(scope);
    assert.equal(session.memory_session_id, 'crashed-session');
    assert.ok(session.summary);
    assert.equal(await second.endOrphanSessions(), 0);
    await second.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("wait for the CLI's --session-idle-minutes (or its variable) before they count as idle", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-orphan-'));
    const scope = { project: 'acme/app' };
    const writer = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, summariseOrphanSessions: false });
    await writer.observe([{ type: 'note', title: 'left behind', memory_session_id: 'crashed-session', created_at_epoch: Date.now() - 3600_000 }], scope);
    const io = { stdout: process.stdout, stderr: new PassThrough(), stdin: process.stdin };
    const opened = async (values: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => openEngine(globalOptionsFrom({ store: dir, embedder: 'none', ...values }, env), io, false);
    try {
      // 60.5, a fraction as the extension's setting takes it (60 would find the hour-old session idle).
      for (const [values, env] of [[{ 'session-idle-minutes': '90' }, {}], [{}, { CODE_MEMORY_SESSION_IDLE_MINUTES: '90' }], [{ 'session-idle-minutes': '60.5' }, {}]] as const) {
        const engine = await opened(values, env);
        assert.equal(await (engine as MemoryEngine).endOrphanSessions(), 0, 'an hour-old session is not idle after 90 minutes');
        await engine.close();
      }
      assert.throws(() => globalOptionsFrom({ 'session-idle-minutes': '0' }, {}), /--session-idle-minutes must be a number of minutes of at least 1 \(such as 30 or 2\.5\), not '0'/);
      const engine = await opened({ 'session-idle-minutes': '30' });
      assert.equal(await (engine as MemoryEngine).endOrphanSessions(), 1);
      await engine.close();
    } finally {
      await writer.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are summarised by the maintenance-lease holder alone, not by every process that opens the store', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-orphan-'));
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fixtures', 'storeWriter.ts'), dir, '3', 'crashed-session', 'die'], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((resolve) => child.stdout.once('data', resolve));
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const counting = (): Summariser & { calls: number } => {
      const inner = new ExtractiveSummariser();
      const s = { name: inner.name, calls: 0, summarise: (...a: Parameters<Summariser['summarise']>) => (s.calls++, inner.summarise(...a)) };
      return s;
    };
    const options = { storeUri: dir, embedder: 'none' as const, maintenanceIntervalMs: 0, sessionIdleMs: 60_000 };
    const holderSummariser = counting();
    const otherSummariser = counting();
    // The killed writer's lease names a dead process: the first to open takes it over.
    const holder = await MemoryEngine.open({ ...options, summariser: holderSummariser });
    const other = await MemoryEngine.open({ ...options, summariser: otherSummariser });
    try {
      assert.equal(holder.lease.isHeld, true);
      assert.equal(other.lease.isHeld, false);
      const scope = { project: 'shared/project' };
      const end = Date.now() + 30_000;
      while (!(await holder.listSessions(scope))[0]?.summary && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
      assert.ok((await holder.listSessions(scope))[0]?.summary, 'the holder summarised the orphan session');
      // The other process's sweep would have run by now (both start theirs 5 s after opening).
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(holderSummariser.calls, 1);
      assert.equal(otherSummariser.calls, 0, 'a process without the lease summarised');
    } finally {
      await other.close();
      await holder.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
