import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';
import { LANGUAGE_MODEL_TOOLS } from '../agents/languageModelTools';
import type { ServerInfo } from '../webviews/serverInfoPanel';

/** Starts the server if needed and shows where it listens, its token and its tools. */
export function showMcpServerInfoCommand(c: Container, registeredWithVsCode: () => boolean): CommandDefinition {
  return {
    id: 'codeMemory.showMcpServerInfo',
    run: async (options?: { show?: boolean }): Promise<ServerInfo | undefined> => {
      let server;
      try {
        server = await c.mcp.start();
      } catch (err) {
        void vscode.window.showErrorMessage(`The Code Memory MCP server could not start: ${err instanceof Error ? err.message : String(err)}`);
        return undefined;
      }
      const engine = await c.engines.get();
      const info: ServerInfo = {
        url: server.url,
        token: server.token,
        project: server.project,
        storeUri: engine.storeUri,
        registeredWithVsCode: registeredWithVsCode(),
        languageModelTools: Object.keys(LANGUAGE_MODEL_TOOLS),
        tools: await engine.toolList(),
        stats: await engine.stats(null).catch(() => null),
        startedAt: server.startedAt,
        captureState: c.capture.state,
        captured: c.capture.queue.stats.observations,
      };
      if (options?.show !== false) c.serverInfo.show(info);
      return info;
    },
  };
}

export function rotateServerTokenCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.rotateServerToken',
    run: async () => {
      const ok = await vscode.window.showWarningMessage('Make a new server token? Clients outside VS Code that use the old one must be updated.', { modal: true }, 'Rotate');
      if (ok !== 'Rotate') return;
      await c.mcp.rotateToken();
      await vscode.commands.executeCommand('codeMemory.showMcpServerInfo');
    },
  };
}
