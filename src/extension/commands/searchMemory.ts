import * as vscode from 'vscode';
import type { SearchHit } from '../../core/api';
import { matches } from '../../core/model/limits';
import type { CommandDefinition, Container } from '../container';
import { memoryIcon, observationIcon } from '../views/nodes';

interface HitItem extends vscode.QuickPickItem {
  hit: SearchHit;
}

/** A quick pick whose results follow the typing; accepting one opens its details. */
export function searchMemoryCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.searchMemory',
    run: async () => {
      if (c.scopes.folders().length === 0) {
        void vscode.window.showInformationMessage('Open a folder first: memory is kept per project.');
        return;
      }
      // The active file's project; in a window of several projects with none, the user picks one.
      const scope = (await c.scopes.resolve(vscode.window.activeTextEditor?.document.uri, 'Search the memory of which project?'))?.scope;
      if (!scope) return;
      const qp = vscode.window.createQuickPick<HitItem>();
      qp.title = `Search Memory · ${scope.project}`;
      qp.placeholder = 'Type what you want to remember (e.g. "why did we pick LanceDB")';
      qp.matchOnDescription = true;
      qp.matchOnDetail = true;
      let timer: NodeJS.Timeout | undefined;
      let generation = 0;
      const search = async (text: string): Promise<void> => {
        const mine = ++generation;
        if (!text.trim()) {
          qp.items = [];
          qp.busy = false;
          return;
        }
        qp.busy = true;
        try {
          const engine = await c.engines.get();
          const hits = matches(await engine.search(text, { scope: { project: scope.project }, limit: 20 }));
          if (mine !== generation) return;
          qp.items = hits.map((hit) => ({
            hit,
            label: `$(${hit.cell.layer === 'L2' ? memoryIcon(hit.cell.type) : observationIcon(hit.cell.type)}) ${hit.cell.title || '(untitled)'}`,
            description: `${hit.cell.type} · ${new Date(hit.cell.created_at_epoch).toLocaleDateString()}${hit.cell.branch ? ` · ${hit.cell.branch}` : ''}`,
            detail: hit.cell.text.replace(/\s+/g, ' ').slice(0, 160),
            alwaysShow: true,
          }));
        } catch (err) {
          qp.items = [];
          void vscode.window.showErrorMessage(`Search failed: ${err instanceof Error ? err.message : String(err)}`);
        } finally {
          if (mine === generation) qp.busy = false;
        }
      };
      qp.onDidChangeValue((v) => {
        if (timer) clearTimeout(timer);
        timer = setTimeout(() => void search(v), 180);
      });
      qp.onDidAccept(() => {
        const item = qp.selectedItems[0];
        qp.hide();
        if (item) void c.details.show({ kind: 'node', scope: { project: scope.project }, nodeId: item.hit.cell.node_id });
      });
      qp.onDidHide(() => {
        if (timer) clearTimeout(timer);
        qp.dispose();
      });
      qp.show();
    },
  };
}
