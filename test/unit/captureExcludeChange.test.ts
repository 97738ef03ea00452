// codeMemory.capture.exclude changed during a session (README: files matching it are never
// captured, not even their names): a file excluded while it has unsaved edits, or after its save
// was queued but before the queue was written, is left out of what is written, also when the
// pattern names the file relative to a package folder of a monorepo. Through the real capture
// (vscode stubbed), a real engine and real git repositories (captureHarness.ts).

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness, Uri, brief, makeRepo, tmp } from './captureHarness';

const A0 = 'export function price(n: number) {\n  return n * 2;\n}\n';

describe('capture after codeMemory.capture.exclude changes', function () {
  this.timeout(120_000);
  let root: string;
  let ws: string;
  let h: Harness | undefined;

  beforeEach(() => {
    root = tmp('cm-exclude-');
    ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/price.ts': A0, 'src/other.ts': 'export const other = 1;\n', 'packages/api/src/handler.ts': 'export const h = 1;\n' });
  });
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  function exclude(patterns: string[]): void {
    h!.config['capture.exclude'] = patterns;
    h!.e.config.fire({ affectsConfiguration: (s: string) => s.startsWith('codeMemory') });
  }

  it('a file excluded while it has unsaved edits: its later save is not stored; other files still are', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const doc = h.open(path.join(ws, 'src/price.ts'));
    h.type(doc, A0.replace('n * 2', 'n * 6'));
    exclude(['src/price.ts']);
    h.save(doc);
    const other = h.open(path.join(ws, 'src/other.ts'));
    h.type(other, 'export const other = 2;\n');
    h.save(other);
    await h.flush();
    await h.endSession(0);
    const obs = await h.observations(await h.project());
    assert.deepEqual(obs.filter((o) => /price\.ts/.test(JSON.stringify(o))).map((o) => o.title), [], brief(obs));
    assert.ok(obs.some((o) => o.type === 'edit' && o.files_modified === '["src/other.ts"]'), brief(obs));
  });

  it('a file excluded after its save and a rename were queued, before they were written: neither is stored', async () => {
    h = await new Harness({ folders: [ws] }).start();
    const doc = h.open(path.join(ws, 'src/price.ts'));
    h.type(doc, A0.replace('n * 2', 'n * 6'));
    h.save(doc);
    fs.renameSync(path.join(ws, 'src/other.ts'), path.join(ws, 'src/private-other.ts'));
    h.e.renameFiles.fire({ files: [{ oldUri: Uri.file(path.join(ws, 'src/other.ts')), newUri: Uri.file(path.join(ws, 'src/private-other.ts')) }] });
    exclude(['src/price.ts', '**/private-*']);
    await h.flush();
    const obs = await h.observations(await h.project());
    assert.deepEqual(obs.filter((o) => /price\.ts|private-other/.test(JSON.stringify(o))).map((o) => o.title), [], brief(obs));
  });

  it('a package folder of a monorepo: a pattern relative to the folder drops a queued save there', async () => {
    const pkg = path.join(ws, 'packages/api');
    h = await new Harness({ folders: [pkg], repoRoots: [ws] }).start();
    const doc = h.open(path.join(pkg, 'src/handler.ts'));
    h.type(doc, 'export const h = 2;\n');
    h.save(doc);
    exclude(['src/handler.ts']);
    await h.flush();
    const obs = await h.observations(await h.project());
    assert.deepEqual(obs.filter((o) => /handler\.ts/.test(JSON.stringify(o))).map((o) => o.title), [], brief(obs));
  });
});
