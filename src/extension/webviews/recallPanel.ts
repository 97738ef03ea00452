import * as vscode from 'vscode';
import type { SearchHit } from '../../core/api';
import type { Scope } from '../../core/model/records';
import { parseList } from '../capture/capturedLog';
import type { EngineHost } from '../engineHost';
import type { DetailsPanel } from './detailsPanel';
import type { WebviewMessage } from './html';
import { action, escapeHtml, openPanel, page, relativeTime } from './html';
import type { Navigation } from './navigation';

export interface RecallResult {
  query: string;
  origin: string;
  scope: Scope;
  hits: SearchHit[];
  /** The agent-facing context pack for the same query (recall_context), when available. */
  contextPack?: string;
  elapsedMs: number;
  /** Results forgotten since the recall, taken off the panel (with the context pack that quoted them). */
  forgotten?: number;
}

/** Results of "Recall Context for Selection": each with a reference you can click. */
export class RecallPanel implements vscode.Disposable {
  static readonly viewType = 'codeMemory.recall';
  private panel: vscode.WebviewPanel | undefined;
  private last: RecallResult | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly engines: EngineHost,
    private readonly details: DetailsPanel,
    private readonly navigation: Navigation,
  ) {}

  get lastResult(): RecallResult | undefined {
    return this.last;
  }

  show(result: RecallResult): void {
    this.last = result;
    if (!this.panel) {
      const beside = { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true };
      this.panel = openPanel(this.extensionUri, RecallPanel.viewType, 'Recall', beside, (m) => this.onMessage(m), () => (this.panel = undefined));
    } else {
      this.panel.reveal(undefined, true);
    }
    this.draw(result);
  }

  /** The store changed: results forgotten since go, and the context pack with them (it may quote them). */
  async refresh(): Promise<void> {
    const last = this.last;
    if (!this.panel || !last || last.hits.length === 0 || !this.engines.isOpen) return;
    const engine = await this.engines.get();
    const found = await Promise.all(last.hits.map((h) => engine.getNode(h.cell.node_id, last.scope).catch(() => undefined)));
    // null: gone; a read that failed keeps the result.
    const hits = last.hits.filter((_, i) => found[i] !== null);
    if (hits.length === last.hits.length || this.last !== last) return;
    this.last = { ...last, hits, contextPack: undefined, forgotten: (last.forgotten ?? 0) + last.hits.length - hits.length };
    this.draw(this.last);
  }

  private draw(result: RecallResult): void {
    if (!this.panel) return;
    this.panel.title = `Recall: ${result.query.split('\n')[0].slice(0, 40)}`;
    this.panel.webview.html = page(this.panel.webview, this.extensionUri, 'Recall', recallBody(result));
  }

  private async onMessage(m: WebviewMessage): Promise<void> {
    // What a link names is looked up in the scope of the result shown, never a project the page says.
    const scope = this.last?.scope;
    if (!scope) return;
    switch (m.type) {
      case 'openFile':
        return this.navigation.openFile(m.path, scope.project, m.line);
      case 'openCommit':
        return this.navigation.openCommit(m.sha, scope.project);
      case 'openNode':
        return this.details.show({ kind: 'node', scope, nodeId: m.nodeId });
      case 'openObservation':
        return this.details.show({ kind: 'observation', scope, id: m.id });
      default:
        return;
    }
  }

  dispose(): void {
    this.panel?.dispose();
  }
}

export function recallBody(r: RecallResult): string {
  const project = r.scope.project;
  const cards = r.hits
    .map((hit, i) => {
      const c = hit.cell;
      const files = parseList(c.files);
      const width = Math.max(2, Math.round(hit.score * 80));
      return `<div class="result">
  <div class="top"><span class="badge">${i + 1}</span><span class="badge tag">${escapeHtml(layerName(c.layer))}</span><span class="badge t-${escapeHtml(c.type)}">${escapeHtml(c.type)}</span>
    ${action({ type: 'openNode', nodeId: c.node_id }, escapeHtml(c.title || '(untitled)'), 'link title', 'Show details')}
    <span class="score" title="relevance ${hit.score.toFixed(2)}"><svg width="80" height="6"><rect x="0" y="0" width="${width}" height="6"/></svg></span></div>
  <div class="text">${escapeHtml(c.text.length > 600 ? `${c.text.slice(0, 600)}…` : c.text)}</div>
  ${files.length ? `<ul class="files">${files.slice(0, 6).map((f) => `<li>${action({ type: 'openFile', path: f }, escapeHtml(f), 'link file', `Open ${f}`)}</li>`).join('')}</ul>` : ''}
  <div class="ref">Reference: ${action({ type: 'copy', text: c.node_id }, escapeHtml(c.node_id), 'link', 'Copy the reference')}${
    c.commit_sha ? ` · ${action({ type: 'openCommit', sha: c.commit_sha }, `commit ${escapeHtml(c.commit_sha.slice(0, 10))}`, 'link')}` : ''
  }${c.branch ? ` · ${escapeHtml(c.branch)}` : ''} · ${escapeHtml(relativeTime(c.created_at_epoch))}</div>
</div>`;
    })
    .join('\n');
  return `<header><div class="kind">Recall context · ${escapeHtml(project)}</div><h1>${r.hits.length} result${r.hits.length === 1 ? '' : 's'}</h1>
<div class="badges"><span class="badge">${escapeHtml(r.origin)}</span><span class="badge">${r.elapsedMs} ms</span></div></header>
<div class="query">${escapeHtml(r.query.length > 1200 ? `${r.query.slice(0, 1200)}…` : r.query)}</div>
${r.forgotten ? `<p class="muted">${r.forgotten} result${r.forgotten === 1 ? ' was' : 's were'} forgotten since this recall and left the panel, with the agent context that quoted it. Recall again for a fresh one.</p>` : ''}
${r.contextPack ? `<div class="toolbar">${action({ type: 'copy', text: r.contextPack }, 'Copy as agent context (recall_context)', 'link')}</div>` : ''}
${cards || '<p class="muted">Nothing in memory matches this yet. Capture builds up as you work; "Import Git History" fills it from past commits.</p>'}`;
}

function layerName(layer: string): string {
  return layer === 'L0' ? 'observation' : layer === 'L1' ? 'session summary' : 'memory';
}
