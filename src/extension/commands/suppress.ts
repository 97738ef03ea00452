import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';
import { itemTarget } from './itemTarget';

/** Hides a record from search and agents without deleting it (reversible with Unsuppress, unlike Forget). */
export function suppressCommand(c: Container): CommandDefinition {
  return statusCommand(c, 'codeMemory.suppress', 'suppressed', 'Suppressed');
}

/** Gives a suppressed record back to search and agents. */
export function unsuppressCommand(c: Container): CommandDefinition {
  return statusCommand(c, 'codeMemory.unsuppress', 'active', 'Unsuppressed');
}

function statusCommand(c: Container, id: string, status: 'suppressed' | 'active', said: string): CommandDefinition {
  return {
    id,
    changesStore: true,
    run: async (arg: unknown) => {
      const t = itemTarget(arg);
      if (!t) return;
      const engine = await c.engines.get();
      await engine.setStatus(t.kind, t.id, status, t.scope);
      void vscode.window.setStatusBarMessage(`${said} ${t.label}`, 3000);
    },
  };
}
