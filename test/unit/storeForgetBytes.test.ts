// After each kind of forget, no byte under the store folder holds the forgotten text: every field, every table,
// the full-text segments and their posting files, vectors, the request log and prompts, every old version.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { recallContext } from '../../src/core/tools/recallContext';
import { filesContaining, leaks } from './diskFixture';
import { toolContext } from './mcpFixture';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { makeRepo } from './gitImportFixture';

process.env.LANCEDB_LOG ??= 'error';

describe('forget leaves no bytes on disk', function () {
  this.timeout(180_000);
  let dir: string;
  let engine: MemoryEngine;
  const scope = { project: 'acme/app', branch: 'main' };
  const other = { project: 'other/app', branch: 'main' };

  const open = () => MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, lexiconMinDelta: 1 });
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-auditforget-'));
    engine = await open();
  });
  afterEach(async () => {
    await engine.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('forgetting a memory by id removes its title, text, topic key, files, branch and session id from every file', async () => {
    await engine.observe(Array.from({ length: 30 }, (_, i) => ({ type: 'note', title: `ordinary note ${i}`, narrative: `routine item ${i}` })), scope);
    const m = await engine.remember(
      {
        title: 'Adopt the gnurptitle scheme',
        text: 'We adopt gnurptext for the ledger service.',
        topic_key: 'gnurptopic',
        files: ['src/gnurpfile/ledger.ts'],
        branch: 'gnurpbranch',
        session_id: 'gnurpsession',
        memory_type: 'decision',
      },
      scope,
    );
    await engine.remember({ title: 'Other project memory', text: 'keepzorp stays' }, other);
    await engine.flush();
    await engine.waitForVectors();
    const ctx = toolContext(engine, scope);
    const out = await retrieveMemory(ctx, { prompt: 'what did we adopt for the ledger gnurptext?', session_id: 'promptsess' });
    assert.match(JSON.stringify(out), /gnurp/i, 'control: quoted');
    await recallContext(ctx, { query: 'gnurptext ledger' }).catch(() => undefined);
    await engine.optimize(0);
    await engine.maintenance.indexLexicon();
    assert.ok(filesContaining(dir, 'gnurptext').length > 0, 'control');
    assert.ok(filesContaining(dir, 'gnurptext').some((f) => f.startsWith('lexicon-postings') || f.startsWith('lexical_segments')), 'control: indexed in segments: ' + filesContaining(dir, 'gnurptext').join(','));
    await engine.forget({ kind: 'memory', ids: [m.id] }, scope);
    await engine.close();
    assert.deepEqual(leaks(dir, ['gnurptitle', 'gnurptext', 'gnurptopic', 'gnurpfile', 'gnurpbranch', 'gnurpsession']), {});
    assert.ok(filesContaining(dir, 'keepzorp').length > 0);
  });

  it('forgetting an observation removes its title, narrative, facts, concepts, files, branch, session ids, dedupe key and commit sha', async () => {
    await engine.observe(Array.from({ length: 30 }, (_, i) => ({ type: 'note', title: `ordinary note ${i}`, narrative: `routine item ${i}` })), scope);
    const [o] = await engine.observe(
      [
        {
          type: 'edit',
          title: 'Changed the vombattitle',
          subtitle: 'vombatsubtitle here',
          narrative: 'We moved vombatnarr into the new module.',
          facts: ['vombatfact is true'],
          concepts: ['vombatconcept'],
          files_read: ['src/vombatread.ts'],
          files_modified: ['src/vombatmod.ts', 'src/common.ts'],
          branch: 'vombatbranch',
          memory_session_id: 'vombatmsess',
          content_session_id: 'vombatcsess',
          search_extra: 'vombatextra lines',
          dedupe_key: 'vombatdedupe',
          commit_sha: 'abcdef0123456789abcdef0123456789abcdef01',
        },
      ],
      scope,
    );
    await engine.observe([{ type: 'edit', title: 'kept edit', narrative: 'keepzorp', files_modified: ['src/common.ts'] }], scope);
    await engine.flush();
    await engine.waitForVectors();
    const ctx = toolContext(engine, scope);
    await retrieveMemory(ctx, { prompt: 'where did vombatnarr go?', session_id: 'promptsess' });
    await engine.optimize(0);
    await engine.maintenance.indexLexicon();
    assert.ok(filesContaining(dir, 'vombatnarr').length > 0, 'control');
    await engine.forget({ kind: 'observation', ids: [o.id] }, scope);
    await engine.close();
    assert.deepEqual(
      leaks(dir, ['vombattitle', 'vombatsubtitle', 'vombatnarr', 'vombatfact', 'vombatconcept', 'vombatread', 'vombatmod', 'vombatbranch', 'vombatmsess', 'vombatcsess', 'vombatextra', 'vombatdedupe', 'abcdef0123456789abcdef']),
      {},
    );
  });

  it('forgetting a session summary removes its session (observations, summary, session id, prompts) from every file', async () => {
    const session = 'quoggasession';
    await engine.observe([{ type: 'decision', title: 'Quoggadecision made', narrative: 'We decided quogganarr for the cache.', memory_session_id: session }], scope);
    await engine.observe([{ type: 'edit', title: 'Edited quoggaedit', files_modified: ['src/quoggafile.ts'], memory_session_id: session }], scope);
    await engine.observe([{ type: 'note', title: 'other session', narrative: 'keepzorp', memory_session_id: 'keep-session' }], scope);
    await engine.addPrompt(scope, session, 'how about quoggaprompt?');
    const summary = await engine.endSession(scope, session, 'request');
    assert.ok(summary, 'control: summary');
    await engine.flush();
    await engine.waitForVectors();
    await engine.optimize(0);
    await engine.maintenance.indexLexicon();
    await engine.forget({ kind: 'session_summary', ids: [summary!.id] }, scope);
    await engine.close();
    assert.deepEqual(leaks(dir, ['quoggadecision', 'quogganarr', 'quoggaedit', 'quoggafile', 'quoggasession', 'quoggaprompt']), {});
  });

  it('forgetting a promoted memory and its observation removes both', async () => {
    const [o] = await engine.observe([{ type: 'decision', title: 'Plinthtitle decision', narrative: 'plinthnarr is how we do it', facts: ['plinthfact holds'] }], scope);
    const m = await engine.promote(o.id, scope);
    await engine.flush();
    await engine.optimize(0);
    const report = await engine.forget({ kind: 'observation', ids: [o.id] }, scope);
    assert.equal(report.memories, 1, 'the promoted memory cites the observation and goes with it');
    void m;
    await engine.close();
    assert.deepEqual(leaks(dir, ['plinthtitle', 'plinthnarr', 'plinthfact']), {});
  });

  it('forgetting a whole project removes every path of its text (observe, remember, summary, promote, prompts, log, lexicon)', async () => {
    const gone = { project: 'acme/zorblaxproj', branch: 'zorblaxbranch' };
    const session = 'zorblaxsession';
    const [o] = await engine.observe([{ type: 'decision', title: 'Zorblaxtitle', narrative: 'zorblaxnarr decided', files_modified: ['src/zorblaxfile.ts'], concepts: ['zorblaxconcept'], memory_session_id: session }], gone);
    await engine.remember({ title: 'zorblaxmemtitle', text: 'zorblaxmemtext', topic_key: 'zorblaxtopic', files: ['src/zorblaxmemfile.ts'] }, gone);
    await engine.promote(o.id, gone);
    await engine.addPrompt(gone, session, 'zorblaxprompt please');
    await engine.endSession(gone, session, 'request');
    await engine.remember({ title: 'keep', text: 'keepzorp stays' }, other);
    await engine.flush();
    await engine.waitForVectors();
    await retrieveMemory(toolContext(engine, gone), { prompt: 'what was zorblaxnarr decided?', session_id: 'zorblaxrsess' });
    await engine.optimize(0);
    await engine.maintenance.indexLexicon();
    await engine.forget({ project: gone.project }, null);
    await engine.close();
    assert.deepEqual(
      leaks(dir, ['zorblaxproj', 'zorblaxbranch', 'zorblaxsession', 'zorblaxtitle', 'zorblaxnarr', 'zorblaxfile', 'zorblaxconcept', 'zorblaxmem', 'zorblaxtopic', 'zorblaxprompt', 'zorblaxrsess']),
      {},
    );
    assert.ok(filesContaining(dir, 'keepzorp').length > 0);
  });

  it('forgetting the newer memory of a topic (it superseded an older one) leaves none of its words in the older one or any file', async () => {
    const older = await engine.remember({ title: 'Cache choice', text: 'The orders cache uses memcached.', topic_key: 'orders-cache', memory_type: 'decision' }, scope);
    const newer = await engine.remember({ title: 'Cache choice xerusnewtitle', text: 'The orders cache uses xerusnewtext now.', topic_key: 'orders-cache', memory_type: 'decision' }, scope);
    const [o] = await engine.getMemories([older.id], scope, { includeSuppressed: true });
    assert.equal(o.status, 'superseded', 'control');
    await engine.optimize(0);
    await engine.forget({ kind: 'memory', ids: [newer.id] }, scope);
    const [back] = await engine.getMemories([older.id], scope, { includeSuppressed: true });
    assert.ok(!/xerus/i.test(JSON.stringify(back)), JSON.stringify(back));
    await engine.close();
    assert.deepEqual(leaks(dir, ['xerusnewtitle', 'xerusnewtext']), {});
  });

  it('forgetting one source of a merged observation leaves none of its words in the merged row, the restored sources or any file', async () => {
    const session = 'mergesession';
    await engine.observe([{ type: 'edit', title: 'Edit one of widget', narrative: 'first change marmotone', files_modified: ['src/widget.ts'], memory_session_id: session }], scope);
    const [secret] = await engine.observe([{ type: 'edit', title: 'Edit two of widget', narrative: 'second change marmotsecret', facts: ['marmotfact holds'], files_modified: ['src/widget.ts'], memory_session_id: session }], scope);
    await engine.observe([{ type: 'edit', title: 'Edit three of widget', narrative: 'third change marmotthree', files_modified: ['src/widget.ts'], memory_session_id: session }], scope);
    await engine.endSession(scope, session, 'request');
    const merged = (await engine.listObservations(scope, { limit: 50 })).filter((x) => x.type === 'merged');
    assert.equal(merged.length, 1, 'control: merged');
    await engine.optimize(0);
    await engine.forget({ kind: 'observation', ids: [secret.id] }, scope);
    await engine.close();
    assert.deepEqual(leaks(dir, ['marmotsecret', 'marmotfact']), {});
  });

  it('forgetting an imported commit by id removes its subject, body, diff, author and file path from every file', async () => {
    const { repo } = makeRepo([
      { subject: 'Initial commit', files: { 'README.md': '# proj\n' }, time: 1_700_000_000 },
      { subject: 'Add the okapisubject module', body: 'okapibody explains it', files: { 'src/okapipath.js': 'const okapidiff = 1;\nmodule.exports = okapidiff;\n' }, time: 1_700_003_600, author: 'Okapiauthor Smith' },
      { subject: 'Later unrelated change', files: { 'src/other.js': 'module.exports = 2;\n' }, time: 1_700_007_200 },
    ]);
    try {
      await importGitHistory(engine, repo, { scope });
      await engine.flush();
      const all = await engine.listObservations(scope, { limit: 100 });
      const c = all.find((x) => x.title === 'Add the okapisubject module')!;
      assert.ok(c, 'control');
      await engine.optimize(0);
      await engine.maintenance.indexLexicon();
      assert.ok(filesContaining(dir, 'okapidiff').length > 0, 'control');
      await engine.forget({ kind: 'observation', ids: [c.id] }, scope);
      await engine.close();
      assert.deepEqual(leaks(dir, ['okapisubject', 'okapibody', 'okapidiff', 'okapiauthor', 'okapipath']), {});
    } finally {
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });

  it('forgetting everything leaves none of any project in any file', async () => {
    await engine.observe([{ type: 'note', title: 'Numbatone', narrative: 'numbatnarr', files_modified: ['src/numbatfile.ts'], branch: 'numbatbranch' }], { project: 'numbatproj/one' });
    await engine.remember({ title: 'numbatmem', text: 'numbatmemtext', topic_key: 'numbattopic' }, { project: 'numbatproj/two' });
    await retrieveMemory(toolContext(engine, { project: 'numbatproj/one' }), { prompt: 'numbatnarr?', session_id: 'numbatsess' });
    await engine.flush();
    await engine.waitForVectors();
    await engine.optimize(0);
    await engine.forget({ all: true }, null);
    await engine.close();
    assert.deepEqual(leaks(dir, ['numbatproj', 'numbatone', 'numbatnarr', 'numbatfile', 'numbatbranch', 'numbatmem', 'numbattopic', 'numbatsess']), {});
  });
});
