import * as vscode from 'vscode';
import type { Memory } from '../../core/model/records';
import { MAX_MEMORY_TEXT_CHARS, MAX_MEMORY_TITLE_CHARS, codePoints } from '../../core/model/limits';
import type { CommandDefinition, Container } from '../container';

export const MEMORY_TYPES: { type: string; label: string; detail: string }[] = [
  { type: 'decision', label: '$(law) Decision', detail: 'Something we chose, and why' },
  { type: 'convention', label: '$(symbol-ruler) Convention', detail: 'How things are done in this project' },
  { type: 'fact', label: '$(info) Fact', detail: 'Something true about the code or its environment' },
  { type: 'preference', label: '$(heart) Preference', detail: 'How you like things done' },
  { type: 'note', label: '$(note) Note', detail: 'Anything else worth keeping' },
];

/** The first `max` UTF-16 units of `s`, never ending in half a character (an emoji cut in two is stored as U+FFFD). */
export function headOf(s: string, max: number): string {
  const head = s.slice(0, max);
  return /[\uD800-\uDBFF]$/.test(head) ? head.slice(0, -1) : head;
}

/** Keeps the selection as a durable memory, with the file it came from. */
export function rememberSelectionCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.rememberSelection',
    changesStore: true,
    run: async (options?: { title?: string; memoryType?: string }): Promise<Memory | undefined> => {
      const editor = vscode.window.activeTextEditor;
      const selected = editor ? editor.selections.map((s) => editor.document.getText(s)).join('\n').trim() : '';
      if (!editor || !selected) {
        return vscode.commands.executeCommand<Memory | undefined>('codeMemory.addNote');
      }
      // Refused, not cut: the first 20,000 characters of a selection are seldom the part worth keeping.
      const length = codePoints(selected);
      if (length > MAX_MEMORY_TEXT_CHARS) {
        void vscode.window.showWarningMessage(
          `The selection is ${length.toLocaleString('en-US')} characters; a memory holds at most ${MAX_MEMORY_TEXT_CHARS.toLocaleString('en-US')}. Select the part worth remembering, or write it down with Add Note.`,
        );
        return undefined;
      }
      if (c.scopes.folders().length === 0) {
        void vscode.window.showInformationMessage('Open a folder first: memory is kept per project.');
        return undefined;
      }
      const target = await c.scopes.resolve(editor.document.uri, 'Remember the selection in the memory of which project?');
      if (!target) return undefined;
      const inFolder = c.scopes.folderOf(editor.document.uri) !== undefined;
      const memoryType = options?.memoryType ?? (await vscode.window.showQuickPick(MEMORY_TYPES, { title: `Remember Selection in ${target.scope.project} as…` }))?.type;
      if (!memoryType) return undefined;
      const title =
        options?.title ??
        (await vscode.window.showInputBox({
          title: `Remember Selection in ${target.scope.project}`,
          prompt: 'A short title for this memory',
          value: headOf(selected.split('\n')[0], 80),
          validateInput: (v) => (codePoints(v) > MAX_MEMORY_TITLE_CHARS ? `A title holds at most ${MAX_MEMORY_TITLE_CHARS} characters.` : undefined),
        }));
      if (!title) return undefined;
      const rel = inFolder ? vscode.workspace.asRelativePath(editor.document.uri.with({ scheme: 'file', query: '', fragment: '' }), false) : undefined;
      const where = rel ? `\n\n(from ${rel}, line ${editor.selection.start.line + 1})` : '';
      const engine = await c.engines.get();
      const memory = await engine.remember(
        {
          title,
          // The note of where it came from gives way before the selection does.
          text: codePoints(selected + where) <= MAX_MEMORY_TEXT_CHARS ? selected + where : selected,
          memory_type: memoryType,
          files: rel ? [rel] : undefined,
          branch: c.capture.git.branchOf(target.folder.uri.toString()) ?? undefined,
        },
        { project: target.scope.project },
      );
      void vscode.window.setStatusBarMessage(`Remembered in ${target.scope.project}: ${memory.title}`, 3000);
      return memory;
    },
  };
}
