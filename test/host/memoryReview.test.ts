// The review of possible conflicts in the Memories view, inside a real VS Code: memories written
// through the engine, the view read as the user sees it, the review run through its commands.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { Memory, Scope } from '../../src/core/model/records';
import type { CodeMemoryExtensionApi } from '../../src/extension/extension';
import type { TreeSnapshot } from '../../src/extension/views/snapshot';
import { codeMemoryApi, waitFor, workspaceFolder } from './helpers';

function find(nodes: TreeSnapshot[], test: (n: TreeSnapshot) => boolean): TreeSnapshot | undefined {
  for (const n of nodes) {
    if (test(n)) return n;
    const inner = find(n.children, test);
    if (inner) return inner;
  }
  return undefined;
}

function topLevelMemoryIds(tree: TreeSnapshot[]): string[] {
  return tree.filter((g) => g.contextValue === 'memoryType').flatMap((g) => g.children.map((c) => c.id));
}

describe('Memories view: possible conflicts and history (inside the VS Code host)', function () {
  this.timeout(120_000);
  let api: CodeMemoryExtensionApi;
  let scope: Scope;

  before(async () => {
    api = await codeMemoryApi();
    const s = await api.scopeFor(workspaceFolder().uri);
    assert.ok(s);
    scope = { project: s.project };
  });

  it('shows both sides of a conflict; keep both, mark one superseded and edit are recorded; history sits under its successor', async () => {
    const engine = await api.engine();
    const remember = (title: string, text: string): Promise<Memory> => engine.remember({ memory_type: 'decision', title, text, files: ['billing/locks.ts'] }, scope);
    const a = await remember('Billing locking', 'Billing relies on optimistic locking with a version column.');
    const b = await remember('Billing locks reverted', 'We reverted billing to pessimistic row locks.');
    assert.deepEqual(b.conflicts?.map((c) => [c.id, c.resolution]), [[a.id, 'open']]);

    // The view lists the conflict first, with both sides under it.
    let tree = await api.memoriesTree();
    assert.equal(tree[0].contextValue, 'memoryConflicts', JSON.stringify(tree.map((n) => n.label)));
    const conflict = find(tree, (n) => n.id === `conflict:${a.id}:${b.id}`);
    assert.ok(conflict, 'the conflict node');
    assert.equal(conflict.contextValue, 'memoryConflict');
    assert.deepEqual(conflict.children.map((c) => c.label), [b.title, a.title]);
    assert.match(conflict.children[0].description, /possible conflict/);

    // Keep both: recorded on both memories, the conflict leaves the view.
    await vscode.commands.executeCommand('codeMemory.keepBothMemories', { scope, older: a.id, newer: b.id });
    const [a1, b1] = await engine.getMemories([a.id, b.id], scope);
    assert.deepEqual([a1.conflicts?.[0].resolution, b1.conflicts?.[0].resolution], ['kept_both', 'kept_both']);
    assert.equal(typeof a1.conflicts?.[0].resolved_at_epoch, 'number');
    tree = await api.memoriesTree();
    assert.ok(!find(tree, (n) => n.id === `conflict:${a.id}:${b.id}`), 'a reviewed conflict is no longer listed');

    // A third decision conflicts again; mark the older side superseded.
    const c = await remember('Billing uses advisory locks', 'We switched billing to advisory locks.');
    tree = await api.memoriesTree();
    assert.ok(find(tree, (n) => n.id === `conflict:${b.id}:${c.id}`), JSON.stringify(tree, null, 1));
    const marked = await vscode.commands.executeCommand<Memory[]>('codeMemory.markMemorySuperseded', { scope, older: b.id, newer: c.id }, { superseded: b.id });
    assert.equal(marked[0].status, 'superseded');
    assert.equal(marked[0].superseded_by, c.id);
    tree = await api.memoriesTree();
    assert.ok(!topLevelMemoryIds(tree).includes(`memory:${b.id}`), 'a superseded memory is not in the main list');
    const successor = find(tree, (n) => n.id === `memory:${c.id}`);
    assert.ok(successor, 'the successor is listed');
    assert.deepEqual(successor.children.map((h) => h.label), [b.title], 'the superseded memory shows under its successor');
    assert.match(successor.children[0].description, /^history · /);
    // Listings that overlap (a refresh while the tree is read) each show the history once.
    for (const t of await Promise.all([api.memoriesTree(), api.memoriesTree()])) {
      assert.deepEqual(find(t, (n) => n.id === `memory:${c.id}`)?.children.map((h) => h.label), [b.title], 'overlapping listings');
    }

    // Edit: the edited side's text changes, the conflict is recorded as edited on both sides.
    const open = c.conflicts?.filter((x) => x.resolution === 'open' && x.id !== b.id).map((x) => x.id) ?? [];
    assert.ok(open.includes(a.id), JSON.stringify(c.conflicts));
    const edited = await vscode.commands.executeCommand<Memory>('codeMemory.editConflictingMemory', { scope, older: a.id, newer: c.id }, { id: a.id, text: 'Billing used optimistic locking until the switch to advisory locks.' });
    assert.equal(edited.text, 'Billing used optimistic locking until the switch to advisory locks.');
    assert.equal(edited.conflicts?.find((x) => x.id === c.id)?.resolution, 'edited');
    const [c2] = await engine.getMemories([c.id], scope);
    assert.equal(c2.conflicts?.find((x) => x.id === a.id)?.resolution, 'edited');
    await waitFor('the conflict to leave the view', async () => !find(await api.memoriesTree(), (n) => n.contextValue === 'memoryConflict' && n.id.includes(`:${c.id}`)));
  });
});
