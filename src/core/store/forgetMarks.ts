// Forget marks: writers that read records and write what derives from them later (a session's
// summary, the request log, index segments, the entity graph, memories that supersede or were
// promoted from others) take a ForgetMark before they read and ask forgotSince after they wrote:
// a forget of their project (or of everything) in between, in any process, moved the meta table
// (its journal and its project's stamp), and they take back what it would have removed
// (forget.ts settleForgets forgets again the records gone meanwhile); one of another project
// does not. And while a forget runs, PendingForgets keeps its records out of every search.

import type { SourceKind } from '../model/records';
import { sqlIntList, sqlString } from './filters';
import { CLOCK_SKEW_MS, STAMP_KEY, WHOLE_KEY, stampKey, wholeKey } from './forgetKeys';
import { JOURNAL_KEY, PURGE_MARKER, isClosure, isValid, journalProject, runningJournals } from './forgetJournal';
import type { Journal } from './forgetJournal';
import { cellNodeId } from './cells';
import { parseJson } from './mapping';
import type { ProjectTable } from './projectTable';
import type { ProjectRepositories } from './repos/repositories';
import { TABLES } from './schema';
import { sleep } from './retry';
import type { Store } from './store';

/**
 * Where a writer of text derived from records (a session summary, the request log, index
 * segments) stood towards forgets when it began to read them: the meta table's version, which a
 * forget moves before its first delete (its journal and its stamp), when, and which projects
 * forgets under way were forgetting. Plain data, so that it can cross to the engine's thread.
 */
export interface ForgetMark {
  meta_version: number;
  /** When the mark was taken (ms). */
  at: number;
  /** The stamp keys (see stampKey) of the forgets under way then. */
  pending: string[];
}

/** How long a writer waits for the forgets of running processes before it checks what they left (a forget by id takes a second or two). */
export const FORGET_WAIT_MS = 10_000;

export async function forgetMark(store: Store): Promise<ForgetMark> {
  const at = Date.now();
  const meta_version = await store.table(TABLES.meta).version();
  return { meta_version, at, pending: [...new Set((await runningJournals(store)).map((j) => stampKey(journalProject(j))))] };
}

/** The earlier of two marks: a forget since either is a forget since it. */
export function earlierMark(a: ForgetMark, b: ForgetMark): ForgetMark {
  return { meta_version: Math.min(a.meta_version, b.meta_version), at: Math.min(a.at, b.at), pending: [...new Set([...a.pending, ...b.pending])] };
}

/**
 * What the forgets journalled in the store are deleting, whichever process runs them and whether
 * it still runs: from the moment a forget's journal is written until it is finished (by its own
 * process, or, after a crash, by any process's upkeep or the next open: resumeForget), no search
 * serves its records' cells. A forget killed between deleting records and deleting their cells
 * (or before either) leaves those cells stored until then: they are found by no one meanwhile.
 * (Deleting the cells first would not do: the cell repair gives a record that has none its cell.)
 */
/** The most records of a forget under way that a search's filter lists (see cellsWhere). */
const MAX_FILTERED_IDS = 1000;

export class PendingForgets {
  private readonly nodes = new Map<string, Set<string>>();

  constructor(
    /** A forget of everything. */
    private readonly all: boolean,
    /** Projects forgotten whole. */
    private readonly projects: Set<string>,
    /** Per project, the records forgotten by id (a journal's request, and its closure once decided). */
    private readonly ids: Map<string, Record<SourceKind, Set<number>>>,
  ) {}

  /**
   * A filter on `project`'s cells that leaves out those of records under a forget; null when none
   * is, or when the forget names more records than a query's filter should list (every search
   * while it runs would pay for the list: 50,000 ids took a search from 21 to 684 ms). The hits are
   * checked against the forget after the search anyway (covers), so a search while a large forget
   * runs may only return fewer than it was asked for.
   */
  cellsWhere(project: string): string | null {
    if (this.all || this.projects.has(project)) return 'false';
    const doomed = this.ids.get(project);
    if (!doomed || (Object.values(doomed) as Set<number>[]).reduce((n, set) => n + set.size, 0) > MAX_FILTERED_IDS) return null;
    const parts = (Object.keys(doomed) as SourceKind[]).filter((k) => doomed[k].size > 0).map((k) => `(source_kind = ${sqlString(k)} AND source_id IN ${sqlIntList([...doomed[k]])})`);
    return parts.length > 0 ? `NOT (${parts.join(' OR ')})` : null;
  }

  /**
   * cellsWhere's filter on `project`'s records of `kind` (their id column), for the lists
   * (RecordRepository.forgetFilter): 'false' when the whole project is under a forget, null when
   * none of them is or when more are than a filter lists (covers leaves those out after the read).
   */
  recordsWhere(project: string, kind: SourceKind): string | null {
    if (this.all || this.projects.has(project)) return 'false';
    const doomed = this.ids.get(project)?.[kind];
    return doomed && doomed.size > 0 && doomed.size <= MAX_FILTERED_IDS ? `NOT (id IN ${sqlIntList([...doomed])})` : null;
  }

  /** Whether `project`'s cell of this record is one under a forget. */
  covers(project: string, kind: SourceKind, id: number): boolean {
    return this.all || this.projects.has(project) || (this.ids.get(project)?.[kind]?.has(id) ?? false);
  }

  /** Whether `project`'s cell with this node id (cellNodeId) is one under a forget. */
  coversNode(project: string, nodeId: string): boolean {
    if (this.all || this.projects.has(project)) return true;
    const doomed = this.ids.get(project);
    if (!doomed) return false;
    let nodes = this.nodes.get(project);
    if (!nodes) {
      nodes = new Set((Object.keys(doomed) as SourceKind[]).flatMap((k) => [...doomed[k]].map((id) => cellNodeId(project, k, id))));
      this.nodes.set(project, nodes);
    }
    return nodes.has(nodeId.toLowerCase());
  }
}

/** The journals' PendingForgets per store, with the meta table's version they were read at. */
const pendingRead = new WeakMap<Store, { version: number; pending: PendingForgets }>();

/** The forgets journalled in the store now (see PendingForgets): read again only when the meta table changed. */
export async function pendingForgets(store: Store): Promise<PendingForgets> {
  const version = await store.table(TABLES.meta).version();
  const known = pendingRead.get(store);
  if (known && known.version === version) return known.pending;
  let all = false;
  const projects = new Set<string>();
  const ids = new Map<string, Record<SourceKind, Set<number>>>();
  for (const [key, text] of await store.metaEntries(JOURNAL_KEY)) {
    // A marker: its forget deleted everything already.
    if ((key !== JOURNAL_KEY && !key.startsWith(`${JOURNAL_KEY}:`)) || text === PURGE_MARKER) continue;
    const journal = parseJson<Journal | null>(text, null);
    if (!journal || typeof journal !== 'object' || !isValid(journal)) continue;
    const { request, scope } = journal;
    if (request.all) all = true;
    else if (request.project !== undefined) projects.add(request.project);
    else if (scope) {
      const doomed = ids.get(scope.project) ?? { observation: new Set<number>(), session_summary: new Set<number>(), memory: new Set<number>() };
      ids.set(scope.project, doomed);
      for (const id of request.ids ?? []) doomed[(request.kind ?? 'observation') as SourceKind].add(Number(id));
      if (journal.closure !== undefined && isClosure(journal.closure)) for (const k of Object.keys(doomed) as SourceKind[]) for (const id of journal.closure.doomed[k]) doomed[k].add(id);
    }
  }
  const pending = new PendingForgets(all, projects, ids);
  pendingRead.set(store, { version, pending });
  return pending;
}

/**
 * Whether a forget of `project` (or of everything) may have run between `mark` and now. A writer
 * that read records before a forget and wrote after it would put their text back: it asks this
 * after writing, and on true takes back whatever of its write a forget would have removed (see
 * purgeRows and the callers). A forget in another project leaves the writer's rows alone.
 */
export async function forgotSince(store: Store, mark: ForgetMark, project: string): Promise<boolean> {
  const mine = [stampKey(null), stampKey(project)];
  // A mark that came across a thread damaged says nothing: as if a forget ran.
  if (!Array.isArray(mark?.pending) || mark.pending.some((key) => mine.includes(key))) return true;
  if ((await store.table(TABLES.meta).version()) === mark.meta_version) return false;
  const stamps = await store.metaEntries(`${STAMP_KEY}:`);
  return stamps.some(([key, at]) => mine.includes(key) && !(Number(at) < mark.at - CLOCK_SKEW_MS));
}

/**
 * Per project, when the last forget of it (or of everything) began, as the stamps say: a forget
 * writes a new stamp when it begins (see begin), so a value that changed means a forget ran; and
 * when the last forget of the whole project (or of everything) began (ms, 0 for none). One read of
 * the stamps for all `projects`.
 */
export async function lastForgets(store: Store, projects: string[]): Promise<Map<string, { stamp: string; whole: number }>> {
  const [stamps, wholes] = await Promise.all([store.metaEntries(`${STAMP_KEY}:`), store.metaEntries(`${WHOLE_KEY}:`)]).then((lists) => lists.map((l) => new Map(l)));
  const all = stamps.get(stampKey(null)) ?? '';
  const time = (value: string | undefined) => Number(value) || 0;
  return new Map(projects.map((p) => [p, { stamp: `${all}/${stamps.get(stampKey(p)) ?? ''}`, whole: Math.max(time(wholes.get(wholeKey(null))), time(wholes.get(wholeKey(p)))) }]));
}

/** Waits (up to ten seconds) for the forgets of running processes, this one included; returns those still running then. */
async function forgetsUnderWay(store: Store): Promise<Journal[]> {
  const until = Date.now() + FORGET_WAIT_MS;
  for (;;) {
    const running = await runningJournals(store);
    if (running.length === 0 || Date.now() >= until) return running;
    await sleep(100);
  }
}

export function recordTable(repos: ProjectRepositories, kind: SourceKind): ProjectTable {
  return kind === 'observation' ? repos.observations.table : kind === 'memory' ? repos.memories.table : repos.summaries.table;
}

/**
 * Of the records a writer worked from, those a forget removed or is removing: waits for the
 * forgets under way (see forgetsUnderWay), then reads which are still stored.
 */
export async function goneRecords(store: Store, repos: ProjectRepositories, ids: Partial<Record<SourceKind, number[]>>): Promise<Record<SourceKind, Set<number>>> {
  const gone: Record<SourceKind, Set<number>> = { observation: new Set(), session_summary: new Set(), memory: new Set() };
  const asked = (Object.keys(ids) as SourceKind[]).filter((k) => (ids[k] ?? []).length > 0);
  if (asked.length === 0) return gone;
  const running = await forgetsUnderWay(store);
  const whole = running.some((j) => j.request.all || j.request.project === repos.project);
  for (const kind of asked) {
    const wanted = [...new Set(ids[kind])];
    // A journal gets its closure once the forget has read it: until then its request says what goes.
    const doomed = new Set(running.flatMap((j) => [...(j.closure?.doomed[kind] ?? []), ...((j.request.kind ?? 'observation') === kind ? (j.request.ids ?? []) : [])].map(Number)));
    const stored = new Set<number>();
    for (let i = 0; i < wanted.length; i += 1000) {
      for (const r of await recordTable(repos, kind).rows(`id IN ${sqlIntList(wanted.slice(i, i + 1000))}`, { select: ['id'] })) stored.add(Number(r.id));
    }
    for (const id of wanted) if (whole || doomed.has(id) || !stored.has(id)) gone[kind].add(id);
  }
  return gone;
}
