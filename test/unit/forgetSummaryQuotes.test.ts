// A forget by id takes the session summaries that quote what it removes besides the records they
// cite: a summary lists its session's prompts (the project's prompts go with the forget, since they
// ask about what it removed), and a plugged-in summariser is shown the commits other sessions
// recorded. Such a summary leaves every file, also one a session's end wrote from prompts a forget
// deleted while the summariser ran; its session is summarised again from what is left.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { ExtractiveSummariser } from '../../src/core/compress/summariser';
import type { Summariser, SummaryContext, SummaryResult } from '../../src/core/compress/summariser';
import type { Observation } from '../../src/core/model/records';
import { pruneSessionPrompts } from '../../src/core/store/repos/prompts';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { filesContaining } from './diskFixture';
import { toolContext } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

/** A summariser such as the extension's language model: it may quote what it is shown, the commits of other sessions too. */
const quotingSummariser: Summariser = {
  name: 'quoting-model',
  async summarise(observations: Observation[], budget: number, context?: SummaryContext): Promise<SummaryResult> {
    const fields = await new ExtractiveSummariser().summarise(observations, budget, context);
    const elsewhere = (context?.commitsElsewhere ?? []).map((c) => `Committed meanwhile: ${c.title ?? ''}`);
    return { ...fields, completed: [fields.completed, ...elsewhere].filter(Boolean).join('\n') };
  },
};

describe('forget takes the summaries quoting what it removes', function () {
  this.timeout(180_000);
  let dir: string;
  let engine: MemoryEngine;
  const scope = { project: 'acme/app', branch: 'main' };
  const open = (summariser?: Summariser) => MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, sessionIdleMs: 1, summariseOrphanSessions: false, summariser });

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-forgetquotes-'));
  });
  afterEach(async () => {
    await engine.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A forgotten note, and another session whose agent asked about it (retrieve_memory's prompt) and then worked: its summary's request quotes the prompt. */
  async function askedAbout(): Promise<{ noteId: number }> {
    const [note] = await engine.observe([{ type: 'note', title: 'Deploy key', narrative: 'The deploy key is quokkaphrase.', memory_session_id: 's1' }], scope);
    await engine.endSession(scope, 's1', 'request');
    await retrieveMemory(toolContext(engine, scope), { prompt: 'what is quokkaphrase for?', session_id: 's2' });
    // The prompt is stored in the background (retrieve_memory does not wait for it).
    for (let i = 0; i < 100 && (await engine.recentPrompts(scope, 's2', 5)).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await engine.observe([{ type: 'note', title: 'Looked at the deploy script', narrative: 'checked the deploy script', memory_session_id: 's2' }], scope);
    const s2 = await engine.endSession(scope, 's2', 'request');
    assert.match(s2?.request ?? '', /quokkaphrase/, 'control: the summary lists the prompt');
    return { noteId: note.id };
  }

  it("a summary of another session listing a prompt about the forgotten record leaves every file, and the session is summarised again without it", async () => {
    engine = await open();
    const { noteId } = await askedAbout();
    // A session without prompts keeps its summary (its request lists its agent's own task).
    await engine.observe([{ type: 'agent', title: 'Tidy the changelog', memory_session_id: 's3' }], scope);
    const s3 = await engine.endSession(scope, 's3', 'request');
    assert.match(s3?.request ?? '', /Tidy the changelog/);
    await engine.forget({ ids: [noteId] }, scope);
    assert.deepEqual(filesContaining(dir, 'quokkaphrase'), []);
    assert.equal((await engine.getSessionSummaries([s3!.id], scope)).length, 1, 'a summary quoting no prompt stays');
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(await engine.endOrphanSessions(), 1, 'the session whose summary went is summarised again');
    const again = (await engine.listSessions(scope)).find((s) => s.memory_session_id === 's2');
    assert.ok(again, 'its observations stayed');
    await engine.close();
    assert.deepEqual(filesContaining(dir, 'quokkaphrase'), []);
    assert.ok(filesContaining(dir, 'checked the deploy script').length > 0, 'the session kept its own words');
  });

  it('the process that forgot summarises such a session again by itself, as it does at open', async () => {
    const opened = Date.now();
    engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0, sessionIdleMs: 1 });
    const { noteId } = await askedAbout();
    // The sweep an open runs (5 s after it) is over: what summarises the session again is the forget's.
    await new Promise((r) => setTimeout(r, Math.max(0, opened + 7000 - Date.now())));
    const summaryOf = async (): Promise<string | undefined> => {
      const s2 = (await engine.listSessions(scope)).find((s) => s.memory_session_id === 's2');
      return s2?.summary ? (s2.summary.request ?? '') : undefined;
    };
    await engine.forget({ ids: [noteId] }, scope);
    assert.equal(await summaryOf(), undefined, 'the summary quoting the prompt went');
    let again: string | undefined;
    for (let i = 0; i < 200 && again === undefined; i++) {
      await new Promise((r) => setTimeout(r, 100));
      again = await summaryOf();
    }
    assert.notEqual(again, undefined, 'the session was not summarised again');
    assert.doesNotMatch(again!, /quokkaphrase/);
    await engine.close();
    assert.deepEqual(filesContaining(dir, 'quokkaphrase'), []);
  });

  it('an extractive summary still listing a prompt that has aged out goes too', async () => {
    engine = await open();
    const { noteId } = await askedAbout();
    // The prompts are past their 30 days: deleted, while the summary written from them stays.
    await pruneSessionPrompts(engine.store, Date.now() + 31 * 24 * 3600_000);
    assert.deepEqual(await engine.recentPrompts(scope, 's2', 5), []);
    await engine.forget({ ids: [noteId] }, scope);
    await engine.close();
    assert.deepEqual(filesContaining(dir, 'quokkaphrase'), []);
  });

  it('a summary written from prompts a forget deleted while the summariser ran leaves every file', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let called!: () => void;
    const summarising = new Promise<void>((r) => (called = r));
    const gated: Summariser = {
      name: 'gated-extractive',
      async summarise(observations: Observation[], budget: number, context?: SummaryContext): Promise<SummaryResult> {
        called();
        await gate;
        return new ExtractiveSummariser().summarise(observations, budget, context);
      },
    };
    engine = await open(gated);
    const [note] = await engine.observe([{ type: 'note', title: 'Unrelated note', narrative: 'something else entirely', memory_session_id: 's1' }], scope);
    await retrieveMemory(toolContext(engine, scope), { prompt: 'what is numbatphrase for?', session_id: 's2' });
    for (let i = 0; i < 100 && (await engine.recentPrompts(scope, 's2', 5)).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await engine.observe([{ type: 'note', title: 'Looked at the deploy script', narrative: 'checked the deploy script', memory_session_id: 's2' }], scope);
    // The session's end reads its prompts, then waits in the summariser while a forget deletes them.
    const ending = engine.endSession(scope, 's2', 'request');
    await summarising;
    await engine.forget({ ids: [note.id] }, scope);
    release();
    const s2 = await ending;
    assert.match(s2?.request ?? '', /numbatphrase/, 'control: the summary was written from the prompt read before the forget');
    await engine.close();
    assert.deepEqual(filesContaining(dir, 'numbatphrase'), []);
  });

  it("a summary a plugged-in summariser wrote, shown another session's commit, leaves every file with that commit", async () => {
    engine = await open(quotingSummariser);
    const t0 = Date.now();
    await engine.observe([{ type: 'edit', title: 'Edited the ledger', files_modified: ['src/ledger.ts'], memory_session_id: 's2', branch: 'main', created_at_epoch: t0 - 5000 }], scope);
    const [commit] = await engine.observe([{ type: 'commit', title: 'Rotate the wallabyphrase credential', commit_sha: 'a'.repeat(40), files_modified: ['src/ledger.ts'], memory_session_id: 's1', branch: 'main', created_at_epoch: t0 - 1000 }], scope);
    await engine.endSession(scope, 's1', 'request');
    const s2 = await engine.endSession(scope, 's2', 'request');
    assert.match(s2?.completed ?? '', /wallabyphrase/, 'control: the summary quotes the other session\'s commit');
    await engine.forget({ ids: [commit.id] }, scope);
    await engine.close();
    assert.deepEqual(filesContaining(dir, 'wallabyphrase'), []);
    assert.ok(filesContaining(dir, 'Edited the ledger').length > 0, "the other session's observations stay");
  });
});
