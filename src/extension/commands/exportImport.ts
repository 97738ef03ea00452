import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';

// Export and Import Memory: JSON Lines, the same format as `code-memory export/import`.

export function exportMemoryCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.exportMemory',
    run: async (options?: { uri?: vscode.Uri; allProjects?: boolean }): Promise<number | undefined> => {
      const scope = await c.scopes.current();
      const all =
        options?.allProjects ??
        (scope
          ? (await vscode.window.showQuickPick([{ label: `This project (${scope.project})`, all: false }, { label: 'Every project in the store', all: true }], { title: 'Export Memory' }))?.all
          : true);
      if (all === undefined) return undefined;
      const folder = c.scopes.currentFolder();
      const name = `code-memory-${all || !scope ? 'all' : scope.project.replace(/[^\w.-]+/g, '_')}.jsonl`;
      const uri = options?.uri ?? (await vscode.window.showSaveDialog({ defaultUri: folder ? vscode.Uri.joinPath(folder.uri, name) : undefined, filters: { 'JSON Lines': ['jsonl'] } }));
      if (!uri) return undefined;
      const engine = await c.engines.get();
      const count = await engine.exportToFile(uri.fsPath, all || !scope ? null : { project: scope.project });
      if (!options?.uri) void vscode.window.showInformationMessage(`Exported ${count} records to ${vscode.workspace.asRelativePath(uri)}.`);
      return count;
    },
  };
}

export function importMemoryCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.importMemory',
    changesStore: true,
    run: async (options?: { uri?: vscode.Uri }): Promise<number | undefined> => {
      const uri = options?.uri ?? (await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'JSON Lines': ['jsonl'] }, title: 'Import Memory' }))?.[0];
      if (!uri) return undefined;
      const engine = await c.engines.get();
      const count = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Importing memory…' }, () => engine.importFromFile(uri.fsPath));
      if (!options?.uri) void vscode.window.showInformationMessage(`Imported ${count} records.`);
      return count;
    },
  };
}
