import * as vscode from 'vscode';
import type { EngineHost } from '../engineHost';
import type { ScopeService } from '../scopes';
import type { CodeMemoryNode } from './nodes';
import { MessageNode, RequestNode } from './nodes';

const SHOWN = 100;

/** The request log: the retrieve_memory calls agents made, newest first. */
export class RequestLogView implements vscode.TreeDataProvider<CodeMemoryNode>, vscode.Disposable {
  static readonly id = 'codeMemory.requestLog';
  private readonly _onDidChangeTreeData = new vscode.EventEmitter<CodeMemoryNode | undefined>();
  readonly onDidChangeTreeData = this._onDidChangeTreeData.event;
  readonly tree: vscode.TreeView<CodeMemoryNode>;
  private readonly poll: NodeJS.Timeout;

  constructor(
    private readonly engines: EngineHost,
    private readonly scopes: ScopeService,
  ) {
    this.tree = vscode.window.createTreeView(RequestLogView.id, { treeDataProvider: this });
    // Agents call the server without telling the view; look again while it is on screen.
    this.poll = setInterval(() => {
      if (this.tree.visible && this.engines.isOpen) this.refresh();
    }, 10_000);
    this.poll.unref?.();
  }

  refresh(): void {
    this._onDidChangeTreeData.fire(undefined);
  }

  getTreeItem(node: CodeMemoryNode): vscode.TreeItem {
    return node;
  }

  async getChildren(node?: CodeMemoryNode): Promise<CodeMemoryNode[]> {
    if (node) return [];
    try {
      const all = await this.scopes.all();
      if (all.length === 0) return [];
      const engine = await this.engines.get();
      const entries = (await Promise.all(all.map(({ scope }) => engine.listRequests({ project: scope.project }, SHOWN)))).flat();
      const unique = new Map(entries.map((e) => [e.request_id, e]));
      return [...unique.values()]
        .sort((a, b) => b.created_at_epoch - a.created_at_epoch)
        .slice(0, SHOWN)
        .map((e) => new RequestNode(e));
    } catch (err) {
      return [new MessageNode(`Could not read the request log: ${err instanceof Error ? err.message : String(err)}`, 'error')];
    }
  }

  dispose(): void {
    clearInterval(this.poll);
    this.tree.dispose();
    this._onDidChangeTreeData.dispose();
  }
}
