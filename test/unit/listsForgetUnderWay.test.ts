// A forget under way (its journal written, its records not yet deleted: the forget still at work,
// or its process killed) is honoured by the lists the sidebar reads too: listSessions (the
// sessions, their summaries and summary ids), listObservations, listMemories and
// listMemoryOutline, in this process and in another process that has the store open, show none of
// the records it forgets, whether it names a few records or more than a search's filter lists; a
// page of N asked still holds N when N others are stored, a session whose every observation is
// being forgotten is not listed, a forget of the whole project lists nothing of it; and all is
// listed again once the journal is gone.
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { thisProcess } from '../../src/core/store/processRef';
import { TABLES } from '../../src/core/store/schema';
import { openTestEngine, removeDir, tempDir } from './mcpFixture';

const JOURNAL = 'pending_forget:lists-under-way';
const ROOT = path.resolve(__dirname, '../..');

/** What the four lists show of `scope`: ids only. */
interface Lists {
  sessions: Array<{ id: string; count: number; summary: number | null; summary_ids: number[] }>;
  observations: number[];
  page: number[];
  memories: number[];
  outline: number[];
}

async function lists(engine: MemoryEngine, scope: Scope): Promise<Lists> {
  const sessions = await engine.listSessions(scope, 50);
  return {
    sessions: sessions.map((s) => ({ id: s.memory_session_id, count: s.observation_count, summary: s.summary?.id ?? null, summary_ids: [...(s.summary_ids ?? [])].sort((a, b) => a - b) })).sort((a, b) => a.id.localeCompare(b.id)),
    observations: (await engine.listObservations(scope, { limit: 500 })).map((o) => o.id).sort((a, b) => a - b),
    page: (await engine.listObservations(scope, { limit: 3 })).map((o) => o.id).sort((a, b) => a - b),
    memories: (await engine.listMemories(scope)).map((m) => m.id).sort((a, b) => a - b),
    outline: (await engine.listMemoryOutline(scope)).map((m) => m.id).sort((a, b) => a - b),
  };
}

/** The same lists, read by another process that opens the store (its own MemoryEngine). */
function listsElsewhere(dir: string, scope: Scope): Promise<Lists> {
  const script = `
    const { MemoryEngine } = require('./src/core/engine');
    const { HashedEmbedder } = require('./src/core/embed/hashed');
    (async () => {
      const [dir, scope] = [process.argv[1], JSON.parse(process.argv[2])];
      const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
      const sessions = await engine.listSessions(scope, 50);
      const out = {
        sessions: sessions.map((s) => ({ id: s.memory_session_id, count: s.observation_count, summary: s.summary ? s.summary.id : null, summary_ids: [...(s.summary_ids || [])].sort((a, b) => a - b) })).sort((a, b) => a.id.localeCompare(b.id)),
        observations: (await engine.listObservations(scope, { limit: 500 })).map((o) => o.id).sort((a, b) => a - b),
        page: (await engine.listObservations(scope, { limit: 3 })).map((o) => o.id).sort((a, b) => a - b),
        memories: (await engine.listMemories(scope)).map((m) => m.id).sort((a, b) => a - b),
        outline: (await engine.listMemoryOutline(scope)).map((m) => m.id).sort((a, b) => a - b),
      };
      await engine.close();
      process.stdout.write(JSON.stringify(out));
    })().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1); });`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-r', 'tsx/cjs', '-e', script, dir, JSON.stringify(scope)], { cwd: ROOT, env: { ...process.env, LANCEDB_LOG: 'error' }, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as Lists);
    });
  });
}

describe('the sidebar lists while a forget is under way', function () {
  this.timeout(180_000);
  const scope: Scope = { project: 'github.com/acme/lists-under-way' };
  let dir: string;
  let engine: MemoryEngine;
  const doomed = { observation: [] as number[], session_summary: [] as number[], memory: [] as number[] };
  const kept = { observation: [] as number[], session_summary: [] as number[], memory: [] as number[] };

  before(async () => {
    dir = tempDir('lists-under-way');
    ({ engine } = await openTestEngine(dir));
    // s-doomed: all it holds is forgotten; s-mixed: one of its two observations; s-kept: nothing.
    // Seven observations are kept, so a page of 3 has 3 to show.
    const at = Date.now() - 3_600_000;
    const written = await engine.observe(
      [
        { memory_session_id: 's-doomed', type: 'note', title: 'Doomed gavrosquin note', narrative: 'gavrosquin is being forgotten', created_at_epoch: at + 10 },
        { memory_session_id: 's-mixed', type: 'note', title: 'Doomed gavrosquin twin', narrative: 'gavrosquin twin is being forgotten', created_at_epoch: at + 9 },
        ...Array.from({ length: 6 }, (_, i) => ({ memory_session_id: 's-kept', type: 'note', title: `Kept numbat note ${i}`, narrative: `numbat item ${i} stays`, created_at_epoch: at + i })),
        { memory_session_id: 's-mixed', type: 'note', title: 'Kept numbat mixed', narrative: 'numbat mixed stays', created_at_epoch: at + 8 },
      ],
      scope,
    );
    doomed.observation.push(written[0].id, written[1].id);
    kept.observation.push(...written.slice(2).map((o) => o.id));
    const [sDoomed, sKept] = await Promise.all(['s-doomed', 's-kept'].map((s) => engine.endSession(scope, s, 'idle')));
    doomed.session_summary.push(sDoomed!.id);
    kept.session_summary.push(sKept!.id);
    doomed.memory.push((await engine.remember({ title: 'Gavrosquin decision', text: 'the gavrosquin decision is being forgotten' }, scope)).id);
    kept.memory.push((await engine.remember({ title: 'Numbat decision', text: 'the numbat decision stays' }, scope)).id);
    await engine.flush();
  });

  after(async () => {
    await engine?.close();
    removeDir(dir);
  });

  /** The journal a forget of these records writes before it deletes anything, `extra` more (not stored) ids of each kind named too. */
  async function journal(extra: number): Promise<void> {
    const more = Array.from({ length: extra }, (_, i) => 10_000_000 + i);
    const closure = { doomed: { observation: [...doomed.observation, ...more], session_summary: [...doomed.session_summary, ...more], memory: [...doomed.memory, ...more] }, entities: [], restore: [] };
    const request = { kind: 'observation', ids: [...doomed.observation, ...more] };
    await engine.store.setMeta({ [JOURNAL]: JSON.stringify({ request, scope, closure, owner: thisProcess() }) });
  }

  function expected(): Lists {
    return {
      sessions: [
        { id: 's-kept', count: 6, summary: kept.session_summary[0], summary_ids: [kept.session_summary[0]] },
        { id: 's-mixed', count: 1, summary: null, summary_ids: [] },
      ],
      observations: [...kept.observation].sort((a, b) => a - b),
      page: [kept.observation[6], kept.observation[5], kept.observation[4]].sort((a, b) => a - b),
      memories: kept.memory,
      outline: kept.memory,
    };
  }

  for (const extra of [0, 1_500]) {
    it(`a forget naming ${extra === 0 ? 'a few records' : `${extra + 4} records`}: neither process lists them, the others are listed in full pages`, async () => {
      await journal(extra);
      try {
        assert.deepEqual(await lists(engine, scope), expected(), 'this process');
        assert.deepEqual(await listsElsewhere(dir, scope), expected(), 'another process');
      } finally {
        await engine.store.delete(TABLES.meta, `key = '${JOURNAL}'`);
      }
      const all = await lists(engine, scope);
      assert.deepEqual(all.sessions.map((s) => s.id), ['s-doomed', 's-kept', 's-mixed'], 'once the journal is gone');
      assert.equal(all.observations.length, 9);
      assert.deepEqual(all.memories, [...doomed.memory, ...kept.memory].sort((a, b) => a - b));
    });
  }

  it('a forget of the whole project: neither process lists anything of it', async () => {
    await engine.store.setMeta({ [JOURNAL]: JSON.stringify({ request: { project: scope.project }, owner: thisProcess() }) });
    const nothing: Lists = { sessions: [], observations: [], page: [], memories: [], outline: [] };
    try {
      assert.deepEqual(await lists(engine, scope), nothing, 'this process');
      assert.deepEqual(await listsElsewhere(dir, scope), nothing, 'another process');
    } finally {
      await engine.store.delete(TABLES.meta, `key = '${JOURNAL}'`);
    }
    assert.equal((await lists(engine, scope)).observations.length, 9);
  });
});
