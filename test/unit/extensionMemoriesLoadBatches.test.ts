// The Memories view reads the memories it shows whole, a page at a time (with the memories they
// superseded): the engine's getMemories takes at most 1,000 ids per call, so a page whose
// memories and history pass that (a level shown past 1,000 and listed again, a page of memories
// with long histories) is read in several calls, not refused with "at most 1000 ids per call".
// Real engine in a temp folder; rows written at once.
import { strict as assert } from 'node:assert';
import { memoryToRow } from '../../src/core/store/mapping';
import { TABLES } from '../../src/core/store/schema';
import type { Memory } from '../../src/core/model/records';
import { withVscodeStub } from './vscodeStub';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow } from './extensionWindow';

const labelOf = (n: Any): string => (typeof n.label === 'string' ? n.label : (n.label?.label ?? ''));

function note(project: string, id: number, at: number, type: string, title: string, superseded_by: number | null = null): Record<string, unknown> {
  return memoryToRow({
    id, project, title, text: `${title} text`, memory_type: type, created_at_epoch: at, updated_at_epoch: at,
    status: superseded_by === null ? 'active' : 'superseded', scope: 'project', classification: type, classification_reason: 'saved explicitly', current_context_eligible: false,
    branch: null, files: null, session_id: null, topic_key: null, topic_trace: null, temporal_facts: null, supersedes: null, superseded_by, valid_to_epoch: superseded_by === null ? null : at + 1, conflicts: null,
  } as unknown as Memory);
}

describe('extension: the Memories view reads what it shows in calls of at most 1,000 ids', function () {
  this.timeout(180_000);
  let w: TwoProjectWindow;
  let view: Any;
  before(async () => {
    w = await openTwoProjectWindow();
    w.state.folders = [w.state.folders[0]];
    const start = Date.now() - 10_000_000;
    const rows = [];
    // 1,500 notes.
    for (let i = 1; i <= 1500; i++) rows.push(note(w.alpha.project, 100_000 + i, start + i * 1000, 'note', `bulk note ${i}`));
    // 200 decisions, each having superseded 6 older ones.
    for (let i = 1; i <= 200; i++) {
      const id = 200_000 + i * 10;
      rows.push(note(w.alpha.project, id, start + 5_000_000 + i * 1000, 'decision', `decision ${i}`));
      for (let j = 1; j <= 6; j++) rows.push(note(w.alpha.project, id - j, start + i * 1000 - j, 'decision', `decision ${i} before ${j}`, j === 1 ? id : id - j + 1));
    }
    await (w.engine as Any).store.add(TABLES.memories, rows, 'id');
    view = withVscodeStub(w.stub, () => new w.mods.memoriesView.MemoriesView(w.engines, w.scopes));
  });
  after(async () => {
    view.dispose();
    await w.close();
  });

  it('a level shown past 1,000 memories shows them all again after the view lists anew', async () => {
    let notes = (await view.getChildren()).find((n: Any) => labelOf(n) === 'Notes');
    for (let i = 0; i < 5; i++) {
      const page = await view.getChildren(notes);
      view.showMore(page[page.length - 1]);
    }
    notes = (await view.getChildren()).find((n: Any) => labelOf(n) === 'Notes');
    const page = await view.getChildren(notes);
    assert.equal(page.length, 1201);
    assert.equal(labelOf(page[0]), 'bulk note 1500');
    assert.equal(labelOf(page[1199]), 'bulk note 301');
    assert.equal(labelOf(page[1200]), 'Show more…');
  });

  it('a page of memories whose histories pass 1,000 shows with every history', async () => {
    const decisions = (await view.getChildren()).find((n: Any) => labelOf(n) === 'Decisions');
    const page = await view.getChildren(decisions);
    assert.equal(page.length, 200);
    assert.equal(labelOf(page[0]), 'decision 200');
    const chain = [];
    for (let node = page[0]; ; ) {
      const [older] = await view.getChildren(node);
      if (!older) break;
      chain.push(labelOf(older));
      node = older;
    }
    assert.deepEqual(chain, [1, 2, 3, 4, 5, 6].map((j) => `decision 200 before ${j}`));
  });
});
