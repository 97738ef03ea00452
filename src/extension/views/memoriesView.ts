import { addToList, append } from '../../core/lists';
import * as vscode from 'vscode';
import type { MemoryOutline } from '../../core/api';
import { MEMORY_TYPES } from '../../core/model/records';
import type { Memory, Scope } from '../../core/model/records';
import type { EngineClient } from '../engineWorker/engineClient';
import type { EngineHost } from '../engineHost';
import type { ScopeService } from '../scopes';
import type { CodeMemoryNode } from './nodes';
import { ConflictGroupNode, ConflictNode, MemoryNode, MemoryProjectNode, MemoryTypeNode, MessageNode, MoreNode, count } from './nodes';
import { snapshotTree } from './snapshot';
import type { TreeSnapshot } from './snapshot';

const TYPE_ORDER: readonly string[] = MEMORY_TYPES;
/** What one level of the tree shows at first, newest first, and what each Show more… adds. */
export const MEMORY_PAGE = 200;
/** The most memories read whole in one call (the engine's getMemories takes at most 1,000 ids). */
const LOAD_BATCH = 500;

/**
 * Memories by type (decisions, conventions, facts, preferences, notes) with their temporal state;
 * in a window of several projects, under a node per project, so none passes for another's.
 * Possible conflicts come first, each with both sides, for review; a superseded memory is not in
 * the lists but under the memory that replaced it, as history. The top level reads a few columns
 * of each memory (listMemoryOutline: types, states, replacements, conflicts); a list's page is
 * read whole when it is shown (5,000 memories read whole took about 2 s to list).
 */
export class MemoriesView implements vscode.TreeDataProvider<CodeMemoryNode>, vscode.Disposable {
  static readonly id = 'codeMemory.memories';
  private readonly _onDidChangeTreeData = new vscode.EventEmitter<CodeMemoryNode | undefined>();
  readonly onDidChangeTreeData = this._onDidChangeTreeData.event;
  readonly tree: vscode.TreeView<CodeMemoryNode>;
  private showInactive = false;
  /** The last listing. Each listing builds its own and replaces this one whole. */
  private listing: Listing = { predecessors: new Map(), loaded: new Map(), current: new Set() };
  /**
   * The listing each type and memory node came from: listings may overlap (a refresh while the
   * tree is read), and a node's page and history are read from its own listing.
   */
  private readonly listingOf = new WeakMap<CodeMemoryNode, Listing>();
  private refreshTimer: NodeJS.Timeout | undefined;
  /** How many items each paged level (by its node's id) shows, where Show more… was chosen. */
  private readonly shown = new Map<string, number>();

  constructor(
    private readonly engines: EngineHost,
    private readonly scopes: ScopeService,
  ) {
    this.tree = vscode.window.createTreeView(MemoriesView.id, { treeDataProvider: this, showCollapseAll: true });
  }

  refresh(): void {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      this._onDidChangeTreeData.fire(undefined);
    }, 400);
  }

  toggleInactive(): void {
    this.showInactive = !this.showInactive;
    this.refresh();
  }

  /** Show more… of a level: its next page, the level alone redrawn (its list is not read again, only the page's memories). */
  showMore(node: MoreNode): void {
    const key = node.parent.id ?? '';
    this.shown.set(key, (this.shown.get(key) ?? MEMORY_PAGE) + MEMORY_PAGE);
    this._onDidChangeTreeData.fire(node.parent as CodeMemoryNode);
  }

  getTreeItem(node: CodeMemoryNode): vscode.TreeItem {
    return node;
  }

  async getChildren(node?: CodeMemoryNode): Promise<CodeMemoryNode[]> {
    if (node instanceof MemoryProjectNode) return node.groups;
    if (node instanceof MemoryTypeNode) return this.memoryPage(node, node.scope, node.ids, node.parent, this.listingOf.get(node) ?? this.listing);
    if (node instanceof ConflictGroupNode) return this.page(node, node.conflicts, (c) => c);
    if (node instanceof ConflictNode) return node.sides();
    if (node instanceof MemoryNode) {
      const listing = this.listingOf.get(node) ?? this.listing;
      return this.page(node, node.history, (m) => this.withHistory(node.scope, m, `${node.id ?? ''}/`, listing));
    }
    if (node) return [];
    try {
      return await this.projects();
    } catch (err) {
      this.tree.description = undefined;
      return [new MessageNode(`Could not read the store: ${err instanceof Error ? err.message : String(err)}`, 'error')];
    }
  }

  /** One project: its groups at the top. Several: a node per project with memories, as in the Sessions view. */
  private async projects(): Promise<CodeMemoryNode[]> {
    const all = await this.scopes.all();
    if (all.length === 0) return [];
    const engine = await this.engines.get();
    const listing: Listing = { predecessors: new Map(), loaded: new Map(), current: new Set() };
    const projects: { folder: vscode.WorkspaceFolder; scope: Scope }[] = [];
    for (const { folder, scope } of all) if (!projects.some((p) => p.scope.project === scope.project)) projects.push({ folder, scope: { project: scope.project } });
    const several = projects.length > 1;
    const nodes: CodeMemoryNode[] = [];
    let total = 0;
    for (const { folder, scope } of projects) {
      const outline = await engine.listMemoryOutline(scope, { includeSuppressed: this.showInactive });
      const parent = several ? `project:${scope.project}/` : '';
      const groups = await this.groups(engine, scope, outline, listing, parent);
      const listed = groups.reduce((n, g) => n + (g instanceof MemoryTypeNode ? g.ids.length : 0), 0);
      total += listed;
      if (!several) nodes.push(...groups);
      else if (groups.length > 0) nodes.push(new MemoryProjectNode(scope, folder, listed, groups));
    }
    this.listing = listing;
    // How many there are in all: each level below shows a page of them.
    this.tree.description = total > 0 ? `${count(total)} memor${total === 1 ? 'y' : 'ies'}` : undefined;
    return nodes;
  }

  /** The first page of `items` (more after each Show more…), then Show more… while some are left. */
  private page<T>(parent: CodeMemoryNode, items: readonly T[], node: (item: T) => CodeMemoryNode): CodeMemoryNode[] {
    const limit = this.shown.get(parent.id ?? '') ?? MEMORY_PAGE;
    const nodes = items.slice(0, limit).map(node);
    if (items.length > limit) nodes.push(new MoreNode(parent, limit, items.length, Math.min(MEMORY_PAGE, items.length - limit)));
    return nodes;
  }

  /** The groups of a project's outline; only the sides of its possible conflicts are read whole (into the listing). */
  private async groups(engine: EngineClient, s: Scope, memories: MemoryOutline[], listing: Listing, parent: string): Promise<CodeMemoryNode[]> {
    const { predecessors, loaded, current } = listing;
    const byType = new Map<string, MemoryOutline[]>();
    const pairs: { older: number; newer: number; reason: string }[] = [];
    const byId = new Map(memories.map((m) => [m.id, m]));
    for (const m of memories) if (m.status === 'active') current.add(memoryKey(s, m.id));
    const isCurrent = currentIn(listing, s);
    for (const memory of memories) {
      const successor = memory.superseded_by === null ? undefined : byId.get(memory.superseded_by);
      if (successor) {
        const key = memoryKey(s, successor.id);
        addToList(predecessors, key, memory.id);
        continue;
      }
      for (const c of memory.conflicts ?? []) {
        // Each pair once, from its newer side; a side superseded or suppressed since is no longer in question.
        if (c.resolution !== 'open' || c.id > memory.id || !isCurrent(c.id) || !isCurrent(memory.id)) continue;
        pairs.push({ older: c.id, newer: memory.id, reason: c.reason });
      }
      const list = byType.get(memory.memory_type) ?? [];
      list.push(memory);
      byType.set(memory.memory_type, list);
    }
    await this.load(engine, s, new Set(pairs.flatMap((p) => [p.older, p.newer])), loaded);
    const conflicts: ConflictNode[] = [];
    for (const { older, newer, reason } of pairs) {
      const [o, n] = [loaded.get(memoryKey(s, older)), loaded.get(memoryKey(s, newer))];
      if (o && n) conflicts.push(new ConflictNode(s, o, n, reason, parent, isCurrent));
    }
    const types = [...byType.keys()].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    const groups: CodeMemoryNode[] = types.map((t) => {
      const list = byType.get(t) ?? [];
      list.sort((a, b) => Number(b.status === 'active') - Number(a.status === 'active') || b.updated_at_epoch - a.updated_at_epoch);
      const node = new MemoryTypeNode(t, s, list.map((m) => m.id), parent);
      this.listingOf.set(node, listing);
      return node;
    });
    return conflicts.length > 0 ? [new ConflictGroupNode(conflicts, parent), ...groups] : groups;
  }

  /**
   * A page of a type's memories (more after each Show more…), then Show more… while some are
   * left: the page's memories read whole, with the memories they superseded, down the chain.
   */
  private async memoryPage(parent: MemoryTypeNode, scope: Scope, ids: readonly number[], nodeParent: string, listing: Listing): Promise<CodeMemoryNode[]> {
    const limit = this.shown.get(parent.id ?? '') ?? MEMORY_PAGE;
    const shown = ids.slice(0, limit);
    const wanted = new Set<number>();
    for (const stack = [...shown]; stack.length > 0; ) {
      const id = stack.pop() as number;
      if (wanted.has(id)) continue;
      wanted.add(id);
      append(stack, listing.predecessors.get(memoryKey(scope, id)) ?? []);
    }
    const { loaded } = listing;
    await this.load(await this.engines.get(), scope, wanted, loaded);
    // One forgotten since the listing is left out; the refresh that follows a forget lists anew.
    const nodes: CodeMemoryNode[] = shown.flatMap((id) => {
      const memory = loaded.get(memoryKey(scope, id));
      return memory ? [this.withHistory(scope, memory, nodeParent, listing)] : [];
    });
    if (ids.length > limit) nodes.push(new MoreNode(parent, limit, ids.length, Math.min(MEMORY_PAGE, ids.length - limit)));
    return nodes;
  }

  /**
   * Reads whole the memories of `ids` not in `loaded` yet, into it, LOAD_BATCH at a time (a call
   * takes at most 1,000 ids: a level shown past that, listed again, or many conflicts ask more).
   */
  private async load(engine: EngineClient, scope: Scope, ids: Set<number>, loaded: Map<string, Memory>): Promise<void> {
    const missing = [...ids].filter((id) => !loaded.has(memoryKey(scope, id)));
    for (let i = 0; i < missing.length; i += LOAD_BATCH) {
      for (const m of await engine.getMemories(missing.slice(i, i + LOAD_BATCH), scope, { includeSuppressed: true })) loaded.set(memoryKey(scope, m.id), m);
    }
  }

  /** A memory node whose children are the memories it superseded (read by its page, see memoryPage), newest first. */
  private withHistory(scope: Scope, memory: Memory, parent: string, listing: Listing): MemoryNode {
    const history = (listing.predecessors.get(memoryKey(scope, memory.id)) ?? [])
      .flatMap((id) => listing.loaded.get(memoryKey(scope, id)) ?? [])
      .sort((a, b) => (b.valid_to_epoch ?? 0) - (a.valid_to_epoch ?? 0) || b.id - a.id);
    const node = new MemoryNode(scope, memory, history, parent, currentIn(listing, scope));
    this.listingOf.set(node, listing);
    return node;
  }

  /** The whole tree as plain data, expanded: what a person would see with every node open. */
  snapshot(): Promise<TreeSnapshot[]> {
    return snapshotTree(this);
  }

  dispose(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.tree.dispose();
    this._onDidChangeTreeData.dispose();
  }
}

/**
 * What one listing of the view read: the ids of superseded memories by project and the id of the
 * memory that replaced them, the memories read whole since (the pages shown, their history,
 * the conflicts' sides), and the memories listed as current (active), by project and id.
 */
interface Listing {
  predecessors: Map<string, number[]>;
  loaded: Map<string, Memory>;
  current: Set<string>;
}

/** Whether a memory of the project was listed as current: a conflict with one that is not is no question any more. */
function currentIn(listing: Listing, scope: Scope): (id: number) => boolean {
  return (id) => listing.current.has(memoryKey(scope, id));
}

function memoryKey(scope: Scope, id: number): string {
  return `${scope.project}\u0000${id}`;
}

function rank(type: string): number {
  const i = TYPE_ORDER.indexOf(type);
  return i === -1 ? TYPE_ORDER.length : i;
}
