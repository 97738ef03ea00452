// `code-memory mcp` run from the sources as a child process, its stdout kept line by line, so
// that tests can send it any bytes and wait for the answer to an id.

import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from './mcpFixture';

const TSX = require.resolve('tsx/cjs');
const CLI = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');

export interface Child {
  child: ChildProcessWithoutNullStreams;
  lines: string[];
  stderr: () => string;
  write: (data: string | Buffer) => void;
  waitForId: (id: unknown, ms: number) => Promise<Record<string, unknown> | undefined>;
}

/** `code-memory mcp` as a child process, its stdout kept line by line, so that any bytes can be sent. */
export function start(store: string, project = 'stdio-bad-lines'): Child {
  const child = spawn(process.execPath, ['--require', TSX, CLI, 'mcp', '--store', store, '--project', project, '--embedder', 'hashed'], { cwd: REPO_ROOT, env: { ...process.env, LANCEDB_LOG: 'error', RUST_BACKTRACE: '0' } });
  const lines: string[] = [];
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
      lines.push(out.slice(0, nl));
      out = out.slice(nl + 1);
    }
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdin.on('error', () => undefined);
  const parsed = (): Array<Record<string, unknown>> =>
    lines.flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  return {
    child,
    lines,
    stderr: () => err,
    write: (data) => void child.stdin.write(data),
    async waitForId(id, ms) {
      for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 40))) {
        const hit = parsed().find((m) => JSON.stringify(m.id) === JSON.stringify(id));
        if (hit) return hit;
        if (child.exitCode !== null || child.signalCode !== null) return undefined;
      }
      return undefined;
    },
  };
}

/** Sends initialize (id 1) and waits for its answer. */
export async function initialize(c: Child): Promise<void> {
  c.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } })}\n`);
  assert.ok(await c.waitForId(1, 60_000), c.stderr());
}

/** Closes its stdin and waits for it to exit (killed after 8 s). */
export async function stop(c: Child): Promise<void> {
  if (c.child.exitCode !== null || c.child.signalCode !== null) return;
  const exited = new Promise((r) => c.child.once('exit', r));
  c.child.stdin.end();
  const timer = setTimeout(() => c.child.kill('SIGKILL'), 8000);
  await exited;
  clearTimeout(timer);
}

export const call = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
export const line = (message: unknown): string => `${JSON.stringify(message)}\n`;

/** Its exit code, or 'killed' when it had not exited within `ms` (then it is killed). */
export async function exitOf(c: Child, ms: number): Promise<number | null | 'killed'> {
  if (c.child.exitCode !== null) return c.child.exitCode;
  const exited = new Promise<number | null>((resolve) => c.child.once('exit', (code) => resolve(code)));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'killed'>((resolve) => (timer = setTimeout(() => resolve('killed'), ms)));
  const result = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (result === 'killed') c.child.kill('SIGKILL');
  return result;
}
