// The CodeLens at the top of a file counts the records about it (README: "Code Memory: 1 decision ·
// 2 edits · 3 sessions"). It looks at a bounded number of records per file; past that bound, the
// counts it shows are lower bounds and say so ("100+ edits"), never a wrong exact count.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { ObservationInput } from '../../src/core/api';
import { withVscodeStub } from './vscodeStub';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow } from './extensionWindow';

describe('extension: the code lens counts of a busy file', function () {
  this.timeout(120_000);
  let w: TwoProjectWindow;
  let lens: Any;
  before(async () => {
    w = await openTwoProjectWindow();
    lens = withVscodeStub(w.stub, () => new w.mods.lens.MemoryCodeLens(w.engines, w.scopes));
  });
  after(async () => {
    lens?.dispose();
    await w.close();
  });

  const edits = (file: string, n: number): ObservationInput[] =>
    Array.from({ length: n }, (_, i) => ({ type: 'edit', title: `Edited ${file} (${i})`, narrative: `edit ${i} of ${file}`, files_modified: [`src/${file}`] }) as ObservationInput);
  const titles = async (file: string): Promise<string[]> => (await lens.provideCodeLenses(w.doc(path.join(w.dir, 'alpha', 'src', file), 'x'), { isCancellationRequested: false })).map((l: Any) => l.command.title);

  it('a file with more records than the lens looks at says "100+", not a count that is too low', async () => {
    await w.engine.observe(edits('busy.ts', 130), w.alpha);
    await w.engine.flush();
    lens.refresh();
    assert.deepEqual(await titles('busy.ts'), ['Code Memory: 100+ edits · 1+ sessions']);
  });

  it('a file with fewer records counts them exactly', async () => {
    await w.engine.observe(edits('calm.ts', 3), w.alpha);
    await w.engine.flush();
    lens.refresh();
    assert.deepEqual(await titles('calm.ts'), ['Code Memory: 3 edits · 1 session']);
  });
});
