// MCP over stdio for agents outside VS Code (Claude Code, Cursor, Codex...). One process
// serves one scope; stdout carries only protocol messages, so logs go to stderr.

import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { MemoryEngineApi } from '../core/api';
import type { Scope } from '../core/model/records';
import { createMcpServer } from './mcpServer';

export interface StdioServerOptions {
  engine: MemoryEngineApi;
  scope: Scope;
  retrieveTimeoutMs?: number;
  log?: (message: string) => void;
}

/** Serves until stdin closes; resolves then. */
export async function runStdioServer(options: StdioServerOptions): Promise<void> {
  // A stdio connection is one agent session: its id stands in for Mcp-Session-Id.
  const connectionId = `stdio:${randomUUID()}`;
  const server = createMcpServer({
    context: (transportSessionId) => ({
      engine: options.engine,
      scope: options.scope,
      transportSessionId: transportSessionId ?? connectionId,
      retrieveTimeoutMs: options.retrieveTimeoutMs,
      log: options.log,
    }),
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
    process.stdin.once('close', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
