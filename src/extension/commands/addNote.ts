import * as vscode from 'vscode';
import type { Memory } from '../../core/model/records';
import type { CommandDefinition, Container } from '../container';
import { MEMORY_TYPES } from './rememberSelection';

/** A note typed by hand, kept as a memory of the current project. */
export function addNoteCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.addNote',
    run: async (options?: { text?: string; memoryType?: string }): Promise<Memory | undefined> => {
      const scope = await c.scopes.current();
      if (!scope) {
        void vscode.window.showInformationMessage('Open a folder first: memory is kept per project.');
        return undefined;
      }
      const text = options?.text ?? (await vscode.window.showInputBox({ title: 'Add Note to Code Memory', prompt: 'What should be remembered? (e.g. "We deploy from the release branch only")' }));
      if (!text?.trim()) return undefined;
      const memoryType = options?.memoryType ?? (await vscode.window.showQuickPick(MEMORY_TYPES, { title: 'Kind of note' }))?.type ?? 'note';
      const engine = await c.engines.get();
      const folder = c.scopes.currentFolder();
      const memory = await engine.remember(
        {
          title: text.trim().split('\n')[0].slice(0, 100),
          text: text.trim(),
          memory_type: memoryType,
          branch: folder ? (c.capture.git.branchOf(folder.uri.toString()) ?? undefined) : undefined,
        },
        { project: scope.project },
      );
      c.memoriesView.refresh();
      void vscode.window.setStatusBarMessage(`Remembered: ${memory.title}`, 3000);
      return memory;
    },
  };
}
