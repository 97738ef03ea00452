// Forgetting in project beta (by ids, a session summary, a memory, then the whole
// project) leaves every row of project alpha exactly as it was, in every table.
import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { sqlString } from '../../src/core/store/filters';
import { TABLES } from '../../src/core/store/schema';
import type { TableName } from '../../src/core/store/schema';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { httpSide } from './crossProjectFixture';
import type { Side } from './crossProjectFixture';
import { openTestEngine, removeDir } from './mcpFixture';

const alphaScope: Scope = { project: 'alpha' };
const betaScope: Scope = { project: 'beta' };
const SHARED = 'src/shared/index.ts';

describe("isolation: beta's forgets leave alpha's rows untouched", function () {
  this.timeout(180_000);
  let engine: MemoryEngine;
  let dir: string;
  let alphaServer: RunningHttpServer;
  let betaServer: RunningHttpServer;
  let a: Side;
  let b: Side;

  async function dump(project: string): Promise<string> {
    const out: Record<string, unknown[]> = {};
    for (const t of Object.values(TABLES) as TableName[]) {
      if (t === TABLES.meta || t === TABLES.lexicalSegments) continue;
      const rows = await engine.store.rows(t, `project = ${sqlString(project)}`);
      out[t] = rows
        .map((r) => {
          const copy: Record<string, unknown> = {};
          for (const [k, v] of Object.entries(r)) if (k !== 'vector' && k !== '_rowid') copy[k] = typeof v === 'bigint' ? String(v) : v;
          return JSON.stringify(copy);
        })
        .sort();
    }
    return JSON.stringify(out);
  }

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    alphaServer = await startHttpServer({ engine, scope: alphaScope });
    betaServer = await startHttpServer({ engine, scope: betaScope });
    a = await httpSide('alpha', alphaServer);
    b = await httpSide('beta', betaServer);
    for (const [side, word] of [
      [a, 'zorblaxquint'],
      [b, 'vantrelliq'],
    ] as const) {
      const obs = { type: 'edit', files_modified: [SHARED], memory_session_id: 'same-session', commit_sha: 'abcdef1234567', branch: 'main', concepts: ['shared'] };
      await side.call('observe', {
        observations: [
          { ...obs, title: `${word} edit one`, narrative: `We decided to use the ${word} scheduler instead of cron.` },
          { ...obs, title: `${word} edit two`, narrative: `We decided to use the ${word} scheduler instead of cron.` },
          { ...obs, title: `${word} edit three`, narrative: `${word} registers its hook in the shared index.`, dedupe_key: 'same-key' },
        ],
      });
      await side.call('remember', { title: `${word} decision`, text: `We use ${word} for the orders service.`, memory_type: 'decision', files: [SHARED], topic_key: 'orders' });
      await side.call('retrieve_memory', { prompt: `how does ${word} schedule jobs?`, session_id: 'same-chat' });
      await side.call('retrieve_memory', { prompt: `how does ${word} schedule jobs?` });
    }
    await engine.endSession(alphaScope, 'same-session', 'idle');
    await engine.endSession(betaScope, 'same-session', 'idle');
    await engine.flush();
  });
  after(async () => {
    await a?.client.close();
    await b?.client.close();
    await alphaServer?.close();
    await betaServer?.close();
    await engine?.close();
    if (dir) removeDir(dir);
  });

  it("forgets in beta by id (observation, memory, session summary), then of the whole project, change no row of alpha's", async () => {
    const before = await dump('alpha');
    const betaRows = JSON.parse(await dump('beta')) as Record<string, string[]>;
    assert.ok(betaRows[TABLES.observations].length > 0 && betaRows[TABLES.requestLog].length > 0 && betaRows[TABLES.sessionPrompts].length > 0, 'control: beta has data');
    const ids = (t: TableName) => (JSON.parse(JSON.stringify(betaRows[t])) as string[]).map((s) => Number((JSON.parse(s) as { id: number }).id));
    const changed: string[] = [];
    const check = async (label: string) => {
      const now = await dump('alpha');
      if (now !== before) changed.push(label);
    };
    await engine.forget({ ids: ids(TABLES.observations).slice(0, 1), kind: 'observation' }, betaScope);
    await check('forget a beta observation');
    const summaries = ids(TABLES.sessionSummaries);
    if (summaries.length) {
      await engine.forget({ ids: summaries, kind: 'session_summary' }, betaScope);
      await check('forget the beta session summary');
    }
    await engine.forget({ ids: ids(TABLES.memories), kind: 'memory' }, betaScope);
    await check('forget beta memories');
    await engine.forget({ project: 'beta' }, betaScope);
    await check('forget the whole beta project');
    if (changed.length) {
      const now = JSON.parse(await dump('alpha')) as Record<string, string[]>;
      const was = JSON.parse(before) as Record<string, string[]>;
      for (const t of Object.keys(was)) if (JSON.stringify(was[t]) !== JSON.stringify(now[t])) changed.push(`${t}: ${was[t].length} -> ${now[t].length} rows; first diff ${JSON.stringify(was[t].find((x) => !now[t].includes(x)))?.slice(0, 300)}`);
    }
    assert.deepEqual(changed, []);
  });
});
