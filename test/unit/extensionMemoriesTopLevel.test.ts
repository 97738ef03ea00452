// The Memories view reads what it shows, not every memory of the project: its top level (the
// type groups with their counts, the possible conflicts, the view's "N memories") comes from a
// few columns of each memory, and a group's page (the 200 newest, then Show more…) reads those
// 200 whole, with the memories they superseded. Read whole, 5,000 memories took about 2 s to
// list. Real engine in a temp folder; every memory the engine hands the view is counted.
import { strict as assert } from 'node:assert';
import type { Memory } from '../../src/core/model/records';
import { memoryToRow } from '../../src/core/store/mapping';
import { TABLES } from '../../src/core/store/schema';
import { withVscodeStub } from './vscodeStub';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow } from './extensionWindow';

const NOTES = 1500;
const labelOf = (n: Any): string => (typeof n.label === 'string' ? n.label : (n.label?.label ?? ''));

function memory(id: number, project: string, fields: Partial<Memory>): Memory {
  return {
    id, project, title: `memory ${id}`, text: `memory number ${id}`, memory_type: 'note', created_at_epoch: 1_700_000_000_000 + id * 1000, updated_at_epoch: 1_700_000_000_000 + id * 1000,
    status: 'active', scope: 'project', classification: 'note', classification_reason: 'saved explicitly', current_context_eligible: false, branch: null, files: null, session_id: null,
    topic_key: null, topic_trace: null, temporal_facts: null, supersedes: null, superseded_by: null, valid_to_epoch: null, conflicts: null, ...fields,
  } as Memory;
}

describe('extension: the Memories view reads what it shows', function () {
  this.timeout(180_000);
  let w: TwoProjectWindow;
  let view: Any;
  /** Whole memories (title, text and all) the engine handed the view, by method. */
  const whole = new Map<string, number>();
  const total = (): number => [...whole.values()].reduce((a, b) => a + b, 0);

  before(async () => {
    w = await openTwoProjectWindow();
    w.state.folders = [w.state.folders[0]];
    const p = w.alpha.project;
    const rows = [];
    for (let i = 1; i <= NOTES; i++) rows.push(memoryToRow(memory(100_000 + i, p, { title: `bulk note ${i}` })));
    // A decision that replaced an older one (shown under it, as history), and two conventions in question.
    rows.push(memoryToRow(memory(10, p, { memory_type: 'decision', title: 'deploy from main', status: 'superseded', superseded_by: 11, valid_to_epoch: 1_700_000_100_000 })));
    rows.push(memoryToRow(memory(11, p, { memory_type: 'decision', title: 'deploy from release', supersedes: [10] })));
    const open = (other: number) => [{ id: other, reason: 'same subject', detected_at_epoch: 1, resolution: 'open' as const, resolved_at_epoch: null }];
    rows.push(memoryToRow(memory(20, p, { memory_type: 'convention', title: 'tabs', conflicts: open(21) })));
    rows.push(memoryToRow(memory(21, p, { memory_type: 'convention', title: 'spaces', conflicts: open(20) })));
    rows.push(memoryToRow(memory(30, p, { memory_type: 'fact', title: 'hidden fact', status: 'suppressed' })));
    // A conflict whose other side was suppressed since: no question any more, as the tools say.
    rows.push(memoryToRow(memory(40, p, { memory_type: 'preference', title: 'two-space indent', conflicts: open(41) })));
    rows.push(memoryToRow(memory(41, p, { memory_type: 'preference', title: 'four-space indent', status: 'suppressed', conflicts: open(40) })));
    await (w.engine as Any).store.add(TABLES.memories, rows, 'id');
    const counting = new Proxy(w.engine, {
      get(target: Any, key: string) {
        const value = target[key];
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          const out = await value.apply(target, args);
          const n = Array.isArray(out) ? out.filter((m) => m && typeof m === 'object' && 'text' in m && 'memory_type' in m).length : 0;
          whole.set(key, (whole.get(key) ?? 0) + n);
          return out;
        };
      },
    });
    const engines = { ...w.engines, get: async () => counting, peek: () => counting };
    view = withVscodeStub(w.stub, () => new w.mods.memoriesView.MemoriesView(engines, w.scopes));
  });
  after(async () => {
    view?.dispose();
    await w?.close();
  });

  it('its top level takes no memory whole but the sides of the conflicts', async () => {
    whole.clear();
    const top = await view.getChildren();
    assert.deepEqual(
      top.map((n: Any) => `${labelOf(n)} (${n.description})`),
      ['Possible conflicts (1 to review)', 'Decisions (1)', 'Conventions (2)', 'Preferences (1)', `Notes (${NOTES})`],
    );
    assert.equal(view.tree.description, `${(NOTES + 4).toLocaleString('en-US')} memories`);
    assert.ok(total() <= 2, `the top level took ${total()} whole memories (${JSON.stringify([...whole])})`);
  });

  it('a group shows its 200 newest, reading those whole, then Show more… reads the next 200', async () => {
    const top = await view.getChildren();
    const notes = top.find((n: Any) => labelOf(n) === 'Notes');
    whole.clear();
    const first = await view.getChildren(notes);
    assert.equal(first.length, 201);
    assert.deepEqual(first.slice(0, 2).map(labelOf), [`bulk note ${NOTES}`, `bulk note ${NOTES - 1}`]);
    assert.equal(first[200].description, `200 of ${(NOTES).toLocaleString('en-US')} shown`);
    assert.ok(total() <= 200, `the first page took ${total()} whole memories`);
    whole.clear();
    view.showMore(first[200]);
    const second = await view.getChildren(notes);
    assert.equal(second.length, 401);
    assert.equal(labelOf(second[200]), `bulk note ${NOTES - 200}`);
    assert.ok(total() <= 400, `the second page took ${total()} whole memories`);
  });

  it('keeps what the levels below show: history under the memory that replaced it, both sides of a conflict', async () => {
    const tree = await view.snapshot();
    const decisions = tree.find((n: Any) => n.label === 'Decisions');
    assert.deepEqual(decisions.children.map((n: Any) => n.label), ['deploy from release']);
    assert.deepEqual(decisions.children[0].children.map((n: Any) => n.label), ['deploy from main']);
    assert.match(decisions.children[0].children[0].description, /^history/);
    const conflicts = tree.find((n: Any) => n.label === 'Possible conflicts');
    assert.deepEqual(conflicts.children.map((n: Any) => n.label), ['spaces ↔ tabs']);
    assert.deepEqual(conflicts.children[0].children.map((n: Any) => n.label), ['spaces', 'tabs']);
    assert.ok(!JSON.stringify(tree).includes('hidden fact'), 'a suppressed memory is not listed');
  });

  it('listings that overlap (a refresh while the tree is read) each show the history once', async () => {
    for (let round = 0; round < 3; round++) {
      const trees = await Promise.all([view.snapshot(), view.snapshot(), view.snapshot()]);
      for (const tree of trees) {
        const decisions = tree.find((n: Any) => n.label === 'Decisions');
        assert.deepEqual(decisions.children[0].children.map((n: Any) => n.label), ['deploy from main'], `round ${round}`);
      }
    }
  });

  it('a conflict is in question only while both its sides are current, in the group and in each side\'s description', async () => {
    for (const inactive of [false, true]) {
      if (inactive) view.toggleInactive();
      try {
        const tree = await view.snapshot();
        const conflicts = tree.find((n: Any) => n.label === 'Possible conflicts');
        assert.deepEqual(conflicts.children.map((n: Any) => n.label), ['spaces ↔ tabs'], `inactive shown: ${inactive}`);
        assert.match(conflicts.children[0].children[0].description, /· 1 possible conflict$/);
        const preferences = tree.find((n: Any) => n.label === 'Preferences');
        const kept = preferences.children.find((n: Any) => n.label === 'two-space indent');
        assert.equal(kept.description.includes('conflict'), false, `inactive shown: ${inactive}: ${kept.description}`);
      } finally {
        if (inactive) view.toggleInactive();
      }
    }
  });

  it('with inactive memories shown, the suppressed one is counted and listed', async () => {
    view.toggleInactive();
    try {
      const top = await view.getChildren();
      const facts = top.find((n: Any) => labelOf(n) === 'Facts');
      assert.equal(facts?.description, '1');
      assert.deepEqual((await view.getChildren(facts)).map(labelOf), ['hidden fact']);
      assert.equal(view.tree.description, `${(NOTES + 6).toLocaleString('en-US')} memories`);
    } finally {
      view.toggleInactive();
    }
  });
});
