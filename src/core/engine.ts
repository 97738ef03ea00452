// MemoryEngine: the one object the surfaces (MCP, CLI, extension) talk to. A thin facade: the
// repositories (store/repos) own the SQL and confine every read and write to one project;
// sessions, the capture queue and background upkeep are parts of their own.

import type {
  ForgetReport,
  ForgetRequest,
  MemoryEngineApi,
  MemoryInput,
  NodeDetail,
  ObservationInput,
  SearchHit,
  SearchOptions,
  SessionEndReason,
  SessionInfo,
  StoreStats,
} from './api';
import type { Embedder } from './embed/embedder';
import { HashedEmbedder } from './embed/hashed';
import { VectorBackfill } from './embed/backfill';
import type { Entity, Memory, Observation, Relationship, RequestLogEntry, Scope, SessionSummary, SourceKind } from './model/records';
import { redact } from './capture/redact';
import { cleanList, prepareObservation } from './capture/prepare';
import { WriteQueue } from './capture/writeQueue';
import { ExtractiveSummariser } from './compress/summariser';
import type { Summariser } from './compress/summariser';
import { compressSession } from './compress/session';
import { applyMemoryFacts, buildMemory } from './compress/promote';
import { SessionRegistry } from './sessions';
import { observationFiles } from './store/cells';
import { FilterError, projectWhere, sqlString, validType } from './store/filters';
import { forgetRecords } from './store/forget';
import { Maintenance } from './store/maintenance';
import { exportJsonl, importJsonl } from './store/portability';
import { checkProject } from './store/projectTable';
import { Repositories } from './store/repos/repositories';
import type { ProjectRepositories } from './store/repos/repositories';
import type { RequestLogRetention } from './store/repos/requestLog';
import { SCHEMA_VERSION, TABLES } from './store/schema';
import { Store } from './store/store';
import { MaintenanceLease } from './store/lease';
import { localPath } from './store/location';

export interface MemoryEngineOptions {
  storeUri: string;
  /** 'none': full text only. Default: the hashed n-gram embedder (no model to load). */
  embedder?: Embedder | 'none';
  summariser?: Summariser;
  /** A session ends after this much quiet time (default 30 minutes). */
  sessionIdleMs?: number;
  /** Token budget of one session summary (default 600). */
  summaryBudgetTokens?: number;
  /** Capture queue: flush at this many events or after this delay (defaults 200, 500 ms). */
  batchSize?: number;
  batchDelayMs?: number;
  /** Background compaction and pruning interval (default 60 s; 0 disables the timer). */
  maintenanceIntervalMs?: number;
  /** Near-duplicate window: same session, type, files and title within it are merged (default 30 min). */
  duplicateWindowMs?: number;
  /** How long and how many request-log entries are kept (default 30 days, 10,000). */
  requestLogRetention?: RequestLogRetention;
  storageOptions?: Record<string, string>;
  logger?: (msg: string) => void;
}

interface QueuedEvent {
  input: ObservationInput;
  scope: Scope;
}

export class MemoryEngine implements MemoryEngineApi {
  private readonly sessions: SessionRegistry;
  private readonly queue: WriteQueue<QueuedEvent>;
  private readonly timers: NodeJS.Timeout[] = [];
  private writesSinceOptimize = 0;
  private closed = false;
  private backfill: VectorBackfill | null = null;
  private readonly log: (msg: string) => void;
  private readonly sessionIdleMs: number;
  readonly summaryBudgetTokens: number;
  readonly repos: Repositories;
  readonly maintenance: Maintenance;
  /** Background work (embedding, compaction, repair) runs only in the process holding it. */
  readonly lease: MaintenanceLease;

  private constructor(
    readonly store: Store,
    readonly embedder: Embedder | null,
    readonly summariser: Summariser,
    options: MemoryEngineOptions,
  ) {
    this.log = options.logger ?? (() => undefined);
    this.sessionIdleMs = options.sessionIdleMs ?? 30 * 60_000;
    this.summaryBudgetTokens = options.summaryBudgetTokens ?? 600;
    this.lease = new MaintenanceLease(store.local ? localPath(store.uri) : null);
    this.repos = new Repositories(store, {
      onCellsWritten: () => {
        this.writesSinceOptimize++;
        this.kickVectors();
      },
      duplicateWindowMs: options.duplicateWindowMs ?? 30 * 60_000,
      log: this.log,
    });
    this.maintenance = new Maintenance(this.repos, { annIndex: embedder !== null, requestLogRetention: options.requestLogRetention, log: this.log });
    // A branch switch ends the session; its compression runs in the background.
    this.sessions = new SessionRegistry((ended) => void this.endSession({ project: ended.project }, ended.id, 'branch_switch').catch((e) => this.log(`ending session ${ended.id}: ${String(e)}`)));
    this.queue = new WriteQueue<QueuedEvent>({
      write: (batch) => this.writeObservations(batch),
      batchSize: options.batchSize ?? 200,
      delayMs: options.batchDelayMs ?? 500,
      log: this.log,
    });
  }

  get storeUri(): string {
    return this.store.uri;
  }

  static async open(options: MemoryEngineOptions): Promise<MemoryEngine> {
    const embedder = options.embedder === 'none' ? null : (options.embedder ?? new HashedEmbedder());
    const store = await Store.open({
      uri: options.storeUri,
      dimension: embedder?.dimension ?? 512,
      storageOptions: options.storageOptions,
      logger: options.logger,
    });
    if (embedder && embedder.dimension !== store.dimension) {
      options.logger?.(`embedder ${embedder.name} has ${embedder.dimension} dimensions, the store ${store.dimension}: re-creating vectors`);
      await store.resizeVectors(embedder.dimension);
    }
    if (embedder) await store.setMeta({ embed_model: embedder.name, embed_dimension: String(embedder.dimension) });
    const engine = new MemoryEngine(store, embedder, options.summariser ?? new ExtractiveSummariser(), options);
    // A forget that a crash interrupted is finished before anything is read.
    await engine.maintenance.resumeForget();
    if (embedder) {
      engine.backfill = new VectorBackfill({
        cells: () => store.table(TABLES.cells),
        embedder,
        onError: (e) => engine.log(`embedding queue: ${e.message}`),
      });
    }
    await engine.takeLease();
    engine.startTimers(options.maintenanceIntervalMs ?? 60_000);
    return engine;
  }

  /**
   * Takes or renews the maintenance lease. On taking it: cells a crash left out are given back
   * (before the open resolves, so that a search right after finds every record), the request
   * log's retention is applied, and cells left unembedded (by an earlier run, or another model)
   * are picked up in the background.
   */
  private async takeLease(): Promise<void> {
    const had = this.lease.isHeld;
    if (!(await this.lease.refresh()) || this.closed) return;
    // Another process may have died between a record and its cell: the holder looks (a count
    // comparison unless something is missing) every time it renews.
    await this.maintenance.repairCells().catch((e) => this.log(`repair: ${String((e as Error).message ?? e)}`));
    if (had) return;
    // A store nobody kept open for a while holds old requests: the retention applies from the start.
    await this.maintenance.pruneRequestLog().catch((e) => this.log(`request log retention: ${String((e as Error).message ?? e)}`));
    this.backfill?.kick();
  }

  private startTimers(maintenanceMs: number): void {
    const lease = setInterval(() => void this.takeLease(), 10_000);
    lease.unref();
    this.timers.push(lease);
    const orphans = setTimeout(() => void this.endOrphanSessions().catch((e) => this.log(`orphan sessions: ${String(e)}`)), 5000);
    orphans.unref();
    this.timers.push(orphans);
    const idleCheck = setInterval(() => void this.endIdleSessions(), Math.max(1000, Math.min(60_000, this.sessionIdleMs / 2)));
    idleCheck.unref();
    this.timers.push(idleCheck);
    if (maintenanceMs > 0) {
      const t = setInterval(() => {
        if (this.writesSinceOptimize > 0 && this.lease.isHeld) void this.optimize();
      }, maintenanceMs);
      t.unref();
      this.timers.push(t);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The memory engine is closed');
  }

  /** The repositories of the scope's project: every read and write below goes through them. */
  private scoped(scope: Scope): ProjectRepositories {
    if (!scope || typeof scope !== 'object') throw new FilterError('a scope needs a project name');
    return this.repos.forProject(checkProject(scope.project));
  }

  // ---------------------------------------------------------------- sessions

  currentSessionId(scope: Scope): string {
    checkProject(scope?.project);
    return this.sessions.current(scope.project, scope.branch ?? null, Date.now()).id;
  }

  /**
   * Sessions a crashed or killed process never ended have observations and no summary: once
   * they are idle, summarise them like any idle session. Runs once, shortly after open.
   */
  async endOrphanSessions(): Promise<number> {
    const cutoff = Date.now() - this.sessionIdleMs;
    let ended = 0;
    for (const project of await this.maintenance.projects()) {
      const repos = this.repos.forProject(project);
      const last = new Map<string, number>();
      for (const r of await repos.observations.sessionRows(`status = 'active' AND type <> 'merged'`)) {
        const id = String(r.memory_session_id);
        last.set(id, Math.max(last.get(id) ?? 0, Number(r.created_at_epoch)));
      }
      const summarised = await repos.summaries.summarisedSessions();
      for (const [id, at] of last) {
        if (summarised.has(id) || this.sessions.isOpen(project, id) || at > cutoff || this.closed) continue;
        await this.endSession({ project }, id, 'idle').catch((e) => this.log(`ending orphan session ${id}: ${String(e)}`));
        ended++;
      }
    }
    return ended;
  }

  private async endIdleSessions(): Promise<void> {
    for (const s of this.sessions.idle(Date.now(), this.sessionIdleMs)) {
      await this.endSession({ project: s.project }, s.id, 'idle').catch((e) => this.log(`ending idle session ${s.id}: ${String(e)}`));
    }
  }

  async endSession(scope: Scope, memorySessionId: string, reason: SessionEndReason): Promise<SessionSummary | null> {
    this.assertOpen();
    const repos = this.scoped(scope);
    if (typeof memorySessionId !== 'string' || memorySessionId.length === 0) throw new FilterError('a session id is a non-empty string');
    this.sessions.close(repos.project, memorySessionId);
    await this.flush();
    return compressSession({ repos, summariser: this.summariser, summaryBudgetTokens: this.summaryBudgetTokens }, memorySessionId, reason);
  }

  // ---------------------------------------------------------------- writing

  async observe(inputs: ObservationInput[], scope: Scope): Promise<Observation[]> {
    this.assertOpen();
    if (!Array.isArray(inputs)) throw new FilterError('observe expects a list of observations');
    if (inputs.length === 0) return [];
    return this.writeObservations(inputs.map((input) => ({ input, scope })));
  }

  enqueue(input: ObservationInput, scope: Scope): void {
    if (this.closed) return;
    // Invalid events are dropped here, one by one, so they cannot sink a whole batch later.
    try {
      if (!input || typeof input !== 'object') throw new FilterError('an observation must be an object');
      validType(String(input.type ?? ''));
      projectWhere(scope);
    } catch (e) {
      this.log(`capture event dropped: ${String((e as Error).message ?? e)}`);
      return;
    }
    this.queue.push({ input, scope });
  }

  flush(): Promise<void> {
    return this.queue.flush();
  }

  private async writeObservations(events: QueuedEvent[]): Promise<Observation[]> {
    const now = Date.now();
    // Prepared first, all of them, so one bad event rejects the call before anything is written.
    const prepared = events.map(({ input, scope }) => {
      const project = checkProject(scope?.project);
      return { project, p: prepareObservation(input, project, scope.branch, now, (branch, at) => this.sessions.current(project, branch, at).id) };
    });
    const results: Observation[] = new Array(events.length);
    const byProject = new Map<string, number[]>();
    prepared.forEach(({ project }, i) => {
      const list = byProject.get(project) ?? [];
      list.push(i);
      byProject.set(project, list);
    });
    for (const [project, idx] of byProject) {
      const out = await this.repos.forProject(project).observations.insert(idx.map((i) => prepared[i].p), now);
      idx.forEach((i, k) => (results[i] = out.results[k]));
      this.repos.graphQueue.push(out.written);
    }
    return results;
  }

  async remember(input: MemoryInput, scope: Scope): Promise<Memory> {
    this.assertOpen();
    const repos = this.scoped(scope);
    if (!input || typeof input.title !== 'string' || !input.title.trim() || typeof input.text !== 'string') {
      throw new FilterError('a memory needs a title and a text');
    }
    const [id] = await repos.ids.allocate(1);
    const memory = buildMemory(id, {
      ...input,
      title: redact(input.title.trim()),
      text: redact(input.text),
      memory_type: validType(input.memory_type ?? 'note'),
      files: cleanList(input.files, 'files'),
      branch: input.branch ?? scope.branch,
    }, scope, Date.now(), 'explicit');
    return applyMemoryFacts(repos.memories, memory, []);
  }

  // ---------------------------------------------------------------- reading

  async search(text: string, options: SearchOptions): Promise<SearchHit[]> {
    this.assertOpen();
    const limit = Math.max(1, Math.min(200, Math.floor(options.limit ?? 10)));
    return this.scoped(options.scope).cells.search(String(text ?? ''), this.embedder, {
      branch: options.scope.branch,
      filter: options.filter,
      layers: options.layers,
      limit,
    });
  }

  getObservations(ids: number[], scope: Scope, options: { includeSuppressed?: boolean } = {}): Promise<Observation[]> {
    return this.scoped(scope).observations.get(ids, options);
  }

  getSessionSummaries(ids: number[], scope: Scope): Promise<SessionSummary[]> {
    return this.scoped(scope).summaries.get(ids, { includeSuppressed: true });
  }

  getMemories(ids: number[], scope: Scope, options: { includeSuppressed?: boolean } = {}): Promise<Memory[]> {
    return this.scoped(scope).memories.get(ids, options);
  }

  async touch(kind: SourceKind, ids: number[], scope: Scope): Promise<void> {
    await this.record(this.scoped(scope), kind).touch(ids);
  }

  private record(repos: ProjectRepositories, kind: SourceKind): ProjectRepositories['observations'] | ProjectRepositories['memories'] | ProjectRepositories['summaries'] {
    if (kind === 'observation') return repos.observations;
    if (kind === 'memory') return repos.memories;
    if (kind === 'session_summary') return repos.summaries;
    throw new FilterError(`unknown kind '${String(kind)}': use observation, session_summary or memory`);
  }

  async getNode(nodeId: string, scope: Scope): Promise<NodeDetail | null> {
    if (typeof nodeId !== 'string' || !/^[0-9a-f-]{36}$/i.test(nodeId)) return null;
    const repos = this.scoped(scope);
    const cell = await repos.cells.node(nodeId);
    if (!cell) return null;
    const [source] = await this.record(repos, cell.source_kind).get([cell.source_id], { includeSuppressed: true });
    return source ? { cell, source } : null;
  }

  async listSessions(scope: Scope, limit = 20): Promise<SessionInfo[]> {
    const repos = this.scoped(scope);
    const rows = await repos.observations.sessionRows(scope.branch ? `(branch = ${sqlString(scope.branch)} OR branch IS NULL)` : null);
    const byId = new Map<string, SessionInfo>();
    for (const r of rows) {
      const id = String(r.memory_session_id);
      const t = Number(r.created_at_epoch);
      const s = byId.get(id) ?? { memory_session_id: id, project: repos.project, branch: (r.branch as string | null) ?? null, started_at_epoch: t, ended_at_epoch: null, observation_count: 0, summary: null };
      s.started_at_epoch = Math.min(s.started_at_epoch, t);
      s.observation_count++;
      byId.set(id, s);
    }
    const sessions = [...byId.values()].sort((a, b) => b.started_at_epoch - a.started_at_epoch).slice(0, Math.max(1, Math.min(500, limit)));
    const bySession = new Map(sessions.map((s) => [s.memory_session_id, s]));
    for (const summary of await repos.summaries.ofSessions(sessions.map((s) => s.memory_session_id))) {
      const s = bySession.get(summary.memory_session_id);
      if (s) {
        s.summary = summary;
        s.ended_at_epoch = summary.created_at_epoch;
      }
    }
    return sessions;
  }

  listObservations(scope: Scope, options: { sessionId?: string; limit?: number } = {}): Promise<Observation[]> {
    return this.scoped(scope).observations.list({ ...options, branch: scope.branch });
  }

  listMemories(scope: Scope, options: { includeSuppressed?: boolean } = {}): Promise<Memory[]> {
    return this.scoped(scope).memories.list({ ...options, branch: scope.branch });
  }

  async entities(scope: Scope, names: string[]): Promise<{ entities: Entity[]; relationships: Relationship[] }> {
    const repos = this.scoped(scope);
    await this.repos.graphQueue.drain();
    return repos.graph.neighbourhood(names);
  }

  // ---------------------------------------------------------------- curation

  async setStatus(kind: SourceKind, id: number, status: string, scope: Scope): Promise<void> {
    await this.record(this.scoped(scope), kind).setStatus(id, status);
  }

  async promote(observationId: number, scope: Scope): Promise<Memory> {
    const repos = this.scoped(scope);
    const [o] = await repos.observations.get([observationId]);
    if (!o) throw new Error(`No observation ${observationId} in project ${repos.project}`);
    const [id] = await repos.ids.allocate(1);
    const text = [o.narrative, ...(JSON.parse(o.facts ?? '[]') as string[])].filter(Boolean).join('\n') || (o.title ?? o.type);
    const memory = buildMemory(id, {
      title: o.title ?? o.type,
      text,
      memory_type: 'note',
      branch: o.branch ?? undefined,
      files: observationFiles(o),
      session_id: o.memory_session_id,
    }, scope, Date.now(), 'promoted');
    return applyMemoryFacts(repos.memories, memory, [o.id]);
  }

  async forget(request: ForgetRequest, scope: Scope | null): Promise<ForgetReport> {
    this.assertOpen();
    await this.flush();
    await this.repos.graphQueue.drain();
    // Let the embedding queue and compaction finish their batch first.
    await this.backfill?.idle();
    await this.maintenance.idle();
    const report = await forgetRecords(this.repos, request, scope);
    if (request.all) this.sessions.clear();
    else if (request.project) this.sessions.clear(request.project);
    return report;
  }

  // ---------------------------------------------------------------- prompts and request log

  addPrompt(scope: Scope, sessionId: string, prompt: string): Promise<void> {
    return this.scoped(scope).prompts.add(sessionId, prompt);
  }

  recentPrompts(scope: Scope, sessionId: string, limit: number): Promise<string[]> {
    return this.scoped(scope).prompts.recent(sessionId, limit);
  }

  logRequest(entry: RequestLogEntry): Promise<void> {
    return this.scoped({ project: entry?.project }).requests.log(entry);
  }

  listRequests(scope: Scope, limit = 50): Promise<RequestLogEntry[]> {
    return this.scoped(scope).requests.list(limit);
  }

  // ---------------------------------------------------------------- portability, health

  async exportJsonl(write: (line: string) => void, scope: Scope | null): Promise<number> {
    await this.flush();
    await this.repos.graphQueue.drain();
    return exportJsonl(this.store, write, scope);
  }

  async importJsonl(lines: AsyncIterable<string>): Promise<number> {
    this.assertOpen();
    const n = await importJsonl(this.repos, lines);
    this.repos.graphCache.clear();
    this.kickVectors();
    return n;
  }

  async stats(scope: Scope | null): Promise<StoreStats> {
    const where = scope ? `project = ${sqlString(checkProject(scope.project))}` : undefined;
    const model = this.embedder?.name ?? '';
    const projects = new Set<string>();
    for (const r of await this.store.rows(TABLES.cells, where ?? null, { select: ['project'] })) projects.add(String(r.project));
    const indices = await this.store.table(TABLES.cells).listIndices();
    return {
      observations: await this.store.count(TABLES.observations, where),
      session_summaries: await this.store.count(TABLES.sessionSummaries, where),
      memories: await this.store.count(TABLES.memories, where),
      cells: await this.store.count(TABLES.cells, where),
      cells_with_vectors: model ? await this.store.count(TABLES.cells, `${where ? `${where} AND ` : ''}embed_model = ${sqlString(model)}`) : 0,
      projects: [...projects].sort(),
      embedder: { name: this.embedder?.name ?? 'none', dimension: this.store.dimension },
      schema_version: SCHEMA_VERSION,
      store_uri: this.store.uri,
      ann_index: indices.some((i) => i.columns.includes('vector')),
    };
  }

  /** New cells wait for vectors: wake the background embedding queue (in the lease holder). */
  kickVectors(): void {
    if (this.lease.isHeld) this.backfill?.kick();
  }

  /** Resolves when the embedding queue has caught up (for tools that need vectors now, and tests). */
  async waitForVectors(): Promise<void> {
    await this.backfill?.idle();
  }

  /** Writes the queued entity-graph updates (tests and exports). */
  drainGraph(): Promise<void> {
    return this.repos.graphQueue.drain();
  }

  /** Background upkeep (see Maintenance.optimize); never throws. */
  optimize(olderThanMs?: number): Promise<void> {
    this.writesSinceOptimize = 0;
    return this.maintenance.optimize(olderThanMs);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    for (const t of this.timers) clearInterval(t);
    for (const t of this.timers) clearTimeout(t);
    await this.flush();
    for (const s of this.sessions.all()) {
      await this.endSession({ project: s.project }, s.id, 'shutdown').catch((e) => this.log(`ending session ${s.id} on shutdown: ${String(e)}`));
    }
    await this.repos.graphQueue.drain();
    await this.maintenance.idle();
    this.closed = true;
    await this.backfill?.stop();
    await this.lease.release();
    await this.embedder?.close?.();
    this.store.close();
  }
}
