import * as vscode from 'vscode';
import type { Memory, Scope } from '../../core/model/records';
import type { EngineHost } from '../engineHost';
import type { ScopeService } from '../scopes';
import type { CodeMemoryNode } from './nodes';
import { MemoryNode, MemoryTypeNode, MessageNode } from './nodes';

const TYPE_ORDER = ['decision', 'convention', 'fact', 'preference', 'note'];

/** Memories by type (decisions, conventions, facts, preferences, notes) with their temporal state. */
export class MemoriesView implements vscode.TreeDataProvider<CodeMemoryNode>, vscode.Disposable {
  static readonly id = 'codeMemory.memories';
  private readonly _onDidChangeTreeData = new vscode.EventEmitter<CodeMemoryNode | undefined>();
  readonly onDidChangeTreeData = this._onDidChangeTreeData.event;
  readonly tree: vscode.TreeView<CodeMemoryNode>;
  private showInactive = false;
  private refreshTimer: NodeJS.Timeout | undefined;

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

  getTreeItem(node: CodeMemoryNode): vscode.TreeItem {
    return node;
  }

  async getChildren(node?: CodeMemoryNode): Promise<CodeMemoryNode[]> {
    if (node instanceof MemoryTypeNode) return node.memories.map(({ scope, memory }) => new MemoryNode(scope, memory));
    if (node) return [];
    try {
      return await this.groups();
    } catch (err) {
      return [new MessageNode(`Could not read the store: ${err instanceof Error ? err.message : String(err)}`, 'error')];
    }
  }

  private async groups(): Promise<CodeMemoryNode[]> {
    const all = await this.scopes.all();
    if (all.length === 0) return [];
    const engine = await this.engines.get();
    const byType = new Map<string, { scope: Scope; memory: Memory }[]>();
    const seen = new Set<string>();
    for (const { scope } of all) {
      if (seen.has(scope.project)) continue;
      seen.add(scope.project);
      const s = { project: scope.project };
      for (const memory of await engine.listMemories(s, { includeSuppressed: this.showInactive })) {
        const list = byType.get(memory.memory_type) ?? [];
        list.push({ scope: s, memory });
        byType.set(memory.memory_type, list);
      }
    }
    const types = [...byType.keys()].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    return types.map((t) => {
      const list = byType.get(t) ?? [];
      list.sort((a, b) => Number(b.memory.status === 'active') - Number(a.memory.status === 'active') || b.memory.updated_at_epoch - a.memory.updated_at_epoch);
      return new MemoryTypeNode(t, list);
    });
  }

  dispose(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.tree.dispose();
    this._onDidChangeTreeData.dispose();
  }
}

function rank(type: string): number {
  const i = TYPE_ORDER.indexOf(type);
  return i === -1 ? TYPE_ORDER.length : i;
}
