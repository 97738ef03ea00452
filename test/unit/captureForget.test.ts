// Forgetting a captured edit: the next save of the same file, in what was the same session, must
// not store the forgotten change again (capture diffs a file against the text its session
// recorded, which holds it; a forget ends the session, and the next edit starts from the file).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import { Harness, brief, makeRepo, tmp } from './captureHarness';
import { CliBundle } from './cliFixture';

const A0 = 'export function price(n: number) {\n  return n * 2;\n}\n';

describe('capture: a forgotten edit stays forgotten', function () {
  this.timeout(120_000);
  let root: string;
  let ws: string;
  let h: Harness | undefined;

  beforeEach(() => {
    root = tmp('cm-captureforget-');
    ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/price.ts': A0, 'src/other.ts': 'export const other = 1;\n' });
  });
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('a forgotten edit does not come back when the same file is saved again in the same session', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const project = await h.project();
    const doc = h.open(path.join(ws, 'src/price.ts'));
    h.type(doc, A0.replace('return n * 2;', 'return n * 2; // qzforgotq pricing rule for the vombat client'));
    h.save(doc);
    await h.flush();
    const before = await h.observations(project);
    const edits = before.filter((o) => JSON.stringify(o).includes('qzforgotq'));
    assert.ok(edits.length > 0, `control: the edit is stored:\n${brief(before)}`);
    const session = edits[0].memory_session_id;
    await h.engine.forget({ kind: 'observation', ids: edits.map((o) => o.id) }, { project });
    assert.deepEqual((await h.observations(project)).filter((o) => JSON.stringify(o).includes('qzforgotq')).map((o) => o.id), [], 'control: forgotten');
    // An unrelated change to the same file, later.
    h.type(doc, doc.text.replace('export function price', 'export function finalPrice'));
    h.save(doc);
    await h.flush();
    const after = await h.observations(project);
    assert.ok(after.some((o) => /finalPrice/.test(JSON.stringify(o))), `control: the new edit is stored:\n${brief(after)}`);
    assert.deepEqual(
      after.filter((o) => JSON.stringify(o).includes('qzforgotq')).map((o) => `${o.id} ${o.type} ${o.title}\n${o.narrative}`),
      [],
      'the forgotten text is back in the store',
    );
    assert.ok(after.filter((o) => /finalPrice/.test(JSON.stringify(o))).every((o) => o.memory_session_id !== session), 'the forget ended the session its edit was captured in');
  });

  it('an edit of another file in that session is kept, and the session is still summarised (at shutdown), without the forgotten edit', async () => {
    const storeDir = tmp('cm-captureforget-store-');
    const open = (): Promise<MemoryEngine> => MemoryEngine.open({ storeUri: storeDir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, batchDelayMs: 20, summariseOrphanSessions: false });
    let engine = await open();
    try {
      h = await new Harness({ folders: [ws], engine, storeDir }).start();
      const project = await h.project();
      const other = h.open(path.join(ws, 'src/other.ts'));
      h.type(other, 'export const other = 1; // qzkeptq shipping table\n');
      h.save(other);
      const doc = h.open(path.join(ws, 'src/price.ts'));
      h.type(doc, A0.replace('return n * 2;', 'return n * 2; // qzgoneq margin for the vombat client'));
      h.save(doc);
      await h.flush();
      const stored = await h.observations(project);
      const gone = stored.filter((o) => JSON.stringify(o).includes('qzgoneq'));
      assert.ok(gone.length > 0 && stored.some((o) => JSON.stringify(o).includes('qzkeptq')), `control: both stored:\n${brief(stored)}`);
      const session = gone[0].memory_session_id;
      await h.engine.forget({ kind: 'observation', ids: gone.map((o) => o.id) }, { project });
      assert.notEqual(await engine.currentSessionId({ project }), session, 'the next observation goes to a new session');
      await h.dispose();
      h = undefined;
      // Shutdown ends the session the forget retired, like any session still open.
      await engine.close();
      engine = await open();
      const summaries = (await engine.listSessions({ project }, 100)).filter((x) => x.memory_session_id === session);
      assert.equal(summaries.filter((x) => x.summary).length, 1, 'the retired session is summarised');
      assert.doesNotMatch(JSON.stringify(summaries), /qzgoneq/);
      const now = await engine.listObservations({ project }, { limit: 100 });
      assert.ok(now.some((o) => JSON.stringify(o).includes('qzkeptq')), 'the other edit is kept');
      assert.ok(!now.some((o) => JSON.stringify(o).includes('qzgoneq')), 'the forgotten edit stays gone');
    } finally {
      await h?.dispose();
      h = undefined;
      await engine.close().catch(() => undefined);
      fs.rmSync(storeDir, { recursive: true, force: true });
    }
  });
  it('a forget run by another process (the CLI) ends the session too: the next save does not store the forgotten edit again', async () => {
    const storeDir = tmp('cm-captureforget-cli-');
    const bundle = new CliBundle('capture-forget-cli');
    const engine = await MemoryEngine.open({ storeUri: storeDir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, batchDelayMs: 20, summariseOrphanSessions: false });
    try {
      await bundle.build();
      h = await new Harness({ folders: [ws], engine, storeDir }).start();
      const project = await h.project();
      const doc = h.open(path.join(ws, 'src/price.ts'));
      h.type(doc, A0.replace('return n * 2;', 'return n * 2; // qzcliforgotq pricing rule for the vombat client'));
      h.save(doc);
      await h.flush();
      const edits = (await h.observations(project)).filter((o) => JSON.stringify(o).includes('qzcliforgotq'));
      assert.ok(edits.length > 0, 'control: the edit is stored');
      const session = edits[0].memory_session_id;
      const run = await bundle.run(['forget', '--store', storeDir, '--project', project, '--kind', 'observation', '--ids', edits.map((o) => o.id).join(',')]);
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual((await h.observations(project)).filter((o) => JSON.stringify(o).includes('qzcliforgotq')).map((o) => o.id), [], 'control: forgotten');
      h.type(doc, doc.text.replace('export function price', 'export function finalPrice'));
      h.save(doc);
      await h.flush();
      const after = await h.observations(project);
      assert.ok(after.some((o) => /finalPrice/.test(JSON.stringify(o))), `control: the new edit is stored:\n${brief(after)}`);
      assert.deepEqual(after.filter((o) => JSON.stringify(o).includes('qzcliforgotq')).map((o) => `${o.id} ${o.type} ${o.title}\n${o.narrative}`), [], 'the forgotten text is back in the store');
      assert.ok(after.filter((o) => /finalPrice/.test(JSON.stringify(o))).every((o) => o.memory_session_id !== session), 'the other process\'s forget ended the session its edit was captured in');
    } finally {
      await h?.dispose();
      h = undefined;
      await engine.close().catch(() => undefined);
      bundle.remove();
      fs.rmSync(storeDir, { recursive: true, force: true });
    }
  });
  it("what was captured before another process's forget of the project began is not stored after it, nor what such a forget overtakes", async () => {
    const storeDir = tmp('cm-captureforget-queued-');
    const bundle = new CliBundle('capture-forget-queued');
    const engine = await MemoryEngine.open({ storeUri: storeDir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, batchDelayMs: 20, summariseOrphanSessions: false });
    const project = 'queued-capture';
    const edit = (word: string, at: number) => ({ type: 'edit', title: `Edited src/price.ts`, narrative: `+ return n * 2; // ${word} pricing rule`, files_modified: ['src/price.ts'], created_at_epoch: at });
    const texts = async () => (await engine.listObservations({ project }, { limit: 100 })).map((o) => `${o.title} ${o.narrative}`).join('\n');
    try {
      await bundle.build();
      await engine.observe([{ type: 'note', title: 'Vombat pricing', narrative: 'qzearlierq' }], { project });
      // Captured (queued in a window) before the forget, written after it.
      const queued = edit('qzqueuedq', Date.now());
      await new Promise((r) => setTimeout(r, 5));
      const run = await bundle.run(['forget', '--store', storeDir, '--project', project, '--whole-project', '--yes']);
      assert.equal(run.code, 0, run.stderr);
      const after = edit('qzafterq', Date.now());
      const stored = await engine.capture([queued, after], { project });
      assert.equal(stored[0], null, 'the edit captured before the forget is not stored');
      assert.ok(stored[1], 'the edit captured after it is');
      const now = await texts();
      assert.doesNotMatch(now, /qzqueuedq|qzearlierq/);
      assert.match(now, /qzafterq/);
      // A forget by id (a memory deleted in the tree view) drops nothing captured before it.
      const memory = await engine.remember({ title: 'Unrelated', text: 'qzunrelatedq' }, { project });
      const beforeDelete = edit('qzbeforedeleteq', Date.now());
      await new Promise((r) => setTimeout(r, 5));
      await engine.forget({ kind: 'memory', ids: [memory.id] }, { project });
      assert.ok((await engine.capture([beforeDelete], { project }))[0], 'a save captured before a memory was deleted is stored');
      // A time that is no time is observe()'s to refuse, not a reason to drop.
      await assert.rejects(engine.capture([{ ...edit('qznegativeq', -5), title: 'Edited src/neg.ts' }], { project }), /milliseconds/);
      // observe() (an agent's call, an import) is not capture: it stores what it is given.
      const observed = await engine.observe([{ type: 'note', title: 'Margins', narrative: 'qzobservedq', created_at_epoch: Date.now() - 60_000 }], { project });
      assert.equal(observed.length, 1);
      assert.match(await texts(), /qzobservedq/);
    } finally {
      await engine.close().catch(() => undefined);
      bundle.remove();
      fs.rmSync(storeDir, { recursive: true, force: true });
    }
  });
  it("a save still queued in the window when another process forgets the project is not stored, and the next save starts from the file as it is", async () => {
    const storeDir = tmp('cm-captureforget-window-');
    const engine = await MemoryEngine.open({ storeUri: storeDir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, batchDelayMs: 20, summariseOrphanSessions: false });
    let other: MemoryEngine | undefined;
    const body = Array.from({ length: 30 }, (_, i) => `export const line${i} = ${i};`);
    const file = path.join(ws, 'src/long.ts');
    fs.writeFileSync(file, `${body.join('\n')}\n`);
    try {
      h = await new Harness({ folders: [ws], engine, storeDir }).start();
      const project = await h.project();
      const doc = h.open(file);
      const first = [...body];
      first[2] = 'export const line2 = 2; // qzqueuedbeforeq vombat margin';
      h.type(doc, `${first.join('\n')}\n`);
      h.save(doc);
      // Still queued: the capture queue's timer is stopped, so the forget comes first.
      (h.capture.queue as unknown as { cancelTimer(): void }).cancelTimer();
      assert.ok(h.capture.queue.size > 0, 'control: the save is queued');
      other = await MemoryEngine.open({ storeUri: storeDir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false });
      await other.forget({ project }, null);
      await h.flush();
      const afterForget = await h.observations(project);
      assert.deepEqual(afterForget.filter((o) => JSON.stringify(o).includes('qzqueuedbeforeq')).map((o) => o.id), [], `the queued save is stored after the forget:\n${brief(afterForget)}`);
      const second = [...first];
      second[27] = 'export const line27 = 27; // qzlaterq shipping table';
      h.type(doc, `${second.join('\n')}\n`);
      h.save(doc);
      await h.flush();
      const later = await h.observations(project);
      assert.ok(later.some((o) => JSON.stringify(o).includes('qzlaterq')), `control: the next save is stored:\n${brief(later)}`);
      assert.deepEqual(later.filter((o) => JSON.stringify(o).includes('qzqueuedbeforeq')).map((o) => `${o.id} ${o.type} ${o.title}\n${o.narrative}`), [], 'the next save diffed against the file before the forget');
    } finally {
      await h?.dispose();
      h = undefined;
      await other?.close().catch(() => undefined);
      await engine.close().catch(() => undefined);
      fs.rmSync(storeDir, { recursive: true, force: true });
    }
  });
});
