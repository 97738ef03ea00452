// What a user forgot stays forgotten: an import of the same repository does not store a forgotten
// commit or document again, a routine re-import that replaces a changed document is no forget (the
// request log and prompt history stay), and a forgotten promoted memory is not promoted again
// from the evidence it was forgotten with.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import { TABLES } from '../../src/core/store/schema';
import { commitAll, git } from './gitImportFixture';

process.env.LANCEDB_LOG ??= 'error';
const sha = (t: string): string => createHash('sha256').update(t).digest('hex');

/** Every meta row's key and value. */
async function metaText(engine: MemoryEngine): Promise<string> {
  return JSON.stringify(await engine.store.rows(TABLES.meta, null));
}

/** A forget journal as a process killed before its first delete left it (its closure not decided yet). */
async function interruptedForget(engine: MemoryEngine, request: { kind: string; ids: number[] }, project: string): Promise<void> {
  const dead = spawnSync(process.execPath, ['-e', '']).pid as number;
  await engine.store.setMeta({ 'pending_forget:killed': JSON.stringify({ request, scope: { project }, owner: { pid: dead, host: os.hostname() } }) });
}

describe('forget: an import of the same repository', function () {
  this.timeout(120_000);
  let dir: string;
  let repo: string;
  let engine: MemoryEngine;
  const scope = { project: 'acme/app', branch: 'main' };
  const hits = async (re: RegExp): Promise<string[]> =>
    (await engine.listObservations(scope, { limit: 1000 })).filter((o) => re.test(JSON.stringify(o))).map((o) => `${o.type}: ${o.title}`);

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-staysforgotten-'));
    repo = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-staysforgotten-repo-'));
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    git(repo, ['init', '-q', '-b', 'main']);
    commitAll(repo, {
      subject: 'Add the ledger module',
      time: 1767600000,
      files: {
        'README.md': '# Ledger\n\nThe ledger keeps qzdocwordq balances for every account in the books.\n\n## Setup\n\nRun qzsetupq once to create the accounts table.\n',
        'src/ledger.ts': 'export const ledger = 1;\n',
      },
    });
    commitAll(repo, { subject: 'Leak the qzcommitwordq credentials plan', time: 1767603600, files: { 'src/plan.ts': 'export const plan = 2;\n' } });
  });
  afterEach(async () => {
    await engine.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(repo, { recursive: true, force: true });
  });

  it('a forgotten commit and a forgotten document are not stored again by the next import-git', async () => {
    await importGitHistory(engine, repo, { scope });
    const all = await engine.listObservations(scope, { limit: 100 });
    const commit = all.find((o) => o.type === 'commit' && /qzcommitwordq/.test(o.title ?? ''));
    const doc = all.find((o) => o.type === 'document' && /qzdocwordq/.test(o.narrative ?? ''));
    assert.ok(commit && doc, 'control: both stored');
    await engine.forget({ kind: 'observation', ids: [commit!.id, doc!.id] }, scope);
    const second = await importGitHistory(engine, repo, { scope });
    assert.deepEqual(await hits(/qzcommitwordq|qzdocwordq/), [], `the forgotten records are back (import said ${JSON.stringify(second)})`);
    // A commit made after the forget is imported; what was not forgotten stays.
    commitAll(repo, { subject: 'Add the qznewcommitq report', time: 1767607200, files: { 'src/report.ts': 'export const report = 3;\n' } });
    await importGitHistory(engine, repo, { scope });
    assert.equal((await hits(/qznewcommitq/)).length, 1, 'a new commit is imported');
    assert.ok((await hits(/qzsetupq/)).length > 0, 'the section not forgotten stays');
    assert.deepEqual(await hits(/qzcommitwordq|qzdocwordq/), [], 'still forgotten after another import');
    // The meta table keeps digests, never the forgotten text or the project's name.
    assert.doesNotMatch(await metaText(engine), /qzcommitwordq|qzdocwordq|acme\/app/);
  });

  it('after a forget of the whole project an import starts afresh', async () => {
    await importGitHistory(engine, repo, { scope });
    const commit = (await engine.listObservations(scope, { limit: 100 })).find((o) => o.type === 'commit' && /qzcommitwordq/.test(o.title ?? ''));
    await engine.forget({ kind: 'observation', ids: [commit!.id] }, scope);
    assert.match(await metaText(engine), /forgot_import:/, 'control: a tombstone is kept');
    await engine.forget({ project: scope.project }, scope);
    assert.doesNotMatch(await metaText(engine), /forgot_import:/, 'the project forget takes its tombstones');
    await importGitHistory(engine, repo, { scope });
    assert.equal((await hits(/qzcommitwordq/)).length, 1, 'an explicit fresh start imports everything again');
  });

  it('a forget of a commit a crash interrupted, finished by the next open, keeps it from the next import too', async () => {
    await importGitHistory(engine, repo, { scope });
    const commit = (await engine.listObservations(scope, { limit: 100 })).find((o) => o.type === 'commit' && /qzcommitwordq/.test(o.title ?? ''));
    assert.ok(commit, 'control: stored');
    await interruptedForget(engine, { kind: 'observation', ids: [commit!.id] }, scope.project);
    await engine.close();
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    assert.deepEqual(await hits(/qzcommitwordq/), [], 'control: the next open finished the forget');
    await importGitHistory(engine, repo, { scope });
    assert.deepEqual(await hits(/qzcommitwordq/), [], 'the commit is back');
  });

  it('a document a newer revision replaces is not a forget: the request log and prompts stay, and it may come back', async () => {
    const original = fs.readFileSync(path.join(repo, 'README.md'), 'utf8');
    await importGitHistory(engine, repo, { scope });
    await engine.addPrompt(scope, 'chat-1', 'how are qzpromptq balances kept?');
    await engine.logRequest({ request_id: 'r1', tool: 'recall', project: scope.project, session_id: 'chat-1', arguments: '{"q":"qzlogq"}', response: '{}', status: 'ok', duration_ms: 1, created_at_epoch: Date.now() });
    commitAll(repo, { subject: 'Reword the ledger readme', time: 1767607200, files: { 'README.md': original.replace('qzdocwordq balances', 'qzreworded balances') } });
    const second = await importGitHistory(engine, repo, { scope });
    assert.ok((second.documents?.removed ?? 0) > 0, `control: the old section is replaced (${JSON.stringify(second)})`);
    assert.deepEqual(await hits(/qzdocwordq.*balances for every/), [], 'the old revision of the section is gone');
    assert.ok((await hits(/qzreworded/)).length > 0, 'the new revision is stored');
    assert.equal((await engine.listRequests(scope)).length, 1, 'the request log stays');
    assert.deepEqual(await engine.recentPrompts(scope, 'chat-1', 5), ['how are qzpromptq balances kept?'], 'the prompt history stays');
    // No tombstone: the old text, back in a later revision, is imported again.
    commitAll(repo, { subject: 'Revert the readme', time: 1767610800, files: { 'README.md': original } });
    await importGitHistory(engine, repo, { scope });
    assert.ok((await hits(/qzdocwordq/)).some((h) => h.startsWith('document')), 'a replaced document comes back with its revision');
  });
});

describe('forget: a promoted memory', function () {
  this.timeout(120_000);
  let dir: string;
  let engine: MemoryEngine;
  const scope = { project: 'acme/app' };
  const say = async (title: string, text = 'We decided to use quarkpm for package management.'): Promise<number> => {
    const s = await engine.currentSessionId(scope);
    const [o] = await engine.observe([{ type: 'note', title, narrative: text }], scope);
    await engine.endSession(scope, s, 'request');
    return o.id;
  };
  const quarkpm = async (): Promise<Array<{ id: number; evidence: number[] | undefined }>> =>
    (await engine.listMemories(scope)).filter((m) => /quarkpm/.test(m.text)).map((m) => ({ id: m.id, evidence: m.topic_trace?.[0]?.evidence_event_ids }));

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-staysforgotten-promoted-'));
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, summariseOrphanSessions: false });
  });
  afterEach(async () => {
    await engine.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is not promoted again from the evidence it was forgotten with', async () => {
    await say('tooling');
    await say('tooling again');
    const [m] = await engine.listMemories(scope);
    assert.ok(m && /quarkpm/.test(m.text), 'control: promoted');
    await engine.forget({ kind: 'memory', ids: [m.id] }, scope);
    assert.equal((await engine.listMemories(scope)).length, 0, 'control: forgotten');
    await say('tooling once more');
    assert.deepEqual(await quarkpm(), [], 'the forgotten memory is back, built on the evidence it had');
    // The meta table keeps ids under a digest, never the statement.
    assert.doesNotMatch(await metaText(engine), /quarkpm|package management|acme\/app/);
  });

  it('said again since the forget (as often as it took the first time), it is promoted again from what was said since', async () => {
    const old = [await say('tooling'), await say('tooling again')];
    const [m] = await engine.listMemories(scope);
    await engine.forget({ kind: 'memory', ids: [m.id] }, scope);
    const fresh = [await say('tooling once more'), await say('tooling, the fourth time')];
    const back = await quarkpm();
    assert.equal(back.length, 1, 'promoted again');
    assert.ok(back[0].id !== m.id, 'a new memory');
    const evidence = new Set(back[0].evidence ?? []);
    assert.ok(fresh.every((id) => evidence.has(id)), `built on what was said since (${[...evidence]})`);
    assert.ok(old.every((id) => !evidence.has(id)), `not on the evidence it was forgotten with (${[...evidence]})`);
    // Forgotten again: neither the older nor the newer evidence promotes it.
    await engine.forget({ kind: 'memory', ids: [back[0].id] }, scope);
    await say('tooling, the fifth time');
    assert.deepEqual(await quarkpm(), [], 'forgotten twice, still forgotten');
  });

  it('a forget of it a crash interrupted, finished by the next open, keeps it from being promoted again', async () => {
    await say('tooling');
    await say('tooling again');
    const [m] = await engine.listMemories(scope);
    await interruptedForget(engine, { kind: 'memory', ids: [m.id] }, scope.project);
    await engine.close();
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, summariseOrphanSessions: false });
    assert.deepEqual(await quarkpm(), [], 'control: the next open finished the forget');
    await say('tooling once more');
    assert.deepEqual(await quarkpm(), [], 'promoted again from the evidence it was forgotten with');
  });

  it('other statements are promoted as before, and a forget of the whole project starts afresh', async () => {
    await say('tooling');
    await say('tooling again');
    const [m] = await engine.listMemories(scope);
    await engine.forget({ kind: 'memory', ids: [m.id] }, scope);
    await say('style', 'We decided to use tabs for indentation.');
    await say('style again', 'We decided to use tabs for indentation.');
    assert.ok((await engine.listMemories(scope)).some((x) => /tabs/.test(x.text)), 'another statement is promoted');
    assert.match(await metaText(engine), /forgot_statement:/, 'control: the statement is kept as forgotten');
    await engine.forget({ project: scope.project }, scope);
    assert.doesNotMatch(await metaText(engine), /forgot_statement:/, 'the project forget takes it');
    await say('tooling');
    await say('tooling again');
    assert.equal((await quarkpm()).length, 1, 'promoted afresh');
  });
});

describe('forget: a forget by id a crash interrupted, finished after a forget of the whole project', function () {
  this.timeout(120_000);
  let dir: string;
  let repo: string;
  let engine: MemoryEngine;
  const project = 'acme/qzresumeq';
  const scope = { project, branch: 'main' };
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-forget-resume-'));
    repo = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-forget-resume-repo-'));
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    git(repo, ['init', '-q', '-b', 'main']);
    commitAll(repo, { subject: 'Add the qzcommitq ledger', time: 1767600000, files: { 'src/ledger.ts': 'export const ledger = 1;\n' } });
  });
  after(async () => {
    await engine.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(repo, { recursive: true, force: true });
  });

  it('the whole-project forget is a fresh start: the next import stores the commit, and no key names the project', async () => {
    await importGitHistory(engine, repo, { scope });
    const commit = (await engine.listObservations(scope, { limit: 100 })).find((o) => o.type === 'commit')!;
    assert.ok(commit, 'control');
    const dead = spawnSync(process.execPath, ['-e', '']).pid as number;
    const [row] = (await engine.store.rows(TABLES.observations, `id = ${commit.id}`)) as Array<{ dedupe_key: string }>;
    assert.match(String(row.dedupe_key), /^commit:/, 'control: dedupe key');
    const tomb = `forgot_import:${sha(project)}:${sha(`${project}\u0000${row.dedupe_key}`)}`;
    const journal = {
      request: { kind: 'observation', ids: [commit.id] },
      scope: { project },
      owner: { pid: dead, host: os.hostname() },
      closure: { doomed: { observation: [commit.id], session_summary: [], memory: [] }, entities: [], restore: [], successors: {}, tombstones: [tomb], statements: {} },
    };
    // Another process crashed in a forget by id, its closure journalled, before its first delete.
    await engine.store.setMeta({ 'pending_forget:crashed': JSON.stringify(journal) });
    // This process forgets the whole project meanwhile.
    await engine.forget({ project }, { project });
    await engine.close();
    // The next open resumes the crashed forget.
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    const keys = (await engine.store.rows(TABLES.meta, null)).map((r) => String((r as { key: unknown }).key)).filter((k) => k.includes(sha(project)) && !k.startsWith('forgot_at:') && !k.startsWith('forgot_whole:'));
    await importGitHistory(engine, repo, { scope });
    const again = (await engine.listObservations(scope, { limit: 100 })).filter((o) => o.type === 'commit').length;
    assert.deepEqual({ keys, again }, { keys: [], again: 1 });
  });
});
