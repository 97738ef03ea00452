import * as vscode from 'vscode';
import type { EndedSession } from '../capture/sessionTracker';
import type { CommandDefinition, Container } from '../container';

export function endSessionCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.endSession',
    changesStore: true,
    run: async (options?: { quiet?: boolean }): Promise<EndedSession[]> => {
      const ended = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: 'Code Memory: summarising the session' },
        () => c.sessions.end(undefined, 'request'),
      );
      if (options?.quiet) return ended;
      const withSummary = ended.filter((e) => e.summary);
      if (ended.length === 0) {
        void vscode.window.showInformationMessage('Nothing was captured since the last session ended.');
      } else {
        const first = withSummary[0];
        void vscode.window
          .showInformationMessage(
            `Session ended${withSummary.length ? ' and summarised' : ''}${first?.summary?.completed ? `: ${first.summary.completed.split('\n')[0].slice(0, 120)}` : '.'}`,
            ...(first?.summary ? ['Show Summary'] : []),
          )
          .then((a) => {
            if (a && first?.summary) void c.details.show({ kind: 'summary', scope: { project: first.project }, id: first.summary.id });
          });
      }
      return ended;
    },
  };
}
