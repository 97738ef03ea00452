// Set-up for the cross-project probes: two projects on one store, reached through real MCP
// clients over HTTP (in-process servers on a shared engine) and stdio (`code-memory mcp`
// child processes), the CLI as a child process, and a scanner that finds one project's data
// in whatever another project's client got back.

import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { MemoryEngine } from '../../src/core/engine';
import { sqlString } from '../../src/core/store/filters';
import { TABLES } from '../../src/core/store/schema';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { REPO_ROOT } from './mcpFixture';

const TSX = require.resolve('tsx/cjs');
const CLI = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');

export type CallResult = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };

/** One project's MCP client over one transport. */
export interface Side {
  project: string;
  transport: 'http' | 'stdio';
  client: Client;
  call(name: string, args: Record<string, unknown>): Promise<CallResult>;
}

function side(project: string, transport: Side['transport'], client: Client): Side {
  return { project, transport, client, call: async (name, args) => (await client.callTool({ name, arguments: args })) as CallResult };
}

/**
 * An HTTP client. With `sessionId` the SDK resumes that Mcp-Session-Id instead of initialising,
 * as a client does that reconnects with the id it was handed earlier.
 */
export async function httpSide(project: string, server: RunningHttpServer, sessionId?: string): Promise<Side> {
  const client = new Client({ name: `probe-${project}`, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(server.url), { sessionId, requestInit: { headers: { Authorization: `Bearer ${server.token}` } } });
  await client.connect(transport);
  return side(project, 'http', client);
}

export async function stdioSide(project: string, store: string): Promise<Side> {
  const client = new Client({ name: `probe-${project}`, version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['--require', TSX, CLI, 'mcp', '--store', store, '--project', project, '--embedder', 'hashed'],
      cwd: REPO_ROOT,
      env: { ...(process.env as Record<string, string>), LANCEDB_LOG: 'error' },
      stderr: 'pipe',
    }),
  );
  return side(project, 'stdio', client);
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], options: { cwd?: string; env?: Record<string, string>; input?: string } = {}): Promise<CliRun> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), LANCEDB_LOG: 'error', ...options.env };
  if (!options.env?.CODE_MEMORY_PROJECT) delete env.CODE_MEMORY_PROJECT;
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['--require', TSX, CLI, ...args], { cwd: options.cwd ?? REPO_ROOT, env, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(options.input ?? '');
  });
}

export interface Reply {
  status: number;
  body: string;
}

export async function rest(server: RunningHttpServer, route: string, options: { method?: string; body?: unknown; token?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
  const res = await fetch(`${server.baseUrl}${route}`, {
    method: options.method ?? 'GET',
    headers: { Authorization: `Bearer ${options.token ?? server.token}`, 'content-type': 'application/json', ...options.headers },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  return { status: res.status, body: await res.text() };
}

/** A tools/call as a bare POST: no initialize, no Mcp-Session-Id unless given. */
export async function rawToolCall(server: RunningHttpServer, name: string, args: Record<string, unknown>, headers: Record<string, string> = {}): Promise<CallResult> {
  const reply = await rest(server, '/v1/mcp/memory', {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', ...headers },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
  });
  if (reply.status !== 200) throw new Error(`tools/call ${name}: HTTP ${reply.status} ${reply.body}`);
  return (JSON.parse(reply.body) as { result: CallResult }).result;
}

type Kind = 'observation' | 'memory' | 'session_summary';

/**
 * What belongs to one project and must never reach another: its canary words, its prompts,
 * its session ids, node ids and record ids. The record handles are read from the store, so
 * records written since (summaries, merged observations) are covered after `refresh()`.
 */
export class Secrets {
  readonly prompts = new Set<string>();
  readonly sessions = new Set<string>();
  readonly nodeIds = new Set<string>();
  readonly records = new Map<number, Kind>();

  /** @param borrowed session ids of another project that this project's rows may carry. */
  constructor(
    readonly project: string,
    readonly canaries: readonly string[],
    private readonly engine: MemoryEngine,
    private readonly borrowed: ReadonlySet<string> = new Set(),
  ) {}

  async refresh(): Promise<void> {
    const where = `project = ${sqlString(this.project)}`;
    const store = this.engine.store;
    for (const r of await store.rows(TABLES.cells, where, { select: ['node_id', 'source_kind', 'source_id'] })) {
      this.nodeIds.add(String(r.node_id));
      this.records.set(Number(r.source_id), String(r.source_kind) as Kind);
    }
    for (const r of await store.rows(TABLES.observations, where, { select: ['id', 'memory_session_id'] })) {
      this.records.set(Number(r.id), 'observation');
      if (!this.borrowed.has(String(r.memory_session_id))) this.sessions.add(String(r.memory_session_id));
    }
    for (const r of await store.rows(TABLES.memories, where, { select: ['id'] })) this.records.set(Number(r.id), 'memory');
    for (const r of await store.rows(TABLES.sessionSummaries, where, { select: ['id', 'memory_session_id'] })) {
      this.records.set(Number(r.id), 'session_summary');
      if (!this.borrowed.has(String(r.memory_session_id))) this.sessions.add(String(r.memory_session_id));
    }
  }

  ids(kind: Kind): number[] {
    return [...this.records].filter(([, k]) => k === kind).map(([id]) => id);
  }

  /**
   * Every piece of this project found in `response`, except what the caller itself sent
   * (`given`: its own arguments, an id it was handed): an empty list means no leak.
   */
  leaksIn(response: unknown, given: unknown = null): string[] {
    const text = typeof response === 'string' ? response : JSON.stringify(response);
    const lower = text.toLowerCase();
    const sent = (typeof given === 'string' ? given : JSON.stringify(given)).toLowerCase();
    const wasSent = (s: string) => sent.includes(s.toLowerCase());
    const found = new Set<string>();
    for (const c of this.canaries) if (lower.includes(c) && !wasSent(c)) found.add(`canary '${c}'`);
    for (const p of this.prompts) if (text.includes(p) && !wasSent(p)) found.add(`prompt "${p}"`);
    for (const s of this.sessions) if (text.includes(s) && !wasSent(s)) found.add(`session id ${s}`);
    for (const [, id] of lower.matchAll(/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/g)) {
      if (this.nodeIds.has(id) && !wasSent(id)) found.add(`node ${id}`);
    }
    const refs = [
      ...text.matchAll(/\b(?:observation|memory|session_summary)[/ ](\d+)\b/g),
      ...text.matchAll(/\\?"(?:id|source_id|source_observation_id|compressed_observation_id)\\?":(\d+)/g),
    ];
    for (const [ref, id] of refs) {
      const kind = this.records.get(Number(id));
      if (kind && !new RegExp(`\\b${id}\\b`).test(sent)) found.add(`${kind} ${id} (as '${ref}')`);
    }
    return [...found];
  }
}

/** The text an agent reads plus the machine-readable part: everything a leak could hide in. */
export function everything(result: CallResult): string {
  return JSON.stringify({ content: result.content, structuredContent: result.structuredContent ?? null });
}
