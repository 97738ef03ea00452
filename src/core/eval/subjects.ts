// The subjects of the commits an evaluation report shows (each question's gold commits and each
// tool's first answers), so that a miss can be read without a git log at hand.

import { formatSeparators, PLAIN_LOG_CONFIG, revisionArgs } from '../capture/git';
import { runGit } from '../capture/gitProcess';

/** How a report names a commit: its first 10 hex digits (a gold commit given shorter keeps its own). */
export function shortSha(sha: string): string {
  return sha.slice(0, 10).toLowerCase();
}

/**
 * Subject of each commit of `shas` (full or abbreviated) reachable from `rev`, keyed by its
 * shortSha. One walk of the history, as the import made; commits not found are left out.
 */
export async function commitSubjects(repo: string, rev: string, shas: string[]): Promise<Record<string, string>> {
  const wanted = new Set(shas.map(shortSha));
  const lengths = [...new Set([...wanted].map((w) => w.length))];
  const out: Record<string, string> = {};
  if (wanted.size === 0) return out;
  const sep = formatSeparators();
  const text = await runGit(repo, [...PLAIN_LOG_CONFIG, 'log', `--format=${sep.record}%H${sep.field}%s`, ...revisionArgs(rev)]);
  for (const record of text.split(sep.record)) {
    const at = record.indexOf(sep.field);
    if (at < 0) continue;
    const sha = record.slice(0, at).toLowerCase();
    for (const n of lengths) if (wanted.has(sha.slice(0, n))) out[sha.slice(0, n)] = record.slice(at + sep.field.length).trim();
  }
  return out;
}
