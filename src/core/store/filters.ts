// Every value that reaches a LanceDB `where` goes through this file. `where` strings are raw
// SQL: a quote in an unescaped value matched every row, so strings are quote-doubled, enums are
// whitelisted and numbers are checked, and callers' filters are always AND-ed after the scope.

import type { NodeFilter } from '../api';
import { storedPath } from '../capture/paths';
import { redact } from '../capture/redact';
import { projectWideBranches } from '../model/branches';
import { DOCUMENT_TYPE } from '../model/records';
import type { Layer, Scope } from '../model/records';

const LAYERS: readonly Layer[] = ['L0', 'L1', 'L2'];
const TYPE_PATTERN = /^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/;
/** A commit SHA or a prefix of one, as records and filters take it. */
export const SHA_PATTERN = /^[0-9a-fA-F]{4,64}$/;

export class FilterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FilterError';
  }
}

/** Half of a UTF-16 surrogate pair alone: no UTF-8 text holds it (the store writes U+FFFD for it). */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A SQL string literal. NUL cannot appear in a literal, so it is rejected. */
export function sqlString(value: string): string {
  if (typeof value !== 'string') throw new FilterError(`expected a string, got ${typeof value}`);
  if (value.includes('\u0000')) throw new FilterError('a filter value may not contain NUL characters');
  // It would be compared as U+FFFD: 's-\ud801' would find 's-\udc01' too.
  if (LONE_SURROGATE.test(value)) throw new FilterError('a filter value may not contain lone surrogates (text that is not valid Unicode)');
  return `'${value.replace(/'/g, "''")}'`;
}

/**
 * A SQL literal of text to store (an update's value, not a filter's): half a surrogate pair is
 * written as U+FFFD, as the store writes it in a row it adds; a filter refuses it (sqlString).
 */
export function sqlText(value: string): string {
  return sqlString(String(value).replace(new RegExp(LONE_SURROGATE.source, 'g'), '\ufffd'));
}

/** A SQL integer literal; only safe integers pass. */
export function sqlInt(value: number): string {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new FilterError(`expected an integer, got ${String(value)}`);
  }
  return String(value);
}

export function sqlIntList(values: readonly number[]): string {
  if (values.length === 0) throw new FilterError('an id list may not be empty');
  return `(${values.map(sqlInt).join(', ')})`;
}

export function sqlStringList(values: readonly string[]): string {
  if (values.length === 0) throw new FilterError('a value list may not be empty');
  return `(${values.map(sqlString).join(', ')})`;
}

/** A LIKE pattern that matches `needle` literally anywhere in the column. */
export function sqlContains(column: string, needle: string): string {
  const escaped = needle.replace(/[\\%_]/g, (c) => `\\${c}`);
  // Matched against stored text, in which half a surrogate pair reads U+FFFD.
  return `${column} LIKE ${sqlText(`%${escaped}%`)} ESCAPE '\\'`;
}

/** What the regular expressions of a `where` (Rust's regex crate) give a meaning to: the characters its regex::escape escapes. */
const REGEX_META = /[\\.+*?()|[\]{}^$#&~-]/g;
/** The most UTF-8 bytes of escaped needles in one regular expression of sqlContainsAny (a sixth or less of what compiles). */
const REGEX_BYTES = 16_384;

/**
 * A test that the column holds any of `needles` literally anywhere: one regular expression of
 * them all (a few for a long list, see REGEX_BYTES), which reads each row once (a LIKE each read
 * every row once per needle: a files filter of 100 paths cost three times one of 1). A needle
 * holding a backslash (a JSON-quoted path with a quote in it) keeps a LIKE of its own: the query
 * planner turns an expression of up to 4 plain words into LIKEs without escaping a backslash,
 * which a LIKE reads as an escape.
 */
export function sqlContainsAny(column: string, needles: readonly string[]): string {
  if (needles.length === 0) throw new FilterError('a value list may not be empty');
  const inRegex = (n: string): boolean => !n.includes('\\') && Buffer.byteLength(n) * 2 < REGEX_BYTES;
  const clauses = needles.filter((n) => !inRegex(n)).map((n) => sqlContains(column, n));
  // A regular expression compiles to at most 10 MiB (the regex crate's limit, "CompiledTooBig"):
  // about 200 KB of needles; each takes at most REGEX_BYTES of them, a longer needle its own LIKE.
  const groups: string[][] = [];
  let bytes = Infinity;
  for (const n of needles.filter(inRegex)) {
    const escaped = n.replace(REGEX_META, (c) => `\\${c}`);
    const size = Buffer.byteLength(escaped) + 1;
    if (bytes + size > REGEX_BYTES) {
      groups.push([]);
      bytes = 0;
    }
    groups[groups.length - 1].push(escaped);
    bytes += size;
  }
  // Matched against stored text, in which half a surrogate pair reads U+FFFD.
  clauses.unshift(...groups.map((g) => `regexp_like(${column}, ${sqlText(g.join('|'))})`));
  return clauses.length === 1 ? clauses[0] : `(${clauses.join(' OR ')})`;
}

export function validLayer(layer: string): Layer {
  if (!(LAYERS as readonly string[]).includes(layer)) {
    throw new FilterError(`unknown layer '${layer}': use one of ${LAYERS.join(', ')}`);
  }
  return layer as Layer;
}

export function validType(type: string): string {
  const problem = typeProblem(type);
  if (problem) throw new FilterError(problem);
  return type;
}

/**
 * Why a type is refused, or undefined: for checks that gather problems (a tool's schema, an import
 * line). A type is stored as it is given, on the record, its search cell (as the title when it has
 * none), a memory promoted from it and a team store's row: one that holds a secret (a token given
 * as the type, a pasted command) is refused, as a project name that holds one is. The reason
 * never quotes such a type: it is shown on stderr, to an agent and in the log.
 */
export function typeProblem(type: string): string | undefined {
  const text = String(type);
  if (redact(text) !== text) return "invalid type: a type must not hold a secret (a token, key or password): name the kind of record without it";
  return typeof type === 'string' && TYPE_PATTERN.test(type) ? undefined : `invalid type '${text}': letters, digits, '_', '-', '.', ':' only`;
}

function asArray<T>(v: T | T[] | undefined): T[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

/** The scope part of any table that has project and branch columns. */
export function projectWhere(scope: Scope): string {
  if (!scope || typeof scope.project !== 'string' || scope.project.length === 0) {
    throw new FilterError('a scope needs a project name');
  }
  const branch = branchWhere(scope);
  return [`project = ${sqlString(scope.project)}`, ...(branch ? [branch] : [])].join(' AND ');
}

/**
 * What a caller on `branch` sees: the records of that branch and those that hold project-wide
 * (no branch: memories, imports; or a default branch's: model/branches.ts). Another branch's
 * records hold on that branch only. No branch: every record of the project.
 */
export function branchWhere({ branch, defaultBranch }: BranchScope): string | null {
  return branch ? `(branch = ${sqlString(branch)} OR branch IS NULL OR branch IN ${sqlStringList(projectWideBranches(defaultBranch))})` : null;
}

/** The caller's branch, and the repository's default branch where it is known (Scope). */
export interface BranchScope {
  branch?: string | null;
  defaultBranch?: string | null;
}

/** Which statuses a cell search sees: active only by default; superseded ones for history; or all. */
export interface StatusOptions {
  includeInactive?: boolean;
  includeSuperseded?: boolean;
}

/**
 * The prefilter for a search over cells: the caller's scope, active rows only, then the
 * optional filter and layers. Throws FilterError on a value it cannot make safe.
 */
export function scopeWhere(scope: Scope, filter?: NodeFilter, layers?: Layer[], options?: StatusOptions): string {
  return `${projectWhere({ project: scope.project })} AND ${cellFilterWhere(scope, filter, layers, options)}`;
}

/** scopeWhere without the project, which the repository's ProjectTable puts first. */
export function cellFilterWhere(branch: BranchScope, filter?: NodeFilter, layers?: Layer[], options?: StatusOptions): string {
  const parts: string[] = [];
  const b = branchWhere(branch);
  if (b) parts.push(b);
  if (options?.includeSuperseded && !options.includeInactive) parts.push(`status IN ('active', 'superseded')`);
  else if (!options?.includeInactive) parts.push(`status = 'active'`);
  const layerSet = new Set<Layer>();
  const requested = [...asArray(layers), ...asArray(filter?.layer)].map(validLayer);
  for (const l of requested) layerSet.add(l);
  if (layerSet.size > 0) parts.push(`layer IN (${[...layerSet].map((l) => `'${l}'`).join(', ')})`);
  const types = asArray(filter?.type).map(validType);
  // The documents layer is searched only when asked for by its type (see capture/projectDocs.ts).
  if (types.length > 0) parts.push(`type IN ${sqlStringList(types)}`);
  else if (layerSet.size === 0 || layerSet.has('L0')) parts.push(`type <> '${DOCUMENT_TYPE}'`);
  if (filter) {
    if (filter.branch !== undefined) parts.push(`branch = ${sqlString(filter.branch)}`);
    if (filter.commit_sha !== undefined) {
      if (!SHA_PATTERN.test(filter.commit_sha)) throw new FilterError(`invalid commit sha '${filter.commit_sha}'`);
      parts.push(`commit_sha LIKE ${sqlString(`${filter.commit_sha.toLowerCase()}%`)}`);
    }
    if (filter.session_id !== undefined) parts.push(`session_id = ${sqlString(filter.session_id)}`);
    if (filter.since_epoch !== undefined) parts.push(`created_at_epoch >= ${sqlInt(filter.since_epoch)}`);
    if (filter.until_epoch !== undefined) parts.push(`created_at_epoch <= ${sqlInt(filter.until_epoch)}`);
    const files = asArray(filter.files);
    if (files.length > 0) {
      // files holds a JSON array; match the quoted path so 'a.ts' does not match 'aa.ts'.
      // Paths are stored with forward slashes (see capture/paths.ts); 'src\\a.ts' finds them too.
      parts.push(sqlContainsAny('files', files.map((f) => JSON.stringify(storedPath(String(f))))));
    }
  }
  return parts.length > 0 ? parts.join(' AND ') : 'true';
}
