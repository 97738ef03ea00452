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

/**
 * The project a folder is, and its repository's default branch, read with one listing of its
 * remotes: the project is the remote that names it (origin, else the first one), normalised, else
 * the repository's (or the folder's) name; the default branch is where that remote's HEAD points
 * (`refs/remotes/origin/HEAD`, set by clone and `git remote set-head`), null without one (the usual
 * names then stand for it).
 */
export async function folderProject(folder: string): Promise<{ project: string; defaultBranch: string | null }> {
  const names = (await git(folder, ['remote']))?.split(/\r?\n/).filter(Boolean) ?? [];
  const remote = names.includes('origin') ? 'origin' : (names[0] ?? null);
  const [url, head] = remote ? await Promise.all([git(folder, ['remote', 'get-url', remote]), git(folder, ['symbolic-ref', '--quiet', '--short', `refs/remotes/${remote}/HEAD`])]) : [null, null];
  const defaultBranch = remote && head?.startsWith(`${remote}/`) ? head.slice(remote.length + 1) || null : null;
  const normalised = url ? normaliseRemote(url) : null;
  if (normalised) return { project: normalised, defaultBranch };
  const top = await git(folder, ['rev-parse', '--show-toplevel']);
  return { project: path.basename(top || path.resolve(folder)), defaultBranch };
}

export async function projectScopeFor(folder: string): Promise<string> {
  return (await folderProject(folder)).project;
}

/** The repository's default branch (see folderProject). */
export async function defaultBranchFor(folder: string): Promise<string | null> {
  return (await folderProject(folder)).defaultBranch;
}

export async function currentBranch(folder: string): Promise<string | null> {
  const b = await git(folder, ['rev-parse', '--abbrev-ref', 'HEAD']);
  return b && b !== 'HEAD' ? b : null;
}
