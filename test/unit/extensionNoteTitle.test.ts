// Add Note titles the memory with the note's first line, cut to 100 characters, and Remember
// Selection offers the selection's first line, cut to 80, as the title: a cut must not fall inside
// a character (an emoji or any character outside the BMP is two UTF-16 units), which would be
// stored as U+FFFD in the title everyone sees.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow, registerQuietCommands } from './extensionWindow';

describe('extension: the title cut from a note or a selection keeps whole characters', function () {
  this.timeout(60_000);
  let w: TwoProjectWindow;
  let run: (id: string, ...args: unknown[]) => Promise<Any>;
  before(async () => {
    w = await openTwoProjectWindow();
    run = registerQuietCommands(w);
  });
  after(() => w.close());


  it('Add Note: a first line whose 100th unit is half an emoji is cut before the emoji', async () => {
    w.state.active = w.editor(w.doc(path.join(w.dir, 'alpha', 'src', 'a.ts'), 'x'));
    const m = await run('codeMemory.addNote', { text: `${'a'.repeat(99)}😀 and the rest of the note`, memoryType: 'note' });
    assert.ok(m, w.state.errors.join('\n'));
    const [stored] = await w.engine.getMemories([m.id], w.alpha, {});
    assert.equal(stored.title, 'a'.repeat(99));
    assert.equal(stored.text, `${'a'.repeat(99)}😀 and the rest of the note`);
  });

  it('Add Note: an emoji that fits is kept whole', async () => {
    const m = await run('codeMemory.addNote', { text: `${'b'.repeat(98)}😀 more`, memoryType: 'note' });
    const [stored] = await w.engine.getMemories([m.id], w.alpha, {});
    assert.equal(stored.title, `${'b'.repeat(98)}😀`);
  });

  it('Remember Selection offers a title of whole characters', async () => {
    let offered: string | undefined;
    const showInputBox = w.stub.window.showInputBox;
    w.stub.window.showInputBox = async (o: Any) => (offered = o?.value);
    try {
      const editor = w.editor(w.doc(path.join(w.dir, 'alpha', 'src', 's.ts'), `${'c'.repeat(79)}😀 selected code`));
      w.state.active = editor;
      await run('codeMemory.rememberSelection', { memoryType: 'note' });
    } finally {
      w.stub.window.showInputBox = showInputBox;
    }
    assert.equal(offered, 'c'.repeat(79));
  });
});
