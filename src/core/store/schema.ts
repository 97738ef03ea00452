// Arrow schemas of every table in a store. Explicit schemas (never inferred from the first row)
// keep nullable columns nullable and int64 ids int64, whichever process creates the table.
// SCHEMA_VERSION is written to the meta table; migrations.ts upgrades older stores.

import { Binary, Bool, Field, FixedSizeList, Float32, Float64, Int32, Int64, Schema, Utf8 } from 'apache-arrow';
import type { DataType } from 'apache-arrow';
import type { SourceKind } from '../model/records';

export const SCHEMA_VERSION = 4;

export const TABLES = {
  meta: 'meta',
  observations: 'observations',
  sessionSummaries: 'session_summaries',
  memories: 'memories',
  cells: 'cells',
  sessionPrompts: 'session_prompts',
  requestLog: 'request_log',
  entities: 'entities',
  relationships: 'relationships',
  lexicalSegments: 'lexical_segments',
} as const;

export type TableName = (typeof TABLES)[keyof typeof TABLES];

/** The table of each kind of record. */
export const RECORD_TABLE_OF = {
  observation: TABLES.observations,
  session_summary: TABLES.sessionSummaries,
  memory: TABLES.memories,
} as const satisfies Record<SourceKind, TableName>;

/**
 * The tables of records, which every store has had since the first layout: their rows exist
 * nowhere else but in the search cells (see refuseMissingRecordTables in store.ts).
 */
export const RECORD_TABLES = [TABLES.observations, TABLES.sessionSummaries, TABLES.memories] as const;

const req = (name: string, type: DataType): Field => new Field(name, type, false);
const opt = (name: string, type: DataType): Field => new Field(name, type, true);
const str = (): Utf8 => new Utf8();
const i64 = (): Int64 => new Int64();

export function metaSchema(): Schema {
  return new Schema([req('key', str()), req('value', str())]);
}

/** Columns added in schema v2; a v1 store gets them (null-filled) on upgrade. */
export const OBSERVATION_V2_FIELDS = (): Field[] => [
  opt('dedupe_key', str()),
  opt('fingerprint', str()),
  opt('occurrences', new Int32()),
  opt('updated_at_epoch', i64()),
];

export function observationsSchemaV1(): Schema {
  return new Schema([
    req('id', i64()),
    req('memory_session_id', str()),
    opt('content_session_id', str()),
    opt('project', str()),
    req('type', str()),
    opt('title', str()),
    opt('subtitle', str()),
    opt('narrative', str()),
    opt('facts', str()),
    opt('concepts', str()),
    opt('files_read', str()),
    opt('files_modified', str()),
    opt('commit_sha', str()),
    opt('branch', str()),
    req('status', str()),
    req('created_at', str()),
    req('created_at_epoch', i64()),
    opt('last_accessed_epoch', i64()),
    opt('discovery_tokens', i64()),
    /** JSON array of CompressedSource. */
    opt('compressed_sources', str()),
    /** Indexed for search, never shown (e.g. a commit's changed lines). */
    opt('search_extra', str()),
  ]);
}

export function observationsSchema(): Schema {
  return new Schema([...observationsSchemaV1().fields, ...OBSERVATION_V2_FIELDS()]);
}

export function sessionSummariesSchema(): Schema {
  return new Schema([
    req('id', i64()),
    req('memory_session_id', str()),
    opt('project', str()),
    opt('branch', str()),
    opt('request', str()),
    opt('learned', str()),
    opt('completed', str()),
    opt('decisions', str()),
    opt('next_steps', str()),
    opt('preferences', str()),
    req('created_at', str()),
    req('created_at_epoch', i64()),
    opt('started_at_epoch', i64()),
    opt('end_reason', str()),
    opt('observation_count', new Int32()),
    /** JSON array of the observation ids the summary covers. */
    opt('source_ids', str()),
    opt('summariser', str()),
    req('status', str()),
  ]);
}

export function memoriesSchema(): Schema {
  return new Schema([
    req('id', i64()),
    req('project', str()),
    req('title', str()),
    req('text', str()),
    req('memory_type', str()),
    req('created_at_epoch', i64()),
    req('updated_at_epoch', i64()),
    req('status', str()),
    req('scope', str()),
    req('classification', str()),
    req('classification_reason', str()),
    req('current_context_eligible', new Bool()),
    opt('branch', str()),
    opt('files', str()),
    opt('session_id', str()),
    opt('topic_key', str()),
    /** JSON arrays of TopicTrace / TemporalFact. */
    opt('topic_trace', str()),
    opt('temporal_facts', str()),
    opt('last_accessed_epoch', i64()),
    opt('access_count', new Int32()),
    /** JSON array of observation ids that evidence this memory. */
    opt('source_ids', str()),
    ...MEMORY_V4_FIELDS(),
  ]);
}

/** Columns added in schema v4 (supersession and conflicts); a v3 store gets them null-filled. */
export const MEMORY_V4_FIELDS = (): Field[] => [
  /** JSON array of the ids of the memories this one replaced. */
  opt('supersedes', str()),
  opt('superseded_by', i64()),
  opt('valid_to_epoch', i64()),
  /** JSON array of MemoryConflict. */
  opt('conflicts', str()),
];

export function cellsSchema(dimension: number): Schema {
  return new Schema([
    req('node_id', str()),
    req('layer', str()),
    req('source_kind', str()),
    req('source_id', i64()),
    req('project', str()),
    opt('branch', str()),
    req('type', str()),
    req('title', str()),
    req('text', str()),
    req('search_text', str()),
    opt('files', str()),
    opt('commit_sha', str()),
    opt('session_id', str()),
    req('created_at_epoch', i64()),
    opt('last_accessed_epoch', i64()),
    req('access_count', new Int32()),
    req('status', str()),
    req('embed_model', str()),
    req('vector', new FixedSizeList(dimension, new Field('item', new Float32(), true))),
  ]);
}

/** v3: prompts carry their project (session ids are chosen by clients, so they are keys within one). */
export function sessionPromptsSchema(): Schema {
  return new Schema([
    req('project', str()),
    req('session_id', str()),
    req('prompt', str()),
    req('created_at_epoch', i64()),
  ]);
}

export function requestLogSchema(): Schema {
  return new Schema([
    req('request_id', str()),
    req('tool', str()),
    req('project', str()),
    opt('session_id', str()),
    req('arguments', str()),
    req('response', str()),
    req('status', str()),
    req('duration_ms', new Float64()),
    req('created_at_epoch', i64()),
  ]);
}

export function entitiesSchema(): Schema {
  return new Schema([
    req('project', str()),
    req('id', str()),
    req('label', str()),
    req('type', str()),
    /** JSON object of string properties. */
    req('properties', str()),
    req('updated_at_epoch', i64()),
  ]);
}

export function relationshipsSchema(): Schema {
  return new Schema([
    req('project', str()),
    req('source', str()),
    req('target', str()),
    req('type', str()),
    req('weight', new Float64()),
    req('updated_at_epoch', i64()),
  ]);
}

/**
 * Full-text index segments (see lexicalSegments.ts): per project, a manifest row (segment and
 * term empty), one head row per segment (term empty) and one postings row per segment and term.
 */
export function lexicalSegmentsSchema(): Schema {
  return new Schema([req('project', str()), req('segment', str()), req('term', str()), req('data', new Binary())]);
}

/** Schemas of the current version, by table (cells depends on the embedding dimension). */
export function currentSchemas(dimension: number): Record<TableName, Schema> {
  return {
    meta: metaSchema(),
    observations: observationsSchema(),
    session_summaries: sessionSummariesSchema(),
    memories: memoriesSchema(),
    cells: cellsSchema(dimension),
    session_prompts: sessionPromptsSchema(),
    request_log: requestLogSchema(),
    entities: entitiesSchema(),
    relationships: relationshipsSchema(),
    lexical_segments: lexicalSegmentsSchema(),
  };
}
