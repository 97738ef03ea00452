// Which records hold for the whole project rather than for one branch. A record with no branch
// (a git import, a memory recorded project-wide) or of a default branch is what the project
// holds; a record of any other branch holds on that branch only. The store does not know a
// repository's own default branch, so it goes by the names git and the hosts give it.

export const DEFAULT_BRANCHES: readonly string[] = ['main', 'master', 'trunk'];

/** Whether a record of this branch (null: none) holds project-wide rather than on its branch only. */
export function projectWideBranch(branch: string | null | undefined): boolean {
  return branch === null || branch === undefined || DEFAULT_BRANCHES.includes(branch);
}
