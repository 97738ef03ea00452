import * as vscode from 'vscode';
import { MCP_PATH_FALLBACK, SERVER_LABEL } from './constants';
import type { McpServerHost } from './mcpServerHost';

export const MCP_PROVIDER_ID = 'codeMemory.mcpServer';

/**
 * Registers the memory server with VS Code (contributes.mcpServerDefinitionProviders), so agent
 * mode lists its tools with no configuration. provide… must not start anything or prompt;
 * resolve… runs when VS Code starts the server, and that is when it starts.
 */
export function registerMcpDefinitionProvider(host: McpServerHost, version: string): vscode.Disposable | undefined {
  const lm = vscode.lm as Partial<typeof vscode.lm> | undefined;
  if (typeof lm?.registerMcpServerDefinitionProvider !== 'function') return undefined;
  const provider: vscode.McpServerDefinitionProvider<vscode.McpHttpServerDefinition> = {
    onDidChangeMcpServerDefinitions: host.onDidChange,
    provideMcpServerDefinitions: () => {
      const url = host.server?.url ?? `http://127.0.0.1:0${MCP_PATH_FALLBACK}`;
      return [new vscode.McpHttpServerDefinition(SERVER_LABEL, vscode.Uri.parse(url), {}, version)];
    },
    resolveMcpServerDefinition: async (definition) => {
      const server = await host.start();
      return new vscode.McpHttpServerDefinition(definition.label, vscode.Uri.parse(server.url), { Authorization: `Bearer ${server.token}` }, version);
    },
  };
  return lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, provider);
}
