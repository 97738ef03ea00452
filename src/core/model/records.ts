// Records of the memory engine. Field names follow the output schemas in the tool contracts
// (get_observations): the tools return these records with internal fields stripped.

/** Where a record belongs. Every read is confined to one scope; branch narrows it further. */
export interface Scope {
  project: string;
  branch?: string;
  /**
   * The repository's default branch, when the caller knows it (git's `origin/HEAD`): what is
   * recorded there holds project-wide, as what is recorded on `main` does (model/branches.ts).
   */
  defaultBranch?: string;
}

export type Layer = 'L0' | 'L1' | 'L2';

/**
 * The longest text Code Memory keeps in one field of a record: a git import cuts a commit message
 * there, and an import refuses a longer one (a hand-made or damaged export).
 */
export const MAX_FIELD_CHARS = 1_000_000;

/**
 * The observation type of the project's documents (README and docs sections, doc comments):
 * searched as a layer of its own, never returned as a fact unless asked for by type.
 */
export const DOCUMENT_TYPE = 'document';
/** How much of a symbol's doc comment a commit touching the symbol is indexed with. */
export const DOC_QUOTE_CHARS = 400;
export type SourceKind = 'observation' | 'session_summary' | 'memory';

export type ObservationType =
  | 'read'
  | 'edit'
  | 'create'
  | 'delete'
  | 'rename'
  | 'commit'
  | 'checkout'
  | 'task'
  | 'terminal'
  | 'agent'
  | 'note'
  | 'merged';

/** The statuses an observation, session summary or memory can have (its cells mirror it). */
export const RECORD_STATUSES = ['active', 'suppressed', 'merged', 'superseded'] as const;
export type RecordStatus = (typeof RECORD_STATUSES)[number];

export interface CompressedSource {
  compressed_observation_id: number;
  source_observation_id: number;
  source_hash: string;
  source_created_at_epoch: number;
  compression_session_id: string;
  created_at_epoch: number;
}

/** One captured event, or a merge of several (type 'merged', compressed_sources set). */
export interface Observation {
  id: number;
  memory_session_id: string;
  content_session_id: string | null;
  project: string | null;
  type: string;
  title: string | null;
  subtitle: string | null;
  narrative: string | null;
  /** JSON array of short statements, as a string (the contract types it as string). */
  facts: string | null;
  /** JSON array of concept words, as a string. */
  concepts: string | null;
  /** JSON array of workspace-relative paths, as a string. */
  files_read: string | null;
  files_modified: string | null;
  commit_sha: string | null;
  branch: string | null;
  status: string;
  created_at: string;
  created_at_epoch: number;
  last_accessed_epoch: number | null;
  discovery_tokens: number | null;
  compressed_sources: CompressedSource[] | null;
  /**
   * When an observation that grows (one edit observation per file and session, grow_key) last
   * took new content; its created_at_epoch stays when it began. Absent where it never grew.
   */
  updated_at_epoch?: number;
}

/** What a session summary says, section by section (null: nothing to say there). */
export interface SummaryFields {
  request: string | null;
  learned: string | null;
  completed: string | null;
  decisions: string | null;
  next_steps: string | null;
  preferences: string | null;
}

export interface SessionSummary extends SummaryFields {
  id: number;
  memory_session_id: string;
  project: string | null;
  created_at: string;
  created_at_epoch: number;
}

export interface TemporalFact {
  project: string;
  subject: string;
  predicate: string;
  object: string;
  learned_at_epoch: number;
  confidence: number;
  /** 'current' while valid_to_epoch is null, 'closed' once a newer fact replaced it. */
  status: string;
  valid_from_epoch: number | null;
  valid_to_epoch: number | null;
}

export interface TopicTrace {
  id: number;
  topic_key: string;
  title: string;
  summary: string;
  status: string;
  segment_index: number;
  covered_from_event_id: number;
  covered_to_event_id: number;
  evidence_event_ids: number[];
  files: string[] | null;
  created_at_epoch: number;
  updated_at_epoch: number;
}

/** The kinds of memory, in the order the Memories view lists them. */
export const MEMORY_TYPES = ['decision', 'convention', 'fact', 'preference', 'note'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

/** A curated, durable item (layer L2). */
export interface Memory {
  id: number;
  project: string;
  title: string;
  text: string;
  memory_type: string;
  created_at_epoch: number;
  updated_at_epoch: number;
  status: string;
  scope: string;
  classification: string;
  classification_reason: string;
  current_context_eligible: boolean;
  branch: string | null;
  files: string | null;
  session_id: string | null;
  topic_key: string | null;
  topic_trace: TopicTrace[] | null;
  temporal_facts: TemporalFact[] | null;
  /** Ids of the memories this one replaced (v4). */
  supersedes: number[] | null;
  /** The memory that replaced this one, once status is 'superseded' (v4). */
  superseded_by: number | null;
  /** When this memory stopped holding: the time its successor was written (v4). */
  valid_to_epoch: number | null;
  /** Possible conflicts with other memories, open until someone reviews them (v4). */
  conflicts: MemoryConflict[] | null;
}

/** A person's review of a possible conflict: keep both memories, or mark the first superseded by the second. */
export type ConflictChoice = 'keep_both' | 'superseded';

/**
 * Two memories that may say different things about the same subject or files, where the words
 * were not enough to tell which one holds. Kept on both sides; `resolution` records the review.
 */
export interface MemoryConflict {
  /** The other memory. */
  id: number;
  reason: string;
  detected_at_epoch: number;
  resolution: 'open' | 'kept_both' | 'superseded' | 'edited';
  resolved_at_epoch: number | null;
}

/** The unified search index: one row per searchable unit of any layer. */
export interface Cell {
  node_id: string;
  layer: Layer;
  source_kind: SourceKind;
  source_id: number;
  project: string;
  branch: string | null;
  type: string;
  title: string;
  /** What a person or agent reads. */
  text: string;
  /** Comma-free JSON array of paths, as a string. */
  files: string | null;
  commit_sha: string | null;
  session_id: string | null;
  created_at_epoch: number;
  last_accessed_epoch: number | null;
  access_count: number;
  status: string;
}

export interface Entity {
  id: string;
  project: string;
  label: string;
  /** file | symbol | commit | branch | author | concept */
  type: string;
  properties: Record<string, string>;
}

export interface Relationship {
  project: string;
  source: string;
  target: string;
  /** modified | co_changed | decided | authored | on_branch */
  type: string;
  weight: number;
}

export interface RequestLogEntry {
  request_id: string;
  tool: string;
  project: string;
  session_id: string | null;
  arguments: string;
  response: string;
  status: string;
  duration_ms: number;
  created_at_epoch: number;
}
