// `mcp` (stdio) and `serve` (loopback HTTP) subcommands.

import { startHttpServer } from '../../mcp/httpServer';
import { runStdioServer } from '../../mcp/stdioServer';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isLocalUri, localPath } from '../../core/store/location';
import type { Command } from '../command';
import { openEngine, resolveScope } from '../context';

/** Where `serve` writes its URL and token: inside a local store folder, else in ~/.code-memory. */
export function serverInfoPath(storeUri: string): string {
  const dir = isLocalUri(storeUri) ? localPath(storeUri) : path.join(os.homedir(), '.code-memory');
  return path.join(dir, 'server.json');
}

export const mcpCommand: Command = {
  name: 'mcp',
  summary: 'Serve the memory tools over MCP stdio (for Claude Code, Cursor, Codex...)',
  usage: 'code-memory mcp [--project <name>] [--store <uri>]',
  details:
    'Speaks MCP on stdin/stdout for one project (from --project, else the current folder\'s git remote or name). Logs go to stderr.\n' +
    'Example agent config: {"command": "code-memory", "args": ["mcp", "--project", "github.com/me/app"]}',
  options: {},
  async run({ options, io }) {
    const scope = await resolveScope(options);
    const engine = await openEngine(options, io, true);
    try {
      await runStdioServer({ engine, scope, log: (m) => io.stderr.write(`${m}\n`) });
    } finally {
      await engine.close();
    }
    return 0;
  },
};

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Serve MCP (Streamable HTTP) and REST on 127.0.0.1 with a bearer token',
  usage: 'code-memory serve [--port <n>] [--token-file <path>] [--project <name>] [--store <uri>]',
  details:
    'Listens on 127.0.0.1 only (a random free port unless --port). Every request needs Authorization: Bearer <token>.\n' +
    'The URL and token are written to a file readable only by you (server.json in the store folder unless --token-file); it is removed on exit.\n' +
    'Routes: POST /v1/mcp/memory (MCP), GET /v1/nodes/{id}, GET /v1/dev/mcp-requests, POST /v1/observations, GET /v1/health.',
  options: {
    port: { type: 'string', description: 'Port to listen on (default: a random free port)', valueName: 'n' },
    'token-file': { type: 'string', description: 'Where to write {url, token} (mode 0600)', valueName: 'path' },
  },
  async run({ options, values, io, signal }) {
    const port = values.port === undefined ? 0 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      io.stderr.write('error: --port must be an integer from 0 to 65535\n');
      return 2;
    }
    const scope = await resolveScope(options);
    const engine = await openEngine(options, io, true);
    let server;
    try {
      server = await startHttpServer({ engine, scope, port, log: (m) => io.stderr.write(`${m}\n`) });
    } catch (error) {
      await engine.close();
      throw error;
    }
    const infoPath = (values['token-file'] as string | undefined) ?? serverInfoPath(options.store);
    mkdirSync(path.dirname(infoPath), { recursive: true });
    const info = { url: server.url, base_url: server.baseUrl, token: server.token, project: scope.project, store: options.store, pid: process.pid, started_at: new Date().toISOString() };
    writeFileSync(infoPath, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
    if (options.json) {
      io.stdout.write(`${JSON.stringify({ url: server.url, base_url: server.baseUrl, port: server.port, project: scope.project, token_file: infoPath })}\n`);
    } else {
      io.stdout.write(`Code Memory MCP server for project '${scope.project}'\n  url:   ${server.url}\n  token: in ${infoPath} (field "token"; send it as Authorization: Bearer <token>)\n  store: ${options.store}\nPress Ctrl+C to stop.\n`);
    }
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await server.close();
    rmSync(infoPath, { force: true });
    await engine.close();
    return 0;
  },
};
