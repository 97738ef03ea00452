// A memory's title in the Memories view is shown as it was written, never interpreted: terminal
// escape sequences and control characters (which the tools strip from what they print) are left
// out of the tree's label, line breaks become spaces, and the tooltip's markdown escapes every
// syntax character, `&` too (an entity such as `&amp;` would render as its character).
import { strict as assert } from 'node:assert';
import { MarkdownString, withVscodeStub } from './vscodeStub';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow } from './extensionWindow';

describe('extension: memory titles in the Memories view', function () {
  this.timeout(60_000);
  let w: TwoProjectWindow;
  let stubMarkdown: Any;
  before(async () => {
    w = await openTwoProjectWindow();
    // VS Code's MarkdownString, whose appendText escapes as VS Code's does.
    stubMarkdown = w.stub.MarkdownString;
    w.stub.MarkdownString = MarkdownString;
  });
  after(async () => {
    w.stub.MarkdownString = stubMarkdown;
    await w.close();
  });

  const labels = async (): Promise<string[]> => {
    const view = withVscodeStub(w.stub, () => new w.mods.memoriesView.MemoriesView(w.engines, w.scopes));
    const tree = await view.snapshot();
    view.dispose();
    const flat = (nodes: Any[]): Any[] => nodes.flatMap((n) => [n, ...flat(n.children)]);
    return flat(tree).map((n) => n.label);
  };

  it('leaves escape sequences and control characters out of the label, and puts a line break as a space', async () => {
    const m = await w.engine.remember({ title: 'ctl\u001b[31mred\u0007 title\r\nsecond\u0000 line', text: 'x' }, w.alpha);
    assert.ok((await labels()).includes('ctlred title second line'), (await labels()).join(' | '));
    const node = new w.mods.nodes.MemoryNode(w.alpha, m);
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(node.tooltip.value, /[\u0000-\u0008\u000b-\u001f\u007f]/);
  });

  it('keeps markdown of the title literal in the tooltip, entities included', async () => {
    const title = '[click](command:codeMemory.forget) **bold** <img src=x> `code` &amp; &#42;';
    const m = await w.engine.remember({ title, text: 'x' }, w.alpha);
    const node = new w.mods.nodes.MemoryNode(w.alpha, m);
    assert.equal(node.label, title);
    const first = String(node.tooltip.value).split('\n')[0];
    assert.equal(first, '**\\[click\\]\\(command:codeMemory\\.forget\\) \\*\\*bold\\*\\* \\<img src=x\\> \\`code\\` \\&amp; \\&\\#42;** (note, active, memory ' + m.id + ')');
    assert.notEqual(node.tooltip.isTrusted, true);
  });

  it('shows both sides of a possible conflict by their titles on one line', async () => {
    await w.engine.remember({ memory_type: 'decision', title: 'Locking\nfirst', text: 'Orders rely on optimistic locking with a version column.', files: ['orders/db.ts'] }, w.beta);
    await w.engine.remember({ memory_type: 'decision', title: 'Locking\u001b]0;owned\u0007 again', text: 'We reverted to pessimistic row locks.', files: ['orders/db.ts'] }, w.beta);
    assert.ok((await labels()).includes('Locking again ↔ Locking first'), (await labels()).join(' | '));
  });
});
