// Sharing between a personal store and a team store: the engine's share, unshare and team
// reads, kept here so the engine stays a facade. Only memories and session summaries can be
// shared; observations (raw activity) stay personal.

import type { NodeDetail, SearchHit } from '../api';
import type { Memory, SourceKind } from '../model/records';
import type { QueryEmbedder } from '../retrieve/hybrid';
import { FilterError, sqlInt, sqlString } from '../store/filters';
import { rowToCell } from '../store/mapping';
import type { ProjectRepositories } from '../store/repos/repositories';
import { sharePreview, teamNodeId, teamRow } from './shareRows';
import type { SharePreview, ShareSource } from './shareRows';
import { REMOTE_WAIT_MS, within } from './teamMemory';
import type { HitOrigin, TeamMemory, TeamStatus } from './teamMemory';
import type { TeamRow } from './teamTable';
import { errorMessage } from '../errorText';

export const SHAREABLE: readonly SourceKind[] = ['memory', 'session_summary'];

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
  constructor(
    readonly team: TeamMemory,
    readonly author: string,
  ) {}

  private async source(repos: ProjectRepositories, kind: SourceKind, id: number): Promise<ShareSource> {
    if (!SHAREABLE.includes(kind)) throw new FilterError(`only memories and session summaries can be shared, not '${String(kind)}'`);
    const rows = await repos.cells.table.rows(`source_kind = ${sqlString(kind)} AND source_id = ${sqlInt(Number(id))}`, { limit: 1 });
    if (rows.length === 0) throw new FilterError(`no ${kind} ${id} in project ${repos.project}`);
    const row = rows[0];
    const embedModel = String(row.embed_model ?? '');
    return { cell: rowToCell(row), vector: embedModel ? (row.vector as ArrayLike<number>) : null, embedModel };
  }

  async preview(repos: ProjectRepositories, kind: SourceKind, id: number): Promise<SharePreview> {
    return sharePreview(await this.source(repos, kind, id), this.author);
  }

  /** Shares a record; with `confirmed`, only if what would leave is still exactly what the person saw and confirmed. */
  async share(repos: ProjectRepositories, kind: SourceKind, id: number, embedder: QueryEmbedder | null, confirmed?: SharePreview): Promise<ShareResult> {
    const source = await this.source(repos, kind, id);
    const preview = sharePreview(source, this.author);
    if (confirmed && JSON.stringify(preview) !== JSON.stringify({ ...preview, ...pickPreview(confirmed) })) {
      throw new FilterError(`${kind} ${id} changed since its preview was shown: nothing was shared; preview it again`);
    }
    if (!source.vector && embedder) {
      // Not embedded locally yet: embed what is sent (the redacted text), so teammates' vector search finds it.
      const [v] = await embedder.embed([`${preview.title}\n${preview.text}`]).catch(() => [null]);
      if (v && v.length === embedder.dimension) Object.assign(source, { vector: v, embedModel: embedder.name });
    }
    await this.team.share([teamRow(source, preview, Date.now())]);
    return { preview, delivery: await this.deliver(), status: this.team.status() };
  }

  async unshare(repos: ProjectRepositories, target: { node_id?: string; kind?: SourceKind; id?: number }): Promise<UnshareResult> {
    let nodeId = target.node_id;
    if (!nodeId) {
      if (!target.kind || target.id === undefined) throw new FilterError('unshare needs a team node id, or the kind and id of your shared record');
      nodeId = teamNodeId(repos.project, this.author, target.kind, Number(target.id));
    }
    if (!/^[0-9a-f-]{36}$/i.test(nodeId)) throw new FilterError(`'${nodeId}' is not a team node id`);
    const item = await this.team.item(repos.project, nodeId.toLowerCase());
    if (item && item.shared_by !== this.author) throw new FilterError(`team item ${nodeId.toLowerCase()} was shared by ${item.shared_by}: only they can unshare it`);
    await this.team.unshare(repos.project, [nodeId.toLowerCase()], this.author);
    return { node_id: nodeId.toLowerCase(), delivery: await this.deliver(), status: this.team.status() };
  }

  /**
   * After a forget: the caller's shares of the forgotten records (by kind and id; none when a
   * forget by id found nothing; null: every record of `project`, or of every project when that
   * is null too) are dropped from the queue and unshared from the team store.
   */
  async forgotten(project: string | null, records: Record<SourceKind, number[]> | null): Promise<void> {
    if (records && project === null) return;
    const nodeIds = records ? (Object.entries(records) as Array<[SourceKind, number[]]>).flatMap(([kind, ids]) => ids.map((id) => teamNodeId(project as string, this.author, kind, id))) : null;
    // A forget by id that found nothing touches no share.
    if (nodeIds?.length === 0) return;
    await this.team.forgetShares(project, nodeIds, this.author);
  }

  /** Tries to send the outbox now; an unreachable store leaves it queued. */
  private async deliver(): Promise<'sent' | 'queued'> {
    // Unreachable, or silent past REMOTE_WAIT_MS: queued, it goes out when the store answers.
    await within(this.team.sync().catch(() => undefined), REMOTE_WAIT_MS, () => undefined);
    return this.team.status().pending === 0 ? 'sent' : 'queued';
  }

  async list(project: string): Promise<TeamItem[]> {
    return (await this.team.list(project)).map(toItem);
  }

  /**
   * Personal and team hits ranked together by their fused relevance. A team item that is the
   * caller's own shared copy of a record found locally is left out (the same text twice).
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
    const mine = new Set(local.map((h) => teamNodeId(project, this.author, h.cell.source_kind, h.cell.source_id)));
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
