import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';

// Pause, Resume and the status bar's toggle are one concern; three palette entries.

export function pauseCaptureCommand(c: Container): CommandDefinition {
  return { id: 'codeMemory.pauseCapture', run: () => setPaused(c, true) };
}

export function resumeCaptureCommand(c: Container): CommandDefinition {
  return { id: 'codeMemory.resumeCapture', run: () => setPaused(c, false) };
}

export function toggleCaptureCommand(c: Container): CommandDefinition {
  return { id: 'codeMemory.toggleCapture', run: () => setPaused(c, !c.capture.paused) };
}

async function setPaused(c: Container, paused: boolean): Promise<void> {
  if (!paused && c.capture.state === 'untrusted') {
    void vscode.window.showInformationMessage('Code Memory does not capture in untrusted workspaces. Trust this workspace to capture it.');
    return;
  }
  if (!paused && c.capture.state === 'disabled') {
    const a = await vscode.window.showInformationMessage('Capture is turned off in settings (codeMemory.capture.enabled).', 'Turn On');
    if (a) await vscode.workspace.getConfiguration('codeMemory').update('capture.enabled', true, vscode.ConfigurationTarget.Global);
  }
  await c.capture.setPaused(paused);
  void vscode.window.setStatusBarMessage(paused ? 'Code Memory: capture paused' : 'Code Memory: capture resumed', 3000);
}
