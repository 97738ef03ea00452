// Which records hold for the whole project rather than for one branch. A record with no branch
// (a git import, a memory recorded project-wide) or of a default branch is what the project
// holds; a record of any other branch holds on that branch only. A default branch is one of the
// names git and the hosts give it, or the repository's own (origin/HEAD) where the caller named
// it (Scope.defaultBranch).

export const DEFAULT_BRANCHES: readonly string[] = ['main', 'master', 'trunk'];

/** The branches whose records hold project-wide: the usual names and the repository's own default. */
export function projectWideBranches(defaultBranch?: string | null): string[] {
  return defaultBranch && !DEFAULT_BRANCHES.includes(defaultBranch) ? [...DEFAULT_BRANCHES, defaultBranch] : [...DEFAULT_BRANCHES];
}

/** Whether a record of this branch (null: none) holds project-wide rather than on its branch only. */
export function projectWideBranch(branch: string | null | undefined, defaultBranch?: string | null): boolean {
  return branch === null || branch === undefined || projectWideBranches(defaultBranch).includes(branch);
}

/** The branch a memory recorded on `branch` belongs to: none where it holds project-wide. */
export function memoryBranch(branch: string | null | undefined, defaultBranch?: string | null): string | undefined {
  return projectWideBranch(branch, defaultBranch) ? undefined : (branch as string);
}
