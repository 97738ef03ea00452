// An import stores its texts without terminal escapes and control characters, as capture does,
// also where a text opens with a bracket ("[WIP] ...", "{draft ...") and is not JSON, and inside the
// JSON fields (an observation's facts): read back and parsed, none holds an escape.
import * as assert from 'node:assert/strict';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import type { Scope } from '../../src/core/model/records';
import { TABLES } from '../../src/core/store/schema';
import { removeDir, tempDir } from './mcpFixture';

/* eslint-disable no-control-regex -- control characters are what this test looks for */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('an import of texts with escapes, bracketed or in JSON', function () {
  this.timeout(120_000);
  const scope: Scope = { project: 'github.com/acme/escapes-source' };
  const target = 'github.com/acme/escapes-target';
  let engine: MemoryEngine;
  let dir: string;

  before(async () => {
    dir = tempDir('import-escapes-json');
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, summariseOrphanSessions: false });
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  it('stores titles, texts and facts without them', async () => {
    await engine.observe([{ memory_session_id: 's', type: 'note', title: 'plain', narrative: 'plain', facts: ['plain fact'] }], scope);
    await engine.remember({ title: 'memo', text: 'memo text' }, scope);
    const lines: string[] = [];
    await engine.exportJsonl((line) => lines.push(line), scope);
    // A hand-made file, or an earlier build's: the texts given escapes, imported as another project.
    const moved = lines.map((line) => {
      const parsed = JSON.parse(line) as { kind: string; project?: string; record?: Record<string, unknown> };
      if (parsed.project) parsed.project = target;
      if (parsed.record) parsed.record.project = target;
      if (parsed.kind === 'memory') Object.assign(parsed.record!, { title: '[WIP] \u001b[31mred\u001b[0m', text: '{draft \u001b]0;t\u0007text' });
      if (parsed.kind === 'observation') Object.assign(parsed.record!, { title: '[x] \u001b[31mtitle', facts: JSON.stringify(['\u001b[1mbold fact\u001b[0m']) });
      return JSON.stringify(parsed);
    });
    await engine.importJsonl(
      (async function* () {
        yield* moved;
      })(),
    );
    const [memory] = await engine.store.rows(TABLES.memories, `project = '${target}'`);
    const [observation] = await engine.store.rows(TABLES.observations, `project = '${target}'`);
    assert.deepEqual([memory.title, memory.text], ['[WIP] red', '{draft text']);
    assert.equal(observation.title, '[x] title');
    assert.deepEqual(JSON.parse(String(observation.facts)), ['bold fact']);
    for (const cell of await engine.store.rows(TABLES.cells, `project = '${target}'`)) {
      for (const name of ['title', 'text', 'search_text']) assert.doesNotMatch(String(cell[name] ?? ''), CONTROL, `cell ${name}`);
    }
  });
});
