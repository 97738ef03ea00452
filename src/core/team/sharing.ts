// Sharing between a personal store and a team store: the engine's share, unshare and team
// reads, kept here so the engine stays a facade. Only memories and session summaries can be
// shared; observations (raw activity) stay personal.

import { addToList } from '../lists';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { NodeDetail, SearchHit } from '../api';
import type { Memory, SourceKind } from '../model/records';
import type { QueryEmbedder } from '../retrieve/hybrid';
import { FilterError, sqlInt, sqlString } from '../store/filters';
import { rowToCell } from '../store/mapping';
import type { ProjectRepositories } from '../store/repos/repositories';
import { sharePreview, shareVector, teamNodeIds, teamRow } from './shareRows';
import type { SharePreview, ShareSource } from './shareRows';
import { REMOTE_WAIT_MS, TeamMemory, within } from './teamMemory';
import type { HitOrigin, TeamStatus } from './teamMemory';
import { ShareLedger } from './shareLedger';
import type { TeamRow } from './teamTable';
import { errorMessage } from '../errorText';

export const SHAREABLE: readonly SourceKind[] = ['memory', 'session_summary'];

function checkShareable(kind: SourceKind): void {
  if (!SHAREABLE.includes(kind)) throw new FilterError(`only memories and session summaries can be shared, not '${String(kind)}'`);
}

export interface ShareResult {
  preview: SharePreview;
  /** 'sent': in the team store now; 'queued': waits in the outbox for the store. */
  delivery: 'sent' | 'queued';
  status: TeamStatus;
}

export interface UnshareResult {
  node_id: string;
  delivery: 'sent' | 'queued';
  status: TeamStatus;
}

/** A team item as lists show it. */
export interface TeamItem {
  node_id: string;
  layer: string;
  type: string;
  title: string;
  text: string;
  shared_by: string;
  shared_at_epoch: number;
  origin: string;
}

export type TaggedHit = SearchHit & { origin?: HitOrigin };

export class TeamSharing {
  private identity: Promise<string> | null = null;

  /** `storeIdentity`: the personal store's identity (shareRows.storeIdentity); made only when `create`. */
  constructor(
    readonly team: TeamMemory,
    readonly author: string,
    private readonly storeIdentity: (create: boolean) => Promise<string | null>,
  ) {}

  /** The store's identity, made the first time a record is previewed or shared. */
  private store(): Promise<string> {
    this.identity ??= this.storeIdentity(true).then(
      (id) => id as string,
      (e: unknown) => {
        this.identity = null;
        throw e;
      },
    );
    return this.identity;
  }

  /** The store's identity if it has one (reads make none). */
  private async storeIfAny(): Promise<string | null> {
    if (this.identity) return this.identity;
    const id = await this.storeIdentity(false);
    if (id) this.identity ??= Promise.resolve(id);
    return id;
  }

  private async source(repos: ProjectRepositories, kind: SourceKind, id: number): Promise<ShareSource> {
    checkShareable(kind);
    const rows = await repos.cells.table.rows(`source_kind = ${sqlString(kind)} AND source_id = ${sqlInt(Number(id))}`, { limit: 1 });
    if (rows.length === 0) throw new FilterError(`no ${kind} ${id} in project ${repos.project}`);
    const row = rows[0];
    const embedModel = String(row.embed_model ?? '');
    return { cell: rowToCell(row), vector: embedModel ? (row.vector as ArrayLike<number>) : null, embedModel };
  }

  async preview(repos: ProjectRepositories, kind: SourceKind, id: number): Promise<SharePreview> {
    return sharePreview(await this.source(repos, kind, id), this.author, await this.store());
  }

  /** Shares a record; with `confirmed`, only if what would leave is still exactly what the person saw and confirmed. */
  async share(repos: ProjectRepositories, kind: SourceKind, id: number, embedder: QueryEmbedder | null, confirmed?: SharePreview): Promise<ShareResult> {
    const source = await this.source(repos, kind, id);
    const preview = sharePreview(source, this.author, await this.store());
    if (confirmed && JSON.stringify(preview) !== JSON.stringify({ ...preview, ...pickPreview(confirmed) })) {
      throw new FilterError(`${kind} ${id} changed since its preview was shown: nothing was shared; preview it again`);
    }
    // The vector too is made from what the preview shows, never from the stored (unredacted) text.
    const { vector, embedModel } = await shareVector(source, preview, embedder);
    // Recorded before it is queued: unshare and forget find it by this record, whatever the author is then.
    await this.team.ledger.add({ node_id: preview.node_id, project: preview.project, origin: preview.origin, shared_by: preview.shared_by });
    await this.team.share([teamRow({ ...source, vector, embedModel }, preview, Date.now())]);
    return { preview, delivery: await this.deliver(), status: this.team.status() };
  }

  /**
   * Unshares one item: by node id, or the caller's shares of one of their records (as recorded
   * when shared, whatever the author is now; else as keyed before records were kept). Throws
   * when the team store answered that there is nothing to unshare, rather than saying 'sent'.
   */
  async unshare(repos: ProjectRepositories, target: { node_id?: string; kind?: SourceKind; id?: number }): Promise<UnshareResult> {
    const project = repos.project;
    // The look-up and the send share one wait on the team store (REMOTE_WAIT_MS), as other calls have.
    const started = Date.now();
    // (node id, the author it was shared as): unshared by author, so that no one removes another's item.
    let targets: Array<{ node_id: string; shared_by: string }>;
    let maybe = false;
    if (target.node_id !== undefined) {
      if (typeof target.node_id !== 'string' || !/^[0-9a-f-]{36}$/i.test(target.node_id)) throw new FilterError(`'${String(target.node_id)}' is not a team node id`);
      const nodeId = target.node_id.toLowerCase();
      const recorded = await this.team.ledger.get(nodeId);
      // An item is of one project: another project's share, as recorded here, is no item of this one.
      if (recorded && recorded.project !== project) throw new FilterError(`no team item ${nodeId} in project ${project}: nothing was unshared`);
      if (recorded) targets = [{ node_id: nodeId, shared_by: recorded.shared_by }];
      else {
        const { sharedBy, answered } = await this.team.locate(project, [nodeId]);
        const by = sharedBy.get(nodeId);
        if (by !== undefined && by !== this.author) throw new FilterError(`team item ${nodeId} was shared by ${by}: only they can unshare it`);
        if (by === undefined && answered) throw new FilterError(`no team item ${nodeId} in project ${project}: nothing was unshared`);
        targets = [{ node_id: nodeId, shared_by: this.author }];
        maybe = by === undefined;
      }
    } else {
      if (!target.kind || target.id === undefined) throw new FilterError('unshare needs a team node id, or the kind and id of your shared record');
      checkShareable(target.kind);
      const id = Number(target.id);
      const recorded = await this.team.ledger.of(project, `${target.kind}/${id}`);
      const derived = teamNodeIds(project, this.author, target.kind, id, await this.storeIfAny()).filter((n) => !recorded.some((r) => r.node_id === n));
      const { sharedBy, answered } = derived.length > 0 ? await this.team.locate(project, derived) : { sharedBy: new Map<string, string>(), answered: true };
      targets = [...recorded.map((r) => ({ node_id: r.node_id, shared_by: r.shared_by })), ...derived.filter((n) => sharedBy.get(n) === this.author).map((n) => ({ node_id: n, shared_by: this.author }))];
      if (targets.length === 0) {
        if (answered) {
          throw new FilterError(
            `${target.kind} ${id} of project ${project} is not shared from this store as ${this.author}: nothing was unshared (an item shared under another git author or from another store: unshare it by its team node id from there)`,
          );
        }
        // The team store cannot be asked now: the unshare waits in the queue, and purges only if it finds the item.
        targets = derived.map((n) => ({ node_id: n, shared_by: this.author }));
        maybe = true;
      }
    }
    const byAuthor = new Map<string, string[]>();
    for (const t of targets) addToList(byAuthor, t.shared_by, t.node_id);
    for (const [by, ids] of byAuthor) await this.team.unshare(project, ids, by, { ifFound: maybe });
    await this.team.ledger.remove(targets.map((t) => t.node_id));
    return { node_id: targets[0].node_id, delivery: await this.deliver(Math.max(0, REMOTE_WAIT_MS - (Date.now() - started))), status: this.team.status() };
  }

  /**
   * After a forget: the caller's shares of the forgotten records (by kind and id; none when a
   * forget by id found nothing; null: every record of `project`, or of every project when that
   * is null too) are dropped from the queue and unshared from the team store: those recorded
   * when shared, and those keyed as the records' shares would be (found in this copy or not).
   */
  async forgotten(project: string | null, records: Record<SourceKind, number[]> | null): Promise<void> {
    if (records && project === null) return;
    const ledger = await this.team.ledger.all();
    let recorded = ledger.filter((e) => project === null || e.project === project);
    let derived: string[] | null = null;
    if (records) {
      const store = await this.storeIfAny();
      const origins = new Set<string>();
      derived = [];
      for (const [kind, ids] of Object.entries(records) as Array<[SourceKind, number[]]>) {
        if (!SHAREABLE.includes(kind)) continue;
        for (const id of ids) {
          origins.add(`${kind}/${id}`);
          derived.push(...teamNodeIds(project as string, this.author, kind, id, store));
        }
      }
      recorded = recorded.filter((e) => origins.has(e.origin));
      // A forget by id that found nothing shareable touches no share.
      if (derived.length === 0) return;
    }
    // A forget of whole projects takes back the author's shares made from this personal store
    // only: an item's key says which store shared it (teamNodeId, from its record), and the same
    // author on another machine shares from another store.
    const store = derived === null ? await this.storeIfAny() : null;
    const ours = (r: { node_id: string; project: string; origin: string }): boolean => {
      const m = /^(memory|session_summary)\/([0-9]+)$/.exec(r.origin);
      return m !== null && teamNodeIds(r.project, this.author, m[1] as SourceKind, Number(m[2]), store).includes(r.node_id);
    };
    await this.team.forgetShares(project, recorded, derived, this.author, ours);
    await this.team.ledger.remove(recorded.map((e) => e.node_id));
  }

  /** Tries to send the outbox now; an unreachable store leaves it queued. */
  private async deliver(waitMs = REMOTE_WAIT_MS): Promise<'sent' | 'queued'> {
    // Unreachable, or silent past REMOTE_WAIT_MS: queued, it goes out when the store answers.
    await within(this.team.sync().catch(() => undefined), waitMs, () => undefined);
    return this.team.status().pending === 0 ? 'sent' : 'queued';
  }

  async list(project: string): Promise<TeamItem[]> {
    return (await this.team.list(project)).map(toItem);
  }

  /**
   * Personal and team hits ranked together by their fused relevance. A team item that is the
   * caller's own shared copy of a record found locally is left out (the same text twice), and so
   * is one under the node id of a record found locally.
   */
  async search(local: SearchHit[], project: string, text: string, embedder: QueryEmbedder | null, options: Parameters<TeamMemory['search']>[2], log: (m: string) => void): Promise<TaggedHit[]> {
    let team: TaggedHit[] = [];
    try {
      team = await this.team.search(text, embedder, { ...options, project });
    } catch (e) {
      log(`team search failed, personal results only: ${errorMessage(e)}`);
    }
    const tagged: TaggedHit[] = local.map((h) => ({ ...h, origin: { store: 'local' as const } }));
    if (team.length === 0) return tagged;
    // The caller's shares of these records: keyed with this store's identity, before it, or as recorded.
    const store = await this.storeIfAny().catch(() => null);
    const recorded = await this.team.ledger.all(false).catch(() => []);
    const origins = new Set(local.map((h) => `${h.cell.source_kind}/${h.cell.source_id}`));
    // A team row under the node id of one of the caller's own records (any writer of the bucket
    // can write one) is left out too: one id would name two texts, and it hydrates to the record.
    const mine = new Set([
      ...local.map((h) => h.cell.node_id),
      ...local.flatMap((h) => teamNodeIds(project, this.author, h.cell.source_kind, h.cell.source_id, store)),
      ...recorded.filter((e) => e.project === project && origins.has(e.origin)).map((e) => e.node_id),
    ]);
    const merged: TaggedHit[] = [...tagged, ...team.filter((h) => !mine.has(h.cell.node_id))];
    return merged.sort((a, b) => b.score - a.score).slice(0, options.limit);
  }

  async node(project: string, nodeId: string): Promise<NodeDetail | null> {
    const row = await this.team.item(project, nodeId);
    return row ? { cell: rowToCell(row), source: teamMemoryRecord(row) } : null;
  }
}

function toItem(r: TeamRow): TeamItem {
  return {
    node_id: r.node_id,
    layer: String(r.layer),
    type: String(r.type),
    title: r.title,
    text: r.text,
    shared_by: r.shared_by,
    shared_at_epoch: Number(r.shared_at_epoch),
    origin: r.origin,
  };
}

/** A team item in the shape of a memory record, for the hydrating surfaces (REST, CLI `node`). */
function teamMemoryRecord(r: TeamRow): Memory {
  return {
    id: Number(r.source_id),
    project: r.project,
    title: r.title,
    text: r.text,
    memory_type: String(r.type),
    created_at_epoch: Number(r.created_at_epoch),
    updated_at_epoch: Number(r.shared_at_epoch),
    status: 'active',
    scope: 'team',
    classification: 'shared',
    classification_reason: `shared by ${r.shared_by}`,
    current_context_eligible: true,
    branch: (r.branch as string | null) ?? null,
    files: (r.files as string | null) ?? null,
    session_id: null,
    topic_key: null,
    topic_trace: null,
    temporal_facts: null,
    supersedes: null,
    superseded_by: null,
    valid_to_epoch: null,
    conflicts: null,
  };
}

/** The fields of a preview a caller gave back, and only those (anything else it holds is not compared). */
function pickPreview(p: SharePreview): SharePreview {
  const { node_id, project, origin, layer, type, title, text, files, branch, shared_by } = p;
  return { node_id, project, origin, layer, type, title, text, files, branch, shared_by };
}

/**
 * A forget's team side in the folders of the team stores this personal store shared to other
 * than `except` (the one the engine is configured with, if any), under `base`: a forget made
 * while a team store is not configured here (the CLI without --team-store, a setting removed
 * since) still takes its shares back. What a folder's ledger says was shared of the forgotten
 * records leaves its cache and queue at once, and the unshares wait in its outbox for the next
 * open with that team store. Folders with nothing shared of them are not touched.
 */
export async function forgetInTeamFolders(base: string, except: string | null, dimension: number, project: string | null, records: Record<SourceKind, number[]> | null, log: (m: string) => void): Promise<void> {
  if (records && project === null) return;
  const origins = records ? new Set(SHAREABLE.flatMap((kind) => (records[kind] ?? []).map((id) => `${kind}/${id}`))) : null;
  const root = path.join(base, 'team');
  for (const entry of await fsp.readdir(root, { withFileTypes: true }).catch(() => [])) {
    const dir = path.join(root, entry.name);
    if (!entry.isDirectory() || (except !== null && path.resolve(except) === path.resolve(dir))) continue;
    const shared = (await new ShareLedger(path.join(dir, 'shared')).all()).filter((e) => (project === null || e.project === project) && (!origins || origins.has(e.origin)));
    if (shared.length === 0) continue;
    const team = await TeamMemory.open({ uri: null, stateDir: dir, dimension, log });
    try {
      // Only what was recorded: no author is known here to derive other keys from.
      await team.forgetShares(project, shared, [], '');
      await team.ledger.remove(shared.map((e) => e.node_id));
    } finally {
      await team.close();
    }
  }
}
