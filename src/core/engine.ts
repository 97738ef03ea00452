// MemoryEngine: the one object the surfaces (MCP, CLI, extension) talk to. A thin facade: the
// repositories (store/repos) own the SQL and confine every read and write to one project;
// sessions, the capture queue and background upkeep are parts of their own.

import { append } from './lists';
import type {
  ForgetReport,
  ForgetRequest,
  MemoryEngineApi,
  MemoryInput,
  MemoryOutline,
  NodeDetail,
  ObservationInput,
  RankedHit,
  SearchHit,
  SearchOptions,
  SessionEndReason,
  SessionInfo,
  StoreStats,
  TableCheck,
} from './api';
import type { Embedder } from './embed/embedder';
import { HashedEmbedder } from './embed/hashed';
import { VectorBackfill } from './embed/backfill';
import { ProjectQueryCaches } from './embed/queryCache';
import type { CachedQueryEmbedder } from './embed/queryCache';
import { Reranker } from './retrieve/rerank';
import type { RerankerConfig } from './retrieve/rerank';
import type { ConflictChoice, Entity, Memory, Observation, Relationship, RequestLogEntry, Scope, SessionSummary, SourceKind, TemporalFact } from './model/records';
import { projectWideBranch } from './model/branches';
import { cleanPaths, prepareObservation, storedKey, storedText } from './capture/prepare';
import { printable } from './model/printable';
import { WriteQueue } from './capture/writeQueue';
import { ExtractiveSummariser } from './compress/summariser';
import type { Summariser } from './compress/summariser';
import { buildMemory, memoryFacts } from './compress/promote';
import { applyMemoryFacts, editMemory, resolveConflict, setMemoryStatus } from './compress/supersede';
import { SessionKeeper } from './sessionKeeper';
import { DEFAULT_SESSION_IDLE_MINUTES } from './sessions';
import { Upkeep } from './upkeep';
import { observationFiles } from './store/cells';
import { FilterError, branchWhere, projectWhere, sqlString, validType } from './store/filters';
import { forgetRecords, purgeRows, replaceDocuments, settleForgets } from './store/forget';
import type { Forgotten } from './store/forget';
import { forgottenImports } from './store/forgetKeys';
import { forgetMark, forgotSince, pendingForgets } from './store/forgetMarks';
import type { ForgetMark } from './store/forgetMarks';
import { AccessQueue } from './store/accessQueue';
import { Maintenance } from './store/maintenance';
import { exportJsonl, importJsonl } from './store/portability';
import type { ImportLines, ImportOptions } from './store/portability';
import { checkProject } from './store/projectTable';
import { observedNeighbourhood } from './store/repos/graph';
import { checkIds } from './store/repos/records';
import { Repositories } from './store/repos/repositories';
import type { ProjectRepositories } from './store/repos/repositories';
import type { CellSearch } from './store/repos/cells';
import type { RequestLogRetention } from './store/repos/requestLog';
import { SCHEMA_VERSION, TABLES } from './store/schema';
import { Store } from './store/store';
import { MaintenanceLease } from './store/lease';
import { localPath } from './store/location';
import type { ObjectStoreSettings } from './store/objectStorage';
import { objectEndpointKey } from './store/objectStorage';
import { REMOTE_WAIT_MS, TeamMemory, teamStateFolder, within } from './team/teamMemory';
import type { TeamStatus } from './team/teamMemory';
import { TeamSharing, forgetInTeamFolders } from './team/sharing';
import type { ShareResult, TeamItem, UnshareResult } from './team/sharing';
import { storeIdentity } from './team/shareRows';
import type { SharePreview } from './team/shareRows';
import * as os from 'node:os';
import * as path from 'node:path';
import { errorMessage } from './errorText';
import { MAX_MEMORY_TEXT_CHARS, MAX_MEMORY_TITLE_CHARS, codePoints } from './model/limits';

export interface MemoryEngineOptions {
  storeUri: string;
  /**
   * 'none': full text only. Default: the hashed n-gram embedder (no model to load). A promise
   * (an embedder still loading its model) lets the store open meanwhile.
   */
  embedder?: Embedder | 'none' | Promise<Embedder | 'none'>;
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
  /** Rows from which a table is compacted (and its vector index built) in a child process (default UPKEEP_IN_CHILD_FROM). */
  upkeepInChildFrom?: number;
  /** Opens a store whose meta table was lost, making it anew (`doctor --rebuild-meta`; see Store.open). */
  rebuildMeta?: boolean;
  /**
   * Summarise, shortly after the open, the idle sessions no process ended (default true). The
   * evaluation turns it off: summaries written while questions are asked would move the
   * full-text statistics under them.
   */
  summariseOrphanSessions?: boolean;
  /**
   * Quiet time after a large vector write-back before the lease holder compacts and builds the
   * ANN index (default 10 s; every cell write meanwhile restarts it).
   */
  upkeepQuietMs?: number;
  /** Embedded cells from which the lease holder builds the ANN index (default DEFAULT_ANN_THRESHOLD). */
  annThreshold?: number;
  /** Near-duplicate window: same session, type, files and title within it are merged (default 30 min). */
  duplicateWindowMs?: number;
  /** How long and how many request-log entries are kept (default 30 days, 10,000). */
  requestLogRetention?: RequestLogRetention;
  /**
   * Projects a server is about to search: their full-text view is read in the background right
   * after the open, so that the first search does not wait for it.
   */
  warmProjects?: string[];
  /** Rows written outside the full-text index segments before the lease holder writes a new one (default 1,000). */
  lexiconMinDelta?: number;
  storageOptions?: Record<string, string>;
  /** For a store on object storage: the endpoint setting (credentials come from the environment). */
  objectStore?: ObjectStoreSettings;
  /** A team store shared with others: memories and summaries a person shares go there. */
  team?: TeamOptions;
  /** A second-stage reranker every search goes through (off when absent). */
  reranker?: RerankerConfig | null;
  logger?: (msg: string) => void;
}

/** When a promoted observation said what it says: its own date, one after `now` (a client's clock) or none as `now`. */
function saidAt(epoch: number | null | undefined, now: number): number {
  return typeof epoch === 'number' && Number.isFinite(epoch) && epoch > 0 ? Math.min(epoch, now) : now;
}

/** Hits a search returns: 10 unless asked, at most 200. */
function searchLimit(options: SearchOptions): number {
  return Math.max(1, Math.min(200, Math.floor(options.limit ?? 10)));
}

export interface TeamOptions {
  uri: string;
  /** Who shares (`Name <email>`, see gitAuthor). */
  author: string;
  /** Outbox and read cache (default: in the personal store's folder, or ~/.code-memory). */
  stateDir?: string;
  retryMs?: number;
  refreshMs?: number;
  env?: NodeJS.ProcessEnv;
}

interface QueuedEvent {
  input: ObservationInput;
  scope: Scope;
}

export class MemoryEngine implements MemoryEngineApi {
  private readonly sessions: SessionKeeper;
  private readonly upkeep: Upkeep;
  private readonly queue: WriteQueue<QueuedEvent>;
  private closed = false;
  private backfill: VectorBackfill | null = null;
  /** Query vectors for search, cached per text (never used by the embedding queue). */
  private readonly queryEmbedders: ProjectQueryCaches | null;
  private readonly reranker: Reranker | null;
  private readonly access: AccessQueue;
  private readonly trailing = new Set<Promise<void>>();
  private sharing: TeamSharing | null = null;
  /** Where the folders of the team stores this store shared to are (`<base>/team/<hash>`). */
  private teamBase: string | null = null;
  private readonly log: (msg: string) => void;
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
    const sessionIdleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MINUTES * 60_000;
    this.summaryBudgetTokens = options.summaryBudgetTokens ?? 600;
    this.lease = new MaintenanceLease(store.local ? localPath(store.uri) : null);
    this.repos = new Repositories(store, {
      onCellsWritten: () => this.upkeep.cellsWritten(),
      duplicateWindowMs: options.duplicateWindowMs ?? 30 * 60_000,
      log: this.log,
    });
    this.maintenance = new Maintenance(this.repos, {
      annIndex: embedder !== null,
      annThreshold: options.annThreshold,
      requestLogRetention: options.requestLogRetention,
      lexiconMinDelta: options.lexiconMinDelta,
      log: this.log,
    });
    this.queryEmbedders = embedder ? new ProjectQueryCaches(embedder) : null;
    this.reranker = options.reranker?.endpoint ? new Reranker(options.reranker, this.log) : null;
    this.access = new AccessQueue((project, kind, ids, at) => this.record(this.repos.forProject(project), kind).touch(ids, at), this.log);
    this.upkeep = new Upkeep({
      lease: this.lease,
      maintenance: this.maintenance,
      backfill: () => this.backfill,
      closed: () => this.closed,
      endIdleSessions: () => this.sessions.endIdle(),
      endOrphanSessions: () => this.sessions.endOrphans(),
      resumeForgets: () => this.resumeForgets(),
      log: this.log,
      maintenanceMs: options.maintenanceIntervalMs ?? 60_000,
      upkeepQuietMs: options.upkeepQuietMs ?? 10_000,
      sessionIdleMs,
      summariseOrphans: options.summariseOrphanSessions ?? true,
    });
    this.sessions = new SessionKeeper({
      store,
      repos: this.repos,
      summariser,
      summaryBudgetTokens: this.summaryBudgetTokens,
      sessionIdleMs,
      flush: () => this.flush(),
      projects: () => this.maintenance.projects(),
      closing: () => this.upkeep.closing,
      assertOpen: () => this.assertOpen(),
      log: this.log,
    });
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
    // The store opens while the embedder loads its model: neither waits for the other.
    const loading: Promise<Embedder | null> = Promise.resolve(options.embedder ?? new HashedEmbedder()).then((e) => (e === 'none' ? null : e));
    // A failure is reported once the store is open (below); until then it is not unhandled.
    loading.catch(() => undefined);
    let store: Store;
    try {
      store = await Store.open({
        uri: options.storeUri,
        dimension: async () => (await loading)?.dimension ?? 512,
        storageOptions: options.storageOptions,
        objectStore: options.objectStore,
        logger: options.logger,
        upkeepInChildFrom: options.upkeepInChildFrom,
        rebuildMeta: options.rebuildMeta,
      });
    } catch (error) {
      void loading.then((e) => e?.close?.(), () => undefined);
      throw error;
    }
    let embedder: Embedder | null;
    try {
      embedder = await loading;
    } catch (error) {
      store.close();
      throw error;
    }
    if (embedder && embedder.dimension !== store.dimension) {
      options.logger?.(`embedder ${embedder.name} has ${embedder.dimension} dimensions, the store ${store.dimension}: re-creating vectors`);
      await store.resizeVectors(embedder.dimension);
    }
    // Written only when the model changed: every write is a new version of the meta table.
    if (embedder && ((await store.getMeta('embed_model')) !== embedder.name || (await store.getMeta('embed_dimension')) !== String(embedder.dimension))) {
      await store.setMeta({ embed_model: embedder.name, embed_dimension: String(embedder.dimension) });
    }
    const engine = new MemoryEngine(store, embedder, options.summariser ?? new ExtractiveSummariser(), options);
    // A forget that a crash interrupted is finished before anything is read.
    const resumed = await engine.maintenance.resumeForget();
    if (embedder) {
      engine.backfill = new VectorBackfill({
        cells: () => store.table(TABLES.cells),
        embedder,
        mutate: (write) => store.gate.mutate(TABLES.cells, write),
        onError: (e) => engine.log(`embedding queue: ${errorMessage(e)}`),
        // A large write-back leaves many fragments and unindexed vectors: compact and build
        // the ANN index now rather than at the next timer tick (only in the lease holder).
        onCaughtUp: (embedded) => engine.upkeep.scheduleUpkeep(embedded),
      });
    }
    // Next to the personal store's data (or under one named after it, for a store on object storage).
    engine.teamBase = store.local
      ? localPath(store.uri)
      : await teamStateFolder(path.join(os.homedir(), '.code-memory'), store.uri, options.logger, objectEndpointKey(store.uri, process.env, options.storageOptions?.endpoint ? { endpoint: options.storageOptions.endpoint } : options.objectStore));
    if (options.team) {
      // Under the personal store's base, so two personal stores never share an outbox; named
      // after the store's location as parsed: `s3://team/acme` and `s3://team/acme/` share one.
      const base = engine.teamBase;
      const team = await TeamMemory.open({
        uri: options.team.uri,
        // And after its server: the same bucket and prefix on another endpoint is another store.
        stateDir: options.team.stateDir ?? (await teamStateFolder(base, options.team.uri, options.logger, objectEndpointKey(options.team.uri, options.team.env ?? process.env, options.objectStore))),
        dimension: store.dimension,
        env: options.team.env,
        objectStore: options.objectStore,
        retryMs: options.team.retryMs,
        refreshMs: options.team.refreshMs,
        log: options.logger,
        // retrieve_memory's log entries quote team items by `team/<node id>`.
        onGone: (nodeIds) => engine.forgetTeamQuotes(nodeIds),
      });
      // The personal store's identity goes into the keys of its shares (records' ids are per store).
      engine.sharing = new TeamSharing(team, options.team.author, (create) => storeIdentity(store, create));
    }
    for (const forgotten of resumed) await engine.forgetShares(forgotten);
    await engine.upkeep.takeLease();
    engine.upkeep.start();
    for (const project of options.warmProjects ?? []) {
      void engine.repos.forProject(checkProject(project)).cells.warm().catch((e) => engine.log(`reading the full-text view of ${project}: ${errorMessage(e)}`));
    }
    return engine;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The memory engine is closed');
  }

  /** The repositories of the scope's project: every read and write below goes through them. */
  private scoped(scope: Scope): ProjectRepositories {
    if (!scope || typeof scope !== 'object') throw new FilterError('a scope needs a project name');
    return this.repos.forProject(checkProject(scope.project), scope.defaultBranch);
  }

  // ---------------------------------------------------------------- sessions

  currentSessionId(scope: Scope): Promise<string> {
    return this.sessions.currentId(scope);
  }

  endCurrentSession(scope: Scope, reason: SessionEndReason): Promise<{ sessionId: string; summary: SessionSummary | null }> {
    return this.sessions.endCurrent(scope, reason, (id) => this.endSession(scope, id, reason));
  }

  /**
   * Sessions a crashed or killed process never ended have observations and no summary: once
   * they are idle, summarise them like any idle session. Runs once, shortly after open.
   */
  endOrphanSessions(): Promise<number> {
    return this.sessions.endOrphans();
  }

  async endSession(scope: Scope, memorySessionId: string, reason: SessionEndReason): Promise<SessionSummary | null> {
    this.assertOpen();
    const repos = this.scoped(scope);
    if (typeof memorySessionId !== 'string' || memorySessionId.length === 0) throw new FilterError('a session id is a non-empty string');
    return this.sessions.end(repos, memorySessionId, reason);
  }

  // ---------------------------------------------------------------- writing

  async observe(inputs: ObservationInput[], scope: Scope): Promise<Observation[]> {
    this.assertOpen();
    if (!Array.isArray(inputs)) throw new FilterError('observe expects a list of observations');
    if (inputs.length === 0) return [];
    return (await this.writeObservations(inputs.map((input) => ({ input, scope })))).results;
  }

  /** observe(), and the ids of the observations it wrote anew (not those a dedupe key, a near-duplicate or a grow key found stored). */
  async observeReport(inputs: ObservationInput[], scope: Scope): Promise<{ observations: Observation[]; written: number[] }> {
    this.assertOpen();
    if (!Array.isArray(inputs)) throw new FilterError('observe expects a list of observations');
    if (inputs.length === 0) return { observations: [], written: [] };
    const { results, written } = await this.writeObservations(inputs.map((input) => ({ input, scope })));
    return { observations: results, written };
  }

  /**
   * What the editor captured: each input's created_at_epoch is when, and an edit's text is a diff
   * against what its session had stored then. One captured before a forget of its whole project
   * (or of everything) began, in any process, is not stored (null at its index): the user forgot
   * everything before it, a save still queued in a window included. A whole forget that begins
   * while they are written takes back, after the write, those captured before it. A forget by id
   * drops nothing: it retires the session (noticeForgets), and the capture diffs the next save
   * against what the session stored.
   */
  async capture(inputs: ObservationInput[], scope: Scope): Promise<(Observation | null)[]> {
    this.assertOpen();
    if (!Array.isArray(inputs)) throw new FilterError('capture expects a list of observations');
    if (inputs.length === 0) return [];
    const project = checkProject(scope?.project);
    const mark = await forgetMark(this.store);
    await this.sessions.noticeForgets([project], false, mark.meta_version);
    // An input without a valid time is observe()'s to refuse or date, never dropped here.
    const at = inputs.map((input) => (typeof input?.created_at_epoch === 'number' && input.created_at_epoch > 0 ? input.created_at_epoch : Infinity));
    const before = (began: number) => at.map((t) => t <= began);
    const dropped = before(this.sessions.wholeForgetBegan(project));
    const kept = inputs.filter((_, i) => !dropped[i]);
    const stored = kept.length > 0 ? (await this.writeObservations(kept.map((input) => ({ input, scope })), mark)).results : [];
    let k = 0;
    const out = inputs.map((_, i) => (dropped[i] ? null : stored[k++]));
    if (kept.length === 0 || !(await forgotSince(this.store, mark, project))) return out;
    await this.sessions.noticeForgets([project]);
    const late = before(this.sessions.wholeForgetBegan(project));
    const takeBack = out.map((o, i) => (o && late[i] ? o.id : null)).filter((id): id is number => id !== null);
    if (takeBack.length === 0) return out;
    await this.forget({ kind: 'observation', ids: takeBack }, { project });
    return out.map((o) => (o && takeBack.includes(o.id) ? null : o));
  }

  enqueue(input: ObservationInput, scope: Scope): void {
    if (this.closed) return;
    // Invalid events are dropped here, one by one, so they cannot sink a whole batch later.
    try {
      if (!input || typeof input !== 'object') throw new FilterError('an observation must be an object');
      validType(String(input.type ?? ''));
      projectWhere(scope);
    } catch (e) {
      this.log(`capture event dropped: ${errorMessage(e)}`);
      return;
    }
    this.queue.push({ input, scope });
  }

  /** Writes what is pending: queued capture events and access times. */
  async flush(): Promise<void> {
    await this.queue.flush();
    await this.access.flush();
  }

  /** `taken`: a forget mark the caller took (and noticed the forgets of) before it read anything. */
  private async writeObservations(events: QueuedEvent[], taken?: ForgetMark): Promise<{ results: Observation[]; written: number[] }> {
    const now = Date.now();
    const projects = events.map(({ scope }) => checkProject(scope?.project));
    // Before anything is read: a forget in any process from here on is settled against it, by this
    // call for the stored observations its duplicates bumped or grew, by the graph queue for the graph.
    const mark = taken ?? (await forgetMark(this.store));
    if (!taken) await this.sessions.noticeForgets(new Set(projects), false, mark.meta_version);
    // Prepared first, all of them, so one bad event rejects the call before anything is written.
    const prepared = events.map(({ input, scope }, i) => {
      const project = projects[i];
      return { project, p: prepareObservation(input, project, scope.branch, now, (branch, at) => this.sessions.open.current(project, branch, at).id) };
    });
    const results: Observation[] = new Array(events.length);
    const written: number[] = [];
    const byProject = new Map<string, number[]>();
    prepared.forEach(({ project }, i) => {
      const list = byProject.get(project) ?? [];
      list.push(i);
      byProject.set(project, list);
    });
    for (const [project, idx] of byProject) {
      const out = await this.repos.forProject(project, events[idx[0]].scope.defaultBranch).observations.insert(idx.map((i) => prepared[i].p), now);
      idx.forEach((i, k) => (results[i] = out.results[k]));
      this.repos.graphQueue.push(out.written, mark);
      append(written, out.written.map((o) => o.id));
      const fresh = new Set(out.written);
      const stored = [...new Set(out.results.filter((o) => !fresh.has(o)))];
      if (stored.length > 0) await settleForgets(this.repos, project, mark, { observations: stored });
    }
    return { results, written };
  }

  async remember(input: MemoryInput, scope: Scope): Promise<Memory> {
    this.assertOpen();
    const repos = this.scoped(scope);
    if (!input || typeof input.title !== 'string' || !printable(input.title).trim() || typeof input.text !== 'string') {
      throw new FilterError('a memory needs a title and a text');
    }
    // The remember tool's bounds, for every caller (a command, the CLI, an import of the API).
    for (const [field, value, max] of [['title', input.title, MAX_MEMORY_TITLE_CHARS], ['text', input.text, MAX_MEMORY_TEXT_CHARS]] as const) {
      const length = value.length <= max ? value.length : codePoints(value);
      if (length > max) throw new FilterError(`a memory's ${field} is at most ${max.toLocaleString('en-US')} characters; this one has ${length.toLocaleString('en-US')}: keep what is worth remembering`);
    }
    const mark = await forgetMark(this.store);
    const [id] = await repos.ids.allocate(1);
    const memory = buildMemory(id, {
      ...input,
      title: storedText(input.title).trim(),
      text: storedText(input.text),
      memory_type: validType(input.memory_type ?? 'note'),
      files: cleanPaths(input.files, 'files'),
      branch: storedKey(input.branch ?? scope.branch, 'branch') ?? undefined,
      topic_key: storedKey(input.topic_key, 'topic_key') ?? undefined,
      session_id: storedKey(input.session_id, 'session_id') ?? undefined,
    }, scope, Date.now(), 'explicit');
    await applyMemoryFacts(repos.memories, memory, [], { supersedes: input.supersedes === undefined ? undefined : checkIds(input.supersedes) });
    const [stored] = await this.settleMemories(repos, mark, [memory]);
    return stored ?? memory;
  }

  /**
   * A memory write reads other memories (and a promotion its observation) before it writes: a
   * forget in any process in between is settled here (settleForgets): what the written memories
   * took from records removed meanwhile (a topic trace quoting a forgotten memory, a memory
   * promoted from a forgotten observation) goes again. Returns `memories` as stored now, less
   * those that went too.
   */
  private async settleMemories(repos: ProjectRepositories, mark: ForgetMark, memories: Memory[]): Promise<Memory[]> {
    if (!(await settleForgets(this.repos, repos.project, mark, { memories: [...repos.memories.written] }))) return memories;
    return repos.memories.get(memories.map((m) => m.id), { includeSuppressed: true });
  }

  // ---------------------------------------------------------------- reading

  async search(text: string, options: SearchOptions): Promise<SearchHit[]> {
    this.assertOpen();
    const limit = searchLimit(options);
    const repos = this.scoped(options.scope);
    // With a reranker, the first stage fetches its candidates and the reranker picks the `limit`.
    const search = this.cellSearch(repos, options, this.reranker ? this.reranker.fetchFor(limit) : limit);
    const embedder = this.queryEmbedderFor(repos.project);
    const local = await repos.cells.search(String(text ?? ''), embedder, search);
    const hits = this.sharing ? await this.sharing.search(local, repos.project, String(text ?? ''), embedder, { ...search, project: repos.project }, this.log) : local;
    return this.reranker ? this.reranker.rerank(String(text ?? ''), hits, limit) : hits;
  }

  async rank(text: string, options: SearchOptions): Promise<RankedHit[]> {
    this.assertOpen();
    // A reranker reads the hits' text, and the team's hits are told apart from the caller's own
    // shared copies by the local hits' sources: both need the cells.
    if (this.reranker || this.sharing) return (await this.search(text, options)).map((h) => ({ node_id: h.cell.node_id, score: h.score, distance: h.distance }));
    const repos = this.scoped(options.scope);
    return repos.cells.rank(String(text ?? ''), this.queryEmbedderFor(repos.project), this.cellSearch(repos, options, searchLimit(options)));
  }

  /** The query vectors' cache of `project`'s searches: each project's own (see ProjectQueryCaches). */
  private queryEmbedderFor(project: string): CachedQueryEmbedder | null {
    return this.queryEmbedders?.for(project) ?? null;
  }

  private cellSearch(repos: ProjectRepositories, options: SearchOptions, limit: number): CellSearch {
    const { branch } = options.scope;
    return { branch, defaultBranch: repos.defaultBranch, filter: options.filter, layers: options.layers, limit, includeSuperseded: options.includeSuperseded === true };
  }

  // Records by id in the scope: on a scope's branch, another branch's records are not found, as
  // getNode and a search there leave them out; nor are those a forget under way names (in any
  // process, see PendingForgets), as no search or node read serves them.
  async getObservations(ids: number[], scope: Scope, options: { includeSuppressed?: boolean } = {}): Promise<Observation[]> {
    const repos = this.scoped(scope);
    return this.notForgetting(repos.observations.kind, repos.project, await repos.observations.get(ids, { ...options, branch: { branch: scope.branch, defaultBranch: repos.defaultBranch } }));
  }

  async getSessionSummaries(ids: number[], scope: Scope, options: { includeSuppressed?: boolean } = {}): Promise<SessionSummary[]> {
    const repos = this.scoped(scope);
    return this.notForgetting(repos.summaries.kind, repos.project, await repos.summaries.get(ids, { ...options, branch: { branch: scope.branch, defaultBranch: repos.defaultBranch } }));
  }

  async getMemories(ids: number[], scope: Scope, options: { includeSuppressed?: boolean } = {}): Promise<Memory[]> {
    const repos = this.scoped(scope);
    return this.notForgetting(repos.memories.kind, repos.project, await repos.memories.get(ids, { ...options, branch: { branch: scope.branch, defaultBranch: repos.defaultBranch } }));
  }

  /** Of records read by id, those that no forget under way names: what no search serves is not read by id either. */
  private async notForgetting<T extends { id: number }>(kind: SourceKind, project: string, records: T[]): Promise<T[]> {
    if (records.length === 0) return records;
    const pending = await pendingForgets(this.store);
    return records.filter((r) => !pending.covers(project, kind, r.id));
  }

  /**
   * Records an access. `background`: noted now and written with the next batch (within a
   * minute, or at flush/close); a failure is then logged, not thrown.
   */
  async touch(kind: SourceKind, ids: number[], scope: Scope, options: { background?: boolean } = {}): Promise<void> {
    const repos = this.scoped(scope);
    const record = this.record(repos, kind);
    if (!options.background) return record.touch(ids);
    this.access.push(repos.project, kind, checkIds(ids));
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
    // A node of another branch is not found on a scope's branch, as a search there leaves it out
    // (branchWhere): a branch's own records, those of no branch and those of a default branch
    // (main, master, trunk, the repository's) hold there, a team item's too.
    const inScope = (cell: NodeDetail['cell']): boolean => !scope.branch || cell.branch === scope.branch || projectWideBranch(cell.branch, repos.defaultBranch);
    const found = await repos.cells.node(nodeId);
    const cell = found && inScope(found) ? found : null;
    if (!cell) {
      const team = this.sharing ? await this.sharing.node(repos.project, nodeId.toLowerCase()) : null;
      return team && inScope(team.cell) ? team : null;
    }
    const [source] = await this.record(repos, cell.source_kind).get([cell.source_id], { includeSuppressed: true });
    return source ? { cell, source } : null;
  }

  async listSessions(scope: Scope, limit = 20): Promise<SessionInfo[]> {
    const repos = this.scoped(scope);
    // The lists leave out what a forget under way names, as the searches do (forgetFilter).
    const spans = await repos.observations.sessionSpans(branchWhere({ branch: scope.branch, defaultBranch: repos.defaultBranch }), { exceptForgetting: true });
    const sessions: SessionInfo[] = [...spans.values()]
      .sort((a, b) => b.first - a.first)
      .slice(0, Math.max(1, Math.min(500, limit)))
      .map((s) => ({ memory_session_id: s.id, project: repos.project, branch: s.branch, started_at_epoch: s.first, ended_at_epoch: null, observation_count: s.count, summary: null, summary_ids: [] }));
    const bySession = new Map(sessions.map((s) => [s.memory_session_id, s]));
    // A session that worked on several branches has a summary per branch: the caller's branch's
    // (or, for a caller on none, the one of the branch the session is listed on), else another in reach.
    const found = await repos.summaries.ofSessionsOnBranches(sessions.map((s) => s.memory_session_id), branchWhere({ branch: scope.branch, defaultBranch: repos.defaultBranch }), { exceptForgetting: true });
    for (const { summary, branch } of found) {
      const s = bySession.get(summary.memory_session_id);
      s?.summary_ids?.push(summary.id);
      if (s && (s.summary === null || branch === (scope.branch ?? s.branch))) {
        s.summary = summary;
        s.ended_at_epoch = summary.created_at_epoch;
      }
    }
    return sessions;
  }

  listObservations(scope: Scope, options: { sessionId?: string; limit?: number; type?: string } = {}): Promise<Observation[]> {
    const repos = this.scoped(scope);
    return repos.observations.list({ ...options, branch: scope.branch, defaultBranch: repos.defaultBranch });
  }

  listMemories(scope: Scope, options: { includeSuppressed?: boolean; replacingOnBranch?: boolean } = {}): Promise<Memory[]> {
    const repos = this.scoped(scope);
    const { branch } = scope;
    return repos.memories.list({ includeSuppressed: options.includeSuppressed, branch, defaultBranch: repos.defaultBranch, replacingOn: options.replacingOnBranch ? (branch ?? undefined) : undefined, exceptForgetting: true });
  }

  listMemoryOutline(scope: Scope, options: { includeSuppressed?: boolean } = {}): Promise<MemoryOutline[]> {
    const repos = this.scoped(scope);
    return repos.memories.outline({ includeSuppressed: options.includeSuppressed, branch: scope.branch ?? undefined, defaultBranch: repos.defaultBranch, exceptForgetting: true });
  }

  async entities(scope: Scope, names: string[]): Promise<{ entities: Entity[]; relationships: Relationship[] }> {
    const repos = this.scoped(scope);
    if (scope.branch) {
      // The stored graph spans the project's branches: a caller on one gets the graph of the
      // observations it reads.
      const branch = { branch: scope.branch, defaultBranch: repos.defaultBranch };
      const observations = await repos.observations.touching(names.slice(0, 100), branch);
      const memories = await repos.memories.list({ ...branch, aboutFiles: true });
      return observedNeighbourhood(observations, memories, names, Date.now());
    }
    await this.repos.graphQueue.drain();
    return repos.graph.neighbourhood(names);
  }

  // ---------------------------------------------------------------- curation

  async setStatus(kind: SourceKind, id: number, status: string, scope: Scope): Promise<void> {
    const repos = this.scoped(scope);
    // A memory's supersede chain follows what readers can see (setMemoryStatus).
    if (kind === 'memory') return setMemoryStatus(repos.memories, checkIds([id])[0], status, Date.now());
    await this.record(repos, kind).setStatus(id, status);
  }

  async resolveConflict(scope: Scope, id: number, otherId: number, choice: ConflictChoice): Promise<Memory[]> {
    this.assertOpen();
    const repos = this.scoped(scope);
    const mark = await forgetMark(this.store);
    const both = await resolveConflict(repos.memories, Number(id), Number(otherId), choice, Date.now());
    return this.settleMemories(repos, mark, both);
  }

  async editMemory(scope: Scope, id: number, changes: { title?: string; text?: string }): Promise<Memory> {
    this.assertOpen();
    const repos = this.scoped(scope);
    const title = changes?.title === undefined ? undefined : storedText(String(changes.title)).trim();
    const text = changes?.text === undefined ? undefined : storedText(String(changes.text));
    if (title === '' || text?.trim() === '') throw new FilterError('a memory needs a title and a text');
    const mark = await forgetMark(this.store);
    const now = Date.now();
    const next = { title, text };
    const factsOf = (memory: Memory): TemporalFact[] | null => memoryFacts(next.title ?? memory.title, next.text ?? memory.text, memory.topic_key, repos.project, now, 1);
    const [edited] = await this.settleMemories(repos, mark, [await editMemory(repos.memories, Number(id), next, factsOf, now)]);
    if (!edited) throw new FilterError(`memory ${id} was forgotten while it was edited: the edit was not kept`);
    return edited;
  }

  async promote(observationId: number, scope: Scope): Promise<Memory> {
    const repos = this.scoped(scope);
    // Before the observation is read: a forget of it from here on takes the memory too.
    const mark = await forgetMark(this.store);
    const [o] = await repos.observations.get([observationId]);
    if (!o) throw new Error(`No observation ${observationId} in project ${repos.project}`);
    const [id] = await repos.ids.allocate(1);
    const now = Date.now();
    const text = [o.narrative, ...(JSON.parse(o.facts ?? '[]') as string[])].filter(Boolean).join('\n') || (o.title ?? o.type);
    const memory = buildMemory(id, {
      title: o.title ?? o.type,
      text,
      memory_type: 'note',
      branch: o.branch ?? undefined,
      files: observationFiles(o),
      session_id: o.memory_session_id,
    }, scope, saidAt(o.created_at_epoch, now), 'promoted');
    // Dated by when the observation said it (README "Newer means said later"): an old decision
    // promoted today does not retire one made since; stored now.
    memory.updated_at_epoch = now;
    for (const f of memory.temporal_facts ?? []) f.learned_at_epoch = now;
    const [promoted] = await this.settleMemories(repos, mark, [await applyMemoryFacts(repos.memories, memory, [o.id])]);
    if (!promoted) throw new FilterError(`observation ${observationId} was forgotten while it was promoted: no memory was kept`);
    return promoted;
  }

  async forget(request: ForgetRequest, scope: Scope | null): Promise<ForgetReport> {
    await this.beforeForget();
    // A forget of this process that failed part-way is finished first: asked again, it would find
    // its records deleted and purge nothing. One that fails again (the disk still full) is left
    // to the upkeep: this forget still begins, and is kept to try again if it cannot journal.
    await this.resumeForgets().catch((e: unknown) => this.log(`an interrupted forget is not finished yet: ${errorMessage(e)}`));
    // Another process's forget before this one still retires the session it touched.
    const project = request.project ?? scope?.project;
    if (!request.all && typeof project === 'string') await this.sessions.noticeForgets([project]);
    const forgotten = await forgetRecords(this.repos, request, scope);
    this.queryEmbedders?.drop(forgotten.project);
    if (request.all) this.sessions.open.clear();
    else if (request.project) this.sessions.open.clear(request.project);
    else if (forgotten.project !== null) this.sessions.retire(forgotten.project, forgotten.sessions);
    // This forget's sessions are settled above: its stamp is taken as seen.
    if (forgotten.project === null) this.sessions.forgetAllSeen();
    else await this.sessions.noticeForgets([forgotten.project], true);
    await this.forgetShares(forgotten);
    if (forgotten.report.session_summaries > 0) this.upkeep.summariseOrphansLater();
    return forgotten.report;
  }

  /** Finishes the forgets a crash or a failure left unfinished (see resumeForget), with what a forget does after. */
  private async resumeForgets(): Promise<void> {
    for (const forgotten of await this.maintenance.resumeForget()) {
      this.queryEmbedders?.drop(forgotten.project);
      if (forgotten.project === null || forgotten.records === null) this.sessions.open.clear(forgotten.project ?? undefined);
      else this.sessions.retire(forgotten.project, forgotten.sessions);
      await this.forgetShares(forgotten);
    }
  }

  /** What a forget waits for: writes under way land first, so that it removes them too. */
  private async beforeForget(): Promise<void> {
    this.assertOpen();
    await this.flush();
    // A prompt or log entry still on its way would land after the forget, with the text in it.
    await this.trailingWrites();
    await this.repos.graphQueue.drain();
    // Let the embedding queue and compaction finish their batch first.
    await this.backfill?.idle();
    await this.maintenance.idle();
  }

  async defaultBranchOf(scope: Scope): Promise<string | null> {
    return this.scoped(scope).defaultBranch;
  }

  /**
   * Of the dedupe keys an import is about to store (`commit:<sha>`, `doc:<hash>`), those of
   * commits and documents forgotten in the scope's project: an import skips them (store/forgetKeys.ts
   * forgottenImports). A forget of the whole project clears the list.
   */
  async forgottenImports(scope: Scope, dedupeKeys: string[]): Promise<Set<string>> {
    this.assertOpen();
    const repos = this.scoped(scope);
    return forgottenImports(this.store, repos.project, (Array.isArray(dedupeKeys) ? dedupeKeys : []).filter((k) => typeof k === 'string'));
  }

  /**
   * Removes documents an earlier import stored that its newer revision replaced: from every table
   * and file like a forget, but no tombstone is kept and the request log and prompts stay
   * (store/forget.ts replaceDocuments). Ids of anything but a document are left alone.
   */
  async replaceDocuments(scope: Scope, ids: number[]): Promise<ForgetReport> {
    const project = this.scoped(scope).project;
    const list = checkIds(ids);
    await this.beforeForget();
    const replaced = await replaceDocuments(this.repos, project, list);
    await this.forgetShares(replaced);
    return replaced.report;
  }

  // ---------------------------------------------------------------- team store

  /** Log entries quoting team items their sharer took back: purged like a forget's (every project's log: an item is in one). */
  private async forgetTeamQuotes(nodeIds: string[]): Promise<void> {
    // Node ids are read from the team store: only a node id's shape goes into a LIKE pattern.
    const ids = nodeIds.filter((id) => /^[0-9a-f-]{36}$/i.test(id));
    for (let i = 0; i < ids.length; i += 100) {
      const quoting = ids.slice(i, i + 100).map((id) => `response LIKE ${sqlString(`%team/${id}%`)}`);
      await purgeRows(this.store, TABLES.requestLog, `(${quoting.join(' OR ')})`);
    }
  }

  /** What the team has of forgotten records goes too: queued shares never leave, shared copies are unshared. */
  private async forgetShares({ project, records }: Forgotten): Promise<void> {
    if (this.sharing) await this.sharing.forgotten(project, records).catch((e) => this.log(`forget: the team store's copies are left to unshare by hand: ${errorMessage(e)}`));
    // The team stores shared to before, or while this process is not configured with them.
    if (this.teamBase) {
      await forgetInTeamFolders(this.teamBase, this.sharing?.team.options.stateDir ?? null, this.store.dimension, project, records, this.log).catch((e) => this.log(`forget: shares in other team stores' folders are left: ${errorMessage(e)}`));
    }
  }

  private team(): TeamSharing {
    if (!this.sharing) throw new FilterError('no team store is set: give --team-store s3://bucket/prefix (or the codeMemory.teamStore setting)');
    return this.sharing;
  }

  previewShare(kind: SourceKind, id: number, scope: Scope): Promise<SharePreview> {
    return this.team().preview(this.scoped(scope), kind, id);
  }

  share(kind: SourceKind, id: number, scope: Scope, confirmed?: SharePreview): Promise<ShareResult> {
    return this.team().share(this.scoped(scope), kind, id, this.embedder, confirmed);
  }

  unshare(target: { node_id?: string; kind?: SourceKind; id?: number }, scope: Scope): Promise<UnshareResult> {
    return this.team().unshare(this.scoped(scope), target ?? {});
  }

  listShared(scope: Scope): Promise<TeamItem[]> {
    return this.team().list(this.scoped(scope).project);
  }

  async teamStatus(): Promise<TeamStatus | null> {
    return this.sharing?.team.status() ?? null;
  }

  /**
   * Sends queued team writes and refreshes the team cache now; throws when the store cannot be
   * reached, or does not answer within REMOTE_WAIT_MS (a network that accepts connections and
   * answers nothing; the sync goes on by itself, and what it did not send stays queued).
   */
  async syncTeam(): Promise<TeamStatus | null> {
    if (!this.sharing) return null;
    await within(this.sharing.team.sync(), REMOTE_WAIT_MS, () => {
      throw new Error(`the team store did not answer within ${REMOTE_WAIT_MS / 1000} s; queued writes stay queued`);
    });
    return this.sharing.team.status();
  }

  // ---------------------------------------------------------------- prompts and request log

  async addPrompt(scope: Scope, sessionId: string, prompt: string): Promise<void> {
    return this.trail(this.scoped(scope).prompts.add(sessionId, prompt));
  }

  async recentPrompts(scope: Scope, sessionId: string, limit: number): Promise<string[]> {
    await this.trailingWrites();
    return this.scoped(scope).prompts.recent(sessionId, limit);
  }

  forgetMark(): Promise<ForgetMark> {
    return forgetMark(this.store);
  }

  async logRequest(entry: RequestLogEntry, since?: ForgetMark): Promise<void> {
    const repos = this.scoped({ project: entry?.project });
    await repos.requests.log(entry);
    if (!since || typeof since !== 'object') return;
    // A forget that ran while the call searched may have removed what its answer quotes: the
    // entry goes, from every file.
    if (await forgotSince(this.store, since, repos.project)) {
      await purgeRows(this.store, TABLES.requestLog, `project = ${sqlString(repos.project)} AND request_id = ${sqlString(String(entry.request_id))}`);
    }
  }

  listRequests(scope: Scope, limit = 50): Promise<RequestLogEntry[]> {
    return this.scoped(scope).requests.list(limit);
  }

  /**
   * Prompt history writes, which a tool answer need not wait for (a session's next prompt comes
   * to the same server): this process's reads of the history, forget and close wait for them.
   */
  private trail(write: Promise<void>): Promise<void> {
    const settled = write.catch(() => undefined);
    this.trailing.add(settled);
    void settled.then(() => this.trailing.delete(settled));
    return write;
  }

  private async trailingWrites(): Promise<void> {
    await Promise.all([...this.trailing]);
  }

  // ---------------------------------------------------------------- portability, health

  async exportJsonl(write: (line: string) => void, scope: Scope | null): Promise<number> {
    await this.flush();
    await this.repos.graphQueue.drain();
    return exportJsonl(this.store, write, scope);
  }

  async importJsonl(lines: ImportLines, options: ImportOptions = {}): Promise<number> {
    this.assertOpen();
    const report = await importJsonl(this.repos, lines, options);
    this.repos.graphCache.clear();
    this.kickVectors();
    options.onReport?.(report);
    return report.imported;
  }

  /** Every table read whole (see Store.verify): what doctor reports of the store's files. */
  verifyStore(): Promise<TableCheck[]> {
    this.assertOpen();
    return this.store.verify();
  }

  async recordCount(scope: Scope): Promise<number> {
    const counts = await this.recordCounts(`project = ${sqlString(checkProject(scope.project))}`);
    return counts.reduce((a, b) => a + b, 0);
  }

  /** Observations, session summaries and memories passing `where`. */
  private async recordCounts(where: string | undefined): Promise<[number, number, number]> {
    return [await this.store.count(TABLES.observations, where), await this.store.count(TABLES.sessionSummaries, where), await this.store.count(TABLES.memories, where)];
  }

  async stats(scope: Scope | null): Promise<StoreStats> {
    const where = scope ? `project = ${sqlString(checkProject(scope.project))}` : undefined;
    const model = this.embedder?.name ?? '';
    const cells = await this.store.count(TABLES.cells, where);
    // Index-backed reads: listing every cell's project held 1.5 GB and took 9 s at 1,000,000 cells.
    const projects = scope ? (cells > 0 ? [scope.project] : []) : await this.store.distinct(TABLES.cells, 'project');
    // Index-backed too (a bitmap on embed_model); '' is a cell not embedded yet.
    const vector_models: Record<string, number> = {};
    for (const m of await this.store.distinct(TABLES.cells, 'embed_model')) {
      const n = await this.store.count(TABLES.cells, `${where ? `${where} AND ` : ''}embed_model = ${sqlString(m)}`);
      if (n > 0) vector_models[m] = n;
    }
    const [observations, session_summaries, memories] = await this.recordCounts(where);
    return {
      observations,
      session_summaries,
      memories,
      cells,
      cells_with_vectors: model ? (vector_models[model] ?? 0) : Object.values(vector_models).reduce((a, b) => a + b, 0),
      vector_models,
      projects,
      embedder: { name: this.embedder?.name ?? 'none', dimension: this.store.dimension },
      schema_version: SCHEMA_VERSION,
      store_uri: this.store.uri,
      ...(scope ? {} : { ann_index: (await this.store.table(TABLES.cells).listIndices()).some((i) => i.columns.includes('vector')) }),
    };
  }

  /**
   * Resolves when background work has settled: vectors written and the upkeep that follows a
   * large write-back done (benchmarks and tests measure the quiet store after it).
   */
  settled(): Promise<void> {
    return this.upkeep.settled();
  }

  /** New cells wait for vectors: wake the background embedding queue (in the lease holder). */
  kickVectors(): void {
    this.upkeep.kickVectors();
  }

  /** Resolves when the embedding queue has caught up (for tools that need vectors now, and tests). */
  async waitForVectors(): Promise<void> {
    await this.backfill?.idle();
  }

  /** Writes the queued entity-graph updates (tests and exports). */
  drainGraph(): Promise<void> {
    return this.repos.graphQueue.drain();
  }

  /**
   * Background upkeep (see Maintenance.optimize), begun at once (what waits for the maintenance
   * sees it), then this process's forgets that failed part-way are finished; never throws.
   */
  optimize(olderThanMs?: number): Promise<void> {
    return this.upkeep.optimize(olderThanMs);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.upkeep.stop();
    await this.flush();
    await this.trailingWrites();
    await this.sessions.endAll('shutdown');
    await this.repos.graphQueue.drain();
    await this.maintenance.idle();
    this.closed = true;
    await this.backfill?.stop();
    await this.lease.release();
    await this.sharing?.team.close();
    await this.embedder?.close?.();
    this.repos.lexicalSegments.files?.close();
    this.store.close();
  }
}

