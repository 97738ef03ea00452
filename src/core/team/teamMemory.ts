// The team store as one process sees it: a remote TeamTable (object storage, probed at
// connect), a local read cache of it, and an outbox of writes waiting for it.
//
// - Opening never waits for the network: the cache and outbox are local; the remote is
//   connected in the background and reconnected every `retryMs` while it cannot be reached.
// - Writes (share, unshare) go to the outbox on disk first and out from there, in order, when
//   the remote is reachable; nothing is lost to a network cut or a closed window.
// - Reads use the cache once it has been filled; before that (a first run) they go to the
//   remote directly, so a first query does not wait for a download of the whole store, and fall
//   back to the cache when the remote fails. The cache is refreshed in the background when the
//   remote's version moves.
// - An endpoint that ignores conditional PUT (see objectStorage.ts) is refused: state
//   'refused', with the reason, and nothing is written to it; queued writes stay queued.
// - Every read of the remote a caller waits for is bounded by REMOTE_WAIT_MS: a network that
//   takes connections and answers nothing leaves the caller with the local copy.
// - The state folder is named after the team store's location as parsed (`s3://team/acme` and
//   `s3://team/acme/` are one store, with one outbox) and its endpoint (the same bucket and
//   prefix on another server is another store), and holds the ledger of the items this
//   personal store shared (shareLedger.ts).

import { append } from '../lists';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { NodeFilter, SearchHit } from '../api';
import type { Layer } from '../model/records';
import { hybridSearch } from '../retrieve/hybrid';
import type { QueryEmbedder } from '../retrieve/hybrid';
import { cellFilterWhere, sqlString, sqlStringList } from '../store/filters';
import { isLocalUri, localPath } from '../store/location';
import { ObjectStoreRefused, displayUri, openObjectStorage, parseObjectLocation } from '../store/objectStorage';
import type { ObjectStoreSettings } from '../store/objectStorage';
import { Outbox } from './outbox';
import type { OutboxEntry, PendingEntry } from './outbox';
import { ShareLedger } from './shareLedger';
import { teamSourceId } from './shareRows';
import { PurgeUnfinished, TEAM_ITEM_WHERE, TeamTable, projectWhere, teamItemsSchema, teamRowOf } from './teamTable';
import type { TeamRow } from './teamTable';
import type { Row } from '../store/store';
import { briefError, errorMessage } from '../errorText';
import { redact, redactJson, redactKey } from '../capture/redact';
import { rowToCell } from '../store/mapping';
import { printable } from '../model/printable';
import { MAX_IMPORT_LINE_BYTES } from '../store/portability';
import type { Schema } from 'apache-arrow';

export type TeamState = 'connecting' | 'online' | 'offline' | 'refused';

export interface TeamStatus {
  uri: string;
  state: TeamState;
  /** Writes waiting in the outbox. */
  pending: number;
  /** Why the store is offline or refused. */
  message: string | null;
  /** When the read cache was last filled from the team store (null: never). */
  synced_at_epoch: number | null;
}

/** Where a search hit comes from: the personal store, or the team store and who shared it. */
export interface HitOrigin {
  store: 'local' | 'team';
  shared_by?: string;
  shared_at_epoch?: number;
}

export interface TeamMemoryOptions {
  /** The team store; null: only this folder's outbox, ledger and cache, never connected (see forgetInTeamFolders). */
  uri: string | null;
  /** Outbox and read cache live here (one folder per team store). */
  stateDir: string;
  /** Vector dimension of a new team store. */
  dimension: number;
  env?: NodeJS.ProcessEnv;
  objectStore?: ObjectStoreSettings;
  /** Reconnect interval while the store cannot be reached (default 5 s). */
  retryMs?: number;
  /** How often a store refused for a reason that may end (a missing bucket, credentials refused) is probed again (default 5 min). */
  refusedRetryMs?: number;
  /** Background cache refresh interval while online (default 30 s; 0: only on demand). */
  refreshMs?: number;
  /** Rows per commit when the outbox goes out (default 500). */
  batchRows?: number;
  log?: (message: string) => void;
  /** Items a refresh found gone (unshared or forgotten by their sharer; by node id, each gone from its project): what of them the person's own store still quotes goes too. */
  onGone?: (nodeIds: string[]) => Promise<void>;
}

const CACHE_META = 'cache.json';

/**
 * Refusals a later probe may not repeat, told by the probe's message (objectStorage.ts
 * probeConditionalPut): a bucket or container that does not exist (HTTP 404), credentials refused
 * (HTTP 401, 403). Every other refusal (an endpoint that ignores conditional PUT, a location or
 * endpoint refused as written) stays for the life of the process.
 */
const REPROBED = /\(HTTP (?:401|403|404)\)/;

/**
 * Why the store refused a request, when an error is its answer refusing it (as Lance reports it:
 * `status code: 403 Forbidden`; 401 too, and a 404 for a bucket that does not exist), with the
 * status as the probe's refusals give it (REPROBED); null for any other failure (no answer, a
 * busy store, a row it cannot take).
 */
function storeRefusal(e: unknown): string | null {
  const raw = e instanceof Error ? e.message : String(e);
  const status = /status code: (40[13])\b/.exec(raw)?.[1] ?? (/<Code>NoSuchBucket<\/Code>/.test(raw) ? '404' : null);
  return status ? `${briefError(e)} (HTTP ${status})` : null;
}

/** How many times a refresh downloads the team store when it moves during the download (see refreshCache). */
const REFRESH_PASSES = 3;

/** A status request probes a refused store again at most this often. */
const STATUS_REPROBE_MS = 30_000;

/**
 * How long a caller waits on the team store before going on without it: a network that
 * accepts connections and then answers nothing (a VPN dropping, a laptop waking up) held a
 * share, a first-run search or a close for minutes, until the HTTP client gave up.
 */
export const REMOTE_WAIT_MS = 8000;

/** The promise's value, or what `timedOut` returns (or throws) once `ms` passed (the promise goes on by itself). */
export async function within<T>(promise: Promise<T>, ms: number, timedOut: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(timedOut());
      } catch (e) {
        reject(e);
      }
    }, ms);
    timer.unref?.();
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A store location as one string however it is spelled: an object store's scheme, bucket and
 * prefix as parsed (no trailing or doubled slash, s3a: is s3:), a local folder's resolved path.
 * One the parser refuses (credentials in it) is taken as given: the connect refuses it.
 */
export function storeLocationKey(uri: string): string {
  const trimmed = uri.trim();
  try {
    if (isLocalUri(trimmed)) return localPath(trimmed);
    const location = parseObjectLocation(trimmed);
    if (location) return `${location.scheme}://${location.bucket}/${location.prefix}`;
  } catch {
    // refused at connect, with its reason
  }
  return trimmed;
}

function hashed(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/**
 * The folder where a team store's outbox and cache live, under a base folder (one per store,
 * however it is spelled). A store on object storage is its bucket and prefix on its server
 * (`endpoint`: objectEndpointKey, '' for the scheme's default): another server with the same
 * bucket and prefix is another store, with a copy and a queue of its own.
 */
export function teamStateDir(base: string, uri: string, endpoint = ''): string {
  const location = storeLocationKey(uri);
  let onObjectStorage = false;
  try {
    onObjectStorage = !isLocalUri(uri.trim()) && parseObjectLocation(uri.trim()) !== null;
  } catch {
    // refused at connect, with its reason
  }
  return path.join(base, 'team', hashed(onObjectStorage ? `${location}\n${endpoint}` : location));
}

/**
 * The names earlier versions gave a store's state folder: after the URI as spelled (so
 * `s3://team/acme/` had an outbox of its own), after its bucket and prefix with the prefix as
 * written (before prefixes were URL-encoded: `my store`, now `my%20store`), and after its bucket
 * and prefix without the endpoint.
 */
function legacyStateKeys(uri: string): string[] {
  const keys = [uri];
  const trimmed = uri.trim();
  try {
    if (isLocalUri(trimmed)) return keys;
    const location = parseObjectLocation(trimmed);
    if (!location) return keys;
    const written = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(\/[^?#]*)?$/is.exec(trimmed)?.[1] ?? '';
    keys.push(`${location.scheme}://${location.bucket}/${written.split('/').filter(Boolean).join('/')}`, storeLocationKey(trimmed));
  } catch {
    // refused at connect, with its reason
  }
  return keys;
}

/**
 * teamStateDir, after adopting what an earlier version kept under another name for this store
 * (legacyStateKeys): the folder is renamed, or when both exist its queued entries and ledger are
 * moved over (the cache, a copy, is left to the next refresh). An adoption that fails leaves the
 * old folder where it was. A folder named without the endpoint (every earlier version's) goes to
 * the first open after the upgrade, with the endpoint then in effect: its queue was made for the
 * server that version used, and no queued share or unshare is lost.
 */
export async function teamStateFolder(base: string, uri: string, log?: (m: string) => void, endpoint = ''): Promise<string> {
  const dir = teamStateDir(base, uri, endpoint);
  for (const key of new Set(legacyStateKeys(uri))) {
    const legacy = path.join(base, 'team', hashed(key));
    if (legacy !== dir) await adoptState(legacy, dir).catch((e: unknown) => log?.(`team store state in ${legacy} was left there: ${errorMessage(e)}`));
  }
  return dir;
}

async function adoptState(from: string, to: string): Promise<void> {
  if (!(await fsp.stat(from).then((st) => st.isDirectory(), () => false))) return;
  if (!(await fsp.stat(to).then(() => true, () => false))) {
    await fsp.mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
    const renamed = await fsp.rename(from, to).then(() => true, () => false);
    if (renamed) return;
  }
  await mergeState(from, to);
  await fsp.rm(from, { recursive: true, force: true });
}

async function mergeState(from: string, to: string): Promise<void> {
  await fsp.mkdir(to, { recursive: true, mode: 0o700 });
  for (const entry of await fsp.readdir(from, { withFileTypes: true })) {
    // The cache and its date are a copy of the team store; dot files are locks and temporary files.
    if (entry.name === 'cache' || entry.name === CACHE_META || entry.name.startsWith('.')) continue;
    const a = path.join(from, entry.name);
    const b = path.join(to, entry.name);
    if (entry.isDirectory()) await mergeState(a, b);
    else if (!(await fsp.stat(b).then(() => true, () => false))) await fsp.rename(a, b);
  }
}

export class TeamMemory {
  private remote: TeamTable | null = null;
  private state: TeamState = 'connecting';
  private message: string | null = null;
  private syncedAt: number | null = null;
  private cachedVersion = -1;
  private pendingCount = 0;
  private syncing: Promise<void> | null = null;
  private nextSync: Promise<void> | null = null;
  private connecting: Promise<void> | null = null;
  /** When the store was last probed (connectOnce). */
  private probedAt = 0;
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly listeners = new Set<(s: TeamStatus) => void>();
  private readonly log: (m: string) => void;
  readonly outbox: Outbox;
  /** The items this personal store shared (node id, record, author), for unshare and forget. */
  readonly ledger: ShareLedger;

  private constructor(
    readonly options: TeamMemoryOptions,
    private readonly cache: TeamTable,
  ) {
    this.log = options.log ?? (() => undefined);
    this.outbox = new Outbox(path.join(options.stateDir, 'outbox'), (m) => this.log(m));
    this.ledger = new ShareLedger(path.join(options.stateDir, 'shared'));
  }

  /** Opens the local side at once and connects to the team store in the background. */
  static async open(options: TeamMemoryOptions): Promise<TeamMemory> {
    await fsp.mkdir(options.stateDir, { recursive: true, mode: 0o700 });
    const cache = await TeamTable.open(path.join(options.stateDir, 'cache'), undefined, options.dimension);
    const team = new TeamMemory(options, cache);
    const meta = await fsp.readFile(path.join(options.stateDir, CACHE_META), 'utf8').then((t) => JSON.parse(t) as { synced_at_epoch?: number }).catch(() => null);
    team.syncedAt = meta?.synced_at_epoch ?? null;
    // A share killed while it was being queued left its text in a temporary file.
    await team.outbox.sweep().catch((e: unknown) => team.log(`team outbox: temporary files left: ${errorMessage(e)}`));
    team.pendingCount = await team.outbox.count();
    if (options.uri === null) {
      team.state = 'offline';
      return team;
    }
    void team.connect();
    const retry = setInterval(() => {
      if (team.state === 'offline') void team.connect();
      else if (team.refusalMayEnd && Date.now() - team.probedAt >= (options.refusedRetryMs ?? 300_000)) void team.connect({ reprobe: true });
    }, options.retryMs ?? 5000);
    retry.unref();
    team.timers.push(retry);
    if ((options.refreshMs ?? 30_000) > 0) {
      const refresh = setInterval(() => {
        if (team.state === 'online') void team.sync().catch(() => undefined);
      }, options.refreshMs ?? 30_000);
      refresh.unref();
      team.timers.push(refresh);
    }
    return team;
  }

  get uri(): string {
    return this.options.uri ?? '';
  }

  /** The state now; a request for it probes again a refused store whose refusal may have ended (see connect). */
  status(): TeamStatus {
    if (this.refusalMayEnd && Date.now() - this.probedAt >= STATUS_REPROBE_MS) void this.connect({ reprobe: true });
    return this.snapshot();
  }

  private snapshot(): TeamStatus {
    return { uri: displayUri(this.uri), state: this.state, pending: this.pendingCount, message: this.message, synced_at_epoch: this.syncedAt };
  }

  onStatus(listener: (s: TeamStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private setState(state: TeamState, message: string | null): void {
    const changed = state !== this.state || message !== this.message;
    this.state = state;
    this.message = message;
    if (changed) {
      this.log(`team store ${displayUri(this.uri)}: ${state}${message ? ` (${message})` : ''}`);
      this.emit();
    }
  }

  private emit(): void {
    const s = this.snapshot();
    for (const l of this.listeners) l(s);
  }

  /**
   * Connects (probe, open) unless connected. A refused store stays refused, except with `reprobe`
   * when the refusal may end without a change of settings (a bucket not created yet, credentials
   * not accepted yet: see REPROBED): an explicit sync, a status request (at most every
   * STATUS_REPROBE_MS) and the retry timer (every `refusedRetryMs`) probe it again. An endpoint
   * refused as unsafe (it ignores conditional PUT) or a location refused as written stays refused.
   */
  connect(options: { reprobe?: boolean } = {}): Promise<void> {
    if (this.remote || this.closed || this.options.uri === null) return Promise.resolve();
    if (this.state === 'refused' && !(options.reprobe && this.refusalMayEnd)) return Promise.resolve();
    this.connecting ??= this.connectOnce().finally(() => (this.connecting = null));
    return this.connecting;
  }

  /** Whether the refusal is one a later probe may not repeat (see connect). */
  private get refusalMayEnd(): boolean {
    return this.state === 'refused' && REPROBED.test(this.message ?? '');
  }

  private async connectOnce(): Promise<void> {
    this.probedAt = Date.now();
    try {
      const uri = this.uri;
      const location = isLocalUri(uri) ? localPath(uri) : uri;
      const storageOptions = isLocalUri(uri) ? undefined : await openObjectStorage(uri, undefined, this.options.env, this.options.objectStore);
      this.remote = await TeamTable.open(location, storageOptions, this.options.dimension);
      this.setState('online', null);
      void this.sync().catch(() => undefined);
    } catch (e) {
      if (e instanceof ObjectStoreRefused) this.setState('refused', e.message);
      else this.setState(storeRefusal(e) ? 'refused' : 'offline', storeRefusal(e) ?? briefError(e));
    }
  }

  /** The remote, or an error that says why there is none (offline or refused). */
  private requireRemote(): TeamTable {
    if (this.remote) return this.remote;
    throw new Error(this.state === 'refused' ? `team store refused: ${this.message}` : `team store ${displayUri(this.uri)} is ${this.state}${this.message ? ` (${this.message})` : ''}`);
  }

  /**
   * A remote failure means the network is gone until a reconnect proves otherwise; one the store
   * answered with a refusal (credentials or rights refused, the bucket gone: storeRefusal) makes it
   * refused, probed again as the probe's refusals are (see connect), not offline: it answered.
   */
  private lost(e: unknown): void {
    this.remote?.close();
    this.remote = null;
    const refusal = storeRefusal(e);
    if (refusal) this.setState('refused', refusal);
    else this.setState('offline', briefError(e));
  }

  // ------------------------------------------------------------------ writing

  /** Queues rows for the team store (on disk first) and sends them when it can. */
  async share(rows: TeamRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.outbox.add({ op: 'share', rows });
    await this.cache.put(rows);
    this.pendingCount = await this.outbox.count();
    this.emit();
    void this.sync().catch(() => undefined);
  }

  /**
   * Removes items `sharedBy` shared from the team store (queued like a share) and from the local
   * cache at once; queued shares of them never go out. `ifFound`: the ids are only maybe shared
   * (see OutboxEntry).
   */
  async unshare(project: string, nodeIds: string[], sharedBy: string, options: { ifFound?: boolean } = {}): Promise<void> {
    if (nodeIds.length === 0) return;
    const ids = new Set(nodeIds);
    await this.outbox.sweep((r) => r.project === project && ids.has(r.node_id));
    await this.outbox.dropShares(project, ids);
    await this.outbox.add({ op: 'unshare', project, node_ids: nodeIds, shared_by: sharedBy, ...(options.ifFound ? { if_found: true } : {}) });
    await this.cache.remove(unshareWhere(project, nodeIds, sharedBy), { purgeAnyway: options.ifFound !== true });
    this.pendingCount = await this.outbox.count();
    this.emit();
    void this.sync().catch(() => undefined);
  }

  /**
   * Forgets shares of forgotten records: queued shares are dropped, shared ones unshared.
   * `recorded`: what the ledger says was shared (with the author each was shared as); `derived`:
   * the keys `author`'s shares of the records would have (null: every share of `author` in
   * `project`, or in every project when that is null too, as far as this cache and queue know;
   * with `ours`, only those it says this personal store shared: the same author on another
   * machine shares from another store, and a forget here is not theirs).
   * Every id is unshared, found here or not (the cache may be stale, or kept by another state
   * folder): those neither recorded nor found only purge if the team store has them.
   */
  async forgetShares(
    project: string | null,
    recorded: Array<{ node_id: string; project: string; shared_by: string }>,
    derived: string[] | null,
    author: string,
    ours?: (r: { node_id: string; project: string; origin: string }) => boolean,
  ): Promise<void> {
    const derivedIds = new Set(derived ?? []);
    const recordedIds = new Set(recorded.map((r) => r.node_id));
    const wanted = (r: { node_id: string; project: string; shared_by: string; origin?: string }): boolean =>
      recordedIds.has(r.node_id) ||
      (r.shared_by === author &&
        (project === null || r.project === project) &&
        (derived === null ? !ours || ours({ node_id: r.node_id, project: r.project, origin: String(r.origin ?? '') }) : derivedIds.has(r.node_id)));
    // A share of these killed while it was being queued: its temporary file goes.
    await this.outbox.sweep(wanted);
    // Shared items are in the cache, queued ones in the outbox; unshare drops the queued shares.
    const queued = (await this.outbox.pending()).flatMap((p) => (p.entry.op === 'share' ? p.entry.rows : []));
    const cached = (await this.cache.rows(null, ['node_id', 'project', 'shared_by', 'origin'])) as TeamRow[];
    // By project and author: (project, shared_by) -> node ids known to be shared.
    const known = new Map<string, { project: string; shared_by: string; ids: Set<string> }>();
    for (const r of [...recorded, ...queued, ...cached].filter(wanted)) {
      const key = `${r.project}\0${r.shared_by}`;
      const group = known.get(key) ?? { project: r.project, shared_by: r.shared_by, ids: new Set<string>() };
      group.ids.add(r.node_id);
      known.set(key, group);
    }
    const seen = new Set([...known.values()].flatMap((g) => [...g.ids]));
    const maybe = [...derivedIds].filter((id) => !seen.has(id));
    if (project !== null && maybe.length > 0) {
      // One entry for the author's shares in the project: the maybe-shared keys go with the known ones.
      const mine = known.get(`${project}\0${author}`);
      if (mine) for (const id of maybe) mine.ids.add(id);
      else await this.unshare(project, maybe, author, { ifFound: true });
    }
    for (const g of known.values()) await this.unshare(g.project, [...g.ids], g.shared_by);
  }

  /**
   * Sends the outbox, then refreshes the cache if the team store moved. One at a time; throws
   * when the store cannot be reached (the outbox keeps what did not go out).
   */
  sync(): Promise<void> {
    // A sync already running may have read the outbox before the caller's write: run once more after it.
    if (this.syncing) {
      this.nextSync ??= this.syncing.catch(() => undefined).then(() => {
        this.nextSync = null;
        return this.sync();
      });
      return this.nextSync;
    }
    this.syncing = (async () => {
      await this.connect({ reprobe: true });
      const remote = this.requireRemote();
      try {
        await this.outbox.exclusive(() => this.flushOutbox(remote));
        await this.refreshCache(remote);
      } catch (e) {
        if (!this.closed) this.lost(e);
        throw e;
      } finally {
        this.pendingCount = await this.outbox.count();
        this.emit();
      }
    })().finally(() => (this.syncing = null));
    return this.syncing;
  }

  private async flushOutbox(remote: TeamTable): Promise<void> {
    const batch = this.options.batchRows ?? 500;
    const pending = await this.outbox.pending();
    // A share the team store keeps refusing (a row it cannot take) holds back later shares, to
    // keep their order, but not later unshares: an unshare of a secret must not wait on it. (An
    // unshare drops the queued shares of its items, so none of them is behind it.)
    // An unshare whose purge did not finish (PurgeUnfinished) stays queued for the next sync and
    // holds back only later shares of its items, which it would take out again: the store
    // answered, so it is not offline, and one such unshare kept every later entry waiting.
    let shareFailed: unknown = null;
    const unfinished = new Set<string>();
    const itemKey = (project: string, nodeId: string): string => `${project}\0${nodeId}`;
    let i = 0;
    while (i < pending.length) {
      const first = pending[i].entry;
      if (first.op === 'unshare') {
        try {
          // An unshare that finds nothing may follow one interrupted between its delete and its
          // purge (this one retried, or the user asking again): it purges all the same, unless its
          // ids were only maybe shared.
          await remote.remove(unshareWhere(first.project, first.node_ids, first.shared_by), { purgeAnyway: first.if_found !== true, nodeIds: first.node_ids });
          await this.outbox.done([pending[i]]);
        } catch (e) {
          if (!(e instanceof PurgeUnfinished)) throw e;
          for (const id of first.node_ids) unfinished.add(itemKey(first.project, id));
          this.log(`team store: an unshare of ${first.node_ids.length} item(s) stays queued, later entries go first: ${briefError(e)}`);
        }
        i++;
        continue;
      }
      // Consecutive shares go out together, up to `batch` rows per commit.
      const group: PendingEntry[] = [];
      const rows: TeamRow[] = [];
      while (i < pending.length && pending[i].entry.op === 'share' && (group.length === 0 || rows.length < batch)) {
        const p = pending[i++];
        const e = p.entry as Extract<OutboxEntry, { op: 'share' }>;
        if (e.rows.some((r) => unfinished.has(itemKey(r.project, r.node_id)))) continue;
        group.push(p);
        append(rows, e.rows);
      }
      if (shareFailed !== null || group.length === 0) continue;
      try {
        await remote.put(rows);
      } catch (e) {
        shareFailed = e;
        this.log(`team store: ${group.length} queued share(s) not sent, later unshares go first: ${briefError(e)}`);
        continue;
      }
      await this.outbox.done(group);
      this.pendingCount = Math.max(0, this.pendingCount - group.length);
    }
    if (shareFailed !== null) throw shareFailed;
  }

  private async refreshCache(remote: TeamTable): Promise<void> {
    let version = await remote.version();
    if (version === this.cachedVersion && this.syncedAt !== null) return;
    const schema = teamItemsSchema(this.cache.dimension);
    // An unshare or forget (in this process or in another on the same personal store: the editor
    // and the CLI) may run while the copy is downloaded: what was downloaded may hold what it took
    // out, which written here stays on disk until the next refresh. Unshares still queued (read
    // before the download: an entry leaves the queue only once the team store moved) are left out
    // of what is written; a store that moved meanwhile is downloaded again, before the copy is
    // written or after.
    for (let pass = 1; ; pass++) {
      const unshared = await this.queuedUnshares();
      // A teammate's item is written to this machine's disk made safe by this build (teamRowsOf):
      // one shared by an older build (fewer rules) or put in the bucket by hand may hold a secret.
      const downloaded = teamRowsOf(await remote.rows(null), schema);
      const moved = await remote.version();
      if (moved !== version && pass < REFRESH_PASSES) {
        version = moved;
        continue;
      }
      await this.writeCache(downloaded.rows.filter((r) => !unshared(r)), downloaded.skipped);
      const after = await remote.version();
      if (after === version || pass >= REFRESH_PASSES) break;
      version = after;
    }
    this.cachedVersion = version;
    this.syncedAt = Date.now();
    await fsp.writeFile(path.join(this.options.stateDir, CACHE_META), JSON.stringify({ synced_at_epoch: this.syncedAt }), { mode: 0o600 });
  }

  /** Replaces the cache with rows made safe (teamRowsOf), and tells onGone the items it no longer holds. */
  private async writeCache(rows: TeamRow[], skipped: string[]): Promise<void> {
    // Gone is told by project, node id and sharer: a row of another project, or of another sharer
    // under the same node id (any writer of the bucket can add one), kept an unshared item's
    // quotes in the request log. And by what the item says: one its sharer edited and shared
    // again keeps its key, and the request log kept quoting the old text (a secret edited out).
    const item = (r: Row): string => `${String(r.project)}\0${String(r.node_id)}\0${String(r.shared_by)}`;
    const key = (r: Row, says: string | undefined): string => `${item(r)}\0${says ?? ''}`;
    const before = await this.cache.rows(null, ['project', 'node_id', 'shared_by', ...QUOTED]);
    const saying = new Map(rows.map((r) => [item(r), said(r)]));
    const written = await this.cache.replaceAll(rows);
    // An unshare queued while the copy was written: its removal from the cache may have run before the write.
    const late = await this.queuedUnshares();
    const undone = written.kept.filter(late);
    for (const r of undone) await this.cache.remove(unshareWhere(r.project, [r.node_id], r.shared_by), { purgeAnyway: true });
    const undoneRows = new Set(undone);
    const keptItems = new Set(written.kept.filter((r) => !undoneRows.has(r)).map((r) => key(r, saying.get(item(r)))));
    const gone = [...new Set(before.filter((r) => !keptItems.has(key(r, said(r)))).map((r) => String(r.node_id)))];
    if (gone.length > 0) await this.options.onGone?.(gone).catch((e: unknown) => this.log(`team store: what the store quotes of ${gone.length} item(s) gone from the team is left: ${errorMessage(e)}`));
    const left = [...skipped, ...written.skipped];
    if (left.length > 0) this.log(`team store: ${left.length} item(s) that no client of this version writes were left out (${left.slice(0, 3).join('; ')})`);
  }

  /** Whether an item (project, node id, sharer) is unshared by an entry waiting in the outbox. */
  private async queuedUnshares(): Promise<(r: { project: string; node_id: string; shared_by: string }) => boolean> {
    const entries = (await this.outbox.pending()).flatMap((p) => (p.entry.op === 'unshare' ? [p.entry] : []));
    return (r) => entries.some((e) => e.project === r.project && e.node_ids.includes(r.node_id) && (e.shared_by === undefined || e.shared_by === r.shared_by));
  }

  // ------------------------------------------------------------------ reading

  /**
   * Hybrid search over the team items of one project. The cache once filled, else the remote;
   * the cache again when the remote fails. Each hit carries who shared it.
   */
  async search(text: string, embedder: QueryEmbedder | null, options: { project: string; branch?: string; defaultBranch?: string | null; layers?: Layer[]; filter?: NodeFilter; limit: number }): Promise<Array<SearchHit & { origin: HitOrigin }>> {
    const where = `${projectWhere(options.project)} AND ${TEAM_ITEM_WHERE} AND (${cellFilterWhere(options, options.filter, options.layers)})`;
    // A search on a copy older than the refresh interval asks for a refresh, without waiting for it.
    if (this.state === 'online' && this.syncedAt !== null && Date.now() - this.syncedAt > (this.options.refreshMs ?? 30_000) && (this.options.refreshMs ?? 30_000) > 0) {
      void this.sync().catch(() => undefined);
    }
    const first = await this.remoteBeforeCopy();
    let source = first ?? this.cache;
    let hits: SearchHit[];
    try {
      const search = hybridSearch({ cells: source.table, project: options.project, segments: null, embedder }, text, where, options.limit);
      hits = source === this.cache ? await search : await within(search, REMOTE_WAIT_MS, () => {
        throw new Error(`no answer in ${REMOTE_WAIT_MS / 1000} s`);
      });
    } catch (e) {
      if (source === this.cache) throw e;
      this.lost(e);
      source = this.cache;
      hits = await hybridSearch({ cells: source.table, project: options.project, segments: null, embedder }, text, where, options.limit);
    }
    if (hits.length === 0) return [];
    // Each hit as its row, made safe and one per item (teamRowsOf), read only in the project (a
    // row of another project with the same node id would otherwise name its own sharer here): the
    // remote, read before the first refresh, gives what the cache would.
    const ofHits = `${projectWhere(options.project)} AND node_id IN ${sqlStringList(hits.map((h) => h.cell.node_id))}`;
    const rows = new Map(teamRowsOf(await source.rows(ofHits), teamItemsSchema(this.cache.dimension)).rows.map((r) => [r.node_id, r]));
    const seen = new Set<string>();
    return hits
      .filter((h) => rows.has(h.cell.node_id) && !seen.has(h.cell.node_id) && seen.add(h.cell.node_id))
      .map((h) => {
        const row = rows.get(h.cell.node_id)!;
        return { ...h, cell: rowToCell(row), origin: { store: 'team' as const, shared_by: row.shared_by, shared_at_epoch: Number(row.shared_at_epoch) } };
      });
  }

  /**
   * The remote to read while there is no local copy yet (null once there is one, or when the
   * store cannot be reached). The first connect, when still under way, is waited for (at most
   * REMOTE_WAIT_MS): a first run's first read (a CLI search, a look-up by node id, a list) found
   * the empty copy, and nothing of the team store, while the probe was still out.
   */
  private async remoteBeforeCopy(): Promise<TeamTable | null> {
    if (this.syncedAt !== null) return null;
    const remote = await this.connected();
    return this.syncedAt === null ? remote : null;
  }

  /**
   * The remote, once the first connect ended (waited for at most REMOTE_WAIT_MS); null when there
   * is none. Later connects (a retry of a store offline or refused) are not waited for: the store
   * did not answer before, and the caller goes on without it.
   */
  private async connected(): Promise<TeamTable | null> {
    const connecting = this.connecting;
    if (!this.remote && connecting && this.state === 'connecting') await within(connecting.catch(() => undefined), REMOTE_WAIT_MS, () => undefined);
    return this.remote;
  }

  /**
   * A read of the remote a caller waits for: at most REMOTE_WAIT_MS (a network that takes
   * connections and answers nothing held one for a minute). A failure, or no answer, means the
   * store is offline until a reconnect proves otherwise; it is thrown.
   */
  private async remoteRead<T>(remote: TeamTable, read: (t: TeamTable) => Promise<T>): Promise<T> {
    try {
      return await within(read(remote), REMOTE_WAIT_MS, () => {
        throw new Error(`no answer in ${REMOTE_WAIT_MS / 1000} s`);
      });
    } catch (e) {
      if (this.remote === remote) this.lost(e);
      throw e;
    }
  }

  /** One team item of the project (cache first, then the remote), or null. */
  async item(project: string, nodeId: string): Promise<TeamRow | null> {
    const where = `${projectWhere(project)} AND node_id = ${sqlString(nodeId)} AND ${TEAM_ITEM_WHERE}`;
    const schema = teamItemsSchema(this.cache.dimension);
    let rows = teamRowsOf(await this.cache.rows(where), schema).rows;
    const remote = rows.length === 0 ? ((await this.remoteBeforeCopy()) ?? this.remote) : null;
    if (rows.length === 0 && remote) rows = teamRowsOf(await this.remoteRead(remote, (t) => t.rows(where)).catch(() => []), schema).rows;
    return rows[0] ?? null;
  }

  /**
   * Who shared each of these items of the project that exists: queued in this outbox, in the
   * local copy, else in the team store (bounded). `answered`: the team store was asked about
   * every id not found here and answered, so an id not found is not in it.
   */
  async locate(project: string, nodeIds: string[]): Promise<{ sharedBy: Map<string, string>; answered: boolean }> {
    const ids = new Set(nodeIds);
    const sharedBy = new Map<string, string>();
    for (const p of await this.outbox.pending()) {
      if (p.entry.op !== 'share') continue;
      for (const r of p.entry.rows) if (r.project === project && ids.has(r.node_id)) sharedBy.set(r.node_id, r.shared_by);
    }
    const where = (list: string[]): string => `${projectWhere(project)} AND node_id IN ${sqlStringList(list)}`;
    for (const r of await this.cache.rows(where([...ids]), ['node_id', 'shared_by'])) if (!sharedBy.has(String(r.node_id))) sharedBy.set(String(r.node_id), String(r.shared_by));
    const missing = [...ids].filter((id) => !sharedBy.has(id));
    if (missing.length === 0) return { sharedBy, answered: true };
    const remote = await this.connected();
    if (!remote) return { sharedBy, answered: false };
    try {
      for (const r of await this.remoteRead(remote, (t) => t.rows(where(missing), ['node_id', 'shared_by']))) sharedBy.set(String(r.node_id), String(r.shared_by));
      return { sharedBy, answered: true };
    } catch {
      return { sharedBy, answered: false };
    }
  }

  /** The team items of a project, newest share first (cache, else the remote; the cache when the remote fails or does not answer in REMOTE_WAIT_MS). */
  async list(project: string): Promise<TeamRow[]> {
    const where = `${projectWhere(project)} AND ${TEAM_ITEM_WHERE}`;
    const remote = await this.remoteBeforeCopy();
    let found: Row[];
    try {
      found = remote ? await this.remoteRead(remote, (t) => t.rows(where)) : await this.cache.rows(where);
    } catch (e) {
      if (!remote) throw e;
      found = await this.cache.rows(where);
    }
    const { rows } = teamRowsOf(found, teamItemsSchema(this.cache.dimension));
    return rows.sort((a, b) => Number(b.shared_at_epoch) - Number(a.shared_at_epoch));
  }

  /** Rows in the remote store (all projects): for tests and `code-memory team status`. */
  async remoteCount(where?: string): Promise<number> {
    await this.connect();
    return this.requireRemote().count(where);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    // A sync stuck on a silent network is not waited for past REMOTE_WAIT_MS (the outbox keeps what did not go).
    await within(Promise.all([this.syncing?.catch(() => undefined), this.connecting?.catch(() => undefined)]).then(() => undefined), REMOTE_WAIT_MS, () => undefined);
    this.remote?.close();
    this.cache.close();
    this.listeners.clear();
  }
}

/** The columns of a team item that the request log may quote (retrieve_memory answers, recall packs). */
const QUOTED = ['title', 'text', 'search_text', 'files'];

/** A digest of what an item says (QUOTED): an item whose digest changed is gone for what quoted it. */
function said(r: Row): string {
  return createHash('sha256').update(JSON.stringify(QUOTED.map((c) => r[c] ?? null))).digest('hex');
}

function unshareWhere(project: string, nodeIds: string[], sharedBy: string | undefined): string {
  return `${projectWhere(project)} AND node_id IN ${sqlStringList(nodeIds)}${sharedBy === undefined ? '' : ` AND shared_by = ${sqlString(sharedBy)}`}`;
}

/**
 * A node id as every writer makes one (a UUID, in lower case: teamNodeId). Another spelling of an
 * item's id (upper case) made a second item under what every reader (getNode, the caller's own
 * ids) takes for one id.
 */
const NODE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A git commit (abbreviated or whole). */
const COMMIT_SHA = /^[0-9a-f]{7,64}$/i;
/** The sharer's record: `<source_kind>/<id>`. */
const ORIGIN = /^(memory|session_summary)\/[0-9]{1,19}$/;
/** An embedding model's name (`Xenova/all-MiniLM-L6-v2`, `openai:text-embedding-3-small`); '' for none. */
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:@+/-]{0,199}$/;
/** Longest sharer (`Name <email>`), type or branch a team row keeps, in characters. */
const MAX_LABEL = 200;
/** Longest file path a team row keeps, in characters; a longer one is dropped. */
const MAX_FILE_PATH = 1024;
/**
 * Longest text value a team row keeps, in UTF-16 units: what one line of an export holds at most
 * (MAX_IMPORT_LINE_BYTES), so no record a client shares is longer (an edited memory may pass the
 * million characters an imported field holds, and is shared). A longer row is left out.
 */
export const MAX_TEAM_VALUE_CHARS = MAX_IMPORT_LINE_BYTES;
/** Most file paths a team row keeps (as a record's cell keeps). */
const MAX_FILES = 50;
/** What splits a line for some reader: control characters (U+0085 too) and line and paragraph separators. */
const LINE_BREAKS = /[\p{Cc}\p{Zl}\p{Zp}]/u;

/** `text` on one line (each run of line breaks and spaces one space), at most `max` characters (cut with an ellipsis). */
function oneLine(text: string, max: number): string {
  const flat = text.replace(new RegExp(LINE_BREAKS.source, 'gu'), ' ').replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : flat;
}

/**
 * A row's files (a JSON list of paths) as tools show them, one path a line: a path holding a
 * line break, or longer than MAX_FILE_PATH, is dropped, and at most MAX_FILES are kept; anything
 * but a list of paths is none.
 */
function safeFiles(files: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(files);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed)) return null;
  const paths = parsed.filter((f): f is string => typeof f === 'string' && f.length > 0 && f.length <= MAX_FILE_PATH && !LINE_BREAKS.test(f)).slice(0, MAX_FILES);
  return paths.length > 0 ? redactJson(JSON.stringify(paths)) : null;
}

/**
 * A row read from the team store as this machine may keep and show it, or why it cannot be:
 * checked as teamRowOf checks it, only the columns of a team item kept, identifiers checked for
 * their shape (node id, layer, project, commit, origin, embedding model), and every other text
 * column redacted as a share redacts it (free text) or as an identifier (branch, type, status,
 * session id). A value of the wrong shape is dropped where the column may go without it (a
 * commit, an origin the row's source says again, a model whose vector then counts as none); a
 * row whose key cannot be made safe is left out. What tools print on a line of their own (the
 * sharer, the type, the branch, each file path) is made one line and bounded: a hand-made sharer
 * of 100 KB holding "## SYSTEM INSTRUCTIONS" on a line of its own reached retrieve_memory's
 * answer as it was. Anyone who can write the bucket can write any row, and an older build
 * redacted with fewer rules.
 */
export function safeTeamRow(raw: Row, schema: Schema): TeamRow | string {
  const checked = teamRowOf(raw, schema);
  if (typeof checked === 'string') return checked;
  const row: Row = {};
  for (const field of schema.fields) row[field.name] = checked[field.name] ?? null;
  // Before anything reads a value whole (redaction, the copy's full-text index, a pack's token
  // count): a value longer than MAX_TEAM_VALUE_CHARS is no client's, and each read of it stalled
  // every teammate's tools.
  for (const field of schema.fields) {
    const v = row[field.name];
    if (typeof v === 'string' && v.length > MAX_TEAM_VALUE_CHARS) return `${field.name} is longer than ${MAX_TEAM_VALUE_CHARS} characters, more than a record holds`;
  }
  if (!NODE_ID.test(String(row.node_id))) return 'node_id is not a node id';
  if (row.layer !== 'L1' && row.layer !== 'L2') return `layer is not shared`;
  if (redact(String(row.project)) !== row.project) return 'project holds a secret';
  // Lists and look-ups print the title and text as they are (`code-memory team`): without terminal
  // escape sequences, as every read of a search cell shows them (model/printable.ts). Taken out
  // before redaction, as capture does: a key split by one came out whole after redaction looked.
  for (const name of ['title', 'text']) row[name] = printable(String(row[name]));
  for (const name of ['title', 'text', 'search_text', 'shared_by']) row[name] = redact(String(row[name]));
  row.shared_by = oneLine(String(row.shared_by), MAX_LABEL);
  if (typeof row.files === 'string') row.files = safeFiles(row.files);
  for (const name of ['branch', 'type']) if (typeof row[name] === 'string') row[name] = oneLine(row[name] as string, MAX_LABEL);
  for (const name of ['branch', 'type', 'status', 'session_id']) if (typeof row[name] === 'string') row[name] = redactKey(row[name] as string);
  if (typeof row.commit_sha === 'string' && !COMMIT_SHA.test(row.commit_sha)) row.commit_sha = null;
  if (!ORIGIN.test(String(row.origin))) row.origin = `${String(row.source_kind)}/${String(row.source_id)}`;
  if (!ORIGIN.test(String(row.origin))) return 'origin is not a record';
  // The item's number is its node id's, as every writer makes it (teamSourceId): one written as
  // the id of a reader's own record named that record (recall_context's Location, a look-up by
  // node id) for the teammate's item.
  row.source_id = teamSourceId(String(row.node_id));
  const model = String(row.embed_model);
  if (model !== '' && !(MODEL_NAME.test(model) && redact(model) === model)) {
    row.embed_model = '';
    const dims = (row.vector as ArrayLike<number> | null)?.length ?? 0;
    row.vector = new Array(dims).fill(0);
  }
  return row as TeamRow;
}

/**
 * Rows read from the team store, each made safe (safeTeamRow), one per item: a project's node id
 * names one item. Two rows under one (project, node id) (a hand-made row under a teammate's item's
 * id: a writer's own shares never collide, the id derives from the sharer) keep the one shared
 * first, then by sharer, origin and text: every reader, and every read (the cache, the remote
 * before the first refresh), keeps the same one. Every row read from the team store, or from the
 * cache made of it, goes through here.
 */
export function teamRowsOf(found: Row[], schema: Schema): { rows: TeamRow[]; skipped: string[] } {
  const items = new Map<string, TeamRow>();
  const skipped: string[] = [];
  for (const raw of found) {
    const row = safeTeamRow(raw, schema);
    if (typeof row === 'string') {
      skipped.push(`${redactKey(String(raw.node_id ?? '?'))}: ${row}`);
      continue;
    }
    const key = `${row.project}\0${row.node_id}`;
    const held = items.get(key);
    if (!held || firstShared(row, held) < 0) items.set(key, row);
  }
  return { rows: [...items.values()], skipped };
}

function firstShared(a: TeamRow, b: TeamRow): number {
  const order = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
  return Number(a.shared_at_epoch) - Number(b.shared_at_epoch) || order(a.shared_by, b.shared_by) || order(a.origin, b.origin) || order(a.text, b.text);
}
