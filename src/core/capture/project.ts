// The project name that scopes every record: the git remote normalised to host/owner/repo, so
// two clones of one repository share memory, else the folder's name with an identity of its own
// (two folders of one name never share memory).

import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitOutput as git } from './gitProcess';

/**
 * Hosts whose repository paths ignore case (`github.com/Acme/App` is `github.com/acme/app`) and
 * whose ssh user is a service account: their paths are lower-cased and the user dropped. On any
 * other host the path keeps its case (a plain ssh server's `Tools.git` and `tools.git` are two
 * repositories), and a path relative to the ssh user's home keeps the user (`alice@host:app.git`
 * and `bob@host:app.git` are two repositories), but for the usual service account `git`.
 */
const FORGES = new Set(['github.com', 'gitlab.com', 'bitbucket.org', 'codeberg.org', 'dev.azure.com', 'ssh.dev.azure.com']);

/**
 * 'git@github.com:Owner/Repo.git', 'https://user:pw@github.com/owner/repo', 'ssh://git@host:22/a/b.git'
 * all become 'github.com/owner/repo' style names: lower-cased host, no credentials, port or .git;
 * the path as FORGES says, a home-relative one as `host/~user/path` (`host/~/path` with no user). The port is dropped: a forge's
 * ssh port is not its web port, and one repository reached both ways is one project.
 */
export function normaliseRemote(remote: string): string | null {
  const r = remote.trim();
  if (!r) return null;
  let host = '';
  let user = '';
  let rest = '';
  // scp form, 'user@host:path'; a one-letter host is a Windows drive ('C:/repos/app').
  const scp = /^(?:([^@/]+)@)?([^:/]{2,}):(.+)$/.exec(r);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(r)) {
    try {
      const u = new URL(r);
      host = u.hostname;
      // Only ssh has a home folder; an http user name is a credential.
      if (/^(git\+)?ssh:$/i.test(u.protocol)) user = u.username;
      rest = u.pathname.replace(/^\/(?=~)/, '');
    } catch {
      return null;
    }
  } else if (scp) {
    user = scp[1] ?? '';
    host = scp[2];
    rest = scp[3];
  } else {
    return null; // a local path remote says nothing stable
  }
  host = host.toLowerCase();
  let repo = rest.replace(/\/+$/g, '').replace(/\.git$/i, '');
  const forge = FORGES.has(host);
  // A path relative to the ssh user's home folder ('app.git', '~/app.git') is that user's; with
  // no user named, the home of whoever connects (`host/~/app`), never the root path `/app.git`.
  if (!forge && user !== 'git') repo = repo.replace(/^~\/|^(?![/~])/, user ? `~${user}/` : '~/');
  repo = repo.replace(/^\/+/, '');
  if (!host || !repo) return null;
  return `${host}/${forge ? repo.toLowerCase() : repo}`;
}

/**
 * The project a folder is, and its repository's default branch, read with one listing of its
 * remotes: the project is the remote that names it (origin, else the first one), normalised, else
 * the repository's (or the folder's) name made unique (localProject); the default branch is where
 * that remote's HEAD points (`refs/remotes/origin/HEAD`, set by clone and `git remote set-head`),
 * null without one (the usual names then stand for it).
 */
export async function folderProject(folder: string): Promise<{ project: string; defaultBranch: string | null }> {
  const { project, defaultBranch } = await remoteProject(folder);
  if (project) return { project, defaultBranch };
  const [top, common] = await Promise.all([git(folder, ['rev-parse', '--show-toplevel']), git(folder, ['rev-parse', '--git-common-dir'])]);
  return { project: await localProject(top || path.resolve(folder), common ? path.resolve(folder, common) : null), defaultBranch };
}

/** The project the folder's remote names (null without one that names a project) and the default branch it points at (see folderProject). */
export async function remoteProject(folder: string): Promise<{ project: string | null; defaultBranch: string | null }> {
  const names = (await git(folder, ['remote']))?.split(/\r?\n/).filter(Boolean) ?? [];
  const remote = names.includes('origin') ? 'origin' : (names[0] ?? null);
  if (!remote) return { project: null, defaultBranch: null };
  const [url, head] = await Promise.all([git(folder, ['remote', 'get-url', remote]), git(folder, ['symbolic-ref', '--quiet', '--short', `refs/remotes/${remote}/HEAD`])]);
  const defaultBranch = head?.startsWith(`${remote}/`) ? head.slice(remote.length + 1) || null : null;
  return { project: url ? normaliseRemote(url) : null, defaultBranch };
}

/** The file in a repository's git folder that keeps its project name, so that moving or renaming it keeps its memory. */
export const IDENTITY_FILE = 'code-memory-project';
const KEPT_NAME = /^[^\p{Cc}/\\]{1,100}-[0-9a-f]{12}$/u;

/** A folder's name as a project name's start: no control characters or slashes, at most 100 characters. */
function nameOf(folder: string): string {
  return [...path.basename(folder).replace(/[\p{Cc}/\\]+/gu, '_')].slice(0, 100).join('') || 'workspace';
}

/** Its real path (symbolic links resolved), else the path it was given (a folder that is gone). */
function realPath(folder: string): string {
  try {
    return fs.realpathSync.native(path.resolve(folder));
  } catch {
    return path.resolve(folder);
  }
}

/** A remote-less folder's name from its path: its folder's name and its real path's digest, `app-3f2a9c1b`. */
export function localProjectName(folder: string): string {
  const real = realPath(folder);
  return `${nameOf(real)}-${digest8(real)}`;
}

/** The digest (8 hex digits) of a folder's real path. */
export function pathIdentity(folder: string): string {
  return digest8(realPath(folder));
}

function digest8(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** A folder that is not on this disk (a virtual workspace): its name and its URI's digest. */
export function virtualProjectName(name: string, uri: string): string {
  return `${nameOf(name)}-${digest8(uri)}`;
}

/** The identity file's name, if it is a small regular file that holds one (a pipe or a folder there is never read). */
async function readKept(file: string): Promise<string | null> {
  const stat = await fs.promises.lstat(file).catch(() => null);
  if (!stat) return null;
  if (!stat.isFile() || stat.size > 1024) return '';
  return fs.promises.readFile(file, 'utf8').then(
    (text) => text.trim(),
    () => '',
  );
}

/**
 * A project without a remote has no name of its own that other folders cannot have too. A
 * repository's is its folder's name and 12 random hex digits, made the first time it is asked and
 * kept in its git folder (shared by its worktrees and copies, kept when the folder moves or is
 * renamed). The file is written whole under another name and linked into place, so that a reader
 * never sees it half-written, and the first of two processes making it at once wins. A folder
 * outside git, or whose git folder cannot be written or holds something else there, is its name
 * and its path's digest (8 hex digits, so never a kept name).
 */
async function localProject(root: string, gitCommonDir: string | null): Promise<string> {
  if (!gitCommonDir) return localProjectName(root);
  const file = path.join(gitCommonDir, IDENTITY_FILE);
  const kept = await readKept(file);
  if (kept !== null) return KEPT_NAME.test(kept) ? kept : localProjectName(root);
  const made = `${nameOf(realPath(root))}-${randomBytes(6).toString('hex')}`;
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await fs.promises.writeFile(temp, `${made}\n`, { flag: 'wx', mode: 0o644 });
    await fs.promises.link(temp, file);
    return made;
  } catch {
    // another process linked its name first, or the git folder is read-only
    const raced = await readKept(file);
    return raced !== null && KEPT_NAME.test(raced) ? raced : localProjectName(root);
  } finally {
    await fs.promises.rm(temp, { force: true }).catch(() => undefined);
  }
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
