// The contract between the engine (src/core) and its surfaces (mcp, cli, extension).
// MemoryEngine in engine.ts implements it; surfaces depend on this file only.

import type {
  Cell,
  ConflictChoice,
  Entity,
  Layer,
  Memory,
  Observation,
  Relationship,
  RequestLogEntry,
  Scope,
  SessionSummary,
  SourceKind,
} from './model/records';
import type { MemoryDraft } from './compress/promote';
import type { ForgetMark } from './store/forgetMarks';
import type { ImportLines, ImportOptions } from './store/portability';
import type { ShareResult, TeamItem, UnshareResult } from './team/sharing';
import type { SharePreview } from './team/shareRows';
import type { HitOrigin, TeamStatus } from './team/teamMemory';

export interface ObservationInput {
  type: string;
  title?: string;
  subtitle?: string;
  narrative?: string;
  facts?: string[];
  concepts?: string[];
  files_read?: string[];
  files_modified?: string[];
  commit_sha?: string;
  branch?: string;
  /** The session that captured it; the engine assigns the current session when absent. */
  memory_session_id?: string;
  /** The agent's or editor's own session id, when it has one. */
  content_session_id?: string;
  created_at_epoch?: number;
  /** Extra text that is indexed for search but not shown (e.g. a commit's changed lines). */
  search_extra?: string;
  /** Stable key that makes an import idempotent (e.g. 'commit:<sha>'). */
  dedupe_key?: string;
  /**
   * Key of an observation that grows during its session (e.g. 'edit:src/a.ts'): a later input
   * with the same key in the same session replaces the stored one's content, keeping its id,
   * cell and first time. Not combined with dedupe_key.
   */
  grow_key?: string;
}

/** A memory as a caller gives it: what buildMemory takes, and what it replaces. */
export interface MemoryInput extends MemoryDraft {
  /** Ids of memories of the project this one replaces (each becomes superseded). */
  supersedes?: number[];
}

/** The optional filter a caller may add to a search; always AND-ed after the scope. */
export interface NodeFilter {
  layer?: Layer | Layer[];
  type?: string | string[];
  branch?: string;
  files?: string[];
  commit_sha?: string;
  session_id?: string;
  since_epoch?: number;
  until_epoch?: number;
}

export interface SearchOptions {
  scope: Scope;
  layers?: Layer[];
  filter?: NodeFilter;
  limit?: number;
  /** Also search memories a newer one superseded (history questions); other inactive records stay out. */
  includeSuperseded?: boolean;
}

export interface SearchHit {
  cell: Cell;
  /** Fused relevance in [0, 1], higher is better. */
  score: number;
  /** 1 - dot similarity where a vector took part, else derived from score. */
  distance: number;
  /** Set when a team store is searched too: where the hit comes from and who shared it. */
  origin?: HitOrigin;
}

/** A search hit before its cell is read (MemoryEngineApi.rank). */
export interface RankedHit {
  node_id: string;
  score: number;
  distance: number;
}

export interface NodeDetail {
  cell: Cell;
  source: Observation | SessionSummary | Memory;
}

export interface ForgetRequest {
  kind?: SourceKind;
  ids?: number[];
  /** Forget every record of this project. */
  project?: string;
  /** Forget everything in the store. */
  all?: boolean;
}

export interface ForgetReport {
  observations: number;
  session_summaries: number;
  memories: number;
  cells: number;
  pruned: boolean;
}

export interface StoreStats {
  observations: number;
  session_summaries: number;
  memories: number;
  cells: number;
  /** Cells with a vector of this process's embedder, or of any model where it has none (the CLI's stats). */
  cells_with_vectors: number;
  /** Cells with a vector, by the model that made it (a model switch leaves the old model's until they are embedded again). */
  vector_models: Record<string, number>;
  projects: string[];
  embedder: { name: string; dimension: number };
  schema_version: number;
  store_uri: string;
  /**
   * Whether the store's cells have an ANN index, which is built from a number of cells in the
   * whole store: given for the whole store's stats only (a project's would tell its caller how
   * much the store's other projects hold).
   */
  ann_index?: boolean;
}

export interface SessionInfo {
  memory_session_id: string;
  project: string;
  branch: string | null;
  started_at_epoch: number;
  ended_at_epoch: number | null;
  observation_count: number;
  /** The summary shown: of the caller's branch, else of the branch the session is listed on, else another the caller may see. */
  summary: SessionSummary | null;
  /** Every summary of the session the caller may see (one per branch it worked on): what forgetting the session forgets. */
  summary_ids?: number[];
}

export type SessionEndReason = 'idle' | 'branch_switch' | 'shutdown' | 'request';

export interface MemoryEngineApi {
  readonly storeUri: string;

  // Writing. observe() resolves once the records are stored and full-text searchable;
  // vectors are filled in by the background embedding queue.
  observe(inputs: ObservationInput[], scope: Scope): Promise<Observation[]>;
  /** observe(), and the ids it wrote anew (not those a dedupe key, a near-duplicate or a grow key found stored): what a failed run may take back. */
  observeReport(inputs: ObservationInput[], scope: Scope): Promise<{ observations: Observation[]; written: number[] }>;
  /**
   * The editor's capture: observe() for inputs whose created_at_epoch is when they were captured;
   * one captured before a forget of the whole project (or of everything) began, in any process, is
   * not stored (null at its index), see MemoryEngine.capture.
   */
  capture(inputs: ObservationInput[], scope: Scope): Promise<(Observation | null)[]>;
  /** Fire-and-forget capture: queued, batched, never throws into the caller. */
  enqueue(input: ObservationInput, scope: Scope): void;
  flush(): Promise<void>;
  remember(input: MemoryInput, scope: Scope): Promise<Memory>;
  /** Ends and summarises a session of the scope's project (a session id is a key within a project). */
  endSession(scope: Scope, memorySessionId: string, reason: SessionEndReason): Promise<SessionSummary | null>;
  currentSessionId(scope: Scope): Promise<string>;
  /**
   * Ends the project's current session (End Session, a window closing): the open one and those a
   * forget retired since (see MemoryEngine.noticeForgets). Returns the open one's id, or the last
   * retired one's, with the last summary written.
   */
  endCurrentSession(scope: Scope, reason: SessionEndReason): Promise<{ sessionId: string; summary: SessionSummary | null }>;

  // Reading.
  search(text: string, options: SearchOptions): Promise<SearchHit[]>;
  /** The same ranking as search without reading the hits' cells (recall: ids and distances). */
  rank(text: string, options: SearchOptions): Promise<RankedHit[]>;
  getObservations(ids: number[], scope: Scope, options?: { includeSuppressed?: boolean }): Promise<Observation[]>;
  getSessionSummaries(ids: number[], scope: Scope, options?: { includeSuppressed?: boolean }): Promise<SessionSummary[]>;
  getMemories(ids: number[], scope: Scope, options?: { includeSuppressed?: boolean }): Promise<Memory[]>;
  /** `background`: written with the next batch of access times (best effort, see engine.touch). */
  touch(kind: SourceKind, ids: number[], scope: Scope, options?: { background?: boolean }): Promise<void>;
  getNode(nodeId: string, scope: Scope): Promise<NodeDetail | null>;
  listSessions(scope: Scope, limit?: number): Promise<SessionInfo[]>;
  /** Newest first; `type` narrows to one observation type (`document`: the project's documents). */
  listObservations(scope: Scope, options?: { sessionId?: string; limit?: number; type?: string }): Promise<Observation[]>;
  /** `replacingOnBranch`: only the current memories of exactly the scope's branch that replace (shadow) others. */
  listMemories(scope: Scope, options?: { includeSuppressed?: boolean; replacingOnBranch?: boolean }): Promise<Memory[]>;
  /** listMemories' memories (same order) with only the few fields a list of them shows before one is opened. */
  listMemoryOutline(scope: Scope, options?: { includeSuppressed?: boolean }): Promise<MemoryOutline[]>;
  entities(scope: Scope, names: string[]): Promise<{ entities: Entity[]; relationships: Relationship[] }>;

  // Curation.
  /** Suppress or Unsuppress (a memory: 'suppressed' or 'active'; what it had superseded holds again while it is suppressed). */
  setStatus(kind: SourceKind, id: number, status: string, scope: Scope): Promise<void>;
  /** A person's review of a possible conflict: keep both, or `id` is superseded by `otherId`. */
  resolveConflict(scope: Scope, id: number, otherId: number, choice: ConflictChoice): Promise<Memory[]>;
  /** Edits a memory's title or text; its facts are read again, its open conflicts close as edited, and its new words are weighed as a write's. */
  editMemory(scope: Scope, id: number, changes: { title?: string; text?: string }): Promise<Memory>;
  promote(observationId: number, scope: Scope): Promise<Memory>;
  forget(request: ForgetRequest, scope: Scope | null): Promise<ForgetReport>;

  // Team store (see src/core/team): sharing is a person's decision, one record at a time.
  /** Exactly what would leave the machine (redacted) if this memory or session summary were shared. */
  previewShare(kind: SourceKind, id: number, scope: Scope): Promise<SharePreview>;
  /** With `confirmed` (the preview the person saw), refused when the record changed since. */
  share(kind: SourceKind, id: number, scope: Scope, confirmed?: SharePreview): Promise<ShareResult>;
  /** Forgets a shared item in the team store (purged from every object), by its team node id or your record. */
  unshare(target: { node_id?: string; kind?: SourceKind; id?: number }, scope: Scope): Promise<UnshareResult>;
  listShared(scope: Scope): Promise<TeamItem[]>;
  /** null without a team store. */
  teamStatus(): Promise<TeamStatus | null>;
  syncTeam(): Promise<TeamStatus | null>;

  /**
   * Of the dedupe keys an import is about to store (`commit:<sha>`, `doc:<hash>`), those of the
   * commits and documents forgotten in the project: an import skips them.
   */
  forgottenImports(scope: Scope, dedupeKeys: string[]): Promise<Set<string>>;
  /** Removes documents a newer revision replaced, from every table and file, without a forget's tombstone. */
  replaceDocuments(scope: Scope, ids: number[]): Promise<ForgetReport>;

  /**
   * The project's default branch as this engine knows it (the scope's, else the one its callers
   * last named; model/branches.ts): what it records there holds project-wide. null: only the usual names.
   */
  defaultBranchOf(scope: Scope): Promise<string | null>;

  // Session prompts (last 5 per session of a project, 30 days) and the request log.
  addPrompt(scope: Scope, sessionId: string, prompt: string): Promise<void>;
  recentPrompts(scope: Scope, sessionId: string, limit: number): Promise<string[]>;
  /** Where the store stands towards forgets, taken before a call reads records for its log entry. */
  forgetMark(): Promise<ForgetMark>;
  /** Logs a call; with the mark taken as it began, an entry that may quote what a forget removed meanwhile is not kept. */
  logRequest(entry: RequestLogEntry, since?: ForgetMark): Promise<void>;
  listRequests(scope: Scope, limit?: number): Promise<RequestLogEntry[]>;

  // Data portability and health.
  exportJsonl(write: (line: string) => void, scope: Scope | null): Promise<number>;
  /** Records imported; a bad line refuses the whole file (ImportFileError) and writes nothing. */
  importJsonl(lines: ImportLines, options?: ImportOptions): Promise<number>;
  stats(scope: Scope | null): Promise<StoreStats>;
  /** A project's records (observations, session summaries, memories): three index-backed counts, the cheap part of stats. */
  recordCount(scope: Scope): Promise<number>;
  /** Every table of the store read whole: a damaged one carries the error it gave. */
  verifyStore(): Promise<TableCheck[]>;
  close(): Promise<void>;
}

export interface TableCheck {
  table: string;
  rows: number;
  error?: string;
}

/**
 * The engine methods another thread or process may call by name (the extension's engine
 * worker): the one list the worker's dispatch and the client's methods are made from. A method
 * added to MemoryEngineApi must be listed here or in LOCAL_ONLY, or this file does not compile.
 */
export const REMOTE_ENGINE_METHODS = [
  'verifyStore',
  'observe',
  'observeReport',
  'capture',
  'flush',
  'remember',
  'endSession',
  'currentSessionId',
  'endCurrentSession',
  'search',
  'rank',
  'getObservations',
  'getSessionSummaries',
  'getMemories',
  'touch',
  'getNode',
  'listSessions',
  'listObservations',
  'listMemories',
  'listMemoryOutline',
  'entities',
  'setStatus',
  'resolveConflict',
  'editMemory',
  'promote',
  'forget',
  'forgottenImports',
  'defaultBranchOf',
  'replaceDocuments',
  'previewShare',
  'share',
  'unshare',
  'listShared',
  'teamStatus',
  'syncTeam',
  'addPrompt',
  'recentPrompts',
  'forgetMark',
  'logRequest',
  'listRequests',
  'stats',
  'recordCount',
] as const satisfies readonly (keyof MemoryEngineApi)[];

export type RemoteEngineMethod = (typeof REMOTE_ENGINE_METHODS)[number];

/** What a list of memories shows of each before it is opened: its type, state, replacement, conflicts and age. */
export type MemoryOutline = Pick<Memory, 'id' | 'memory_type' | 'status' | 'superseded_by' | 'updated_at_epoch' | 'conflicts'>;

/** Members that take callbacks or streams, or end the engine: wrapped by hand where needed. */
type LocalOnly = 'storeUri' | 'enqueue' | 'exportJsonl' | 'importJsonl' | 'close';
type Unlisted = Exclude<keyof MemoryEngineApi, RemoteEngineMethod | LocalOnly>;
const everyMethodListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyMethodListed;

/** The remote methods as a caller on another thread sees them: each one a message, so async. */
export type RemoteEngine = {
  [K in RemoteEngineMethod]: (...args: Parameters<MemoryEngineApi[K]>) => Promise<Awaited<ReturnType<MemoryEngineApi[K]>>>;
};
