import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';
import { tooltip } from '../teamStatusBar';
import { readConfig } from '../config';
import { itemTarget } from './itemTarget';
import { queuedReason } from '../../core/team/queuedReason';

/**
 * Share with Team: shows exactly what would leave the machine (the redacted text, files,
 * branch, and the git author it is shared as) and sends it only on confirmation.
 */
export function shareWithTeamCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.shareWithTeam',
    // options.confirm false: no dialog (tests and scripted use, after their own preview).
    run: async (arg: unknown, options?: { confirm?: boolean }) => {
      const t = itemTarget(arg);
      if (!t || t.kind === 'observation') return;
      const engine = await c.engines.get();
      const p = await engine.previewShare(t.kind, t.id, t.scope);
      const detail = [
        `Shared by ${p.shared_by} with everyone who can read ${readConfig().teamStore}.`,
        `Project ${p.project}${p.branch ? `, branch ${p.branch}` : ''}${p.files.length ? `\nFiles: ${p.files.join(', ')}` : ''}`,
        '',
        p.title,
        '',
        p.text,
      ].join('\n');
      if (options?.confirm !== false) {
        const choice = await vscode.window.showInformationMessage(`Share "${p.title}" with your team? This text leaves the machine:`, { modal: true, detail }, 'Share');
        if (choice !== 'Share') return;
      }
      // What leaves is what was shown: a record edited while the dialog was open is not sent.
      const result = await engine.share(t.kind, t.id, t.scope, p);
      void c.teamStatusBar.refresh();
      void vscode.window.showInformationMessage(
        result.delivery === 'sent' ? `Shared "${p.title}" with your team.` : `"${p.title}" is queued: ${queuedReason(result.status)}.`,
      );
      return result;
    },
  };
}

/** Unshare: forgets the item in the team store (purged like Forget); your own record stays. */
export function unshareFromTeamCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.unshareFromTeam',
    run: async (arg: unknown, options?: { confirm?: boolean }) => {
      const t = itemTarget(arg);
      if (!t || t.kind === 'observation') return;
      if (options?.confirm !== false) {
        const choice = await vscode.window.showWarningMessage(`Remove "${t.label}" from the team store? Your own copy stays.`, { modal: true }, 'Unshare');
        if (choice !== 'Unshare') return;
      }
      const engine = await c.engines.get();
      const result = await engine.unshare({ kind: t.kind, id: t.id }, t.scope);
      void c.teamStatusBar.refresh();
      void vscode.window.showInformationMessage(result.delivery === 'sent' ? `Unshared "${t.label}".` : `Unshare of "${t.label}" is queued: ${queuedReason(result.status)}.`);
      return result;
    },
  };
}

export function showTeamStatusCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.showTeamStatus',
    run: async () => {
      const uri = readConfig().teamStore;
      if (!uri) {
        void vscode.window.showInformationMessage('No team store is set (setting codeMemory.teamStore).');
        return;
      }
      const engine = await c.engines.get();
      await engine.syncTeam().catch(() => undefined);
      await c.teamStatusBar.refresh();
      void vscode.window.showInformationMessage(tooltip(uri, c.teamStatusBar.status), { modal: false });
    },
  };
}
