import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';

/**
 * Picks the project that the chat tools, and other work in no folder of a window of several
 * projects, are about (ScopeService.choose): kept for the window until its folders change.
 */
export function chooseProjectCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.chooseProject',
    run: async (): Promise<string | undefined> => {
      if ((await c.scopes.all()).length === 0) {
        void vscode.window.showInformationMessage('Code Memory: open a folder first; its project is the one the tools use.');
        return undefined;
      }
      const picked = await c.scopes.choose('Code Memory: which project are the chat tools and work outside the folders about?');
      if (picked) void vscode.window.showInformationMessage(`Code Memory: the chat tools now use ${picked.scope.project}.`);
      return picked?.scope.project;
    },
  };
}
