// Terminal escape sequences (colours, OSC title changes) and other control characters an agent
// sends through `observe` are not stored: the observation as get_observations reads it back, and
// the summary of its session (the extractive one, and a plugged-in model's answer), hold the text
// without them, their line breaks, tabs and ordinary Unicode kept. The same for a memory, whether
// remembered, edited or imported.
import * as assert from 'node:assert/strict';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import type { Summariser } from '../../src/core/compress/summariser';
import type { Scope } from '../../src/core/model/records';
import { TABLES } from '../../src/core/store/schema';
import { getObservations } from '../../src/core/tools/getObservations';
import { observe } from '../../src/core/tools/write';
import { removeDir, tempDir, toolContext } from './mcpFixture';

/* eslint-disable no-control-regex -- control characters are what these tests look for */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('control characters sent through observe, remember, an edit or an import', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  /** What the plugged-in summariser answers: a model may echo what it read, escapes and all. */
  const plugged: Summariser = {
    name: 'language-model:test/model',
    summarise: async () => ({
      request: '\u001b[1mFix the exporter\u001b[0m',
      completed: 'Done:\n\t\u001b]0;pwned\u0007exporter fixed \u2713',
      learned: 'Bell\u0007 and backspace\u0008 and C1 \u009b31m gone',
      decisions: null,
      next_steps: null,
      preferences: null,
      summariser: 'language-model:test/model',
    }),
  };

  before(async () => {
    dir = tempDir('control-chars');
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false });
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  async function observed(scope: Scope, session: string): Promise<number[]> {
    const out = await observe(toolContext(engine, scope), {
      observations: [
        {
          type: 'terminal',
          title: '\u001b[31mnpm test failed (exit 1)\u001b[0m',
          subtitle: '\u001b]0;evil title\u0007subtitle',
          narrative: 'line one\r\n\tline \u001b[32mtwo\u001b[0m caf\u00e9 \u2014 \u65e5\u672c\nthree\u0000\u0008\u007f\u0085\u009b2J',
          facts: ['\u001b[1mWe decided to use Vitest\u001b[0m', 'plain fact'],
          concepts: ['\u001b[33mtest\u001b[0m'],
          search_extra: 'extra \u001b[4munderlined\u001b[24m',
          memory_session_id: session,
        },
      ],
    });
    return out.ids;
  }

  it('stores the observation without escape sequences, keeping newlines, tabs and Unicode', async () => {
    const scope: Scope = { project: 'github.com/acme/escapes-obs' };
    const ids = await observed(scope, 's-obs');
    const answer = await getObservations(toolContext(engine, scope), { ids, source: 'observation' });
    const rows = await engine.store.rows(TABLES.observations, `id = ${ids[0]}`);
    assert.equal(rows.length, 1);
    const row = rows[0];
    for (const name of ['title', 'subtitle', 'narrative', 'facts', 'concepts']) assert.doesNotMatch(String(row[name]), CONTROL, `${name}: ${JSON.stringify(row[name])}`);
    assert.equal(row.title, 'npm test failed (exit 1)');
    assert.equal(row.subtitle, 'subtitle');
    assert.equal(row.narrative, 'line one\n\tline two caf\u00e9 \u2014 \u65e5\u672c\nthree');
    assert.deepEqual(JSON.parse(String(row.facts)), ['We decided to use Vitest', 'plain fact']);
    assert.deepEqual(JSON.parse(String(row.concepts)), ['test']);
    const detail = JSON.stringify(answer);
    assert.doesNotMatch(detail, /\\u001b|\\u0007|\\u009b/, detail);
    const extras = await engine.store.rows(TABLES.cells, `source_kind = 'observation' AND source_id = ${ids[0]}`);
    for (const r of extras) assert.doesNotMatch(JSON.stringify(r), /\\u001b/, 'the cell holds no escape either');
  });

  it('writes the extractive summary of the session without them', async () => {
    const scope: Scope = { project: 'github.com/acme/escapes-summary' };
    await observed(scope, 's-sum');
    const summary = await engine.endSession(scope, 's-sum', 'idle');
    assert.ok(summary, 'a summary is written');
    const rows = await engine.store.rows(TABLES.sessionSummaries, `memory_session_id = 's-sum'`);
    assert.equal(rows.length, 1);
    for (const name of ['request', 'completed', 'learned', 'decisions', 'next_steps', 'preferences']) assert.doesNotMatch(String(rows[0][name] ?? ''), CONTROL, `${name}: ${JSON.stringify(rows[0][name])}`);
  });

  it('writes a plugged-in summariser answer without them, its line breaks, tabs and Unicode kept', async () => {
    const other = tempDir('control-chars-plugged');
    const e = await MemoryEngine.open({ storeUri: other, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false, summariser: plugged });
    try {
      const scope: Scope = { project: 'github.com/acme/escapes-plugged' };
      await e.observe([{ type: 'note', title: 'Exporter', narrative: 'fixed', memory_session_id: 's-plug' }], scope);
      const summary = await e.endSession(scope, 's-plug', 'idle');
      assert.ok(summary);
      assert.equal(summary.request, 'Fix the exporter');
      assert.equal(summary.completed, 'Done:\n\texporter fixed \u2713');
      assert.equal(summary.learned, 'Bell and backspace and C1  gone');
      const rows = await e.store.rows(TABLES.sessionSummaries, `memory_session_id = 's-plug'`);
      assert.equal(rows[0].completed, 'Done:\n\texporter fixed \u2713');
    } finally {
      await e.close();
      removeDir(other);
    }
  });
  it('stores a memory without them, remembered, edited or imported', async () => {
    const scope: Scope = { project: 'github.com/acme/escapes-memory' };
    const m = await engine.remember({ title: '\u001b[31mRed title\u001b[0m ', text: 'text \u001b]0;x\u0007here\n\tindented', memory_type: 'note' }, scope);
    assert.equal(m.title, 'Red title');
    assert.equal(m.text, 'text here\n\tindented');
    const answer = JSON.stringify(await getObservations(toolContext(engine, scope), { ids: [m.id], source: 'memory' }));
    assert.doesNotMatch(answer, /\\u001b|\\u0007/, answer);
    await assert.rejects(engine.remember({ title: '\u001b[0m\u0007', text: 'a title of escapes alone is none' }, scope), /needs a title/);

    const edited = await engine.editMemory(scope, m.id, { title: 'Edited \u001b[1mtitle', text: 'edited \u009b2Jtext' });
    assert.equal(edited.title, 'Edited title');
    assert.equal(edited.text, 'edited text');

    // An export of it, its texts given escapes again (a hand-made file, an earlier build's), imported as another project.
    const lines: string[] = [];
    await engine.exportJsonl((line) => lines.push(line), scope);
    const moved = lines.map((line) => {
      const parsed = JSON.parse(line) as { kind: string; project?: string; record?: Record<string, unknown> };
      if (parsed.project) parsed.project = 'github.com/acme/escapes-import';
      if (parsed.record) parsed.record.project = 'github.com/acme/escapes-import';
      if (parsed.kind === 'memory') Object.assign(parsed.record!, { title: '\u001b[31mImported\u001b[0m title', text: 'imported \u001b]0;t\u0007text' });
      return JSON.stringify(parsed);
    });
    await engine.importJsonl(
      (async function* () {
        yield* moved;
      })(),
    );
    const imported = await engine.listMemories({ project: 'github.com/acme/escapes-import' });
    assert.deepEqual(imported.map((x) => [x.title, x.text]), [['Imported title', 'imported text']]);
  });
});
