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

/** The remote that names the project: origin, else the first one; null without a remote. */
async function projectRemote(folder: string): Promise<string | null> {
  const names = (await git(folder, ['remote']))?.split(/\r?\n/).filter(Boolean) ?? [];
  return names.includes('origin') ? 'origin' : (names[0] ?? null);
}

export async function projectScopeFor(folder: string): Promise<string> {
  const name = await projectRemote(folder);
  if (name) {
    const url = await git(folder, ['remote', 'get-url', name]);
    const normalised = url ? normaliseRemote(url) : null;
    if (normalised) return normalised;
  }
  const top = await git(folder, ['rev-parse', '--show-toplevel']);
  return path.basename(top || path.resolve(folder));
}

/**
 * The repository's default branch: where its remote's HEAD points (`refs/remotes/origin/HEAD`,
 * set by clone and `git remote set-head`); null without one (the usual names then stand for it).
 */
export async function defaultBranchFor(folder: string): Promise<string | null> {
  const name = await projectRemote(folder);
  if (!name) return null;
  const ref = await git(folder, ['symbolic-ref', '--quiet', '--short', `refs/remotes/${name}/HEAD`]);
  return ref?.startsWith(`${name}/`) ? ref.slice(name.length + 1) || null : null;
}

export async function currentBranch(folder: string): Promise<string | null> {
  const b = await git(folder, ['rev-parse', '--abbrev-ref', 'HEAD']);
  return b && b !== 'HEAD' ? b : null;
}
