// `mcp` (stdio) and `serve` (loopback HTTP) subcommands.

import { startHttpServer } from '../../mcp/httpServer';
import { runStdioServer } from '../../mcp/stdioServer';
import { lstatSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writePrivateFile } from '../../core/privateFiles';
import { isLocalUri, localPath } from '../../core/store/location';
import { processCommandLine, processStarted, processStartedAt, processState } from '../../core/store/processRef';
import type { CommandImpl } from '../command';
import { openEngine, resolveScope } from '../context';
import { UsageError, portOption } from '../options';
import { readerMayLeave } from '../output';

/** Where `serve` writes its URL and token: inside a local store folder, else in ~/.code-memory. */
export function serverInfoPath(storeUri: string): string {
  const dir = isLocalUri(storeUri) ? localPath(storeUri) : path.join(os.homedir(), '.code-memory');
  return path.join(dir, 'server.json');
}

interface ServerInfo {
  pid?: number;
  /**
   * When the server's process started, as processRef records it (Linux: `<boot id>/<ticks>`):
   * with it, a pid that a crashed server left and an unrelated process got since is told from
   * the server's. Absent in a file of an older build, or where it cannot be read.
   */
  process_started?: string;
  project?: string;
  token?: string;
}

/** This process as a token file names it: its pid, and when it started where that can be read. */
function thisServer(): { pid: number; process_started?: string } {
  const started = processStarted(process.pid);
  return { pid: process.pid, ...(started ? { process_started: started } : {}) };
}

/** When a file was last written, in ms since the epoch; infinity when it cannot be read (no process is known to have started after it). */
function writtenAt(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function readServerInfo(file: string): ServerInfo | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ServerInfo;
  } catch {
    return null;
  }
}

/** Slack between a process's start as /proc gives it (to the boot time's second) and a file's time. */
const START_SLACK_MS = 2000;

/**
 * The server a token file names, if its process still runs (a file a crash left is taken over).
 * A file that says when its process started names that process only: its pid, now another's (a
 * crash, a reboot, pids handed out again), is no server's. A file without it (of an older build)
 * names no process that started after the file was written and is no server, which its server
 * did not.
 */
function runningServerIn(file: string): ServerInfo | null {
  const info = readServerInfo(file);
  if (!info || !Number.isInteger(info.pid) || info.pid === process.pid) return null;
  // The file is in the store's folder, or in this user's home: its server ran on this host.
  if (typeof info.process_started === 'string') return processState({ pid: info.pid!, host: os.hostname(), started: info.process_started }) === 'running' ? info : null;
  // A clock set back since the file was written would make its server look newer than the file:
  // a process whose command line is a server's ('serve') is taken for it whatever the times say.
  const startedAt = processStartedAt(info.pid!);
  if (startedAt !== undefined && startedAt > writtenAt(file) + START_SLACK_MS && !/\bserve\b/.test(processCommandLine(info.pid!) ?? 'serve')) return null;
  try {
    process.kill(info.pid!, 0);
    return info;
  } catch (error) {
    // EPERM: a process of another user holds that pid, so it runs.
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? info : null;
  }
}

/**
 * Removes the token file a server of `project` (null: any) left in the store when it died (kill -9,
 * a crash): it names the project and holds a token that no server answers to any more. A forget of
 * the whole project (or of everything) leaves no file naming it. Never a running server's, nor
 * anything at the path that `serve` did not write.
 */
export function removeDeadServerInfo(storeUri: string, project: string | null): boolean {
  const file = serverInfoPath(storeUri);
  if (tokenFileAt(file) !== 'server' || runningServerIn(file)) return false;
  const info = readServerInfo(file);
  if (project !== null && info?.project !== project) return false;
  rmSync(file, { force: true });
  return true;
}

/** Larger than any file `serve` writes: a file this big is not one, and is not read whole to find out. */
const MAX_TOKEN_FILE_BYTES = 64 * 1024;

/** The fields of the files `serve` writes: its claim while starting, then its URL and token. */
const SERVER_FIELDS = new Set(['url', 'base_url', 'token', 'project', 'store', 'pid', 'process_started', 'started_at', 'starting']);

/**
 * What is at a token file's path: nothing ('absent'); a file `serve` writes, which a crashed
 * server may have left ('server': a regular file holding a JSON object of no fields but those,
 * `{}` too, or nothing); or else why it is none, which is never moved, replaced or written
 * through (a user's notes or settings, a folder, a symlink).
 */
export function tokenFileAt(file: string): 'absent' | 'server' | { not: string } {
  let st;
  try {
    st = lstatSync(file);
  } catch (error) {
    // A folder on the way that is missing (made below) or no folder (refused when made).
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'absent';
    throw error;
  }
  if (st.isDirectory()) return { not: 'a folder' };
  if (st.isSymbolicLink()) return { not: 'a symbolic link' };
  if (!st.isFile()) return { not: 'no regular file' };
  if (st.size === 0) return 'server';
  if (st.size > MAX_TOKEN_FILE_BYTES) return { not: "a file that is no server's token file" };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw error;
  }
  if (!text.trim()) return 'server';
  let info: unknown;
  try {
    info = JSON.parse(text);
  } catch {
    return { not: "a file that is no server's token file" };
  }
  const isServer = info !== null && typeof info === 'object' && !Array.isArray(info) && Object.keys(info).every((key) => SERVER_FIELDS.has(key));
  return isServer ? 'server' : { not: "a file that is no server's token file" };
}

/**
 * Claims the token file for this process before the engine opens, with a create that fails when
 * the file exists (a hard link of a private temporary file): of two servers started together on
 * one store, one claims the file and the other is refused. Checking for a running server first
 * and writing the file once listening let both run, the file naming whichever wrote last. A file
 * whose process has ended (a crash) is moved aside and the claim tried again; only one contender
 * wins that rename. Anything else at the path (a file `serve` did not write, a folder) is refused
 * and left as it is.
 */
function claimServerInfo(file: string, project: string): void {
  const notOurs = (what: string): UsageError => new UsageError(`${file} is ${what}; serve leaves it as it is: give --token-file a path of its own`);
  const before = tokenFileAt(file);
  if (typeof before === 'object') throw notOurs(before.not);
  // Folders it creates are private too (the store folder's mode).
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const refuse = (other: ServerInfo): UsageError =>
    new UsageError(`${file} names another running server (pid ${other.pid}, project '${other.project}'); give this one a file of its own with --token-file`);
  for (let attempt = 0; attempt < 5; attempt++) {
    const tmp = `${file}.${process.pid}.claim`;
    writePrivateFile(tmp, `${JSON.stringify({ project, ...thisServer(), starting: true })}\n`);
    try {
      linkSync(tmp, file);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      rmSync(tmp, { force: true });
    }
    const found = tokenFileAt(file);
    if (found === 'absent') continue;
    if (typeof found === 'object') throw notOurs(found.not);
    const other = runningServerIn(file);
    if (other) throw refuse(other);
    const aside = `${file}.${process.pid}.stale`;
    try {
      renameSync(file, aside);
    } catch {
      continue;
    }
    // Between the look and the rename another server may have claimed the file, or something
    // else been put there: put it back.
    const moved = tokenFileAt(aside);
    const running = moved === 'server' ? runningServerIn(aside) : null;
    if (typeof moved === 'object' || running) {
      putBack(aside, file, typeof moved !== 'object');
      throw typeof moved === 'object' ? notOurs(moved.not) : refuse(running!);
    }
    rmSync(aside, { force: true });
  }
  throw new UsageError(`${file} could not be claimed (servers starting and ending on it); try again, or give this server a file of its own with --token-file`);
}

/**
 * Moves what was moved aside back to its path, never over what is there now. A server's claim
 * that cannot go back is dropped (its server is refused by the file's new owner anyway); anything
 * else stays aside, and the error says where.
 */
function putBack(aside: string, file: string, isServers: boolean): void {
  try {
    // A folder cannot be hard-linked: renamed, which fails onto a file and replaces only an empty folder.
    if (lstatSync(aside).isDirectory()) renameSync(aside, file);
    else linkSync(aside, file);
  } catch {
    if (!isServers) throw new UsageError(`${file} was replaced while serve started; what was there is now ${aside}`);
  }
  rmSync(aside, { force: true });
}

export const mcpCommand: CommandImpl = {
  name: 'mcp',
  async run({ options, io, signal }) {
    const scope = await resolveScope(options);
    const engine = await openEngine(options, io, true, scope);
    try {
      // A client that leaves (closing its end of stdout) is normal: no failure, exit 0.
      readerMayLeave(process.stdout);
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
    const given = values['token-file'] as string | undefined;
    if (given !== undefined && !given.trim()) throw new UsageError('--token-file needs a path, not an empty string');
    const infoPath = given ?? serverInfoPath(options.store);
    const scope = await resolveScope(options);
    claimServerInfo(infoPath, scope.project);
    let engine;
    let server;
    try {
      engine = await openEngine(options, io, true, scope);
      server = await startHttpServer({ engine, scope, port, log: (m) => io.stderr.write(`${m}\n`) });
    } catch (error) {
      await engine?.close();
      // The claim goes with this server, unless another took the file over meanwhile.
      if (readServerInfo(infoPath)?.pid === process.pid) rmSync(infoPath, { force: true });
      throw error;
    }
    const info = { url: server.url, base_url: server.baseUrl, token: server.token, project: scope.project, store: options.store, ...thisServer(), started_at: new Date().toISOString() };
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
    // Only this server's own file: another may have taken the path since (after a restart of this one).
    if (readServerInfo(infoPath)?.token === server.token) rmSync(infoPath, { force: true });
    await engine.close();
    return 0;
  },
};
