// A session ended more than once (ended again after new events, an idle timer racing End
// Session, two windows or processes ending it at once) keeps one summary, true to everything the
// session did, and its observations are merged once.

import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { ExtractiveSummariser } from '../../src/core/compress/summariser';
import type { Summariser } from '../../src/core/compress/summariser';
import { TABLES } from '../../src/core/store/schema';

process.env.LANCEDB_LOG ??= 'error';
const REPO = path.resolve(__dirname, '..', '..');

describe('a session ended twice keeps one true summary', function () {
  this.timeout(180_000);
  const scope = { project: 'github.com/acme/ledger', branch: 'main' };
  let dir: string;
  let engine: MemoryEngine;

  /** The extractive summariser, answering after `ms`: two ends of a session then overlap. */
  const slow = (ms: number): Summariser => {
    const extractive = new ExtractiveSummariser();
    return { name: extractive.name, summarise: async (...args) => (await new Promise((r) => setTimeout(r, ms)), extractive.summarise(...args)) };
  };
  const open = (summariser: Summariser = slow(0)): Promise<MemoryEngine> =>
    MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, batchDelayMs: 20, summariseOrphanSessions: false, summariser });

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-ended-twice-'));
    engine = await open();
  });
  afterEach(async () => {
    await engine.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Four edits of one file (merged when the session ends) and one of another, in session `id`. */
  async function work(id: string): Promise<void> {
    const edits = [0, 1, 2, 3].map((i) => ({ type: 'edit', title: `Edit exporter ${i}`, files_modified: ['src/exporter.ts'], narrative: `Step ${i}`, memory_session_id: id }));
    await engine.observe([...edits, { type: 'edit', title: 'Edit reader', files_modified: ['src/reader.ts'], memory_session_id: id }], scope);
  }

  async function summaryRows(id: string): Promise<Record<string, unknown>[]> {
    return engine.store.rows(TABLES.sessionSummaries, `memory_session_id = '${id}'`);
  }

  async function merged(): Promise<number> {
    return (await engine.listObservations(scope)).filter((o) => o.type === 'merged').length;
  }

  it('ended again, its summary still names the files whose edits the first end merged', async () => {
    await work('again');
    const first = await engine.endSession(scope, 'again', 'request');
    assert.match(first?.completed ?? '', /src\/exporter\.ts/);
    const second = await engine.endSession(scope, 'again', 'shutdown');
    assert.ok(second);
    assert.match(second.completed ?? '', /src\/exporter\.ts/);
    assert.match(second.completed ?? '', /src\/reader\.ts/);
    const rows = await summaryRows('again');
    assert.equal(rows.length, 1);
    assert.equal(Number(rows[0].id), first?.id, 'the summary keeps its id');
    assert.equal(Number(rows[0].observation_count), 5);
    assert.equal(await merged(), 1);
  });

  it('two ends at once in one process write one summary and merge once', async () => {
    await work('race');
    await engine.close();
    engine = await open(slow(500));
    const [a, b] = await Promise.all([engine.endSession(scope, 'race', 'request'), engine.endSession(scope, 'race', 'idle')]);
    assert.equal(a?.id, b?.id);
    assert.equal((await summaryRows('race')).length, 1);
    assert.equal((await engine.store.rows(TABLES.cells, `source_kind = 'session_summary'`)).length, 1);
    assert.equal(await merged(), 1);
  });

  it('two processes ending the session at once write one summary and merge once', async () => {
    await work('windows');
    await engine.close();
    engine = await open(slow(3000));
    // The other process's summariser answers after 3 s too, so both write at about the same time.
    const code = `
      const { MemoryEngine } = require(${JSON.stringify(path.join(REPO, 'src/core/engine'))});
      const { HashedEmbedder } = require(${JSON.stringify(path.join(REPO, 'src/core/embed/hashed'))});
      const { ExtractiveSummariser } = require(${JSON.stringify(path.join(REPO, 'src/core/compress/summariser'))});
      const extractive = new ExtractiveSummariser();
      const summariser = { name: extractive.name, summarise: async (...a) => (await new Promise((r) => setTimeout(r, 3000)), extractive.summarise(...a)) };
      (async () => {
        const e = await MemoryEngine.open({ storeUri: ${JSON.stringify(dir)}, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false, summariser });
        process.stdout.write('ready\\n');
        await new Promise((resolve) => process.stdin.once('data', resolve));
        await e.endSession(${JSON.stringify(scope)}, 'windows', 'idle');
        await e.close();
        process.stdout.write('done\\n');
        process.exit(0);
      })().catch((err) => { process.stderr.write(String((err && err.stack) || err)); process.exit(3); });
    `;
    const child = spawn(process.execPath, ['-r', 'tsx/cjs', '-e', code], { cwd: REPO, env: { ...process.env, LANCEDB_LOG: 'error' } });
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (out.includes('ready')) resolve();
      });
      void exited.then(() => reject(new Error(`child ended before it was ready: ${err}`)));
    });
    child.stdin.end('go\n');
    await engine.endSession(scope, 'windows', 'request');
    assert.equal(await exited, 0, err);
    assert.equal((await summaryRows('windows')).length, 1);
    assert.equal((await engine.store.rows(TABLES.cells, `source_kind = 'session_summary'`)).length, 1);
    assert.equal(await merged(), 1);
  });
});
