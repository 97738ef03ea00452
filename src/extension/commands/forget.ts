import * as vscode from 'vscode';
import type { ForgetReport, ForgetRequest } from '../../core/api';
import type { CommandDefinition, Container } from '../container';

interface Choice extends vscode.QuickPickItem {
  run: () => Promise<{ request: ForgetRequest; project: string | null; what: string } | undefined>;
}

/** Forget one record (found by search), a whole project, or everything; always confirmed. */
export function forgetCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.forget',
    changesStore: true,
    run: async (): Promise<ForgetReport | undefined> => {
      // The active document's project; with none (an untitled buffer, no editor), every project of the window.
      const active = vscode.window.activeTextEditor?.document.uri;
      const folder = active && c.scopes.folderOf(active);
      const projects = folder ? [(await c.scopes.scopeFor(folder.uri.toString())).project] : [...new Set((await c.scopes.all()).map((a) => a.scope.project))];
      const choices: Choice[] = [
        ...(projects.length > 0
          ? [
              {
                label: '$(search) A record…',
                detail: 'Search, then pick what to forget',
                run: async () => {
                  const project = projects.length === 1 ? projects[0] : (await c.scopes.resolve(undefined, 'Forget a record of which project?'))?.scope.project;
                  if (!project) return undefined;
                  const engine = await c.engines.get();
                  const query = await vscode.window.showInputBox({ title: `Forget: find the record in ${project}`, prompt: 'Words from the record to forget' });
                  if (!query) return undefined;
                  const hits = await engine.search(query, { scope: { project }, limit: 20 });
                  const pick = await vscode.window.showQuickPick(
                    hits.map((h) => ({ label: h.cell.title || '(untitled)', description: `${h.cell.source_kind} #${h.cell.source_id}`, detail: h.cell.text.slice(0, 140), hit: h })),
                    { title: 'Forget which record?' },
                  );
                  if (!pick) return undefined;
                  return { request: { kind: pick.hit.cell.source_kind, ids: [pick.hit.cell.source_id] }, project, what: `“${pick.label}”` };
                },
              },
              ...projects.map((project) => ({
                label: `$(repo) Everything about ${project}`,
                detail: 'Every observation, session summary and memory of this project',
                run: async () => ({ request: { project }, project, what: `everything about ${project}` }),
              })),
            ]
          : []),
        {
          label: '$(trash) Everything in the store',
          detail: c.engines.storeUri,
          run: async () => ({ request: { all: true }, project: null, what: 'everything in the store (all projects)' }),
        },
      ];
      const choice = await vscode.window.showQuickPick(choices, { title: 'Forget…' });
      const plan = await choice?.run();
      if (!plan) return undefined;
      const ok = await vscode.window.showWarningMessage(`Forget ${plan.what}? This deletes it from the store, its search index and old versions on disk.`, { modal: true }, 'Forget');
      if (ok !== 'Forget') return undefined;
      const engine = await c.engines.get();
      const report = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Forgetting ${plan.what}…` }, () =>
        engine.forget(plan.request, plan.project ? { project: plan.project } : null),
      );
      await afterForget(c);
      void vscode.window.showInformationMessage(
        `Forgot ${report.observations} observations, ${report.session_summaries} session summaries and ${report.memories} memories.`,
      );
      return report;
    },
  };
}

/** The captured log without what went (the registrar refreshes the views and panels: storeChanged). */
export async function afterForget(c: Container): Promise<void> {
  const engine = await c.engines.get();
  await c.captured.prune(async (project, ids) => new Set((await engine.getObservations(ids, { project }, { includeSuppressed: true })).map((o) => o.id)));
}
