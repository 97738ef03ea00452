// The project name that scopes every record: the git remote normalised to host/owner/repo, so
// two clones of one repository share memory, else the folder name.

import { execFile } from 'node:child_process';
import * as path from 'node:path';

function git(folder: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('git', ['-C', folder, ...args], { timeout: 5000, windowsHide: true }, (err, stdout) => {
      resolve(err ? null : stdout.trim());
    });
  });
}

/**
 * 'git@github.com:Owner/Repo.git', 'https://user:pw@github.com/owner/repo', 'ssh://git@host:22/a/b.git'
 * all become 'github.com/owner/repo' style names (lower-cased host, no credentials, no .git).
 */
export function normaliseRemote(remote: string): string | null {
  let r = remote.trim();
  if (!r) return null;
  let host = '';
  let rest = '';
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/)(.+)$/.exec(r);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(r)) {
    try {
      const u = new URL(r);
      host = u.hostname;
      rest = u.pathname;
    } catch {
      return null;
    }
  } else if (scp) {
    host = scp[1];
    rest = scp[2];
  } else {
    return null; // a local path remote says nothing stable
  }
  r = rest.replace(/^\/+|\/+$/g, '').replace(/\.git$/i, '');
  if (!host || !r) return null;
  return `${host.toLowerCase()}/${r.toLowerCase()}`;
}

export async function projectScopeFor(folder: string): Promise<string> {
  const remotes = await git(folder, ['remote']);
  if (remotes) {
    const names = remotes.split(/\r?\n/).filter(Boolean);
    const name = names.includes('origin') ? 'origin' : names[0];
    const url = await git(folder, ['remote', 'get-url', name]);
    const normalised = url ? normaliseRemote(url) : null;
    if (normalised) return normalised;
  }
  const top = await git(folder, ['rev-parse', '--show-toplevel']);
  return path.basename(top || path.resolve(folder));
}

export async function currentBranch(folder: string): Promise<string | null> {
  const b = await git(folder, ['rev-parse', '--abbrev-ref', 'HEAD']);
  return b && b !== 'HEAD' ? b : null;
}
