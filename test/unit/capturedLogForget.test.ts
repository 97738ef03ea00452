// What the window shows of capture ("Code Memory: Captured", "Show What Is Captured") after a
// forget: the forgotten records are gone from it too, not only from the store.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness, makeRepo, tmp } from './captureHarness';

describe('capture: the captured log after a forget', function () {
  this.timeout(120_000);
  let root: string;
  let h: Harness | undefined;

  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('drops what was forgotten from the list and the channel, and keeps the rest', async () => {
    root = tmp('cm-capturedlog-');
    const ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/price.ts': 'export const price = 1;\n', 'src/tax.ts': 'export const tax = 2;\n' });
    h = await new Harness({ folders: [ws] }).start();
    const project = await h.project();
    for (const [file, text] of [['src/price.ts', 'export const price = 1; // qzsecretplanq\n'], ['src/tax.ts', 'export const tax = 3;\n']]) {
      const doc = h.open(path.join(ws, file));
      h.type(doc, text);
      h.save(doc);
    }
    await h.flush();
    const shown = (): string[] => h!.channels.get('Code Memory: Captured') ?? [];
    const entries = (): { observation: { id: number; title: string | null } }[] => h!.captured.entries();
    const price = entries().filter((e) => /price\.ts/.test(e.observation.title ?? ''));
    assert.ok(price.length > 0 && shown().some((l) => /price\.ts/.test(l)), `control: the edit is shown:\n${shown().join('\n')}`);
    await h.engine.forget({ kind: 'observation', ids: price.map((e) => e.observation.id) }, { project });
    await h.captured.prune(async (p: string, ids: number[]) => new Set((await h!.engine.getObservations(ids, { project: p }, { includeSuppressed: true })).map((o) => o.id)));
    assert.deepEqual(entries().filter((e) => /price\.ts/.test(e.observation.title ?? '')), []);
    assert.ok(!shown().some((l) => /price\.ts/.test(l)), `forgotten, still shown:\n${shown().join('\n')}`);
    assert.ok(entries().some((e) => /tax\.ts/.test(e.observation.title ?? '')) && shown().some((l) => /tax\.ts/.test(l)), 'what was not forgotten is still shown');
  });
});
