import type { CommandDefinition, Container } from '../container';
import { storeChanged } from '../storeChanged';

// Small commands of the views' title bars.

export function refreshCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.refresh',
    run: () => storeChanged(c),
  };
}

export function toggleInactiveMemoriesCommand(c: Container): CommandDefinition {
  return { id: 'codeMemory.toggleInactiveMemories', run: () => c.memoriesView.toggleInactive() };
}

export function showOutputCommand(c: Container): CommandDefinition {
  return { id: 'codeMemory.showOutput', run: () => c.output.show(true) };
}
