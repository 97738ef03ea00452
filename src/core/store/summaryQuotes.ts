// Session summaries that quote what a forget by id takes besides the records they cite (their
// source_ids): the session's prompts, which the summariser is given and the extractive one lists
// as the session's request (the project's prompts go with every forget by id, forget.ts), and
// commits another session recorded, which a plugged-in summariser is shown by their titles
// (compress/session.ts commitsOfOtherSessions). Such a summary goes with the forget, as one citing
// a forgotten observation does: its session's observations stay, and the sweep of sessions left
// without a summary writes it again from what is left.

import { sessionKey } from '../capture/prepare';
import { EXTRACTIVE_SUMMARISER } from '../compress/summariser';
import { normaliseStatement } from '../compress/session';
import { sqlInt, sqlString } from './filters';
import { parseJson } from './mapping';
import type { ProjectRepositories } from './repos/repositories';
import type { Row } from './store';

/**
 * The project's summaries that may quote a session prompt: every summary of a session with
 * prompts stored (whatever wrote it), and every one an extractive summariser wrote whose request
 * lists anything but the titles of its agent observations (prompts aged out since).
 */
export async function summariesQuotingPrompts(repos: ProjectRepositories): Promise<number[]> {
  const prompted = await repos.prompts.sessions();
  const summaries = await repos.summaries.table.rows(null, { select: ['id', 'memory_session_id', 'request', 'summariser', 'source_ids'] });
  const out: number[] = [];
  let agentTitles: Map<number, string> | null = null;
  for (const s of summaries) {
    if (prompted.has(sessionKey(String(s.memory_session_id ?? '')))) {
      out.push(Number(s.id));
      continue;
    }
    // An older build's (extractive-v1, a name it gave a language model's summaries too) are read the
    // same way: a request line that is no title of its agent observations may be a prompt.
    if (!String(s.summariser ?? '').startsWith('extractive') || typeof s.request !== 'string' || s.request === '') continue;
    agentTitles ??= new Map((await repos.observations.table.rows(`type = 'agent'`, { select: ['id', 'title'] })).map((r) => [Number(r.id), normaliseStatement(String(r.title ?? ''))]));
    const own = new Set(parseJson<number[]>(s.source_ids, []).map((id) => agentTitles!.get(Number(id))));
    if (s.request.split('\n').some((line) => !own.has(normaliseStatement(line.replace(/^- /, ''))))) out.push(Number(s.id));
  }
  return out;
}

/**
 * The summaries a plugged-in summariser wrote that may have been shown these commits (observation
 * rows) as another session's: those of other sessions on the commit's branch that began before
 * it. (The extractive summariser reads only their files and times.)
 */
export async function summariesShownCommits(repos: ProjectRepositories, observations: Row[]): Promise<number[]> {
  const out = new Set<number>();
  for (const c of observations) {
    if (c.type !== 'commit' || typeof c.branch !== 'string' || c.branch === '') continue;
    const where = [
      `branch = ${sqlString(c.branch)}`,
      `memory_session_id <> ${sqlString(String(c.memory_session_id ?? ''))}`,
      `(summariser IS NULL OR summariser <> ${sqlString(EXTRACTIVE_SUMMARISER)})`,
      `(started_at_epoch IS NULL OR started_at_epoch <= ${sqlInt(Number(c.created_at_epoch))})`,
    ].join(' AND ');
    for (const r of await repos.summaries.table.rows(where, { select: ['id'] })) out.add(Number(r.id));
  }
  return [...out];
}
