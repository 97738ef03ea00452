// What leaves the machine when a person shares a record: built from the record's search cell,
// redacted again (with today's rules), with the sharer's git identity. The preview a person
// confirms is made by this same function, so it shows exactly what is sent, and nothing else
// leaves: the vector sent is made from the preview's text (see shareVector).

import { createHash, randomUUID } from 'node:crypto';
import * as os from 'node:os';
import { embeddingText } from '../embed/embedder';
import { gitOutput } from '../capture/gitProcess';
import { redact, redactNullable } from '../capture/redact';
import type { Cell, Layer, SourceKind } from '../model/records';
import { parseJson } from '../store/mapping';
import { prepareIndexText } from '../retrieve/textPrep';
import type { TeamRow } from './teamTable';

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
  const get = async (key: string): Promise<string> => (await gitOutput(folder, ['config', '--get', key])) ?? '';
  const [name, email] = await Promise.all([get('user.name'), get('user.email')]);
  if (name && email) return `${name} <${email}>`;
  return name || email || os.userInfo().username;
}

/**
 * The team item's key: the same person sharing the same record of the same project from the
 * same personal store always gets the same id (sharing twice stores one item); anyone else,
 * another. `store` is the personal store's identity (storeIdentity): record ids are per store,
 * so one author on two machines (or two people whose git identity falls back to the same OS
 * user) had the same key for different records, and one share replaced the other. Without it:
 * the key items shared before the identity existed were given (still looked up by unshare and
 * forget).
 */
export function teamNodeId(project: string, author: string, kind: SourceKind, id: number, store?: string): string {
  const h = createHash('sha256')
    .update(store ? `${project}\0${author}\0${store}\0${kind}/${id}` : `${project}\0${author}\0${kind}/${id}`)
    .digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16], 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The keys an author's share of a record may have: this store's, then the one before store identities. */
export function teamNodeIds(project: string, author: string, kind: SourceKind, id: number, store: string | null): string[] {
  return store ? [teamNodeId(project, author, kind, id, store), teamNodeId(project, author, kind, id)] : [teamNodeId(project, author, kind, id)];
}

/** What a personal store keeps its identity under in its meta table. */
export const STORE_IDENTITY_KEY = 'team_store_identity';

/** The meta table of a personal store, as far as its identity needs it (see Store.claimMeta). */
export interface IdentityMeta {
  getMeta(key: string): Promise<string | null>;
  claimMeta(key: string, value: string, keep: (stored: string) => boolean): Promise<string>;
}

const IDENTITY = /^[0-9a-f-]{36}$/;

/**
 * The personal store's identity: a random id made the first time it is needed and kept in the
 * store's meta table (so it travels with the store, whatever machine opens it). Two processes
 * making it at once both get the one stored first (claimMeta). Without `create`, null when
 * there is none yet.
 */
export async function storeIdentity(meta: IdentityMeta, create: boolean): Promise<string | null> {
  const stored = await meta.getMeta(STORE_IDENTITY_KEY);
  if (stored && IDENTITY.test(stored)) return stored;
  // Reads (search, unshare, forget) do not make one: a store that never shared has none to find.
  if (!create) return null;
  return meta.claimMeta(STORE_IDENTITY_KEY, randomUUID(), (s) => IDENTITY.test(s));
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

export function sharePreview(source: ShareSource, author: string, store: string): SharePreview {
  const c = source.cell;
  const nodeId = teamNodeId(c.project, author, c.source_kind, c.source_id, store);
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

/** What embeds text for a share (the engine's embedder). */
export interface ShareEmbedder {
  readonly name: string;
  readonly dimension: number;
  embed(texts: string[]): Promise<ArrayLike<number>[]>;
}

/**
 * The vector sent with a share: made from the preview's title and text only. The stored cell's
 * vector was made from the unredacted text, and a vector leaks what it was made of (a key's
 * share scored 0.53 against the key's own embedding, 0.06 with the key redacted); it is sent
 * only when no embedder is at hand and redaction changed neither title nor text (then it was
 * made of the very text the preview shows). Otherwise no vector: teammates find the item by
 * its words, as they do one shared from another model.
 */
export async function shareVector(source: ShareSource, preview: SharePreview, embedder: ShareEmbedder | null): Promise<{ vector: ArrayLike<number> | null; embedModel: string }> {
  if (embedder) {
    const [v] = await embedder.embed([embeddingText(preview.title, preview.text)]).catch(() => [null]);
    if (v && v.length === embedder.dimension) return { vector: v, embedModel: embedder.name };
  }
  const unchanged = source.cell.title === preview.title && source.cell.text === preview.text;
  return unchanged && source.vector ? { vector: source.vector, embedModel: source.embedModel } : { vector: null, embedModel: '' };
}

/**
 * The row sent for a share. Everything in it comes from the preview, but for what a preview
 * does not show and holds no text (kind, dates, commit), and the vector, which must come from
 * shareVector (made from the preview).
 */
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
