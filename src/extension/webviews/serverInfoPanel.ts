import * as vscode from 'vscode';
import type { StoreStats } from '../../core/api';
import type { WebviewMessage } from './html';
import { action, escapeHtml, openPanel, page } from './html';

export interface ServerInfo {
  url: string;
  token: string;
  project: string;
  storeUri: string;
  registeredWithVsCode: boolean;
  languageModelTools: string[];
  tools: { name: string; title: string; readOnly: boolean }[];
  stats: StoreStats | null;
  startedAt: number | null;
  captureState: string;
  captured: number;
}

/** "Show MCP Server Info": where the server listens, how to authenticate, what it serves. */
export class ServerInfoPanel implements vscode.Disposable {
  static readonly viewType = 'codeMemory.serverInfo';
  private panel: vscode.WebviewPanel | undefined;

  constructor(private readonly extensionUri: vscode.Uri) {}

  show(info: ServerInfo): void {
    if (!this.panel) {
      const run = async (m: WebviewMessage): Promise<void> => {
        if (m.type === 'command' && m.command.startsWith('codeMemory.')) await vscode.commands.executeCommand(m.command);
      };
      this.panel = openPanel(this.extensionUri, ServerInfoPanel.viewType, 'Code Memory: MCP Server', vscode.ViewColumn.Active, run, () => (this.panel = undefined));
    } else {
      this.panel.reveal();
    }
    this.panel.webview.html = page(this.panel.webview, this.extensionUri, 'MCP Server', body(info));
  }

  dispose(): void {
    this.panel?.dispose();
  }
}

function body(i: ServerInfo): string {
  const masked = `${i.token.slice(0, 4)}${'•'.repeat(12)}${i.token.slice(-4)}`;
  const s = i.stats;
  return `<header><div class="kind">Code Memory · MCP server</div><h1>${escapeHtml(i.project)}</h1>
<div class="badges"><span class="badge ok">listening</span>${i.registeredWithVsCode ? '<span class="badge">registered with VS Code agent mode</span>' : '<span class="badge warn">MCP registration not available in this VS Code</span>'}${captureBadge(i.captureState)}</div></header>
<section><h2>Connection</h2><dl class="info">
<dt>MCP endpoint (Streamable HTTP)</dt><dd>${escapeHtml(i.url)} ${action({ type: 'copy', text: i.url }, 'copy', 'link')}</dd>
<dt>Authorization</dt><dd>Bearer ${escapeHtml(masked)} ${action({ type: 'copy', text: `Bearer ${i.token}` }, 'copy header', 'link')}</dd>
<dt>REST</dt><dd>${escapeHtml(new URL(i.url).origin)}/v1/nodes/{id} · /v1/dev/mcp-requests · /v1/observations</dd>
<dt>Bound to</dt><dd>loopback only; Host and Origin checked</dd>
<dt>Started</dt><dd>${i.startedAt ? escapeHtml(new Date(i.startedAt).toLocaleString()) : '—'}</dd>
</dl></section>
<section><h2>Tools</h2><ul>${i.tools.map((t) => `<li><code>${escapeHtml(t.name)}</code> — ${escapeHtml(t.title)}${t.readOnly ? '' : ' <span class="badge warn">writes</span>'}</li>`).join('')}</ul>
${i.languageModelTools.length ? `<p class="muted">Also registered as VS Code language-model tools: ${i.languageModelTools.map((n) => `<code>${escapeHtml(n)}</code>`).join(', ')}</p>` : ''}</section>
<section><h2>Store</h2><dl class="info">
<dt>Location</dt><dd>${escapeHtml(i.storeUri)}</dd>
${s ? `<dt>Records</dt><dd>${s.observations} observations · ${s.session_summaries} session summaries · ${s.memories} memories</dd>
<dt>Search index</dt><dd>${s.cells} cells, ${s.cells_with_vectors} with vectors (${escapeHtml(s.embedder.name)}, ${s.embedder.dimension} dims)${s.ann_index ? ' · ANN index' : ''}</dd>
<dt>Projects</dt><dd>${s.projects.map(escapeHtml).join(', ') || '—'}</dd>` : ''}
<dt>Captured in this window</dt><dd>${i.captured} observations</dd>
</dl></section>
<section><h2>Agents outside VS Code</h2><p>Claude Code, Cursor, Codex and any stdio client can use the same memory through the bundled CLI.</p>
<div class="toolbar">${action({ type: 'command', command: 'codeMemory.copyAgentConfiguration' }, 'Copy Agent Configuration…', 'link')} ${action({ type: 'command', command: 'codeMemory.rotateServerToken' }, 'Rotate token', 'link')}</div></section>`;
}

/** The capture state as a badge: "capturing", or why nothing is being recorded. */
function captureBadge(state: string): string {
  const labels: Record<string, string> = {
    capturing: 'capturing',
    paused: 'capture paused',
    disabled: 'capture off',
    untrusted: 'capture off (untrusted workspace)',
  };
  return `<span class="badge${state === 'capturing' ? '' : ' warn'}">${escapeHtml(labels[state] ?? `capture ${state}`)}</span>`;
}
