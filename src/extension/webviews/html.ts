import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { escapeHtml } from '../../core/model/html';

export function nonce(): string {
  return randomBytes(16).toString('base64');
}

export { escapeHtml } from '../../core/model/html';

/**
 * Messages the webview scripts send back; every one carries a `type`. None names a project: a
 * panel opens what a message names in the scope of what it shows (a page a stored record's markup
 * made post a message cannot reach another project's records).
 */
export type WebviewMessage =
  | { type: 'openFile'; path: string; line?: number }
  | { type: 'openCommit'; sha: string }
  | { type: 'openNode'; nodeId: string }
  | { type: 'openObservation'; id: number }
  | { type: 'copy'; text: string }
  | { type: 'command'; command: string };

/** A clickable element: the shared script posts `message` when it is clicked. */
export function action(message: WebviewMessage, label: string, className = 'link', title?: string): string {
  return `<a href="#" class="${className}" data-msg="${escapeHtml(JSON.stringify(message))}"${title ? ` title="${escapeHtml(title)}"` : ''}>${label}</a>`;
}

function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions & vscode.WebviewPanelOptions {
  return {
    enableScripts: true,
    enableCommandUris: false,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'media')],
    retainContextWhenHidden: false,
  };
}

/**
 * A panel of ours, with our icon and page options: its page's Copy links copy (and say so in the
 * status bar), its other messages go to `onMessage`, and `onClose` runs when the user closes it.
 */
export function openPanel(
  extensionUri: vscode.Uri,
  viewType: string,
  title: string,
  column: vscode.ViewColumn | { viewColumn: vscode.ViewColumn; preserveFocus: boolean },
  onMessage: (m: Exclude<WebviewMessage, { type: 'copy' }>) => unknown,
  onClose: () => void,
): vscode.WebviewPanel {
  const panel = vscode.window.createWebviewPanel(viewType, title, column, webviewOptions(extensionUri));
  panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'icon.svg');
  panel.onDidDispose(onClose);
  panel.webview.onDidReceiveMessage(async (m: WebviewMessage) => {
    if (m.type !== 'copy') return onMessage(m);
    await vscode.env.clipboard.writeText(m.text);
    void vscode.window.setStatusBarMessage('Copied', 2000);
  });
  return panel;
}

/** A full page with a strict CSP: only our stylesheet and our nonce'd script may load. */
export function page(webview: vscode.Webview, extensionUri: vscode.Uri, title: string, body: string): string {
  const n = nonce();
  const css = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'webview.css'));
  const js = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'webview.js'));
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${webview.cspSource} data:; style-src ${webview.cspSource}; script-src 'nonce-${n}'; base-uri 'none'; form-action 'none';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${css}" rel="stylesheet">
<title>${escapeHtml(title)}</title>
</head>
<body>
${body}
<script nonce="${n}" src="${js}"></script>
</body>
</html>`;
}

export function relativeTime(epoch: number, now = Date.now()): string {
  const s = Math.round((now - epoch) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** Plain text to paragraphs and bullet lists; nothing from the text is ever interpreted as HTML. */
export function renderText(text: string | null | undefined): string {
  if (!text) return '';
  const blocks = text.trim().split(/\n{2,}/);
  return blocks
    .map((block) => {
      const lines = block.split('\n');
      if (lines.every((l) => /^\s*([-*•]|\d+\.)\s+/.test(l))) {
        return `<ul>${lines.map((l) => `<li>${inline(l.replace(/^\s*([-*•]|\d+\.)\s+/, ''))}</li>`).join('')}</ul>`;
      }
      return `<p>${lines.map(inline).join('<br>')}</p>`;
    })
    .join('\n');
}

function inline(s: string): string {
  return escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>').replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
}
