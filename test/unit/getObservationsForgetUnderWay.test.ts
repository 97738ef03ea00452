// A forget under way (its journal written, its records not yet deleted: the forget still at work,
// or its process killed) is honoured by reads by id too: get_observations, in this process and in
// another process that has the store open (`code-memory mcp` over stdio), serves none of the
// records it forgets, of any kind, whether the forget names a few records or more than a search's
// filter lists; the project's other records are read as before, and all of them once it is gone.
import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope, SourceKind } from '../../src/core/model/records';
import { thisProcess } from '../../src/core/store/processRef';
import { TABLES } from '../../src/core/store/schema';
import { getObservations } from '../../src/core/tools/getObservations';
import { errorCode } from '../../src/core/tools/types';
import { stdioSide } from './crossProjectFixture';
import type { Side } from './crossProjectFixture';
import { openTestEngine, removeDir, tempDir, toolContext } from './mcpFixture';

const JOURNAL = 'pending_forget:under-way';

describe('get_observations while a forget is under way', function () {
  this.timeout(120_000);
  const project = 'github.com/acme/forget-under-way';
  const scope: Scope = { project };
  let dir: string;
  let engine: MemoryEngine;
  let other: Side;
  const ids = {} as Record<SourceKind, { doomed: number; kept: number }>;

  before(async () => {
    dir = tempDir('forget-under-way');
    ({ engine } = await openTestEngine(dir));
    const [doomed, kept] = await engine.observe(
      [
        { memory_session_id: 's-doomed', type: 'note', title: 'Doomed gavrosquin report', narrative: 'the gavrosquin report is being forgotten' },
        { memory_session_id: 's-kept', type: 'note', title: 'Kept numbat report', narrative: 'the numbat report stays' },
      ],
      scope,
    );
    ids.observation = { doomed: doomed.id, kept: kept.id };
    const summaries = await Promise.all(['s-doomed', 's-kept'].map((s) => engine.endSession(scope, s, 'idle')));
    ids.session_summary = { doomed: summaries[0]!.id, kept: summaries[1]!.id };
    const memories = [await engine.remember({ title: 'Gavrosquin decision', text: 'the gavrosquin decision is being forgotten' }, scope), await engine.remember({ title: 'Numbat decision', text: 'the numbat decision stays' }, scope)];
    ids.memory = { doomed: memories[0].id, kept: memories[1].id };
    await engine.flush();
    other = await stdioSide(project, dir);
  });

  after(async () => {
    await other?.client.close().catch(() => undefined);
    await engine?.close();
    removeDir(dir);
  });

  async function readers(kind: SourceKind, asked: number[]): Promise<Record<string, string>> {
    const here = await getObservations(toolContext(engine, scope), { ids: asked, source: kind }).catch((e: Error) => `${errorCode(e)}: ${e.message}`);
    const there = await other.call('get_observations', { ids: asked, source: kind });
    return { here: JSON.stringify(here), there: JSON.stringify(there) };
  }

  for (const size of [1, 1_500]) {
    for (const kind of ['observation', 'memory', 'session_summary'] as const) {
      it(`${kind === 'observation' ? 'an' : 'a'} ${kind} that a forget of ${size === 1 ? 'one record' : `${size} records`} names is not_found in either process; the others are read`, async () => {
        // The journal as a forget writes it before it deletes anything; its owner (this process) runs, so no one else finishes it.
        const request = { kind, ids: [ids[kind].doomed, ...Array.from({ length: size - 1 }, (_, i) => 10_000_000 + i)] };
        await engine.store.setMeta({ [JOURNAL]: JSON.stringify({ request, scope, owner: thisProcess() }) });
        try {
          for (const [where, answer] of Object.entries(await readers(kind, [ids[kind].doomed]))) {
            assert.match(answer, /not_found/, `${where}: ${answer.slice(0, 300)}`);
            assert.doesNotMatch(answer, /gavrosquin/i, `${where}: ${answer.slice(0, 300)}`);
          }
          for (const [where, answer] of Object.entries(await readers(kind, [ids[kind].kept]))) assert.match(answer, /numbat/i, `${where}: ${answer.slice(0, 300)}`);
        } finally {
          await engine.store.delete(TABLES.meta, `key = '${JOURNAL}'`);
        }
        for (const [where, answer] of Object.entries(await readers(kind, [ids[kind].doomed]))) assert.match(answer, /gavrosquin/i, `${where}, once the journal is gone: ${answer.slice(0, 300)}`);
      });
    }
  }
});
