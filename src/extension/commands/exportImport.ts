import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';

// Export and Import Memory: JSON Lines, the same format as `code-memory export/import`.

export function exportMemoryCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.exportMemory',
    run: async (options?: { uri?: vscode.Uri; allProjects?: boolean }): Promise<number | undefined> => {
      // The project is the active file's, or the window's only one; else it is asked for once
      // "a project" is chosen (a dismissed pick exports nothing).
      const active = vscode.window.activeTextEditor?.document.uri;
      const known = c.scopes.folders().length === 0 ? undefined : await c.scopes.known(active);
      const all =
        options?.allProjects ??
        (c.scopes.folders().length > 0
          ? (
              await vscode.window.showQuickPick(
                [{ label: known ? `This project (${known.scope.project})` : 'A project of this window…', all: false }, { label: 'Every project in the store', all: true }],
                { title: 'Export Memory' },
              )
            )?.all
          : true);
      if (all === undefined) return undefined;
      const target = all ? undefined : (known ?? (await c.scopes.resolve(active, 'Export the memory of which project?')));
      if (!all && !target) return undefined;
      const scope = target?.scope;
      const folder = target?.folder ?? known?.folder ?? c.scopes.currentFolder();
      const name = `code-memory-${!scope ? 'all' : scope.project.replace(/[^\w.-]+/g, '_')}.jsonl`;
      const uri = options?.uri ?? (await vscode.window.showSaveDialog({ defaultUri: folder ? vscode.Uri.joinPath(folder.uri, name) : undefined, filters: { 'JSON Lines': ['jsonl'] } }));
      if (!uri) return undefined;
      const engine = await c.engines.get();
      const count = await engine.exportToFile(uri.fsPath, scope ? { project: scope.project } : null);
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
