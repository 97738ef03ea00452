import type { CommandDefinition, Container } from '../container';
import { storeChanged } from '../storeChanged';
import { MoreNode, SHOW_MORE_MEMORIES } from '../views/nodes';

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

/** The command of a Show more… item of the Memories view: the next page of its level. */
export function showMoreMemoriesCommand(c: Container): CommandDefinition {
  return {
    id: SHOW_MORE_MEMORIES,
    run: (node: unknown) => {
      if (node instanceof MoreNode) c.memoriesView.showMore(node);
    },
  };
}

export function showOutputCommand(c: Container): CommandDefinition {
  return { id: 'codeMemory.showOutput', run: () => c.output.show(true) };
}
