// The built CLI's servers as an agent runs them, for the benches that measure them from outside:
// `code-memory mcp` over stdio and `code-memory serve` over HTTP, with a real MCP client, their
// RSS from /proc, and a timed tool call.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SharedModelEmbedder } from '../src/core/embed/sharedModel/client';
import { hostFolder } from '../src/core/embed/sharedModel/protocol';

export interface Server {
  client: Client;
  pid: number;
  close(): Promise<void>;
}

/** How a server is started: node's own arguments, the CLI's, the environment, where stderr goes. */
export interface ServerLaunch {
  nodeArgs: string[];
  cli: string;
  args: string[];
  env: Record<string, string>;
  stderr: 'ignore' | number;
}

export async function startStdio(launch: ServerLaunch): Promise<Server> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [...launch.nodeArgs, launch.cli, 'mcp', ...launch.args], env: launch.env, stderr: launch.stderr });
  const client = new Client({ name: 'bench-servers', version: '1.0.0' });
  await client.connect(transport);
  return { client, pid: transport.pid ?? -1, close: () => client.close() };
}

export async function startHttp(launch: ServerLaunch): Promise<Server> {
  const tokenFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'code-memory-bench-token-')), 'server.json');
  const child = spawn(process.execPath, [...launch.nodeArgs, launch.cli, 'serve', ...launch.args, '--token-file', tokenFile, '--json'], { stdio: ['ignore', 'pipe', launch.stderr], env: launch.env });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Piped above (the stderr setting makes its type the general one, where stdout may be null).
  const stdout = child.stdout!;
  await new Promise<void>((resolve, reject) => {
    let out = '';
    stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`code-memory serve exited (${code}) before listening`)));
  });
  const info = JSON.parse(readFileSync(tokenFile, 'utf8')) as { url: string; token: string };
  const client = await connectHttp(info.url, info.token);
  return {
    client,
    pid: child.pid ?? -1,
    close: async () => {
      await client.close();
      child.kill('SIGTERM');
      await exited;
      rmSync(path.dirname(tokenFile), { recursive: true, force: true });
    },
  };
}

/**
 * The SDK's HTTP client hands one AbortSignal to every fetch of a connection, and undici adds an
 * abort listener to it per request that only garbage collection takes off again: a bench making
 * tens of thousands of calls floods stderr with MaxListenersExceededWarning. Each request gets a
 * signal of its own here, tied to the connection's while the request runs.
 */
const fetchWithOwnSignal: typeof fetch = (input, init) => {
  const connection = init?.signal;
  const own = new AbortController();
  const abort = (): void => own.abort(connection?.reason);
  connection?.addEventListener('abort', abort, { once: true });
  return fetch(input, { ...init, signal: own.signal }).finally(() => connection?.removeEventListener('abort', abort));
};

/** A real MCP client on a Streamable HTTP endpoint that wants a bearer token. */
export async function connectHttp(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'bench-servers', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: fetchWithOwnSignal, requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return Math.round(kb / 1024);
}

/** One tool call's time in ms; a tool error fails the bench. */
export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<number> {
  const t = performance.now();
  const result = await client.callTool({ name, arguments: args });
  const ms = performance.now() - t;
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content).slice(0, 300)}`);
  return ms;
}

/**
 * A folder for the shared model host of one bench run (XDG_RUNTIME_DIR of its servers), so that
 * the run starts its own host and no user's host is measured; `pid()` finds that host, if any.
 */
export function benchModelHost(): { base: string; pid(): Promise<number | null>; stop(): Promise<void> } {
  const base = mkdtempSync(path.join(os.tmpdir(), 'code-memory-bench-model-'));
  const pid = async (): Promise<number | null> => {
    const folder = hostFolder(base);
    if (!readdirSync(folder).some((f) => f.endsWith('.sock'))) return null;
    const probe = await SharedModelEmbedder.connect({ provider: 'use-lite' }, { folder }).catch(() => null);
    await probe?.close();
    return probe?.hostPid ?? null;
  };
  return {
    base,
    pid,
    stop: async () => {
      const p = await pid();
      if (p) process.kill(p, 'SIGTERM');
    },
  };
}
