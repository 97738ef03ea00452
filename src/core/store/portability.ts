// Export and import as JSON Lines: the user's data is theirs to move. One header line, then one
// line per record ({"kind": ..., "record": {...}}). Cells are not exported: they are rebuilt
// from the records on import and re-embedded by the background queue.
//
// Import reads the file twice: first every line is parsed, redacted and checked against its
// table's columns, and every record placed (see place); only then is anything written, so a
// bad line refuses the whole file. The same record imported again (same project and time, and
// the same id or content) is skipped; a record whose id is taken, or above MAX_KEPT_ID (2^52:
// see ids.ts), gets a fresh one, and every reference to it in the file (summaries' and memories'
// source ids, merged observations' sources, topic traces, supersession links and conflicts)
// follows, in whatever order the file holds them. Such a record is noted (an import alias in the
// meta table: a digest of its identity in the file, and its id in the store), so that importing
// the file again finds it whatever was edited since.
//
// A record the user forgot since the export (forgetKeys.ts keeps a digest of each, never text) is
// left out, counted as forgotten, with what names or derives from it: the graph's entries of a
// forgotten memory or derived from forgotten observations (those the stored observations still
// support are derived again), the links of other records to it, and the project's prompts from
// before the forget (a forget takes them all). ImportOptions.includeForgotten restores them.
//
// Export and import both run the product's redaction over every text of a record: a secret an
// older build stored raw does not leave the store in an export, nor enter one from a file.

import { Type } from 'apache-arrow';
import type { Field } from 'apache-arrow';
import { IDENTIFIER_TEXT } from '../capture/prepare';
import { redact, redactJson, redactKey } from '../capture/redact';
import { printable } from '../model/printable';
import { MAX_FIELD_CHARS, MEMORY_TYPES, RECORD_STATUSES } from '../model/records';
import type { CompressedSource, MemoryConflict, Scope, TopicTrace } from '../model/records';
import { cutText } from '../tokens';
import { EPOCH_RULE, MAX_EPOCH_MS } from '../tools/epoch';
import { SHA_PATTERN, sqlIntList, typeProblem } from './filters';
import { deriveGraphAgain } from './forget';
import { CONTENT_FIELDS, contentKey, importAliasKey, importMemo, recordForgetKeys } from './forgetKeys';
import { deriveGraph } from './graph';
import { MAX_KEPT_ID } from './ids';
import { parseJson, rowToMemory, rowToObservation, rowToSessionSummary } from './mapping';
import { ProjectTable, checkProject } from './projectTable';
import type { Repositories } from './repos/repositories';
import { entitiesSchema, memoriesSchema, observationsSchema, relationshipsSchema, SCHEMA_VERSION, sessionPromptsSchema, sessionSummariesSchema, TABLES } from './schema';
import type { TableName } from './schema';
import type { Row, Store } from './store';

export const EXPORT_FORMAT = 'code-memory-export';

/**
 * The longest line an import reads (bytes): far above any record (see MAX_FIELD_CHARS),
 * so a line past it is refused as it is read, before it is held whole.
 */
export const MAX_IMPORT_LINE_BYTES = 16 * 1024 * 1024;

type RecordKind = 'observation' | 'session_summary' | 'memory';

interface KindSpec {
  kind: string;
  table: TableName;
  record?: RecordKind;
  /** The table's columns: what a record of this kind may hold, and must. */
  fields: Field[];
  /** Text columns that must say something: the product never writes them empty. */
  filled?: string[];
  /** Columns that hold one of a few values. */
  oneOf?: Record<string, readonly string[]>;
}

const SESSION_FIELDS = ['memory_session_id', 'status', 'created_at'];

const KINDS: KindSpec[] = [
  { kind: 'observation', table: TABLES.observations, record: 'observation', fields: observationsSchema().fields, filled: [...SESSION_FIELDS, 'type'], oneOf: { status: RECORD_STATUSES } },
  { kind: 'session_summary', table: TABLES.sessionSummaries, record: 'session_summary', fields: sessionSummariesSchema().fields, filled: SESSION_FIELDS, oneOf: { status: RECORD_STATUSES } },
  {
    kind: 'memory',
    table: TABLES.memories,
    record: 'memory',
    fields: memoriesSchema().fields,
    filled: ['title', 'text', 'status', 'scope'],
    oneOf: { memory_type: MEMORY_TYPES, status: RECORD_STATUSES },
  },
  { kind: 'entity', table: TABLES.entities, fields: entitiesSchema().fields },
  { kind: 'relationship', table: TABLES.relationships, fields: relationshipsSchema().fields },
  { kind: 'session_prompt', table: TABLES.sessionPrompts, fields: sessionPromptsSchema().fields },
];

const UPSERT_KEYS: Record<string, string[]> = {
  entity: ['project', 'id'],
  relationship: ['project', 'source', 'target', 'type'],
  session_prompt: ['project', 'session_id', 'created_at_epoch', 'prompt'],
};

/**
 * Writes the export one line at a time. A `write` that returns a promise (stdout waiting for a
 * slow reader) is awaited before the next line.
 */
export async function exportJsonl(store: Store, write: (line: string) => void | Promise<void>, scope: Scope | null): Promise<number> {
  await write(JSON.stringify({ kind: EXPORT_FORMAT, schema_version: SCHEMA_VERSION, exported_at: new Date().toISOString(), project: scope?.project ?? null }));
  let n = 0;
  for (const { kind, table, record } of KINDS) {
    const rows = scope ? await new ProjectTable(store, table, scope.project).rows(null) : await store.rows(table, null);
    if (record) rows.sort((a, b) => Number(a.id) - Number(b.id));
    for (const r of rows) {
      // Redacted as an import reads it: a secret an older build stored raw stays in the store
      // (where a forget can reach it), never in a file that leaves it.
      await write(JSON.stringify({ kind, record: redactRecord(r) }));
      n++;
    }
  }
  return n;
}

const BATCH = 500;

/** A file the import refuses (not JSON, unknown kind, a record the store cannot hold): nothing was written. */
export class ImportFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImportFileError';
  }
}

/**
 * The lines to import. The file is read twice (checked whole, then written): a function that
 * opens it again keeps it out of memory; lines given once are held until the import ends.
 */
export type ImportLines = AsyncIterable<string> | (() => AsyncIterable<string>);

export interface ImportOptions {
  /** Import only this project's records; the others are counted, not written. */
  project?: string;
  /** Told what the import did, beyond the count it returns. */
  onReport?: (report: ImportReport) => void;
  /** Import the records forgotten since the export too (a restore), instead of leaving them out. */
  includeForgotten?: boolean;
}

export interface ImportReport {
  imported: number;
  /** Records, entities and links already in the store (the same file imported before). */
  already_there: number;
  /** Records of other projects than ImportOptions.project. */
  other_projects: number;
  /**
   * Observations, session summaries and memories left out because they were forgotten since the
   * export (see ImportOptions.includeForgotten); present when some were.
   */
  forgotten?: number;
}

/** Old id -> id in the store, per record kind, for the records of this import whose id changed. */
type Renumbered = Record<RecordKind, Map<number, number>>;

function remapIds(ids: unknown, map: Map<number, number>): unknown {
  return Array.isArray(ids) ? ids.map((id) => map.get(Number(id)) ?? id) : ids;
}

/** Gives a record its id in the store and rewrites its references to records of the file whose id changed. */
function remapReferences(kind: RecordKind, r: Row, renumbered: Renumbered): void {
  const obs = renumbered.observation;
  const mem = renumbered.memory;
  r.id = renumbered[kind].get(Number(r.id)) ?? r.id;
  if (kind === 'observation' && r.compressed_sources) {
    const sources = parseJson<CompressedSource[]>(r.compressed_sources, []);
    r.compressed_sources = JSON.stringify(
      sources.map((s) => ({
        ...s,
        compressed_observation_id: obs.get(s.compressed_observation_id) ?? s.compressed_observation_id,
        source_observation_id: obs.get(s.source_observation_id) ?? s.source_observation_id,
      })),
    );
  }
  if ((kind === 'session_summary' || kind === 'memory') && r.source_ids) {
    r.source_ids = JSON.stringify(remapIds(parseJson<number[]>(r.source_ids, []), obs));
  }
  if (kind !== 'memory') return;
  if (r.topic_trace) {
    const trace = parseJson<TopicTrace[]>(r.topic_trace, []);
    // Evidence is observations, or a memory of the trace itself where nothing else said it (ids
    // are the store's, one counter for every kind: an id names one record of one kind).
    const event = (id: number): number => obs.get(id) ?? mem.get(id) ?? id;
    r.topic_trace = JSON.stringify(
      trace.map((t) => ({
        ...t,
        id: mem.get(t.id) ?? t.id,
        covered_from_event_id: event(t.covered_from_event_id),
        covered_to_event_id: event(t.covered_to_event_id),
        evidence_event_ids: Array.isArray(t.evidence_event_ids) ? t.evidence_event_ids.map((id) => event(Number(id))) : t.evidence_event_ids,
      })),
    );
  }
  // Supersession links and conflicts can point either way in the file.
  if (r.supersedes) r.supersedes = JSON.stringify(remapIds(parseJson<number[]>(r.supersedes, []), mem));
  if (r.superseded_by !== null && r.superseded_by !== undefined) r.superseded_by = mem.get(Number(r.superseded_by)) ?? r.superseded_by;
  if (r.conflicts) r.conflicts = JSON.stringify(parseJson<MemoryConflict[]>(r.conflicts, []).map((c) => ({ ...c, id: mem.get(c.id) ?? c.id })));
}

/**
 * A graph entry that names a memory (`memory:<id>`: an entity's id, a link's ends, as the graph
 * names a decision or convention) follows the memory's renumbering: left as it was, it named
 * another memory, and the renumbered one's forget left its title behind in the entity.
 */
function remapGraph(r: Row, renumbered: Renumbered): void {
  const follow = (v: unknown): unknown => {
    const m = typeof v === 'string' ? /^memory:(\d+)$/.exec(v) : null;
    const to = m ? renumbered.memory.get(Number(m[1])) : undefined;
    return to === undefined ? v : `memory:${to}`;
  };
  for (const field of ['id', 'source', 'target']) if (field in r) r[field] = follow(r[field]);
}

/** Fields that name something (a session, a branch, a key, an entity): a secret in them is digested, not replaced (redactKey). */
const KEY_FIELDS = new Set(['id', 'branch', 'memory_session_id', 'content_session_id', 'session_id', 'topic_key', 'dedupe_key', 'source', 'target']);

/** Columns holding a JSON list of paths. */
const FILE_FIELDS = ['files', 'files_read', 'files_modified'];

/** An observation's columns holding a JSON list of texts. */
const TEXT_LIST_FIELDS = ['facts', 'concepts'];

/** Whether a column's value is empty or a JSON list of strings. */
function isTextList(value: unknown): boolean {
  const list = hasText(value) ? parseJson<unknown>(value, null) : [];
  return Array.isArray(list) && list.every((item) => typeof item === 'string');
}

/** The key fields and file paths of a record that hold NUL, which no filter could name again (as capture refuses it). */
function nulFields(r: Row): string[] {
  const found: string[] = [];
  for (const name of KEY_FIELDS) if (typeof r[name] === 'string' && !IDENTIFIER_TEXT.test(r[name] as string)) found.push(name);
  for (const name of FILE_FIELDS) {
    const paths = typeof r[name] === 'string' ? parseJson<unknown>(r[name], null) : null;
    if (Array.isArray(paths) && paths.some((f) => typeof f === 'string' && !IDENTIFIER_TEXT.test(f))) found.push(name);
  }
  return found;
}

/**
 * An imported record with this build's redaction applied to every text it holds, as if it had
 * been captured here (its texts without terminal escapes and control characters, as capture
 * stores them): an export may be hand-made, or come from a build with fewer rules. The
 * project stays as it is (it scopes the record); numbers are the store's own.
 */
function redactRecord(record: Row): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(record)) {
    if (k === 'project' || v === null || (typeof v !== 'string' && typeof v !== 'object')) out[k] = v;
    // A file's name is its own (as capture keeps it, cleanPaths): redacted only, and NUL in one refused (nulFields).
    else if (typeof v === 'object') out[k] = JSON.parse(redactJson(JSON.stringify(FILE_FIELDS.includes(k) ? v : printableValue(v)))) as unknown;
    else if (KEY_FIELDS.has(k)) out[k] = redactKey(v);
    else out[k] = FILE_FIELDS.includes(k) && /^\s*[[{]/.test(v) ? redactJson(v) : storedJsonText(v);
  }
  return out;
}

/** `value` with every string in it printable (tooDeepFields has bounded its depth). */
function printableValue(value: unknown): unknown {
  if (typeof value === 'string') return printable(value);
  if (Array.isArray(value)) return value.map(printableValue);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, printableValue(x)]));
  return value;
}

/**
 * A text field as stored: JSON (facts, a memory's temporal facts) with every string in it
 * printable and redacted; any other text (a title that only opens with a bracket too) printable
 * and redacted whole.
 */
function storedJsonText(v: string): string {
  if (/^\s*[[{]/.test(v)) {
    try {
      return redactJson(JSON.stringify(printableValue(JSON.parse(v))));
    } catch {
      // Not JSON: text.
    }
  }
  return redact(printable(v));
}

/**
 * How deep the JSON of one field may nest. The product's own nest three levels at most (a
 * memory's topic trace: a list of objects holding lists of ids).
 */
const MAX_JSON_DEPTH = 32;

/**
 * Whether `root` nests deeper than MAX_JSON_DEPTH. Walked with a stack of its own: JSON.parse
 * takes JSON nested a million deep, which a recursive walk, and JSON.stringify, cannot handle.
 */
function nestsTooDeep(root: unknown): boolean {
  const work: Array<[unknown, number]> = [[root, 0]];
  while (work.length > 0) {
    const [value, depth] = work.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_JSON_DEPTH) return true;
    for (const v of Array.isArray(value) ? value : Object.values(value)) work.push([v, depth + 1]);
  }
  return false;
}

/** The fields of a record given as JSON, or as text holding JSON, that nest deeper than MAX_JSON_DEPTH. */
function tooDeepFields(r: Row): string[] {
  return Object.entries(r)
    .filter(([, v]) => nestsTooDeep(typeof v === 'string' && /^\s*[[{]/.test(v) ? parseJson<unknown>(v, null) : v))
    .map(([k]) => k);
}

/** A checked line of the file: its kind and the record as it will be stored (before renumbering). */
interface ImportLine {
  spec: KindSpec;
  record: Row;
}

const VALUE_TYPES: Partial<Record<Type, { name: string; test: (v: unknown) => boolean }>> = {
  [Type.Utf8]: { name: 'a string', test: (v) => typeof v === 'string' },
  [Type.Int]: { name: 'an integer', test: (v) => Number.isSafeInteger(v) },
  [Type.Float]: { name: 'a number', test: (v) => typeof v === 'number' && Number.isFinite(v) },
  [Type.Bool]: { name: 'true or false', test: (v) => typeof v === 'boolean' },
};

/** The fields of a record longer than MAX_FIELD_CHARS, or null. */
function oversized(r: Row): string | null {
  const long = Object.entries(r).filter(([, v]) => typeof v === 'string' && v.length > MAX_FIELD_CHARS).map(([k]) => k);
  return long.length > 0 ? `${long.join(', ')} longer than ${MAX_FIELD_CHARS} characters, more than Code Memory stores in a field` : null;
}

/** What is wrong with a record against its table's columns, or null: the store needs every required column, of its type. */
function problemsOf(spec: KindSpec, r: Row): string | null {
  const missing: string[] = [];
  const wrong: string[] = [];
  if (typeof r.project !== 'string' || r.project === '') missing.push('project');
  else {
    try {
      checkProject(r.project);
    } catch (e) {
      wrong.push(`project: ${(e as Error).message}`);
    }
  }
  for (const field of spec.fields) {
    const value = r[field.name];
    if (value === null || value === undefined) {
      if (!field.nullable && field.name !== 'project') missing.push(field.name);
      continue;
    }
    const type = VALUE_TYPES[field.type.typeId as Type];
    if (type && !type.test(value)) wrong.push(`${field.name} ${cutText(JSON.stringify(value), 40)} is not ${type.name}`);
    // Past the year 9999 (or before 1970) no Date prints it, and every read that shows the time fails.
    else if (field.name.endsWith('_epoch') && typeof value === 'number' && (value < 0 || value > MAX_EPOCH_MS)) wrong.push(`${field.name} ${value} ${EPOCH_RULE}`);
  }
  for (const name of nulFields(r)) wrong.push(`${name} ${IDENTIFIER_TEXT.message}`);
  if (typeof r.commit_sha === 'string' && !SHA_PATTERN.test(r.commit_sha)) wrong.push(`commit_sha ${cutText(JSON.stringify(r.commit_sha), 40)} is not 4 to 64 hex digits`);
  for (const name of spec.filled ?? []) if (typeof r[name] === 'string' && (r[name] as string).trim() === '') wrong.push(`${name} is empty`);
  for (const [name, values] of Object.entries(spec.oneOf ?? {})) {
    if (typeof r[name] === 'string' && !values.includes(r[name] as string)) wrong.push(`${name} ${cutText(JSON.stringify(r[name]), 40)} is not one of ${values.join(', ')}`);
  }
  if (spec.record && Number.isSafeInteger(r.id) && Number(r.id) <= 0) wrong.push(`id ${Number(r.id)} is not positive`);
  // As capture holds them: views show a type as a class name and these links as memory ids.
  const badType = spec.kind === 'observation' && typeof r.type === 'string' && r.type.trim() !== '' ? typeProblem(r.type) : undefined;
  if (badType) wrong.push(`type: ${badType}`);
  if (typeof r.supersedes === 'string' && !isIdList(parseJson<unknown>(r.supersedes, null))) wrong.push('supersedes is not a JSON list of memory ids');
  if (typeof r.conflicts === 'string' && !isConflictList(parseJson<unknown>(r.conflicts, null))) wrong.push('conflicts is not a JSON list of {id, reason, resolution}');
  // The JSON the write pass reads and rewrites (remapReferences, the memory's cell): checked
  // here, so that no line fails once lines before it are written.
  if (spec.record !== 'observation' && hasText(r.source_ids) && !isIdList(parseJson<unknown>(r.source_ids, null))) wrong.push('source_ids is not a JSON list of observation ids');
  if (spec.kind === 'memory' && hasText(r.topic_trace) && !isTraceList(parseJson<unknown>(r.topic_trace, null))) wrong.push('topic_trace is not a JSON list of {id, evidence_event_ids, ...}');
  if (spec.kind === 'memory' && hasText(r.temporal_facts) && !isObjectList(parseJson<unknown>(r.temporal_facts, null))) wrong.push('temporal_facts is not a JSON list of objects');
  if (spec.kind === 'observation' && hasText(r.compressed_sources) && !isObjectList(parseJson<unknown>(r.compressed_sources, null))) wrong.push('compressed_sources is not a JSON list of objects');
  for (const name of FILE_FIELDS) if (!isTextList(r[name])) wrong.push(`${name} is not a JSON list of paths`);
  // Every reader of an observation's facts and concepts (its cell, the summariser, the graph, the views) takes a list of texts.
  if (spec.kind === 'observation') for (const name of TEXT_LIST_FIELDS) if (!isTextList(r[name])) wrong.push(`${name} is not a JSON list of texts`);
  const overLimit = oversized(r);
  if (overLimit) wrong.push(overLimit);
  const problems = [...(missing.length > 0 ? [`has no ${missing.join(', ')}`] : []), ...wrong];
  return problems.length > 0 ? problems.join('; ') : null;
}

/** One line of the file read, redacted and checked; null for the header and blank lines. Throws ImportFileError. */
function readLine(raw: string, lineNo: number): ImportLine | 'header' | null {
  if (raw.length > MAX_IMPORT_LINE_BYTES) throw new ImportFileError(`Import line ${lineNo} is longer than ${MAX_IMPORT_LINE_BYTES} bytes, more than any record holds; fix or remove it and import again (nothing was imported)`);
  const line = raw.trim();
  if (!line) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw new ImportFileError(`Import line ${lineNo} is not JSON: fix or remove it and import again (nothing was imported)`);
  }
  if (!isObject(parsed)) throw new ImportFileError(`Import line ${lineNo} is not a JSON object: each line holds {"kind": ..., "record": {...}}; fix or remove it and import again (nothing was imported)`);
  if (parsed.kind === EXPORT_FORMAT) {
    const version = parsed.schema_version;
    if (!Number.isSafeInteger(version) || Number(version) < 1) {
      throw new ImportFileError(`Import line ${lineNo}: the header's schema version ${cutText(redactJson(JSON.stringify(version ?? null)), 40)} is not a positive whole number; fix it and import again (nothing was imported)`);
    }
    if (Number(version) > SCHEMA_VERSION) {
      throw new ImportFileError(`The export has schema version ${Number(version)}; this Code Memory reads up to ${SCHEMA_VERSION}. Update Code Memory first.`);
    }
    return 'header';
  }
  const kind = typeof parsed.kind === 'string' ? parsed.kind : null;
  const spec = KINDS.find((k) => k.kind === kind);
  // The error quotes an unknown kind (stderr, the log): redacted whole first, then cut.
  if (!spec) throw new ImportFileError(`Import line ${lineNo}: ${kind === null ? 'no record kind' : `unknown record kind '${cutText(redact(kind), 40)}'`} (nothing was imported)`);
  if (!isObject(parsed.record)) throw new ImportFileError(`Import line ${lineNo}: the ${spec.kind} line has no record object (nothing was imported)`);
  const given = parsed.record as Row;
  if (kind === 'session_prompt' && !given.project) return null; // prompts of a v2 export have no project
  // Only the table's columns are kept; JSON given as such is stored as text, as the tables hold it.
  const kept: Row = Object.fromEntries(spec.fields.filter((f) => f.name in given).map((f) => [f.name, given[f.name]]));
  // Before anything serialises it (redaction, renumbering): JSON.stringify of JSON nested
  // thousands deep overflows the call stack.
  const deep = tooDeepFields(kept);
  if (deep.length > 0) {
    throw new ImportFileError(`Import line ${lineNo}: the ${spec.kind} record's ${deep.join(', ')} ${deep.length > 1 ? 'nest' : 'nests'} deeper than ${MAX_JSON_DEPTH} levels, more than any record of Code Memory holds; fix or remove it and import again (nothing was imported)`);
  }
  const record = redactRecord(kept);
  for (const field of spec.fields) {
    const value = record[field.name];
    if (field.type.typeId === Type.Utf8 && value !== null && typeof value === 'object') record[field.name] = JSON.stringify(value);
  }
  if (kind === 'memory') {
    record.current_context_eligible = Boolean(parseJson(String(record.current_context_eligible ?? false), record.current_context_eligible));
  }
  const problems = problemsOf(spec, record);
  if (problems) throw new ImportFileError(`Import line ${lineNo}: the ${spec.kind} record ${problems}; fix or remove it and import again (nothing was imported)`);
  // As capture stores it, so that a filter's lower-case prefix finds it.
  if (typeof record.commit_sha === 'string') record.commit_sha = record.commit_sha.toLowerCase();
  return { spec, record };
}

function isIdList(value: unknown): boolean {
  return Array.isArray(value) && value.every((id) => Number.isSafeInteger(id) && id > 0);
}

function hasText(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

function isObjectList(value: unknown): boolean {
  return Array.isArray(value) && value.every(isObject);
}

/** A memory's topic trace: objects with the id of a memory and, if any, a list of observation ids. */
function isTraceList(value: unknown): boolean {
  return isObjectList(value) && (value as Array<Record<string, unknown>>).every((t) => Number.isSafeInteger(t.id) && (t.evidence_event_ids === undefined || t.evidence_event_ids === null || isIdList(t.evidence_event_ids)));
}

function isConflictList(value: unknown): boolean {
  return Array.isArray(value) && value.every((c) => isObject(c) && Number.isSafeInteger(c.id) && typeof c.reason === 'string' && typeof c.resolution === 'string');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A record of the file to place: its id in the file, project, time and content key. */
interface Placed {
  id: number;
  project: string;
  epoch: number;
  key: string;
}

/** Where the records of the file go (see place). Ids are the file's. */
interface Placement {
  renumbered: Renumbered;
  /** Records already stored. */
  stored: Record<RecordKind, Set<number>>;
  /** Records forgotten since the export, left out. */
  forgotten: Record<RecordKind, Set<number>>;
  /** Per project, when the last forget of a record left out was (ms): the project's prompts from before it went with it. */
  forgotAt: Map<string, number>;
  /** Import aliases to note (meta key -> id in the store) for the records whose id changed. */
  aliases: Record<string, string>;
}

/**
 * Where every record of the file goes, decided before anything is written so that references
 * follow whatever the order of the file. A record already stored (same project and time, and the
 * same id, the id an earlier import of it stored it under, or the same content) is not written
 * again, and references to it point at the stored one. A record forgotten since (forgetKeys.ts keeps
 * its digests) is left out, unless `includeForgotten`. Any other keeps its id when no process can
 * hand it out any more (the id allocator reserves it), no stored or imported record holds it and
 * it is at most MAX_KEPT_ID, else it gets a fresh id. Keeping a larger one would move a local
 * store's id counter so near Number.MAX_SAFE_INTEGER that its ids ran out; an export of a store on
 * object storage holds such ids (random blocks up to 2^53), so they are renumbered, not refused.
 */
async function place(repos: Repositories, records: Record<RecordKind, Placed[]>, includeForgotten: boolean): Promise<Placement> {
  const renumbered: Renumbered = { observation: new Map(), session_summary: new Map(), memory: new Map() };
  const stored: Record<RecordKind, Set<number>> = { observation: new Set(), session_summary: new Set(), memory: new Set() };
  const forgotten: Record<RecordKind, Set<number>> = { observation: new Set(), session_summary: new Set(), memory: new Set() };
  const forgotAt = new Map<string, number>();
  const aliases: Record<string, string> = {};
  // Read again once the meta table moved: a forget in another process writes its digests there
  // before it deletes, so digests read after a chunk's rows cover every record those rows lack.
  const memos = new Map<string, { memo: Awaited<ReturnType<typeof importMemo>>; version: number }>();
  const memoOf = async (project: string) => {
    const version = await repos.store.table(TABLES.meta).version();
    const known = memos.get(project);
    if (known && known.version === version) return known.memo;
    const memo = await importMemo(repos.store, project);
    memos.set(project, { memo, version });
    return memo;
  };
  const owned: [number, number][] = [];
  const used = new Set<number>();
  const isOwned = (id: number): boolean => owned.some(([lo, hi]) => id >= lo && id < hi);
  for (const { table, record: kind } of KINDS) {
    if (!kind) continue;
    const fresh: Placed[] = [];
    for (const [project, list] of groupBy(records[kind], (p) => p.project)) {
      for (let i = 0; i < list.length; i += BATCH) {
        const chunk = list.slice(i, i + BATCH);
        const rows = await new ProjectTable(repos.store, table, project).rows(`created_at_epoch IN ${sqlIntList(chunk.map((p) => p.epoch))}`, {
          select: ['id', 'created_at_epoch', ...CONTENT_FIELDS[kind]],
        });
        const memo = await memoOf(project);
        const there = rows.map((r) => ({ id: Number(r.id), epoch: Number(r.created_at_epoch), key: contentKey(kind, r) }));
        for (const p of chunk) {
          const aliasKey = importAliasKey(project, kind, p.epoch, p.id);
          const alias = memo.aliases.get(aliasKey);
          const at = there.filter((t) => t.epoch === p.epoch);
          // Its own id first, then the one an earlier import gave it (edited since or not), then its content.
          const match = at.find((t) => t.id === p.id) ?? at.find((t) => alias !== undefined && t.id === alias) ?? at.find((t) => t.key === p.key);
          if (match) {
            stored[kind].add(p.id);
            if (match.id !== p.id) {
              renumbered[kind].set(p.id, match.id);
              if (alias !== match.id) aliases[aliasKey] = String(match.id);
            }
            continue;
          }
          const when = includeForgotten || memo.forgotten.size === 0 ? [] : recordForgetKeys(project, kind, p.epoch, p.id, [p.key]).map((k) => memo.forgotten.get(k)).filter((t): t is number => t !== undefined);
          if (when.length > 0) {
            forgotten[kind].add(p.id);
            forgotAt.set(project, Math.max(forgotAt.get(project) ?? 0, ...when));
          } else fresh.push(p);
        }
      }
    }
    const placedOf = new Map(fresh.map((p) => [p.id, p]));
    for (let i = 0; i < fresh.length; i += BATCH) {
      const ids = fresh.slice(i, i + BATCH).map((p) => p.id);
      const taken = new Set((await repos.store.rows(table, `id IN ${sqlIntList(ids)}`, { select: ['id'] })).map((r) => Number(r.id)));
      const range = await repos.ids.reserve(ids.filter((id) => id <= MAX_KEPT_ID && !taken.has(id) && !used.has(id) && !isOwned(id)));
      if (range) owned.push(range);
      const clashes = ids.filter((id) => {
        if (id > MAX_KEPT_ID || taken.has(id) || used.has(id) || !isOwned(id)) return true;
        used.add(id);
        return false;
      });
      const newIds = clashes.length > 0 ? await repos.ids.allocate(clashes.length) : [];
      clashes.forEach((id, j) => {
        renumbered[kind].set(id, newIds[j]);
        used.add(newIds[j]);
        const p = placedOf.get(id)!;
        aliases[importAliasKey(p.project, kind, p.epoch, id)] = String(newIds[j]);
      });
    }
  }
  return { renumbered, stored, forgotten, forgotAt, aliases };
}

/**
 * A record of the file written without what names records left out as forgotten: its sources,
 * supersession links, conflicts and topic-trace entries (as a forget takes them from the records
 * it leaves).
 */
function dropForgotten(kind: RecordKind, r: Row, forgotten: Record<RecordKind, Set<number>>): void {
  const obs = forgotten.observation;
  const mem = forgotten.memory;
  if (obs.size === 0 && mem.size === 0) return;
  const keep = (ids: unknown, gone: Set<number>): unknown => (Array.isArray(ids) ? ids.filter((id) => !gone.has(Number(id))) : ids);
  if (kind === 'observation' && r.compressed_sources) {
    const sources = parseJson<CompressedSource[]>(r.compressed_sources, []);
    r.compressed_sources = JSON.stringify(sources.filter((s) => !obs.has(Number(s.source_observation_id))));
  }
  if ((kind === 'session_summary' || kind === 'memory') && r.source_ids) r.source_ids = JSON.stringify(keep(parseJson<number[]>(r.source_ids, []), obs));
  if (kind !== 'memory') return;
  if (r.topic_trace) {
    const trace = parseJson<TopicTrace[]>(r.topic_trace, []).filter((t) => !mem.has(Number(t.id)));
    const either = new Set([...obs, ...mem]);
    r.topic_trace = trace.length > 0 ? JSON.stringify(trace.map((t, i) => ({ ...t, segment_index: i, evidence_event_ids: keep(t.evidence_event_ids, either) }))) : null;
  }
  if (r.supersedes) {
    const left = keep(parseJson<number[]>(r.supersedes, []), mem) as number[];
    r.supersedes = left.length > 0 ? JSON.stringify(left) : null;
  }
  if (r.superseded_by !== null && r.superseded_by !== undefined && mem.has(Number(r.superseded_by))) r.superseded_by = null;
  if (r.conflicts) {
    const left = parseJson<MemoryConflict[]>(r.conflicts, []).filter((c) => !mem.has(Number(c.id)));
    r.conflicts = left.length > 0 ? JSON.stringify(left) : null;
  }
}

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/**
 * Imports a file in two passes: the first reads and checks every line and places every record
 * (see place), the second writes. A file with a bad line is refused whole, so importing it
 * again once fixed starts from the same store.
 */
export async function importJsonl(repos: Repositories, lines: ImportLines, options: ImportOptions = {}): Promise<ImportReport> {
  const report: ImportReport = { imported: 0, already_there: 0, other_projects: 0 };
  const held: string[] = [];
  const inScope = (record: Row): boolean => options.project === undefined || record.project === options.project;
  const toPlace: Record<RecordKind, Placed[]> = { observation: [], session_summary: [], memory: [] };
  const lineOfId: Record<RecordKind, Map<number, number>> = { observation: new Map(), session_summary: new Map(), memory: new Map() };
  let lineNo = 0;
  let header = false;
  for await (const raw of typeof lines === 'function' ? lines() : lines) {
    lineNo++;
    if (typeof lines !== 'function') held.push(raw);
    const read = readLine(raw, lineNo);
    // An export starts with its header: a file whose first line (blank ones aside) is anything
    // else, records with a header somewhere after them too, is not one, and is refused whole.
    if (!header && read !== 'header' && raw.trim()) throw new ImportFileError(`Import line ${lineNo}: the file has no code-memory-export header line before it, as an export starts with one: it is not an export of Code Memory (nothing was imported)`);
    if (read === 'header') header = true;
    if (!read || read === 'header' || !read.spec.record) continue;
    const kind = read.spec.record;
    const r = read.record;
    const id = Number(r.id);
    const first = lineOfId[kind].get(id);
    if (first !== undefined) throw new ImportFileError(`Import line ${lineNo}: a second ${kind} with id ${id} (the first is on line ${first}); remove one and import again (nothing was imported)`);
    lineOfId[kind].set(id, lineNo);
    if (inScope(r)) toPlace[kind].push({ id, project: String(r.project), epoch: Number(r.created_at_epoch), key: contentKey(kind, r) });
  }
  // An empty file, or one that is not an export (no header line), is a mistake, not an import of nothing.
  if (!header) throw new ImportFileError(`${lineNo === 0 ? 'The file is empty' : 'The file has no code-memory-export header line'}: it is not an export of Code Memory (nothing was imported)`);
  // What is already stored is read (place) and the rest written under one lock: two imports of
  // one file at once (two processes) would each find nothing stored and each write it all.
  return repos.store.exclusive('import', () => writeImport(repos, lines, held, toPlace, inScope, report, options.includeForgotten === true));
}

async function writeImport(
  repos: Repositories,
  lines: ImportLines,
  held: string[],
  toPlace: Record<RecordKind, Placed[]>,
  inScope: (record: Row) => boolean,
  report: ImportReport,
  includeForgotten: boolean,
): Promise<ImportReport> {
  const { renumbered, stored, forgotten, forgotAt, aliases } = await place(repos, toPlace, includeForgotten);
  report.already_there = stored.observation.size + stored.session_summary.size + stored.memory.size;
  const nForgotten = forgotten.observation.size + forgotten.session_summary.size + forgotten.memory.size;
  if (nForgotten > 0) report.forgotten = nForgotten;
  // The graph's entries derived from the records left out (a forgotten memory's own, a forgotten
  // observation's files, concepts, commit), by project: left out too, those the stored
  // observations support derived again once the import is written.
  const forgottenGraph = nForgotten > 0 ? await forgottenEntities(lines, held, forgotten) : new Map<string, Set<string>>();
  const leftOut = (kind: string, r: Row): boolean => {
    const project = String(r.project);
    if (kind === 'session_prompt') return Number(r.created_at_epoch) <= (forgotAt.get(project) ?? -1);
    const graph = forgottenGraph.get(project);
    if (!graph) return false;
    if (kind === 'entity') return graph.has(String(r.id));
    return kind === 'relationship' && (graph.has(String(r.source)) || graph.has(String(r.target)));
  };

  const pending = new Map<string, Row[]>();
  const flushKind = async (spec: KindSpec): Promise<void> => {
    const rows = pending.get(spec.kind) ?? [];
    pending.set(spec.kind, []);
    for (const [project, list] of groupBy(rows, (r) => String(r.project))) {
      const scoped = repos.forProject(project);
      if (spec.record === 'observation') {
        await scoped.observations.write(
          list.map(rowToObservation),
          list.map((r) => ({ search_extra: (r.search_extra as string | null) ?? null, dedupe_key: (r.dedupe_key as string | null) ?? null, fingerprint: (r.fingerprint as string | null) ?? null })),
        );
      } else if (spec.record === 'memory') {
        for (const r of list) await scoped.memories.write(rowToMemory(r), { source_ids: parseJson<number[]>(r.source_ids, []) });
      } else if (spec.record === 'session_summary') {
        for (const r of list) await scoped.summaries.write(rowToSessionSummary(r), r, (r.branch as string | null) ?? null, []);
      } else {
        // Keyed by project: a row of the file replaces only a row of the project it names.
        // An entity or link whose key is there already (the same file imported before) is replaced, not added.
        const added = await new ProjectTable(repos.store, spec.table, project).upsert(UPSERT_KEYS[spec.kind], list);
        report.imported += added;
        report.already_there += list.length - added;
        continue;
      }
      report.imported += list.length;
    }
  };
  let lineNo = 0;
  for await (const raw of typeof lines === 'function' ? lines() : held) {
    const read = readLine(raw, ++lineNo);
    if (!read || read === 'header') continue;
    const { spec, record } = read;
    if (!inScope(record)) {
      report.other_projects++;
      continue;
    }
    if (spec.record) {
      if (stored[spec.record].has(Number(record.id)) || forgotten[spec.record].has(Number(record.id))) continue;
      dropForgotten(spec.record, record, forgotten);
      remapReferences(spec.record, record, renumbered);
    } else {
      if (leftOut(spec.kind, record)) continue;
      remapGraph(record, renumbered);
    }
    // Records refer to earlier kinds (summaries to observations): those are written first.
    for (const earlier of KINDS.slice(0, KINDS.indexOf(spec))) await flushKind(earlier);
    const queued = pending.get(spec.kind) ?? [];
    queued.push(record);
    pending.set(spec.kind, queued);
    if (queued.length >= BATCH) await flushKind(spec);
  }
  for (const spec of KINDS) await flushKind(spec);
  // An export of a store that never retired them holds several current memories of one topic_key:
  // all but the newest are retired, as remember retires them, in the projects the file's memories
  // are of (those stored before too: a file imported again after an import cut short is repaired).
  const projects = [...new Set(toPlace.memory.map((p) => p.project))];
  if (projects.length > 0) await repos.store.retireSameTopics(projects);
  // Noted once the records are written: an import cut short finds them again by their content.
  const noted = Object.entries(aliases);
  for (let i = 0; i < noted.length; i += BATCH) await repos.store.setMeta(Object.fromEntries(noted.slice(i, i + BATCH)));
  for (const [project, ids] of forgottenGraph) await deriveGraphAgain(repos.forProject(project), [...ids]);
  return report;
}

/**
 * The graph entries (entity ids) derived from the records of the file left out as forgotten, by
 * project: a forgotten memory's `memory:<id>`, and what a forgotten observation derives (its files,
 * concepts, commit, branch), read from the file again.
 */
async function forgottenEntities(lines: ImportLines, held: string[], forgotten: Record<RecordKind, Set<number>>): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  const add = (project: string, id: string): void => {
    const set = out.get(project) ?? new Set<string>();
    set.add(id);
    out.set(project, set);
  };
  let lineNo = 0;
  for await (const raw of typeof lines === 'function' ? lines() : held) {
    lineNo++;
    // Only the lines of forgotten records are read whole (checked, redacted) again.
    const head = /"kind"\s*:\s*"(observation|memory)"/.exec(raw);
    if (!head) continue;
    const read = readLine(raw, lineNo);
    if (!read || read === 'header' || !read.spec.record) continue;
    const { record } = read;
    const project = String(record.project);
    if (read.spec.record === 'memory' && forgotten.memory.has(Number(record.id))) add(project, `memory:${Number(record.id)}`);
    if (read.spec.record === 'observation' && forgotten.observation.has(Number(record.id))) {
      for (const e of deriveGraph([rowToObservation(record)], 0).entities) add(project, String(e.id));
    }
  }
  return out;
}
