import type { Freshness } from '../core/capture/freshness';
import { GitFreshness } from '../core/capture/freshness';
import type { ScopeService } from './scopes';

/**
 * Whether records still hold, per project: the project's workspace folder is the repository the
 * check runs in (git, cached per HEAD by GitFreshness). Records without a commit or files, and
 * projects without a local folder, have nothing to say.
 */
export class FreshnessService {
  private readonly byRoot = new Map<string, GitFreshness>();

  constructor(private readonly scopes: ScopeService) {}

  async check(project: string, sha: string | null | undefined, files: readonly string[]): Promise<Freshness | null> {
    if (!sha || files.length === 0) return null;
    for (const { folder, scope } of await this.scopes.all()) {
      if (scope.project !== project || folder.uri.scheme !== 'file') continue;
      const root = folder.uri.fsPath;
      let git = this.byRoot.get(root);
      if (!git) this.byRoot.set(root, (git = GitFreshness.forRepository(root)));
      return git.check(sha, files).catch(() => null);
    }
    return null;
  }
}

/** The sidebar's short badge: nothing for records that cannot say. */
export function freshnessBadge(f: Freshness | null | undefined): string {
  if (!f) return '';
  if (f.state === 'changed') return f.commit_sha ? `⚠ changed since ${f.commit_sha.slice(0, 7)}` : '⚠ file gone';
  if (f.state === 'off_branch') return '⚠ not on this branch';
  if (f.state === 'current') return '✓ still holds';
  return '';
}
