// First run: the "Get started with Code Memory" walkthrough opens once per user. VS Code opens
// an extension's walkthrough by itself only after an install from its Extensions view, not after
// `code --install-extension` or Install from VSIX; and its walkthrough service, which checks a
// step off when the step's command runs (onCommand), only starts once a walkthrough is shown, so
// without this, history imported before the walkthrough was ever opened would stay unchecked.
import * as vscode from 'vscode';

export const WALKTHROUGH_ID = 'codeMemory.getStarted';
const SHOWN_KEY = 'codeMemory.walkthroughShown';

export function openWalkthroughOnFirstRun(context: vscode.ExtensionContext): void {
  // Host suites open it themselves, when they test it.
  if (context.extensionMode === vscode.ExtensionMode.Test) return;
  if (context.globalState.get<boolean>(SHOWN_KEY)) return;
  void context.globalState.update(SHOWN_KEY, true);
  void vscode.commands.executeCommand('workbench.action.openWalkthrough', `${context.extension.id}#${WALKTHROUGH_ID}`, false);
}
