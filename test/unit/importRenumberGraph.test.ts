// An import that renumbers a memory (its id is taken in the target store) moves what names it
// with it: the graph's entries (`memory:<id>`), none left under the old id naming another memory
// (so its forget leaves nothing of its title in the store), and its topic trace's evidence, which
// is the memory itself where nothing else said it.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';

async function* linesOf(lines: string[]): AsyncIterable<string> {
  for (const l of lines) yield l;
}

describe('an import that renumbers a memory', function () {
  this.timeout(120_000);
  const dirs: string[] = [];
  const open = async (): Promise<MemoryEngine> => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-import-graph-'));
    dirs.push(dir);
    return MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  };
  after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  const scope = { project: 'acme/app', branch: 'main' };
  const dump = async (e: MemoryEngine): Promise<Array<{ kind: string; record: Record<string, unknown> }>> => {
    const out: string[] = [];
    await e.exportJsonl((l) => void out.push(l), null);
    return out.slice(1).map((l) => JSON.parse(l) as { kind: string; record: Record<string, unknown> });
  };

  it('moves the graph entries and the topic trace that name it, and its forget leaves nothing of its title', async () => {
    const src = await open();
    const dst = await open();
    try {
      await src.observe([{ type: 'note', title: 'plain' }], scope);
      const m = await src.remember({ memory_type: 'decision', title: 'Zebrafish pipeline', text: 'We run the zebrafish pipeline nightly.', files: ['ops/zebra.ts'], topic_key: 'pipeline' }, scope);
      const lines: string[] = [];
      await src.exportJsonl((l) => void lines.push(l), null);
      assert.ok(lines.some((l) => l.includes(`"memory:${m.id}"`)), 'control: the export holds the memory in the graph');
      await dst.observe(Array.from({ length: 20 }, (_, i) => ({ type: 'note', title: `other ${i}` })), { project: 'zzz', branch: 'main' });
      await dst.importJsonl(linesOf(lines));
      const rows = await dump(dst);
      const mem = rows.find((x) => x.kind === 'memory' && x.record.title === 'Zebrafish pipeline')!.record;
      assert.notEqual(mem.id, m.id, 'control: renumbered');
      const named = rows.filter((x) => x.kind === 'entity' || x.kind === 'relationship').flatMap((x) => [x.record.id, x.record.source, x.record.target]).filter((v) => typeof v === 'string' && v.startsWith('memory:'));
      assert.deepEqual([...new Set(named)], [`memory:${String(mem.id)}`], JSON.stringify(named));
      const trace = JSON.parse(String(mem.topic_trace)) as Array<{ id: number; evidence_event_ids: number[]; covered_from_event_id: number }>;
      assert.deepEqual(
        trace.map((t) => [t.id, t.evidence_event_ids, t.covered_from_event_id]),
        [[mem.id, [mem.id], mem.id]],
        'the trace still names the id the memory had in the file',
      );
      await dst.forget({ kind: 'memory', ids: [Number(mem.id)] }, scope);
      assert.deepEqual((await dump(dst)).filter((x) => JSON.stringify(x).includes('Zebrafish')), [], "the forgotten memory's title is still in the store");
    } finally {
      await src.close();
      await dst.close();
    }
  });
});
