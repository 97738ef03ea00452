import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';
import { itemTarget, referenceOf } from './itemTarget';

export function copyReferenceCommand(_c: Container): CommandDefinition {
  return {
    id: 'codeMemory.copyReference',
    run: async (arg: unknown) => {
      const t = itemTarget(arg);
      if (!t) return;
      const ref = referenceOf(t);
      await vscode.env.clipboard.writeText(ref);
      void vscode.window.setStatusBarMessage(`Copied ${ref}`, 3000);
      return ref;
    },
  };
}
