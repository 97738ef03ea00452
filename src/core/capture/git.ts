// Running git for the imports: one child process per command, its output as text, and an error
// that says what to do when git is missing or the command fails.

import { spawn } from 'node:child_process';

export class GitImportError extends Error {}

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

