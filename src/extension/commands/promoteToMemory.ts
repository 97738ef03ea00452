import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';
import { itemTarget } from './itemTarget';

export function promoteToMemoryCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.promoteToMemory',
    changesStore: true,
    run: async (arg: unknown) => {
      const t = itemTarget(arg);
      if (!t || t.kind !== 'observation') {
        void vscode.window.showInformationMessage('Promote works on an observation: right-click one in the Sessions view.');
        return;
      }
      const engine = await c.engines.get();
      const memory = await engine.promote(t.id, t.scope);
      void vscode.window.showInformationMessage(`Kept as a ${memory.memory_type}: ${memory.title}`, 'Show').then((a) => {
        if (a) void c.details.show({ kind: 'memory', scope: t.scope, id: memory.id });
      });
      return memory;
    },
  };
}
