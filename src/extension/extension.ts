import * as vscode from 'vscode';

// Minimal composition root; grows into the full one (services, capture, views, commands).
export function activate(context: vscode.ExtensionContext): { version: string } {
  const output = vscode.window.createOutputChannel('Code Memory');
  context.subscriptions.push(output);
  context.subscriptions.push(
    vscode.commands.registerCommand('codeMemory.showOutput', () => output.show(true)),
  );
  const sessions = vscode.window.createTreeView('codeMemory.sessions', {
    treeDataProvider: {
      getChildren: () => [],
      getTreeItem: (item: vscode.TreeItem) => item,
    },
  });
  context.subscriptions.push(sessions);
  return { version: String(context.extension.packageJSON.version) };
}

export function deactivate(): void {}
