// A process killed (kill -9) while it ends a session, half way through promoting the session's
// recurring decisions to memories: the next open's sweep of sessions left open promotes what was
// not promoted, once (a decision promoted before the kill is not promoted twice), and leaves
// nothing for a later sweep. Killed once it wrote the session's summary, it had promoted all.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { TABLES } from '../../src/core/store/schema';
import { REPO, killAtMarker } from './fixtures/killAtMarker';

process.env.LANCEDB_LOG ??= 'error';

const DECISIONS = ['We decided to use Vitest for unit tests.', 'We decided to use pnpm for installing packages.'];

describe('a session end killed before its promotions were all written', function () {
  this.timeout(180_000);
  const scope = { project: 'github.com/acme/ledger', branch: 'main' };
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-promote-killed-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /**
   * A process that stores a session deciding two things twice each and ends it, stopping (for
   * good, then killed) right after the `nth` call of `Class.method` resolved.
   */
  async function killedAfter(module: string, cls: string, method: string, nth: number): Promise<void> {
    const code = `
      const { MemoryEngine } = require(${JSON.stringify(path.join(REPO, 'src/core/engine'))});
      const { HashedEmbedder } = require(${JSON.stringify(path.join(REPO, 'src/core/embed/hashed'))});
      const target = require(${JSON.stringify(path.join(REPO, module))})[${JSON.stringify(cls)}].prototype;
      const original = target[${JSON.stringify(method)}];
      let calls = 0;
      target[${JSON.stringify(method)}] = async function (...args) {
        const out = await original.apply(this, args);
        if (++calls === ${nth}) {
          process.stdout.write('stopped here\\n');
          await new Promise(() => {});
        }
        return out;
      };
      (async () => {
        const e = await MemoryEngine.open({ storeUri: ${JSON.stringify(dir)}, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false });
        const said = ${JSON.stringify(DECISIONS)}.flatMap((text, k) => [0, 1].map((i) => ({ type: i === 0 ? 'decision' : 'note', title: i === 0 ? text : 'Tooling ' + k, narrative: text, files_modified: ['package.json'], memory_session_id: 'killed', created_at_epoch: 1700000000000 + k * 10 + i })));
        await e.observe(said, ${JSON.stringify(scope)});
        await e.endSession(${JSON.stringify(scope)}, 'killed', 'idle');
        process.stdout.write('ended whole\\n');
      })().catch((err) => { process.stderr.write(String((err && err.stack) || err)); process.exit(3); });
    `;
    await killAtMarker(code, 'stopped here', 'ended whole');
  }

  /** Opens the store again and sweeps: `left` sessions are ended by it (those the kill left without a summary). */
  async function swept(left: number): Promise<void> {
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false, sessionIdleMs: 1 });
    try {
      assert.equal(await engine.endOrphanSessions(), left, 'the sweep ends what the killed process left unfinished');
      const memories = await engine.listMemories(scope, { includeSuppressed: true });
      assert.deepEqual(memories.map((m) => m.text).sort(), [...DECISIONS].sort(), memories.map((m) => `${m.id} ${m.status} ${m.text}`).join(' | '));
      assert.ok(memories.every((m) => m.status === 'active' && m.session_id === 'killed'));
      const summaries = await engine.store.rows(TABLES.sessionSummaries, null);
      assert.equal(summaries.length, 1);
      // Nothing is left for a later sweep, nor promoted twice by one.
      assert.equal(await engine.endOrphanSessions(), 0);
      assert.equal((await engine.listMemories(scope, { includeSuppressed: true })).length, 2);
    } finally {
      await engine.close();
    }
  }

  it('killed right after the summary was written: the session is promoted whole, and nothing is left to retry', async () => {
    await killedAfter('src/core/store/repos/summaries', 'SummaryRepository', 'replaceOfSession', 1);
    await swept(0);
  });

  it('killed after the first of two promoted memories: the sweep promotes the second only', async () => {
    await killedAfter('src/core/store/repos/memories', 'MemoryRepository', 'write', 1);
    await swept(1);
  });
});
