// Running git for the imports: one child process per command, its output as text, and an error
// that says what to do when git is missing or the command fails. Also what every command that
// reads repository text needs so that the text cannot pass for anything else: separators it
// cannot contain, object ids checked before they become arguments, and settings that keep user
// or repository config from changing the output parsed.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export class GitImportError extends Error {}

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
    const child = spawn('git', ['-C', repoPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', (e) => reject(new GitImportError(`Could not run git: ${e.message}. Install git and make sure it is on PATH.`)));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new GitImportError(err.trim() || `git ${args[0]} exited with ${code}`))));
  });
}
