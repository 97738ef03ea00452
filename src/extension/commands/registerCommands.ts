import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';
import { addNoteCommand } from './addNote';
import { pauseCaptureCommand, resumeCaptureCommand, toggleCaptureCommand } from './captureToggles';
import { copyAgentConfigurationCommand } from './copyAgentConfiguration';
import { copyReferenceCommand } from './copyReference';
import { endSessionCommand } from './endSession';
import { exportMemoryCommand, importMemoryCommand } from './exportImport';
import { forgetCommand } from './forget';
import { forgetItemCommand } from './forgetItem';
import { importGitHistoryCommand } from './importGitHistory';
import { openDetailsCommand } from './openDetails';
import { promoteToMemoryCommand } from './promoteToMemory';
import { recallContextForSelectionCommand } from './recallContextForSelection';
import { rememberSelectionCommand } from './rememberSelection';
import { searchMemoryCommand } from './searchMemory';
import { showCapturedCommand } from './showCaptured';
import { rotateServerTokenCommand, showMcpServerInfoCommand } from './showMcpServerInfo';
import { suppressCommand } from './suppress';
import { refreshCommand, showOutputCommand, toggleInactiveMemoriesCommand } from './viewCommands';

/**
 * Context key set once a command has run in this window: `codeMemory.ran.importGitHistory` etc.
 * Walkthrough steps complete on it (onContext), so a step done before the walkthrough was first
 * opened still shows done: VS Code only starts counting onCommand events when it opens one.
 */
export function ranContextKey(commandId: string): string {
  return `codeMemory.ran.${commandId.replace(/^codeMemory\./, '')}`;
}

/** The one place every command is registered; each lives in its own file. */
export function registerCommands(c: Container, options: { mcpRegistered: () => boolean }): vscode.Disposable[] {
  const definitions: CommandDefinition[] = [
    recallContextForSelectionCommand(c),
    searchMemoryCommand(c),
    rememberSelectionCommand(c),
    addNoteCommand(c),
    endSessionCommand(c),
    importGitHistoryCommand(c),
    forgetCommand(c),
    pauseCaptureCommand(c),
    resumeCaptureCommand(c),
    toggleCaptureCommand(c),
    showMcpServerInfoCommand(c, options.mcpRegistered),
    rotateServerTokenCommand(c),
    copyAgentConfigurationCommand(c),
    exportMemoryCommand(c),
    importMemoryCommand(c),
    showCapturedCommand(c),
    openDetailsCommand(c),
    copyReferenceCommand(c),
    promoteToMemoryCommand(c),
    suppressCommand(c),
    forgetItemCommand(c),
    refreshCommand(c),
    toggleInactiveMemoriesCommand(c),
    showOutputCommand(c),
  ];
  const ran = new Set<string>();
  return definitions.map((d) =>
    vscode.commands.registerCommand(d.id, async (...args: unknown[]) => {
      try {
        const result = await d.run(...args);
        if (!ran.has(d.id)) {
          ran.add(d.id);
          void vscode.commands.executeCommand('setContext', ranContextKey(d.id), true);
        }
        return result;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        c.output.error(`${d.id}: ${err instanceof Error ? (err.stack ?? message) : message}`);
        void vscode.window.showErrorMessage(`Code Memory: ${message}`, 'Show Log').then((a) => a && c.output.show(true));
        throw err;
      }
    }),
  );
}
