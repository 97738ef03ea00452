import * as vscode from 'vscode';
import type { Scope } from '../../core/model/records';
import type { EngineHost } from '../engineHost';
import type { ScopeService } from '../scopes';

/**
 * The memory tools as VS Code language-model tools (contributes.languageModelTools), for chat
 * participants and agent mode without MCP. Same implementations as the MCP server's tools;
 * the tool modules load on the first call, not at activation.
 */
export const LANGUAGE_MODEL_TOOLS: Record<string, string> = {
  codeMemory_retrieve_memory: 'retrieve_memory',
  codeMemory_recall_context: 'recall_context',
  codeMemory_get_observations: 'get_observations',
  codeMemory_recall: 'recall',
  codeMemory_remember: 'remember',
};

/** `stored`: told after a tool wrote to the store (remember), so that the window shows it. */
export function registerLanguageModelTools(engines: EngineHost, scopes: ScopeService, stored: () => void): vscode.Disposable[] {
  const lm = vscode.lm as Partial<typeof vscode.lm> | undefined;
  if (typeof lm?.registerTool !== 'function') return [];
  return Object.entries(LANGUAGE_MODEL_TOOLS).map(([lmName, toolName]) =>
    lm.registerTool!<Record<string, unknown>>(lmName, {
      prepareInvocation: (options) =>
        toolName === 'remember'
          ? {
              invocationMessage: 'Saving a memory',
              confirmationMessages: {
                title: 'Save to Code Memory?',
                // The title is the agent's: shown as text, on one line, so that no markdown in it (an
                // image fetched on display, a link, a paragraph outside the quote) passes for ours.
                message: new vscode.MarkdownString('Keep this as a durable memory of the project:\n\n> ').appendText(String(options.input.title ?? '').replace(/\s+/g, ' ').trim()),
              },
            }
          : { invocationMessage: `Searching Code Memory (${toolName})` },
      invoke: async (options) => {
        const result = await invokeTool(engines, scopes, toolName, options.input);
        if (toolName === 'remember' && !result.isError) stored();
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(result.text)]);
      },
    }),
  );
}

/**
 * `scope`: the project the caller already resolved; else the active editor's, asked for when
 * unclear, once a window (the folder picked is kept until the folders change or another is picked).
 */
export async function invokeTool(
  engines: EngineHost,
  scopes: ScopeService,
  toolName: string,
  input: unknown,
  scope?: Scope,
): Promise<{ text: string; structured?: Record<string, unknown>; isError: boolean }> {
  if (!scope) {
    if (scopes.folders().length === 0) return { text: 'No folder is open, so there is no project memory to search.', isError: true };
    // Asked once a window: the project picked is kept for the calls that follow (ScopeService.resolve).
    scope = (await scopes.resolve(vscode.window.activeTextEditor?.document.uri, 'Code Memory: which project is this about?', { reuse: true }))?.scope;
    if (!scope) return { text: 'No project was chosen, so no project memory was searched.', isError: true };
  }
  const engine = await engines.get();
  return engine.invokeTool(toolName, scope, input, `vscode-lm:${vscode.env.sessionId}`);
}
