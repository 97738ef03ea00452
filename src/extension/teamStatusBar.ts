import * as vscode from 'vscode';
import type { TeamState, TeamStatus } from '../core/team/teamMemory';
import { affectsConfig, readConfig } from './config';
import type { EngineHost } from './engineHost';

/**
 * The team store's state, shown while `codeMemory.teamStore` is set: online, offline (writes
 * wait in a queue on disk, reads come from the local cache), refused (the endpoint would lose
 * writes), or connecting. Polled from the engine process every few seconds once it is open.
 */
export class TeamStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('codeMemory.team', vscode.StatusBarAlignment.Right, 99);
  private readonly disposables: vscode.Disposable[] = [];
  private readonly timer: NodeJS.Timeout;
  status: TeamStatus | null = null;

  constructor(private readonly engines: EngineHost) {
    this.item.name = 'Code Memory Team Store';
    this.item.command = 'codeMemory.showTeamStatus';
    this.disposables.push(
      this.item,
      engines.onDidOpen(() => void this.refresh()),
      engines.onDidClose(() => this.show(null)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (affectsConfig(e, 'teamStore')) this.show(null);
      }),
    );
    this.timer = setInterval(() => void this.refresh(), 3000);
    this.timer.unref?.();
    this.show(null);
  }

  async refresh(): Promise<void> {
    const engine = this.engines.peek();
    if (!engine) return;
    try {
      this.show(await engine.teamStatus());
    } catch {
      // the engine is closing; the next open refreshes
    }
  }

  private show(status: TeamStatus | null): void {
    this.status = status;
    const configured = readConfig().teamStore;
    if (!configured) {
      this.item.hide();
      return;
    }
    const state: TeamState = status?.state ?? 'connecting';
    const queued = status?.pending ? ` (${status.pending} queued)` : '';
    this.item.text = `${ICONS[state]} Team: ${state}${queued}`;
    this.item.backgroundColor = state === 'refused' ? new vscode.ThemeColor('statusBarItem.errorBackground') : state === 'offline' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.tooltip = tooltip(configured, status);
    this.item.show();
  }

  dispose(): void {
    clearInterval(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}

export function tooltip(uri: string, status: TeamStatus | null): string {
  const lines = [`Team store ${uri}`];
  switch (status?.state) {
    case 'online':
      lines.push('Online: shares go out at once; searches read the team memory.');
      break;
    case 'offline':
      lines.push('Offline: shares and unshares wait in a queue on disk and go out when the store is back; searches use the local copy.');
      break;
    case 'refused':
      lines.push('Refused: nothing is written there.');
      break;
    default:
      lines.push('Connecting (the engine opens on first use).');
  }
  if (status?.pending) lines.push(`${status.pending} write(s) queued.`);
  if (status?.message) lines.push(status.message);
  if (status?.synced_at_epoch) lines.push(`Local copy refreshed ${new Date(status.synced_at_epoch).toLocaleString()}.`);
  return lines.join('\n');
}

const ICONS: Record<TeamState, string> = {
  connecting: '$(sync~spin)',
  online: '$(cloud)',
  offline: '$(cloud-offline)',
  refused: '$(error)',
};
