// Running git for the imports: one child process per command, its output as text, and an error
// that says what to do when git is missing or the command fails. Also what every command that
// reads repository text needs so that the text cannot pass for anything else: separators it
// cannot contain, object ids checked before they become arguments, and settings that keep user
// or repository config from changing the output parsed.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export class GitImportError extends Error {}

/** git itself could not be run (not installed, not on PATH): no fault of the repository named. */
export class GitUnavailableError extends GitImportError {}

/**
 * What git reads from the environment to find a repository, its index and objects (`git rev-parse
 * --local-env-vars`, less the config ones, which name no repository). Set in the caller (a git hook,
 * `git --git-dir`, a tool run inside another repository), they would make every git child read that
 * repository instead of the one named with -C: its commits stored under this one's project.
 */
const REPOSITORY_ENV = [
  'GIT_DIR', 'GIT_WORK_TREE', 'GIT_IMPLICIT_WORK_TREE', 'GIT_COMMON_DIR', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_GRAFT_FILE', 'GIT_SHALLOW_FILE', 'GIT_NO_REPLACE_OBJECTS', 'GIT_REPLACE_REF_BASE',
  'GIT_PREFIX', 'GIT_INTERNAL_SUPER_PREFIX',
];

/** The environment of a git child that reads the repository named by its -C: this process's, without REPOSITORY_ENV. */
export function gitEnv(parent: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env = { ...parent };
  for (const name of REPOSITORY_ENV) delete env[name];
  return env;
}

/**
 * Revisions for a command that also takes paths (log, rev-list): after --end-of-options, so that
 * none is read as an option, and before `--`, so that none is taken for a file name either (a file
 * named HEAD or main in the work tree makes git refuse that revision as ambiguous).
 */
export function revisionArgs(...revs: string[]): string[] {
  return ['--end-of-options', ...revs, '--'];
}

/** A full object id: SHA-1, or SHA-256 in a repository that uses it. */
export function isObjectId(s: string): boolean {
  return /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(s);
}

/** Boundaries of the records, fields and commit headers in a `--format` output. */
export interface FormatSeparators {
  record: string;
  field: string;
  endOfHeader: string;
}

/**
 * Separators for one run's `--format` output. Commit messages and file contents can hold any
 * control character, so each is marked with a random nonce the repository cannot know.
 */
export function formatSeparators(): FormatSeparators {
  const nonce = randomBytes(12).toString('hex');
  return { record: `\x1e${nonce}\x1e`, field: `\x1f${nonce}\x1f`, endOfHeader: `\x1d${nonce}\x1d` };
}

/** Settings for `git log` and `git show`: user or repository config must not change what is parsed. */
export const PLAIN_LOG_CONFIG = [
  '-c', 'core.quotePath=false',
  '-c', 'diff.relative=false',
  '-c', 'log.showRoot=true',
  '-c', 'log.showSignature=false',
  '-c', 'i18n.logOutputEncoding=UTF-8',
];

/** Diff options with the same purpose: a/ and b/ prefixes whatever diff.noprefix says, no conversions. */
export const PLAIN_DIFF_OPTIONS = ['--src-prefix=a/', '--dst-prefix=b/', '--no-textconv', '--no-ext-diff', '--no-color', '--no-renames'];

export function runGit(repoPath: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-C', repoPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: gitEnv() });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', (e) => reject(new GitUnavailableError(`Could not run git: ${e.message}. Install git and make sure it is on PATH.`)));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new GitImportError(err.trim() || `git ${args[0]} exited with ${code}`))));
  });
}
