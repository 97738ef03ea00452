// Edit One… of a conflict review in the Memories view keeps a memory within what the remember tool
// keeps (README: "A memory holds at most 20,000 characters ... a longer selection is refused, not
// cut"): a longer text is refused with the reason, and the memory stays as it was. Run as VS Code
// runs it (through the registrar), on a real engine.
import { strict as assert } from 'node:assert';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow, registerQuietCommands } from './extensionWindow';

describe('extension: Edit One… keeps within what a memory holds', function () {
  this.timeout(60_000);
  let w: TwoProjectWindow;
  let run: (id: string, ...args: unknown[]) => Promise<Any>;
  let pair: { scope: Any; older: number; newer: number };
  before(async () => {
    w = await openTwoProjectWindow();
    run = registerQuietCommands(w);
    const older = await w.engine.remember({ title: 'Deploy on Fridays', text: 'We deploy on Fridays', memory_type: 'decision' }, w.alpha);
    const newer = await w.engine.remember({ title: 'Never deploy on Fridays', text: 'We never deploy on Fridays', memory_type: 'decision' }, w.alpha);
    await w.engine.flush();
    pair = { scope: w.alpha, older: older.id, newer: newer.id };
  });
  after(() => w.close());

  const textOf = async (id: number): Promise<string> => (await w.engine.getMemories([id], w.alpha, { includeSuppressed: true }))[0].text;

  it('a text over 20,000 characters is refused with the reason, and the memory is as it was', async () => {
    const warnings = w.state.warnings.length;
    assert.equal(await run('codeMemory.editConflictingMemory', pair, { id: pair.older, text: 'z'.repeat(30_000) }), undefined);
    assert.deepEqual(w.state.warnings.slice(warnings), ['The text is 30,000 characters; a memory holds at most 20,000. Keep what is worth remembering.']);
    assert.equal(await textOf(pair.older), 'We deploy on Fridays');
  });

  it('the input box says so as it is typed, counting characters as the remember tool does', async () => {
    let validate: ((v: string) => string | undefined) | undefined;
    const showInputBox = w.stub.window.showInputBox;
    w.stub.window.showInputBox = async (o: Any) => ((validate = o.validateInput), undefined);
    w.state.quickPick = (items) => items[0];
    try {
      await run('codeMemory.editConflictingMemory', pair);
    } finally {
      w.stub.window.showInputBox = showInputBox;
    }
    assert.ok(validate, 'the text was asked for');
    assert.equal(validate('😀'.repeat(20_000)), undefined);
    assert.equal(validate('😀'.repeat(20_001)), 'The text is 20,001 characters; a memory holds at most 20,000. Keep what is worth remembering.');
    assert.equal(validate('  '), 'A memory needs a text');
  });

  it('a text at the limit is kept', async () => {
    const edited = await run('codeMemory.editConflictingMemory', pair, { id: pair.newer, text: '😀'.repeat(20_000) });
    assert.ok(edited, w.state.errors.join('\n'));
    assert.equal([...(await textOf(pair.newer))].length, 20_000);
  });
});
