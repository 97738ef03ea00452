// The one place that starts git, for every part of the product (import-git, capture, freshness,
// project names, the sidebar, doctor). A repository is text someone else may have written: its
// .git/config, info/attributes and .gitattributes can name commands (core.fsmonitor, a diff or
// filter driver, gpg.program with log.showSignature, a promisor remote reached over ext:: or
// ssh with core.sshCommand), and the environment this process was started in can name another
// repository (a git hook's GIT_DIR) or commands (GIT_EXTERNAL_DIFF). Every git child is started
// here, with settings that keep git from running any of them (each command the product runs only
// reads), in an environment without them, and as the git found in PATH's absolute folders alone:
// never a `git` in the repository's folder or the current one (Windows looks in the folder a
// program is started in first, and a relative PATH entry names it), the repository given by -C.

import { spawn } from 'node:child_process';
import type { ChildProcessByStdio } from 'node:child_process';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Readable, Writable } from 'node:stream';

export class GitImportError extends Error {}

/** git itself could not be run (not installed, not on PATH): no fault of the repository named. */
export class GitUnavailableError extends GitImportError {}

/**
 * Transports git may reach by itself: a partial clone fetches a missing object from its promisor
 * remote, whose URL the repository chooses (`ext::<command>`, ssh with core.sshCommand, a local
 * path with remote.<name>.uploadpack). The product never fetches, so none is allowed. Each is
 * named, as the repository's own protocol.<name>.allow would outrank protocol.allow.
 */
const TRANSPORTS = ['ext', 'fd', 'file', 'git', 'ssh', 'http', 'https', 'ftp', 'ftps'];

/**
 * Config given on the command line, which outranks every config file (the repository's, and what
 * it includes): no file-system monitor command, no hooks, no signature check (it runs
 * gpg.program), no transport.
 */
const FIXED_CONFIG = [
  'core.fsmonitor=false',
  `core.hooksPath=${os.devNull}`,
  'log.showSignature=false',
  'protocol.allow=never',
  ...TRANSPORTS.map((t) => `protocol.${t}.allow=never`),
].flatMap((setting) => ['-c', setting]);

/**
 * Options for the subcommands that can print a diff: no external diff (diff.external, a diff
 * driver's command, GIT_EXTERNAL_DIFF) and no textconv driver, which config cannot turn off for
 * every driver name an attributes file may use.
 */
const DIFF_COMMANDS = new Set(['diff', 'log', 'show']);
const DIFF_OPTIONS = ['--no-ext-diff', '--no-textconv', '--no-color'];

/**
 * What git may keep of this process's environment: where the user's own config is, and where
 * discovery stops. Every other GIT_* variable either names a repository (GIT_DIR, GIT_WORK_TREE,
 * GIT_INDEX_FILE, ...: a git hook's, which would make every child read that repository instead of
 * the one named with -C), adds config (GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT) or names a
 * command (GIT_EXTERNAL_DIFF, GIT_PAGER, GIT_SSH_COMMAND, GIT_ASKPASS, GIT_EDITOR).
 */
const KEPT_GIT_ENV = new Set(['GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM', 'GIT_CONFIG_NOSYSTEM', 'GIT_CEILING_DIRECTORIES', 'GIT_DISCOVERY_ACROSS_FILESYSTEM', 'GIT_EXEC_PATH']);

/** The environment of a git child: this process's, without the GIT_* variables KEPT_GIT_ENV leaves out. */
export function gitEnv(parent: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(parent)) if (!/^GIT_/i.test(name) || KEPT_GIT_ENV.has(name.toUpperCase())) env[name] = value;
  // Never wait on a prompt nobody sees; a git new enough to know it fetches no missing object.
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_NO_LAZY_FETCH = '1';
  return env;
}

/**
 * The arguments of git for `args` run in the repository at `dir` (null: in none, `git --version`):
 * the fixed settings first, then -C, then `args`, with DIFF_OPTIONS after a diff command's name.
 * `args` may start with options of git's own (`-c name=value`, `--literal-pathspecs`).
 */
export function gitArgs(dir: string | null, args: readonly string[]): string[] {
  let at = 0;
  while (at < args.length && args[at].startsWith('-')) at += args[at] === '-c' ? 2 : 1;
  const command = args.slice(at, at + 1);
  const extra = command.length > 0 && DIFF_COMMANDS.has(command[0]) ? DIFF_OPTIONS : [];
  return ['--no-pager', ...FIXED_CONFIG, ...(dir === null ? [] : ['-C', dir]), ...args.slice(0, at), ...command, ...extra, ...args.slice(at + 1)];
}

/**
 * The git program: the first in PATH's absolute folders (a relative one, `.` or empty, names
 * whatever folder git is started from). Throws GitUnavailableError where there is none.
 */
export function gitProgram(env: NodeJS.ProcessEnv = process.env): string {
  const name = process.platform === 'win32' ? 'git.exe' : 'git';
  const pathValue = Object.entries(env).find(([k]) => k.toUpperCase() === 'PATH')?.[1] ?? '';
  for (const dir of pathValue.split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const file = path.join(dir, name);
    try {
      if (statSync(file).isFile()) {
        accessSync(file, constants.X_OK);
        return file;
      }
    } catch {
      // not there, or not a program: the next folder
    }
  }
  throw unavailable(new Error('no git program in the folders of PATH'));
}

/** A git child for `args` in `dir`, its output as streams; `input` says whether it reads stdin. Throws GitUnavailableError without git. */
export function spawnGit(dir: string | null, args: readonly string[], input: 'pipe' | 'ignore' = 'ignore'): ChildProcessByStdio<Writable | null, Readable, Readable> {
  return spawn(gitProgram(), gitArgs(dir, args), { stdio: [input, 'pipe', 'pipe'], env: gitEnv(), windowsHide: true }) as ChildProcessByStdio<Writable | null, Readable, Readable>;
}

export interface GitResult {
  /** Exit code; null when git was stopped (timeout). */
  code: number | null;
  out: string;
  err: string;
}

/** The error of a git child that could not start: git missing from PATH. */
export function unavailable(e: Error): GitUnavailableError {
  return new GitUnavailableError(`Could not run git: ${e.message}. Install git and make sure it is on PATH.`);
}

/**
 * Runs git to the end: its exit code and output. Rejects only where git could not be run at all
 * (GitUnavailableError); a timeout stops it (code null).
 */
export function execGit(dir: string | null, args: readonly string[], options: { input?: string; timeoutMs?: number } = {}): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(dir, args, options.input === undefined ? 'ignore' : 'pipe');
    let out = '';
    let err = '';
    const timer = options.timeoutMs ? setTimeout(() => child.kill(), options.timeoutMs) : undefined;
    timer?.unref?.();
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(unavailable(e));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
    if (child.stdin) {
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input);
    }
  });
}

/** git's output, trimmed, where it ran and exited 0 (in 5 s); null otherwise, git missing included: a question that may go unanswered. */
export async function gitOutput(dir: string | null, args: readonly string[]): Promise<string | null> {
  const r = await execGit(dir, args, { timeoutMs: 5000 }).catch(() => null);
  return r?.code === 0 ? r.out.trim() : null;
}

/**
 * What a failed git command said, and what to do where it needs an object a partial clone does
 * not hold: git would fetch it from the promisor remote, which no git run here may do.
 */
export function gitFailure(stderr: string, what: string): GitImportError {
  const said = stderr.trim() || what;
  return new GitImportError(/promisor remote/.test(said) ? `${said}\nThis is a partial clone, and Code Memory never fetches what it lacks: fetch the missing objects with git first.` : said);
}

/** Runs git in the repository at `dir`: its output, or a GitImportError that says why not. */
export async function runGit(dir: string, args: readonly string[], options: { input?: string; timeoutMs?: number } = {}): Promise<string> {
  const r = await execGit(dir, args, options);
  if (r.code === 0) return r.out;
  if (!existsSync(dir)) throw new GitImportError(`Folder not found: ${dir}. It was moved or deleted.`);
  throw gitFailure(r.err, r.code === null ? 'git was stopped' : `git exited with ${r.code}`);
}

/** A filter driver's name as `-c filter.<name>.clean=` can say it (a `=` or space would end it). */
const PLAIN_DRIVER = /^[\w.-]+$/;

/**
 * Blob ids of work-tree files (paths relative to `dir`) as git would store them, line endings
 * converted as the repository says, with no filter driver run: each driver the attributes name
 * for these paths (`filter=<name>`, its clean command in the repository's config) is given no
 * command. Null where git cannot say, or a driver's name cannot be given on the command line.
 */
export async function hashFiles(dir: string, paths: readonly string[]): Promise<string[] | null> {
  if (paths.length === 0) return [];
  try {
    // -z: path, attribute, value, each ended by NUL.
    const attributes = (await runGit(dir, ['check-attr', '-z', 'filter', '--', ...paths])).split('\0');
    const drivers = new Set<string>();
    for (let i = 2; i < attributes.length; i += 3) if (!['unspecified', 'unset', 'set', ''].includes(attributes[i])) drivers.add(attributes[i]);
    if ([...drivers].some((d) => !PLAIN_DRIVER.test(d))) return null;
    const noDriver = [...drivers].flatMap((d) => ['clean=', 'smudge=', 'process=', 'required=false'].flatMap((s) => ['-c', `filter.${d}.${s}`]));
    const ids = (await runGit(dir, [...noDriver, 'hash-object', '--', ...paths])).split('\n').map((x) => x.trim()).filter(Boolean);
    return ids.length === paths.length ? ids : null;
  } catch {
    return null;
  }
}
