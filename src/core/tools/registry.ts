// Every tool the surfaces expose, in the order tools/list shows them.

import { getObservationsTool } from './getObservations';
import { recallTool } from './recall';
import { recallContextTool } from './recallContext';
import { retrieveMemoryTool } from './retrieveMemory';
import type { ToolDefinition } from './types';
import { observeTool, rememberTool } from './write';

export const toolDefinitions: readonly ToolDefinition[] = [
  retrieveMemoryTool,
  recallContextTool,
  getObservationsTool,
  recallTool,
  rememberTool,
  observeTool,
];

export function findTool(name: string): ToolDefinition | undefined {
  return toolDefinitions.find((tool) => tool.name === name);
}
