// `mcp` (stdio) and `serve` (loopback HTTP) subcommands.

import { startHttpServer } from '../../mcp/httpServer';
import { runStdioServer } from '../../mcp/stdioServer';
import { mkdirSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writePrivateFile } from '../../core/privateFiles';
import { isLocalUri, localPath } from '../../core/store/location';
import type { CommandImpl } from '../command';
import { openEngine, resolveScope } from '../context';
import { portOption } from '../options';

/** Where `serve` writes its URL and token: inside a local store folder, else in ~/.code-memory. */
export function serverInfoPath(storeUri: string): string {
  const dir = isLocalUri(storeUri) ? localPath(storeUri) : path.join(os.homedir(), '.code-memory');
  return path.join(dir, 'server.json');
}

export const mcpCommand: CommandImpl = {
  name: 'mcp',
  async run({ options, io, signal }) {
    const scope = await resolveScope(options);
    const engine = await openEngine(options, io, true, scope);
    try {
      await runStdioServer({ engine, scope, signal, log: (m) => io.stderr.write(`${m}\n`) });
    } finally {
      await engine.close();
    }
    return 0;
  },
};

export const serveCommand: CommandImpl = {
  name: 'serve',
  async run({ options, values, io, signal }) {
    const port = portOption(values);
    const scope = await resolveScope(options);
    const engine = await openEngine(options, io, true, scope);
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
    writePrivateFile(infoPath, `${JSON.stringify(info, null, 2)}\n`);
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
