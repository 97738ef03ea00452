import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';
import { storeChanged } from '../storeChanged';
import { addNoteCommand } from './addNote';
import { pauseCaptureCommand, resumeCaptureCommand, toggleCaptureCommand } from './captureToggles';
import { chooseProjectCommand } from './chooseProject';
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
import { editConflictingMemoryCommand, keepBothMemoriesCommand, markMemorySupersededCommand } from './reviewConflict';
import { searchMemoryCommand } from './searchMemory';
import { showCapturedCommand } from './showCaptured';
import { rotateServerTokenCommand, showMcpServerInfoCommand } from './showMcpServerInfo';
import { suppressCommand, unsuppressCommand } from './suppress';
import { shareWithTeamCommand, showTeamStatusCommand, unshareFromTeamCommand } from './team';
import { refreshCommand, showMoreMemoriesCommand, showOutputCommand, toggleInactiveMemoriesCommand } from './viewCommands';

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
    unsuppressCommand(c),
    forgetItemCommand(c),
    keepBothMemoriesCommand(c),
    markMemorySupersededCommand(c),
    editConflictingMemoryCommand(c),
    shareWithTeamCommand(c),
    unshareFromTeamCommand(c),
    showTeamStatusCommand(c),
    refreshCommand(c),
    toggleInactiveMemoriesCommand(c),
    showMoreMemoriesCommand(c),
    showOutputCommand(c),
    chooseProjectCommand(c),
  ];
  // A failed command is reported here, once, and resolves: a rejection would make VS Code show
  // a second notification of the same error.
  return definitions.map((d) =>
    vscode.commands.registerCommand(d.id, async (...args: unknown[]) => {
      try {
        return await d.run(...args);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        c.output.error(`${d.id}: ${err instanceof Error ? (err.stack ?? message) : message}`);
        void vscode.window.showErrorMessage(`Code Memory: ${message}`, 'Show Log').then((a) => a && c.output.show(true));
        return undefined;
      } finally {
        // Also after a failure part-way; a store that did not open has nothing new to show.
        if (d.changesStore && c.engines.isOpen) await storeChanged(c).catch((err: unknown) => c.output.error(`Refreshing after ${d.id}: ${String(err)}`));
      }
    }),
  );
}
