import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';

/** One observation per past commit (what the diff says included); cancellable, resumable. */
export function importGitHistoryCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.importGitHistory',
    changesStore: true,
    run: async (options?: { folder?: vscode.WorkspaceFolder; quiet?: boolean }) => {
      const folders = c.scopes.folders().filter((f) => f.uri.scheme === 'file');
      const folder =
        options?.folder ??
        (folders.length <= 1
          ? folders[0]
          : await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Import the git history of which folder?' }));
      if (!folder) {
        void vscode.window.showInformationMessage('Open a folder that is a git repository to import its history.');
        return undefined;
      }
      const scope = await c.scopes.scopeFor(folder.uri.toString());
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Importing git history of ${folder.name}`, cancellable: true },
        async (progress, token) => {
          const abort = new AbortController();
          const sub = token.onCancellationRequested(() => abort.abort());
          const engine = await c.engines.get();
          let last = 0;
          try {
            return await engine.importGitHistory(folder.uri.fsPath, { project: scope.project }, {
              signal: abort.signal,
              onProgress: (done, total) => {
                const pct = total > 0 ? (done / total) * 100 : 0;
                progress.report({ increment: pct - last, message: `${done} / ${total} commits` });
                last = pct;
              },
            });
          } finally {
            sub.dispose();
          }
        },
      );
      if (!options?.quiet) {
        void vscode.window.showInformationMessage(
          result.imported === 0 && result.skipped === 0
            ? `${folder.name} has no commits to import (or is not a git repository).`
            : `Imported ${result.imported} commit${result.imported === 1 ? '' : 's'} in ${result.sessions} session${result.sessions === 1 ? '' : 's'}${result.skipped ? `; ${result.skipped} were already in memory` : ''}.`,
        );
      }
      return result;
    },
  };
}
