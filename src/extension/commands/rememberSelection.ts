import * as vscode from 'vscode';
import type { Memory } from '../../core/model/records';
import type { CommandDefinition, Container } from '../container';

export const MEMORY_TYPES: { type: string; label: string; detail: string }[] = [
  { type: 'decision', label: '$(law) Decision', detail: 'Something we chose, and why' },
  { type: 'convention', label: '$(symbol-ruler) Convention', detail: 'How things are done in this project' },
  { type: 'fact', label: '$(info) Fact', detail: 'Something true about the code or its environment' },
  { type: 'preference', label: '$(heart) Preference', detail: 'How you like things done' },
  { type: 'note', label: '$(note) Note', detail: 'Anything else worth keeping' },
];

/** Keeps the selection as a durable memory, with the file it came from. */
export function rememberSelectionCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.rememberSelection',
    run: async (options?: { title?: string; memoryType?: string }): Promise<Memory | undefined> => {
      const editor = vscode.window.activeTextEditor;
      const text = editor ? editor.selections.map((s) => editor.document.getText(s)).join('\n').trim() : '';
      if (!editor || !text) {
        return vscode.commands.executeCommand<Memory | undefined>('codeMemory.addNote');
      }
      const folder = vscode.workspace.getWorkspaceFolder(editor.document.uri);
      const scope = folder ? await c.scopes.scopeFor(folder.uri.toString()) : await c.scopes.current();
      if (!scope) return undefined;
      const memoryType = options?.memoryType ?? (await vscode.window.showQuickPick(MEMORY_TYPES, { title: 'Remember Selection as…' }))?.type;
      if (!memoryType) return undefined;
      const title =
        options?.title ??
        (await vscode.window.showInputBox({ title: 'Remember Selection', prompt: 'A short title for this memory', value: text.split('\n')[0].slice(0, 80) }));
      if (!title) return undefined;
      const rel = folder ? vscode.workspace.asRelativePath(editor.document.uri, false) : undefined;
      const engine = await c.engines.get();
      const memory = await engine.remember(
        {
          title,
          text: rel ? `${text}\n\n(from ${rel}, line ${editor.selection.start.line + 1})` : text,
          memory_type: memoryType,
          files: rel ? [rel] : undefined,
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
