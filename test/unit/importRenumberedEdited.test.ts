// A memory renumbered by an import (its id was taken in the target store) and edited since is
// recognised when the same file is imported again: not stored a second time.
import { strict as assert } from 'node:assert';
import { MemoryEngine } from '../../src/core/engine';
import type { ImportReport } from '../../src/core/store/portability';
import { removeDir, tempDir } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

async function* linesOf(lines: string[]): AsyncIterable<string> {
  for (const l of lines) yield l;
}

describe('an import again of a file whose renumbered memory was edited since', function () {
  this.timeout(120_000);
  const dirs: string[] = [];
  const open = async (): Promise<MemoryEngine> => {
    const dir = tempDir('import-renumbered-edited');
    dirs.push(dir);
    return MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  };
  after(() => dirs.forEach(removeDir));
  const scope = { project: 'acme/app', branch: 'main' };
  const importReport = async (e: MemoryEngine, lines: string[]): Promise<ImportReport> => {
    let report: ImportReport | undefined;
    await e.importJsonl(linesOf(lines), { onReport: (r) => (report = r) });
    return report!;
  };

  it('finds the memory already there, and stores nothing twice', async () => {
    const src = await open();
    const dst = await open();
    try {
      const [o] = await src.observe([{ type: 'note', title: 'Tapir note', narrative: 'the tapir service moved' }], scope);
      await src.remember({ memory_type: 'decision', title: 'Tapir service', text: 'The tapir service runs on port 8080.' }, scope);
      const lines: string[] = [];
      await src.exportJsonl((l) => void lines.push(l), null);
      // Ids taken in the target: the file's records get fresh ones.
      await dst.observe(Array.from({ length: 20 }, (_, i) => ({ type: 'note', title: `other ${i}` })), { project: 'zzz', branch: 'main' });
      const first = await importReport(dst, lines);
      assert.equal(first.imported >= 2, true, JSON.stringify(first));
      const [stored] = await dst.listMemories(scope);
      assert.ok(stored && stored.title === 'Tapir service', 'control: imported');
      const observations = await dst.listObservations(scope);
      assert.ok(observations.every((x) => x.id !== o.id) || observations.length === 1, 'control');
      await dst.editMemory(scope, stored.id, { title: 'Tapir service (moved)', text: 'The tapir service runs on port 9090 now.' });
      const second = await importReport(dst, lines);
      assert.equal(second.imported, 0, JSON.stringify(second));
      const memories = await dst.listMemories(scope, { includeSuppressed: true });
      assert.deepEqual(
        memories.map((m) => [m.id, m.title]),
        [[stored.id, 'Tapir service (moved)']],
        'the memory was stored again',
      );
      assert.equal((await dst.listObservations(scope)).length, 1, 'the observation was stored again');
    } finally {
      await src.close();
      await dst.close();
    }
  });
});
