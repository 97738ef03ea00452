import * as vscode from 'vscode';
import type { Memory } from '../../core/model/records';
import type { CommandDefinition, Container } from '../container';
import { MEMORY_TYPES, headOf } from './rememberSelection';

/** A note typed by hand, kept as a memory of the current project. */
export function addNoteCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.addNote',
    changesStore: true,
    run: async (options?: { text?: string; memoryType?: string }): Promise<Memory | undefined> => {
      if (c.scopes.folders().length === 0) {
        void vscode.window.showInformationMessage('Open a folder first: memory is kept per project.');
        return undefined;
      }
      const target = await c.scopes.resolve(vscode.window.activeTextEditor?.document.uri, 'Add the note to the memory of which project?');
      if (!target) return undefined;
      const text = options?.text ?? (await vscode.window.showInputBox({ title: `Add Note to Code Memory (${target.scope.project})`, prompt: 'What should be remembered? (e.g. "We deploy from the release branch only")' }));
      if (!text?.trim()) return undefined;
      const memoryType = options?.memoryType ?? (await vscode.window.showQuickPick(MEMORY_TYPES, { title: 'Kind of note' }))?.type ?? 'note';
      const engine = await c.engines.get();
      const memory = await engine.remember(
        {
          title: headOf(text.trim().split('\n')[0], 100),
          text: text.trim(),
          memory_type: memoryType,
          branch: c.capture.git.branchOf(target.folder.uri.toString()) ?? undefined,
        },
        { project: target.scope.project },
      );
      void vscode.window.setStatusBarMessage(`Remembered in ${target.scope.project}: ${memory.title}`, 3000);
      return memory;
    },
  };
}
