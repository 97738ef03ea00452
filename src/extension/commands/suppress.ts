import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';
import { itemTarget } from './itemTarget';

/** Hides a record from search and agents without deleting it (reversible, unlike Forget). */
export function suppressCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.suppress',
    changesStore: true,
    run: async (arg: unknown) => {
      const t = itemTarget(arg);
      if (!t) return;
      const engine = await c.engines.get();
      await engine.setStatus(t.kind, t.id, 'suppressed', t.scope);
      void vscode.window.setStatusBarMessage(`Suppressed ${t.label}`, 3000);
    },
  };
}
