import * as vscode from 'vscode';
import type { CaptureService, CaptureState } from './capture/captureService';
import type { EngineHost } from './engineHost';

/** Capture state and counts; a click pauses or resumes capture. */
export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('codeMemory.status', vscode.StatusBarAlignment.Right, 100);
  private readonly disposables: vscode.Disposable[] = [];
  private storeCount: number | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly capture: CaptureService,
    private readonly engines: EngineHost,
  ) {
    this.item.name = 'Code Memory';
    this.item.command = 'codeMemory.toggleCapture';
    this.disposables.push(
      this.item,
      capture.onDidChangeState(() => this.update()),
      capture.onDidCapture(() => this.update()),
      engines.onDidOpen(() => void this.refreshCount()),
    );
    this.timer = setInterval(() => void this.refreshCount(), 60_000);
    this.timer.unref?.();
    this.update();
    this.item.show();
  }

  async refreshCount(): Promise<void> {
    const engine = this.engines.peek();
    if (!engine) return;
    try {
      this.storeCount = (await engine.stats(null)).observations;
    } catch {
      this.storeCount = null;
    }
    this.update();
  }

  update(): void {
    const state = this.capture.state;
    const captured = this.capture.queue.stats.observations;
    this.item.text = `${ICONS[state]} Memory${state === 'capturing' ? ` ${captured}` : `: ${LABELS[state]}`}`;
    this.item.backgroundColor = state === 'paused' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    const md = new vscode.MarkdownString(undefined, true);
    md.isTrusted = { enabledCommands: ['codeMemory.toggleCapture', 'codeMemory.showCaptured', 'codeMemory.showMcpServerInfo', 'workbench.view.extension.codeMemory'] };
    md.appendMarkdown(`**Code Memory** — capture ${LABELS[state]}\n\n`);
    md.appendMarkdown(`${captured} observation${captured === 1 ? '' : 's'} captured in this window`);
    if (this.storeCount !== null) md.appendMarkdown(` · ${this.storeCount} in the store`);
    md.appendMarkdown('\n\n');
    if (state === 'untrusted') md.appendMarkdown('Untrusted workspaces are never captured.\n\n');
    md.appendMarkdown(
      `[${state === 'paused' ? '$(debug-start) Resume' : '$(debug-pause) Pause'}](command:codeMemory.toggleCapture) · [$(eye) What is captured](command:codeMemory.showCaptured) · [$(plug) MCP server](command:codeMemory.showMcpServerInfo)`,
    );
    this.item.tooltip = md;
  }

  dispose(): void {
    clearInterval(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}

const ICONS: Record<CaptureState, string> = {
  capturing: '$(database)',
  paused: '$(debug-pause)',
  disabled: '$(circle-slash)',
  untrusted: '$(shield)',
};

const LABELS: Record<CaptureState, string> = {
  capturing: 'on',
  paused: 'paused',
  disabled: 'off',
  untrusted: 'off (untrusted)',
};
