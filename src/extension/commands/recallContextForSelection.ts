import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';
import { invokeTool } from '../agents/languageModelTools';
import type { RecallResult } from '../webviews/recallPanel';

const MAX_QUERY_CHARS = 2000;

/** The selection, else the symbol under the cursor, as the query; results in the Recall panel. */
export function recallContextForSelectionCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.recallContextForSelection',
    run: async (options?: { query?: string; show?: boolean }): Promise<RecallResult | undefined> => {
      const editor = vscode.window.activeTextEditor;
      const picked = options?.query ? { query: options.query, origin: 'query' } : editor ? await queryFromEditor(editor) : undefined;
      if (!picked) {
        void vscode.window.showInformationMessage('Select some code (or put the cursor in a function) to recall what memory knows about it.');
        return undefined;
      }
      if (c.scopes.folders().length === 0) {
        void vscode.window.showInformationMessage('Open a folder first: memory is kept per project.');
        return undefined;
      }
      const scope = (await c.scopes.resolve(editor?.document.uri, 'Recall the memory of which project?'))?.scope;
      if (!scope) return undefined;
      const result = await vscode.window.withProgress({ location: { viewId: 'codeMemory.sessions' }, title: 'Recalling…' }, async () => {
        const started = performance.now();
        const engine = await c.engines.get();
        const [hits, pack] = await Promise.all([
          engine.search(picked.query, { scope: { project: scope.project }, limit: 10 }),
          invokeTool(c.engines, c.scopes, 'recall_context', { query: picked.query.slice(0, MAX_QUERY_CHARS), max_items: 8 }, { project: scope.project }).catch(() => undefined),
        ]);
        return {
          query: picked.query,
          origin: picked.origin,
          scope: { project: scope.project },
          hits,
          contextPack: pack && !pack.isError ? pack.text : undefined,
          elapsedMs: Math.round(performance.now() - started),
        } satisfies RecallResult;
      });
      if (options?.show !== false) c.recall.show(result);
      return result;
    },
  };
}

async function queryFromEditor(editor: vscode.TextEditor): Promise<{ query: string; origin: string } | undefined> {
  const doc = editor.document;
  const rel = vscode.workspace.asRelativePath(doc.uri, false);
  const selected = editor.selections.map((s) => doc.getText(s)).join('\n').trim();
  if (selected) return { query: clip(selected), origin: `selection in ${rel}` };
  const symbol = await symbolAt(doc.uri, editor.selection.active);
  if (symbol) {
    const text = doc.getText(symbol.range);
    return { query: clip(`${symbol.name} (${rel})\n${text}`), origin: `symbol ${symbol.name} in ${rel}` };
  }
  const line = doc.lineAt(editor.selection.active.line).text.trim();
  return line ? { query: clip(`${line} (${rel})`), origin: `line ${editor.selection.active.line + 1} of ${rel}` } : undefined;
}

async function symbolAt(uri: vscode.Uri, pos: vscode.Position): Promise<vscode.DocumentSymbol | undefined> {
  let symbols: vscode.DocumentSymbol[] | undefined;
  try {
    symbols = await vscode.commands.executeCommand<vscode.DocumentSymbol[]>('vscode.executeDocumentSymbolProvider', uri);
  } catch {
    return undefined;
  }
  let found: vscode.DocumentSymbol | undefined;
  let level = symbols?.filter((s) => 'children' in s);
  while (level && level.length > 0) {
    const hit = level.find((s) => s.range.contains(pos));
    if (!hit) break;
    found = hit;
    level = hit.children;
  }
  return found;
}

function clip(s: string): string {
  return s.length > MAX_QUERY_CHARS ? s.slice(0, MAX_QUERY_CHARS) : s;
}
