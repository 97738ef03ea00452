// The entity graph of one project (files, symbols, commits, concepts and their edges), and the
// queue that derives it off the write path: mergeInserts on entities and relationships cost more
// than the observation write itself, so they are batched across calls. A queued observation may
// be forgotten before its graph is written, by any process: the queue holds the forget mark taken
// before the observation was stored, and settles forgets against it (see forget.ts).

import type { Entity, Memory, Observation, Relationship } from '../../model/records';
import { sqlIntList, sqlStringList } from '../filters';
import { settleForgets } from '../forget';
import { earlierMark, forgetMark, forgotSince, goneRecords } from '../forgetMarks';
import type { ForgetMark } from '../forgetMarks';
import { deriveGraph } from '../graph';
import { parseJson, rowToEntity, rowToRelationship } from '../mapping';
import { ProjectTable } from '../projectTable';
import { TABLES } from '../schema';
import { onePerKey } from '../store';
import type { Row, Store } from '../store';
import type { Repositories } from './repositories';
import { errorMessage } from '../../errorText';

const BATCH = 2000;
const CACHE_LIMIT = 200_000;

/** The names a neighbourhood is asked for: entity ids or labels, 100 at most. */
function neighbourhoodNames(names: string[]): string[] {
  return (names ?? []).map(String).filter(Boolean).slice(0, 100);
}

/** A decision or convention about files: a memory entity with 'decided' edges to them (null for any other memory). */
export function memoryGraph(memory: Memory, now: number): { entity: Row; relationships: Row[] } | null {
  const files = parseJson<string[]>(memory.files, []);
  if (files.length === 0 || !['decision', 'convention'].includes(memory.memory_type)) return null;
  const id = `memory:${memory.id}`;
  return {
    entity: { project: memory.project, id, label: memory.title, type: 'memory', properties: JSON.stringify({ memory_type: memory.memory_type }), updated_at_epoch: now },
    relationships: files.slice(0, 50).map((f) => ({ project: memory.project, source: id, target: `file:${f}`, type: 'decided', weight: 1, updated_at_epoch: now })),
  };
}

/**
 * The neighbourhood of `names` (as GraphRepository.neighbourhood reads it from the stored graph)
 * in the graph of these observations and memories alone: the graph of what a caller on one branch
 * reads, where the stored graph spans the project's branches.
 */
export function observedNeighbourhood(observations: Observation[], memories: Memory[], names: string[], now: number): { entities: Entity[]; relationships: Relationship[] } {
  const wanted = new Set(neighbourhoodNames(names));
  const graph = deriveGraph(observations, now);
  for (const m of memories) {
    const decided = memoryGraph(m, now);
    if (!decided) continue;
    graph.entities.push(decided.entity);
    graph.relationships.push(...decided.relationships);
  }
  const entities = graph.entities.map(rowToEntity);
  const named = new Set(entities.filter((e) => wanted.has(e.id) || wanted.has(e.label)).map((e) => e.id));
  const relationships = graph.relationships
    .map(rowToRelationship)
    .filter((r) => named.has(r.source) || named.has(r.target))
    .sort((a, b) => b.weight - a.weight)
    .slice(0, 500);
  return { entities: entities.filter((e) => named.has(e.id)), relationships };
}

/** Of two copies of a graph key (see onePerKey): the one of greater `rank`, then the greater by its other values. */
function greater(rank: string): (a: Row, b: Row) => boolean {
  const text = (r: Row): string => JSON.stringify(Object.keys(r).sort().map((k) => String(r[k])));
  return (a, b) => Number(a[rank]) > Number(b[rank]) || (Number(a[rank]) === Number(b[rank]) && text(a) > text(b));
}

/** Edge weights and known entities seen by this process, keyed with their project. */
export class GraphCache {
  readonly edgeWeights = new Map<string, number>();
  readonly knownEntities = new Set<string>();

  clear(): void {
    this.edgeWeights.clear();
    this.knownEntities.clear();
  }
}

export class GraphRepository {
  readonly entities: ProjectTable;
  readonly relationships: ProjectTable;
  /** Read to leave out the entities of suppressed memories (neighbourhood). */
  private readonly memories: ProjectTable;

  constructor(
    store: Store,
    readonly project: string,
    private readonly cache: GraphCache,
  ) {
    this.entities = new ProjectTable(store, TABLES.entities, project);
    this.relationships = new ProjectTable(store, TABLES.relationships, project);
    this.memories = new ProjectTable(store, TABLES.memories, project);
  }

  /**
   * The entities named (by id or label) and their edges. A memory's entity (memoryGraph) is its
   * title: a suppressed memory, hidden from search, is left out with its edges, as the graph of a
   * branch (observedNeighbourhood, from the memories listed) leaves it out.
   */
  async neighbourhood(names: string[]): Promise<{ entities: Entity[]; relationships: Relationship[] }> {
    const wanted = neighbourhoodNames(names);
    if (wanted.length === 0) return { entities: [], relationships: [] };
    const list = sqlStringList(wanted);
    const found = onePerKey(await this.entities.rows(`label IN ${list} OR id IN ${list}`), ['id'], greater('updated_at_epoch')).map(rowToEntity);
    const hidden = await this.hiddenMemories(found.map((e) => e.id));
    const entities = found.filter((e) => !hidden.has(e.id));
    const ids = entities.map((e) => e.id);
    let edges: Relationship[] = [];
    // Copies of an edge (see onePerKey) count once towards the 500 edges read.
    for (let limit = 500; ids.length > 0; limit *= 2) {
      const read = await this.relationships.rows(`source IN ${sqlStringList(ids)} OR target IN ${sqlStringList(ids)}`, { limit });
      edges = onePerKey(read, ['source', 'target', 'type'], greater('weight')).slice(0, 500).map(rowToRelationship);
      if (read.length < limit || edges.length === 500 || limit >= 4000) break;
    }
    const far = await this.hiddenMemories(edges.flatMap((r) => [r.source, r.target]));
    const relationships = edges.filter((r) => !far.has(r.source) && !far.has(r.target));
    relationships.sort((a, b) => b.weight - a.weight);
    return { entities, relationships };
  }

  /** Of these entity ids, the memories' (`memory:<id>`) whose memory is not shown: suppressed, or gone. */
  private async hiddenMemories(entityIds: string[]): Promise<Set<string>> {
    const named = new Map<number, string>();
    for (const id of entityIds) {
      const n = Number(/^memory:(\d{1,16})$/.exec(id)?.[1]);
      if (Number.isSafeInteger(n)) named.set(n, id);
    }
    const hidden = new Set(named.values());
    const ids = [...named.keys()];
    for (let i = 0; i < ids.length; i += 500) {
      for (const r of await this.memories.rows(`id IN ${sqlIntList(ids.slice(i, i + 500))} AND status <> 'suppressed'`, { select: ['id'] })) hidden.delete(`memory:${Number(r.id)}`);
    }
    return hidden;
  }

  /** Adds the observations' entities and edges; edge weights count sightings. */
  async add(observations: Observation[]): Promise<void> {
    const { entities, relationships } = deriveGraph(observations, Date.now());
    const { edgeWeights, knownEntities } = this.cache;
    const key = (r: Row): string => `${this.project}\u0000${r.source}\u0000${r.target}\u0000${r.type}`;
    if (edgeWeights.size > CACHE_LIMIT || knownEntities.size > CACHE_LIMIT) this.cache.clear();
    // Stored weights are read once per edge (by exact key), then kept in the cache.
    const unknown = relationships.filter((r) => !edgeWeights.has(key(r)));
    for (let i = 0; i < unknown.length; i += 200) {
      const chunk = unknown.slice(i, i + 200);
      const sources = sqlStringList([...new Set(chunk.map((r) => String(r.source)))]);
      const targets = sqlStringList([...new Set(chunk.map((r) => String(r.target)))]);
      const stored = await this.relationships.rows(`source IN ${sources} AND target IN ${targets}`, { select: ['source', 'target', 'type', 'weight'] });
      // An edge stored twice (see onePerKey) counts from its greatest weight, as it is read.
      for (const r of stored) edgeWeights.set(key(r), Math.max(Number(r.weight), edgeWeights.get(key(r)) ?? 0));
    }
    for (const r of relationships) {
      r.weight = Number(r.weight) + (edgeWeights.get(key(r)) ?? 0);
      edgeWeights.set(key(r), Number(r.weight));
    }
    const fresh = entities.filter((e) => !knownEntities.has(`${this.project}\u0000${e.id}`));
    await this.entities.upsert(['project', 'id'], fresh);
    for (const e of fresh) knownEntities.add(`${this.project}\u0000${e.id}`);
    await this.relationships.upsert(['project', 'source', 'target', 'type'], relationships);
  }

  /** A decision or convention about files joins the graph (see memoryGraph); other memories do not. */
  async addMemory(memory: Memory): Promise<void> {
    const graph = memoryGraph(memory, Date.now());
    if (!graph) return;
    await this.entities.upsert(['project', 'id'], [graph.entity]);
    await this.relationships.upsert(['project', 'source', 'target', 'type'], graph.relationships);
  }
}

interface Queued {
  observation: Observation;
  /** Taken before the observation was stored. */
  mark: ForgetMark;
}


/** Observations wait here, across projects and calls, until their graph is written. */
export class GraphQueue {
  private queue: Queued[] = [];
  private timer: NodeJS.Timeout | null = null;
  private run: Promise<void> = Promise.resolve();

  constructor(
    private readonly repos: Repositories,
    private readonly log: (message: string) => void,
  ) {}

  /** `mark`: the forget mark taken before the observations were stored. */
  push(observations: Observation[], mark: ForgetMark): void {
    if (observations.length === 0) return;
    for (const observation of observations) this.queue.push({ observation, mark });
    if (this.queue.length >= BATCH) void this.drain();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.drain(), 1000);
      this.timer.unref();
    }
  }

  /** Writes the queued graph updates; resolves when none are pending. Never throws. */
  drain(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const run = this.run.then(async () => {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, BATCH);
        const byProject = new Map<string, { list: Observation[]; mark: ForgetMark }>();
        for (const { observation, mark } of batch) {
          const project = String(observation.project);
          const entry = byProject.get(project);
          if (entry) {
            entry.list.push(observation);
            entry.mark = earlierMark(entry.mark, mark);
          } else byProject.set(project, { list: [observation], mark });
        }
        for (const [project, { list, mark }] of byProject) {
          await this.write(project, list, mark).catch((e) => this.log(`graph update failed: ${errorMessage(e)}`));
        }
      }
    });
    this.run = run;
    return run;
  }

  /**
   * A forget since `mark` may have removed some of the observations: those are left out, and one
   * that runs while the graph is written is settled after it (their entities forgotten again).
   */
  private async write(project: string, list: Observation[], mark: ForgetMark): Promise<void> {
    const repos = this.repos.forProject(project);
    let since = mark;
    let kept = list;
    if (await forgotSince(this.repos.store, mark, project)) {
      since = await forgetMark(this.repos.store);
      const gone = await goneRecords(this.repos.store, repos, { observation: list.map((o) => o.id) });
      kept = list.filter((o) => !gone.observation.has(o.id));
    }
    if (kept.length === 0) return;
    await repos.graph.add(kept);
    await settleForgets(this.repos, project, since, { observations: kept });
  }
}
