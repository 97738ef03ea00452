// Where a repository's git config lives, found without running git: a window looks at it at
// each capture event (see extension/scopes.ts), and a folder's project follows its remote.
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The config file of the git repository `folder` lies in (a worktree's and a submodule's
 * included: their `.git` file names their git folder), null outside one.
 */
export function gitConfigFile(folder: string): string | null {
  for (let dir = path.resolve(folder); ; dir = path.dirname(dir)) {
    const dotGit = path.join(dir, '.git');
    try {
      if (fs.statSync(dotGit).isDirectory()) return path.join(dotGit, 'config');
      const gitDir = path.resolve(dir, /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(dotGit, 'utf8'))?.[1] ?? '');
      // A worktree's git folder names the repository's own (commondir), where its config is.
      const common = fs.existsSync(path.join(gitDir, 'commondir')) ? path.resolve(gitDir, fs.readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim()) : gitDir;
      return path.join(common, 'config');
    } catch {
      if (path.dirname(dir) === dir) return null;
    }
  }
}
