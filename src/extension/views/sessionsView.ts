import * as vscode from 'vscode';
import type { SessionInfo } from '../../core/api';
import type { Observation } from '../../core/model/records';
import type { EngineHost } from '../engineHost';
import type { FreshnessService } from '../freshness';
import type { ScopeService } from '../scopes';
import type { CodeMemoryNode } from './nodes';
import { DocumentFileNode, DocumentsNode, MessageNode, ObservationNode, ProjectNode, SessionNode } from './nodes';
import { DOCUMENT_TYPE } from '../../core/model/records';
import { snapshotTree } from './snapshot';
import type { TreeSnapshot } from './snapshot';
import { parseList } from '../capture/capturedLog';

const SESSIONS_PER_PROJECT = 50;
const OBSERVATIONS_PER_SESSION = 200;
const DOCUMENTS_PER_PROJECT = 5000;

/** Sessions: project → its documents (by file) and its sessions (date, branch, summary) → observations. */
export class SessionsView implements vscode.TreeDataProvider<CodeMemoryNode>, vscode.Disposable {
  static readonly id = 'codeMemory.sessions';
  private readonly _onDidChangeTreeData = new vscode.EventEmitter<CodeMemoryNode | undefined>();
  readonly onDidChangeTreeData = this._onDidChangeTreeData.event;
  readonly tree: vscode.TreeView<CodeMemoryNode>;
  private refreshTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly engines: EngineHost,
    private readonly scopes: ScopeService,
    private readonly freshness: FreshnessService,
  ) {
    this.tree = vscode.window.createTreeView(SessionsView.id, { treeDataProvider: this, showCollapseAll: true });
  }

  /** Debounced: capture may report several batches in a row. */
  refresh(): void {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      this._onDidChangeTreeData.fire(undefined);
    }, 400);
  }

  getTreeItem(node: CodeMemoryNode): vscode.TreeItem {
    return node;
  }

  async getChildren(node?: CodeMemoryNode): Promise<CodeMemoryNode[]> {
    try {
      if (!node) return await this.projects();
      if (node instanceof ProjectNode) return await this.sessions(node);
      if (node instanceof SessionNode) return await this.observations(node);
      if (node instanceof DocumentsNode) return node.files();
      if (node instanceof DocumentFileNode) return node.children();
      return [];
    } catch (err) {
      return [new MessageNode(`Could not read the store: ${err instanceof Error ? err.message : String(err)}`, 'error')];
    }
  }

  private async projects(): Promise<CodeMemoryNode[]> {
    const all = await this.scopes.all();
    if (all.length === 0) return [];
    const engine = await this.engines.get();
    const nodes: ProjectNode[] = [];
    const seen = new Set<string>();
    for (const { folder, scope } of all) {
      if (seen.has(scope.project)) continue;
      seen.add(scope.project);
      const sessions = await engine.listSessions({ project: scope.project }, SESSIONS_PER_PROJECT);
      if (sessions.length > 0) nodes.push(new ProjectNode({ project: scope.project }, folder, `${sessions.length} session${sessions.length === 1 ? '' : 's'}`));
    }
    // No sessions anywhere: an empty tree lets the welcome view say what to do next.
    return nodes;
  }

  private async sessions(node: ProjectNode): Promise<CodeMemoryNode[]> {
    const engine = await this.engines.get();
    const [sessions, documents]: [SessionInfo[], Observation[]] = await Promise.all([
      engine.listSessions(node.scope, SESSIONS_PER_PROJECT),
      engine.listObservations(node.scope, { type: DOCUMENT_TYPE, limit: DOCUMENTS_PER_PROJECT }),
    ]);
    const nodes: CodeMemoryNode[] = documents.length > 0 ? [new DocumentsNode(node.scope, documents)] : [];
    return [...nodes, ...sessions.sort((a, b) => b.started_at_epoch - a.started_at_epoch).map((s) => new SessionNode(node.scope, s))];
  }

  private async observations(node: SessionNode): Promise<CodeMemoryNode[]> {
    const engine = await this.engines.get();
    const list = await engine.listObservations(node.scope, { sessionId: node.session.memory_session_id, limit: OBSERVATIONS_PER_SESSION });
    if (list.length === 0) return [new MessageNode('No observations in this session')];
    const sorted = list.sort((a, b) => b.created_at_epoch - a.created_at_epoch);
    // A commit the code has moved on from says so: changed since, or not on this branch.
    const fresh = await Promise.all(sorted.map((o) => this.freshness.check(node.scope.project, o.commit_sha, [...parseList(o.files_modified), ...parseList(o.files_read)])));
    return sorted.map((o, i) => new ObservationNode(node.scope, o, fresh[i]));
  }

  /** The tree as shown, for tests and diagnostics. */
  snapshot(): Promise<TreeSnapshot[]> {
    return snapshotTree(this);
  }

  getParent(): undefined {
    return undefined;
  }

  dispose(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.tree.dispose();
    this._onDidChangeTreeData.dispose();
  }
}
