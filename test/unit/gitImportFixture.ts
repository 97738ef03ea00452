// Builds small real git repositories for the git import and evaluation tests.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface FixtureCommit {
  subject: string;
  body?: string;
  files: Record<string, string>;
  /** Seconds since the epoch. */
  time: number;
  author?: string;
}

export function git(repo: string, args: string[], env: NodeJS.ProcessEnv = {}): string {
  return execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
}

export function commitAll(repo: string, c: FixtureCommit): string {
  for (const [file, content] of Object.entries(c.files)) {
    mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    writeFileSync(path.join(repo, file), content);
  }
  git(repo, ['add', '-A']);
  const date = `${c.time} +0000`;
  const author = c.author ?? 'Ada Lovelace';
  git(repo, ['commit', '-q', '-m', c.subject, ...(c.body ? ['-m', c.body] : [])], {
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
    GIT_AUTHOR_NAME: author,
    GIT_AUTHOR_EMAIL: `${author.split(' ')[0].toLowerCase()}@example.com`,
    GIT_COMMITTER_NAME: author,
    GIT_COMMITTER_EMAIL: `${author.split(' ')[0].toLowerCase()}@example.com`,
  });
  return git(repo, ['rev-parse', 'HEAD']).trim();
}

export function makeRepo(commits: FixtureCommit[]): { repo: string; shas: string[] } {
  const repo = mkdtempSync(path.join(os.tmpdir(), 'code-memory-git-'));
  git(repo, ['init', '-q', '-b', 'main']);
  git(repo, ['config', 'commit.gpgsign', 'false']);
  return { repo, shas: commits.map((c) => commitAll(repo, c)) };
}

const DAY = 24 * 3600;
const T0 = 1_700_000_000;

/** A small parser project whose commits each make one distinct change. */
export const PARSER_HISTORY: FixtureCommit[] = [
  {
    subject: 'Initial argument parser',
    files: { 'lib/parser.js': 'function parseArgs (argv) {\n  return argv.slice(2)\n}\nmodule.exports = parseArgs\n', 'README.md': '# tinyargs\n' },
    time: T0,
  },
  {
    subject: 'Read defaults from the environment',
    body: 'Options fall back to TINYARGS_ prefixed variables.',
    files: { 'lib/env.js': 'function readEnvDefaults (env) {\n  // prefixed variables become option defaults\n  return Object.keys(env).filter((k) => k.startsWith("TINYARGS_"))\n}\nmodule.exports = readEnvDefaults\n' },
    time: T0 + 600,
  },
  {
    subject: 'Wrap help text to the terminal width',
    files: { 'lib/usage.js': 'function wrapHelpText (text, columns) {\n  // break long lines at the terminal width\n  return text.match(new RegExp(".{1," + columns + "}", "g"))\n}\nmodule.exports = wrapHelpText\n' },
    time: T0 + DAY,
  },
  {
    subject: 'Fix crash on empty config file',
    body: 'An empty JSON config made JSON.parse throw; treat it as no options.',
    files: { 'lib/config.js': 'function loadConfigFile (text) {\n  if (!text.trim()) return {}\n  return JSON.parse(text)\n}\nmodule.exports = loadConfigFile\n' },
    time: T0 + 2 * DAY,
    author: 'Grace Hopper',
  },
  {
    subject: 'Count repeated verbose flags',
    files: { 'lib/parser.js': 'function parseArgs (argv) {\n  const verbosityLevel = argv.filter((a) => a === "-v").length\n  return { verbosityLevel, rest: argv.slice(2) }\n}\nmodule.exports = parseArgs\n', 'test/parser.js': 'it("counts every -v flag as one more verbosity level", () => {})\n' },
    time: T0 + 3 * DAY,
  },
];
