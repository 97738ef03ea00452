import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';
import { afterForget } from './forget';
import { itemTarget } from './itemTarget';

export function forgetItemCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.forgetItem',
    changesStore: true,
    run: async (arg: unknown, options?: { confirm?: boolean }) => {
      const t = itemTarget(arg);
      if (!t) return;
      if (options?.confirm !== false) {
        const ok = await vscode.window.showWarningMessage(`Forget ${t.label}? It is deleted from the store and its search index.`, { modal: true }, 'Forget');
        if (ok !== 'Forget') return;
      }
      const engine = await c.engines.get();
      // A forget rewrites the files that held it and waits for a compaction under way: seconds, at times.
      const report = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Forgetting ${t.label}…` }, () => engine.forget({ kind: t.kind, ids: t.ids ?? [t.id] }, t.scope));
      await afterForget(c);
      void vscode.window.setStatusBarMessage(`Forgot ${t.label}`, 3000);
      return report;
    },
  };
}
