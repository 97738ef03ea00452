import * as vscode from 'vscode';
import { MCP_PATH_FALLBACK } from './constants';
import type { McpServerHost } from './mcpServerHost';

export const MCP_PROVIDER_ID = 'codeMemory.mcpServer';
/** The header of a listed definition that names its project (no secret; the resolved one carries the token instead). */
export const PROJECT_HEADER = 'X-Code-Memory-Project';

/**
 * Registers the memory servers with VS Code (contributes.mcpServerDefinitionProviders), one per
 * project of the window, so agent mode lists their tools with no configuration. provide… must not
 * start anything or prompt; resolve… runs when VS Code starts a server, and that is when it starts.
 */
export function registerMcpDefinitionProvider(host: McpServerHost, version: string): vscode.Disposable | undefined {
  const lm = vscode.lm as Partial<typeof vscode.lm> | undefined;
  if (typeof lm?.registerMcpServerDefinitionProvider !== 'function') return undefined;
  const provider: vscode.McpServerDefinitionProvider<vscode.McpHttpServerDefinition> = {
    onDidChangeMcpServerDefinitions: host.onDidChange,
    provideMcpServerDefinitions: async () =>
      (await host.definitions()).map(
        (d) => new vscode.McpHttpServerDefinition(d.label, vscode.Uri.parse(d.server?.url ?? `http://127.0.0.1:0${MCP_PATH_FALLBACK}`), { [PROJECT_HEADER]: d.project }, version),
      ),
    resolveMcpServerDefinition: async (definition) => {
      // The definition carries the project it was listed for (it may be a copy, handed back after
      // the window changed, and a label may name another project by then): only that project's
      // server starts, for a folder of it still in the window.
      const project = (definition.headers as Record<string, string> | undefined)?.[PROJECT_HEADER];
      const wanted = project === undefined ? undefined : (await host.definitions()).find((d) => d.project === project);
      if (!wanted) throw new Error(`${definition.label}: its folder is no longer in this window.`);
      const server = await host.start(wanted.folder, wanted.project);
      return new vscode.McpHttpServerDefinition(definition.label, vscode.Uri.parse(server.url), { Authorization: `Bearer ${server.token}` }, version);
    },
  };
  return lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, provider);
}
