// What every git command that reads repository text needs so that the text cannot pass for
// anything else: separators it cannot contain, object ids checked before they become arguments,
// and settings that keep user or repository config from changing the output parsed. Git itself is
// started by gitProcess.ts.

import { randomBytes } from 'node:crypto';

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

/**
 * Settings for `git log` and `git show`: user or repository config must not change what is parsed
 * (gitProcess.ts also turns signature checks off, for every command).
 */
export const PLAIN_LOG_CONFIG = [
  '-c', 'core.quotePath=false',
  '-c', 'diff.relative=false',
  '-c', 'log.showRoot=true',
  '-c', 'i18n.logOutputEncoding=UTF-8',
];

/**
 * Diff options with the same purpose: a/ and b/ prefixes whatever diff.noprefix says (gitProcess.ts
 * adds no textconv, no external diff, no color to every diff command).
 */
export const PLAIN_DIFF_OPTIONS = ['--src-prefix=a/', '--dst-prefix=b/', '--no-renames'];
