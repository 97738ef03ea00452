// What leaves the machine when a person shares a record: built from the record's search cell,
// redacted again (with today's rules), with the sharer's git identity. The preview a person
// confirms is made by this same function, so it shows exactly what is sent.

import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import * as os from 'node:os';
import { promisify } from 'node:util';
import { redact, redactNullable } from '../capture/redact';
import type { Cell, Layer, SourceKind } from '../model/records';
import { parseJson } from '../store/mapping';
import { prepareIndexText } from '../retrieve/textPrep';
import type { TeamRow } from './teamTable';

const run = promisify(execFile);

/** What a person sees before sharing: every text field that goes to the team store. */
export interface SharePreview {
  node_id: string;
  project: string;
  origin: string;
  layer: Layer;
  type: string;
  title: string;
  text: string;
  files: string[];
  branch: string | null;
  shared_by: string;
}

/** `Name <email>` from git config in `folder`, else the OS user name. */
export async function gitAuthor(folder: string): Promise<string> {
  const get = async (key: string): Promise<string> => {
    try {
      return (await run('git', ['config', '--get', key], { cwd: folder, timeout: 5000 })).stdout.trim();
    } catch {
      return '';
    }
  };
  const [name, email] = await Promise.all([get('user.name'), get('user.email')]);
  if (name && email) return `${name} <${email}>`;
  return name || email || os.userInfo().username;
}

/**
 * The team item's key: the same person sharing the same record of the same project always
 * gets the same id (sharing twice stores one item); anyone else, another.
 */
export function teamNodeId(project: string, author: string, kind: SourceKind, id: number): string {
  const h = createHash('sha256').update(`${project}\0${author}\0${kind}/${id}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16], 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** A positive integer below 2^53 derived from a node id, for the cell's source_id. */
export function teamSourceId(nodeId: string): number {
  return Number.parseInt(nodeId.replace(/-/g, '').slice(0, 13), 16);
}

export interface ShareSource {
  cell: Cell;
  /** The cell's vector and its model, if it has been embedded. */
  vector: ArrayLike<number> | null;
  embedModel: string;
}

/**
 * The type as it is sent. Capture refuses a type that holds a secret, but a record stored before
 * that rule (or by an older version) may have one: it is sent as 'redacted', a type the views can
 * still show, rather than as [REDACTED], which is no type.
 */
function sharedType(type: string): string {
  const text = String(type);
  return redact(text) === text ? text : 'redacted';
}

export function sharePreview(source: ShareSource, author: string): SharePreview {
  const c = source.cell;
  const nodeId = teamNodeId(c.project, author, c.source_kind, c.source_id);
  return {
    node_id: nodeId,
    project: c.project,
    origin: `${c.source_kind}/${c.source_id}`,
    layer: c.layer,
    type: sharedType(c.type),
    title: redact(c.title),
    text: redact(c.text),
    files: parseJson<string[]>(c.files, []).map(redact),
    branch: redactNullable(c.branch),
    shared_by: author,
  };
}

export function teamRow(source: ShareSource, preview: SharePreview, now: number): TeamRow {
  const c = source.cell;
  return {
    node_id: preview.node_id,
    layer: preview.layer,
    source_kind: c.source_kind,
    source_id: teamSourceId(preview.node_id),
    project: preview.project,
    branch: preview.branch,
    type: preview.type,
    title: preview.title,
    text: preview.text,
    search_text: prepareIndexText({ title: preview.title, text: preview.text, files: preview.files }),
    files: preview.files.length > 0 ? JSON.stringify(preview.files) : null,
    commit_sha: c.commit_sha,
    session_id: null,
    created_at_epoch: c.created_at_epoch,
    last_accessed_epoch: null,
    access_count: 0,
    status: 'active',
    embed_model: source.vector ? source.embedModel : '',
    vector: source.vector ? Array.from(source.vector) : [],
    shared_by: preview.shared_by,
    shared_at_epoch: now,
    origin: preview.origin,
  };
}
