// MemoryEngine: the one object the surfaces (MCP, CLI, extension) talk to. It owns the store,
// the capture queue, sessions and their compression, and the background maintenance.

import { createHash, randomUUID } from 'node:crypto';
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
import type { Entity, Memory, Observation, Relationship, RequestLogEntry, Scope, SessionSummary, SourceKind } from './model/records';
import { isSecretPath, redact, redactNullable } from './capture/redact';
import { hybridSearch } from './retrieve/hybrid';
import { countTokens } from './tokens';
import { memoryCell, observationCell, observationFiles, summaryCell } from './store/cells';
import { FilterError, projectWhere, scopeWhere, sqlInt, sqlIntList, sqlString, sqlStringList, validType } from './store/filters';
import { jsonList, memoryToRow, observationToRow, rowToCell, rowToEntity, rowToMemory, rowToObservation, rowToRelationship, rowToRequest, rowToSessionSummary } from './store/mapping';
import { SCHEMA_VERSION, TABLES } from './store/schema';
import { Store, retryVanished } from './store/store';
import type { Row } from './store/store';
import { ExtractiveSummariser } from './compress/summariser';
import type { Summariser } from './compress/summariser';
import { compressSession } from './compress/session';
import { applyMemoryFacts, buildMemory } from './compress/promote';
import { forgetRecords } from './store/forget';
import { exportJsonl, importJsonl } from './store/portability';
import { deriveGraph } from './store/graph';
import { ensureAnnIndex } from './store/annIndex';
import { VectorBackfill } from './embed/backfill';

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
  storageOptions?: Record<string, string>;
  logger?: (msg: string) => void;
}

interface OpenSession {
  id: string;
  project: string;
  branch: string | null;
  startedAt: number;
  lastActivity: number;
}

interface QueuedEvent {
  input: ObservationInput;
  scope: Scope;
}

const PROMPTS_PER_SESSION = 5;
const PROMPT_TTL_MS = 30 * 24 * 3600_000;
const MAX_IDS = 1000;

function normaliseTitle(title: string): string {
  return title
    .toLowerCase()
    .replace(/\b[0-9a-f]{7,40}\b/g, '#')
    .replace(/[^a-z0-9#]+/g, ' ')
    .trim();
}

function cleanList(values: unknown, name: string): string[] {
  if (values === undefined || values === null) return [];
  if (!Array.isArray(values)) throw new FilterError(`${name} must be a list of strings`);
  return [...new Set(values.map((v) => redact(String(v)).trim()).filter(Boolean))];
}

function checkIds(ids: number[]): number[] {
  if (!Array.isArray(ids)) throw new FilterError('ids must be a list of integers');
  if (ids.length > MAX_IDS) throw new FilterError(`at most ${MAX_IDS} ids per call`);
  return ids.map((id) => Number(sqlInt(Number(id))));
}

export class MemoryEngine implements MemoryEngineApi {
  private readonly sessions = new Map<string, OpenSession>();
  private queue: QueuedEvent[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private readonly timers: NodeJS.Timeout[] = [];
  private writesSinceOptimize = 0;
  private maintenance: Promise<void> | null = null;
  private closed = false;
  private backfill: VectorBackfill | null = null;
  private graphQueue: Observation[] = [];
  private readonly edgeWeights = new Map<string, number>();
  private readonly knownEntities = new Set<string>();
  private graphTimer: NodeJS.Timeout | null = null;
  private graphRun: Promise<void> = Promise.resolve();
  private readonly log: (msg: string) => void;
  private readonly batchSize: number;
  private readonly batchDelayMs: number;
  private readonly sessionIdleMs: number;
  private readonly duplicateWindowMs: number;
  readonly summaryBudgetTokens: number;

  private constructor(
    readonly store: Store,
    readonly embedder: Embedder | null,
    readonly summariser: Summariser,
    options: MemoryEngineOptions,
  ) {
    this.log = options.logger ?? (() => undefined);
    this.batchSize = options.batchSize ?? 200;
    this.batchDelayMs = options.batchDelayMs ?? 500;
    this.sessionIdleMs = options.sessionIdleMs ?? 30 * 60_000;
    this.duplicateWindowMs = options.duplicateWindowMs ?? 30 * 60_000;
    this.summaryBudgetTokens = options.summaryBudgetTokens ?? 600;
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
    if (embedder) {
      engine.backfill = new VectorBackfill({
        cells: () => store.table(TABLES.cells),
        embedder,
        onError: (e) => engine.log(`embedding queue: ${e.message}`),
      });
      // Cells left unembedded by an earlier run (or by another model) are picked up now.
      engine.backfill.kick();
    }
    engine.startTimers(options.maintenanceIntervalMs ?? 60_000);
    return engine;
  }

  private startTimers(maintenanceMs: number): void {
    const orphans = setTimeout(() => void this.endOrphanSessions().catch((e) => this.log(`orphan sessions: ${String(e)}`)), 5000);
    orphans.unref();
    this.timers.push(orphans);
    const idleCheck = setInterval(() => void this.endIdleSessions(), Math.max(1000, Math.min(60_000, this.sessionIdleMs / 2)));
    idleCheck.unref();
    this.timers.push(idleCheck);
    if (maintenanceMs > 0) {
      const t = setInterval(() => {
        if (this.writesSinceOptimize > 0) void this.optimize();
      }, maintenanceMs);
      t.unref();
      this.timers.push(t);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The memory engine is closed');
  }

  // ---------------------------------------------------------------- sessions

  currentSessionId(scope: Scope): string {
    return this.sessionFor(scope, Date.now()).id;
  }

  private sessionFor(scope: Scope, now: number): OpenSession {
    projectWhere(scope);
    const open = this.sessions.get(scope.project);
    const branch = scope.branch ?? null;
    if (open) {
      if (branch === null || open.branch === null || open.branch === branch) {
        if (open.branch === null && branch !== null) open.branch = branch;
        open.lastActivity = Math.max(open.lastActivity, now);
        return open;
      }
      // A branch switch ends the session; its compression runs in the background.
      this.sessions.delete(scope.project);
      void this.endSession(open.id, 'branch_switch').catch((e) => this.log(`ending session ${open.id}: ${String(e)}`));
    }
    const created: OpenSession = { id: `s-${now.toString(36)}-${randomUUID().slice(0, 8)}`, project: scope.project, branch, startedAt: now, lastActivity: now };
    this.sessions.set(scope.project, created);
    return created;
  }

  /**
   * Sessions a crashed or killed process never ended have observations and no summary: once
   * they are idle, summarise them like any idle session. Runs once, shortly after open.
   */
  async endOrphanSessions(): Promise<number> {
    const cutoff = Date.now() - this.sessionIdleMs;
    const last = new Map<string, number>();
    for (const r of await this.store.rows(TABLES.observations, `status = 'active' AND type <> 'merged'`, { select: ['memory_session_id', 'created_at_epoch'] })) {
      const id = String(r.memory_session_id);
      last.set(id, Math.max(last.get(id) ?? 0, Number(r.created_at_epoch)));
    }
    const summarised = new Set((await this.store.rows(TABLES.sessionSummaries, null, { select: ['memory_session_id'] })).map((r) => String(r.memory_session_id)));
    const open = new Set([...this.sessions.values()].map((s) => s.id));
    let ended = 0;
    for (const [id, at] of last) {
      if (summarised.has(id) || open.has(id) || at > cutoff || this.closed) continue;
      await this.endSession(id, 'idle').catch((e) => this.log(`ending orphan session ${id}: ${String(e)}`));
      ended++;
    }
    return ended;
  }

  private async endIdleSessions(): Promise<void> {
    const now = Date.now();
    for (const s of [...this.sessions.values()]) {
      if (now - s.lastActivity >= this.sessionIdleMs) {
        await this.endSession(s.id, 'idle').catch((e) => this.log(`ending idle session ${s.id}: ${String(e)}`));
      }
    }
  }

  async endSession(memorySessionId: string, reason: SessionEndReason): Promise<SessionSummary | null> {
    this.assertOpen();
    for (const [project, s] of this.sessions) if (s.id === memorySessionId) this.sessions.delete(project);
    await this.flush();
    const summary = await compressSession(this, memorySessionId, reason);
    return summary;
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
    if (this.queue.length >= this.batchSize) {
      void this.flush().catch(() => undefined);
    } else if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = null;
        void this.flush().catch(() => undefined);
      }, this.batchDelayMs);
      this.flushTimer.unref();
    }
  }

  flush(): Promise<void> {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    const run = this.flushing.then(async () => {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.batchSize);
        try {
          await this.writeObservations(batch);
        } catch (e) {
          // Fire-and-forget capture must not throw into the editor; one bad batch is logged.
          this.log(`capture batch of ${batch.length} dropped: ${String((e as Error).message ?? e)}`);
        }
      }
    });
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private fingerprint(type: string, title: string | null, files: string[]): string | null {
    if (!title && files.length === 0) return null;
    const key = `${type}\u0000${[...files].sort().join('\u0000')}\u0000${normaliseTitle(title ?? '')}`;
    return createHash('sha1').update(key).digest('hex').slice(0, 24);
  }

  private async writeObservations(events: QueuedEvent[]): Promise<Observation[]> {
    const now = Date.now();
    type Prepared = { obs: Omit<Observation, 'id'>; extra: string | null; dedupe: string | null; fp: string | null };
    const prepared: Prepared[] = [];
    for (const { input, scope } of events) {
      if (!input || typeof input !== 'object') throw new FilterError('an observation must be an object');
      const type = validType(String(input.type ?? ''));
      projectWhere(scope);
      const created = input.created_at_epoch !== undefined ? Number(sqlInt(Number(input.created_at_epoch))) : now;
      const branch = input.branch ?? scope.branch ?? null;
      const session = input.memory_session_id ?? this.sessionFor({ project: scope.project, branch: branch ?? undefined }, created).id;
      const filesRead = cleanList(input.files_read, 'files_read').filter((f) => !isSecretPath(f));
      const filesModified = cleanList(input.files_modified, 'files_modified').filter((f) => !isSecretPath(f));
      const facts = cleanList(input.facts, 'facts');
      const concepts = cleanList(input.concepts, 'concepts');
      const title = redactNullable(input.title?.trim() || null);
      const narrative = redactNullable(input.narrative ?? null);
      const obs: Omit<Observation, 'id'> = {
        memory_session_id: session,
        content_session_id: input.content_session_id ?? null,
        project: scope.project,
        type,
        title,
        subtitle: redactNullable(input.subtitle ?? null),
        narrative,
        facts: jsonList(facts),
        concepts: jsonList(concepts),
        files_read: jsonList(filesRead),
        files_modified: jsonList(filesModified),
        commit_sha: input.commit_sha ?? null,
        branch,
        status: 'active',
        created_at: new Date(created).toISOString(),
        created_at_epoch: created,
        last_accessed_epoch: null,
        discovery_tokens: countTokens([title, narrative, ...facts].filter(Boolean).join('\n')),
        compressed_sources: null,
      };
      prepared.push({
        obs,
        extra: redactNullable(input.search_extra ?? null),
        dedupe: input.dedupe_key ?? null,
        fp: input.dedupe_key ? null : this.fingerprint(type, title, [...filesModified, ...filesRead]),
      });
    }

    const results: (Observation | null)[] = prepared.map(() => null);
    const byProject = new Map<string, number[]>();
    prepared.forEach((p, i) => byProject.set(p.obs.project as string, [...(byProject.get(p.obs.project as string) ?? []), i]));

    // Idempotent imports: a dedupe_key already stored returns the stored observation.
    const bumps = new Map<number, { row: Row; add: number; facts: string[] }>();
    for (const [project, idx] of byProject) {
      const keys = [...new Set(idx.map((i) => prepared[i].dedupe).filter((k): k is string => !!k))];
      if (keys.length > 0) {
        const found = new Map<string, Observation>();
        for (const r of await this.store.rows(TABLES.observations, `project = ${sqlString(project)} AND dedupe_key IN ${sqlStringList(keys)}`)) {
          found.set(String(r.dedupe_key), rowToObservation(r));
        }
        for (const i of idx) {
          const k = prepared[i].dedupe;
          if (k && found.has(k)) results[i] = found.get(k) as Observation;
        }
      }
      // Near-duplicates (same session, type, files and normalised title, within the window)
      // bump the stored observation instead of adding another.
      const fps = [...new Set(idx.filter((i) => !results[i]).map((i) => prepared[i].fp).filter((f): f is string => !!f))];
      if (fps.length > 0) {
        const since = Math.min(...idx.map((i) => prepared[i].obs.created_at_epoch)) - this.duplicateWindowMs;
        const existing = await this.store.rows(
          TABLES.observations,
          `project = ${sqlString(project)} AND fingerprint IN ${sqlStringList(fps)} AND status = 'active' AND created_at_epoch >= ${sqlInt(since)}`,
        );
        for (const i of idx) {
          if (results[i]) continue;
          const p = prepared[i];
          const match = existing.find(
            (r) => r.fingerprint === p.fp && r.memory_session_id === p.obs.memory_session_id && Math.abs(Number(r.created_at_epoch) - p.obs.created_at_epoch) <= this.duplicateWindowMs,
          );
          if (match) {
            const entry = bumps.get(Number(match.id)) ?? { row: match, add: 0, facts: [] };
            entry.add++;
            entry.facts.push(...(JSON.parse(p.obs.facts ?? '[]') as string[]));
            bumps.set(Number(match.id), entry);
            results[i] = rowToObservation(match);
          }
        }
      }
    }

    // Within one batch, the second of two near-duplicates folds into the first.
    const firstByFp = new Map<string, number>();
    const foldInto = new Map<number, number>();
    prepared.forEach((p, i) => {
      if (results[i] || !p.fp) return;
      const key = `${p.obs.memory_session_id}\u0000${p.fp}`;
      const first = firstByFp.get(key);
      if (first === undefined) firstByFp.set(key, i);
      else foldInto.set(i, first);
    });

    const fresh = prepared.map((_, i) => i).filter((i) => !results[i] && !foldInto.has(i));
    const ids = fresh.length > 0 ? await this.store.ids.allocate(fresh.length) : [];
    const occurrences = new Map<number, number>();
    for (const first of foldInto.values()) occurrences.set(first, (occurrences.get(first) ?? 1) + 1);
    const obsRows: Row[] = [];
    const cellRows: Row[] = [];
    const written: Observation[] = [];
    fresh.forEach((i, k) => {
      const p = prepared[i];
      const o: Observation = { id: ids[k], ...p.obs };
      results[i] = o;
      written.push(o);
      obsRows.push(observationToRow(o, { search_extra: p.extra, dedupe_key: p.dedupe, fingerprint: p.fp, occurrences: occurrences.get(i) ?? 1 }));
      cellRows.push(observationCell(o, p.extra, this.store.dimension));
    });
    for (const [dup, first] of foldInto) results[dup] = results[first];

    await this.store.add(TABLES.observations, obsRows, 'id');
    await this.store.add(TABLES.cells, cellRows, 'node_id');
    if (bumps.size > 0) {
      const rows = [...bumps.values()].map(({ row, add, facts }) => {
        const merged = [...new Set([...(JSON.parse(String(row.facts ?? '[]')) as string[]), ...facts])];
        return { ...row, occurrences: Number(row.occurrences ?? 1) + add, updated_at_epoch: now, facts: jsonList(merged) };
      });
      await this.store.upsert(TABLES.observations, 'id', rows);
    }
    if (written.length > 0) this.queueGraph(written);
    this.writesSinceOptimize += obsRows.length;
    if (cellRows.length > 0) this.kickVectors();
    return results as Observation[];
  }

  /**
   * The entity graph is derived off the write path: mergeInserts on entities and relationships
   * cost more than the observation write itself, so they are batched across calls.
   */
  private queueGraph(observations: Observation[]): void {
    this.graphQueue.push(...observations);
    if (this.graphQueue.length >= 2000) void this.drainGraph();
    else if (!this.graphTimer) {
      this.graphTimer = setTimeout(() => void this.drainGraph(), 1000);
      this.graphTimer.unref();
    }
  }

  /** Writes the queued graph updates; resolves when none are pending. Never throws. */
  drainGraph(): Promise<void> {
    if (this.graphTimer) {
      clearTimeout(this.graphTimer);
      this.graphTimer = null;
    }
    const run = this.graphRun.then(async () => {
      while (this.graphQueue.length > 0) {
        const batch = this.graphQueue.splice(0, 2000);
        await this.writeGraph(batch).catch((e) => this.log(`graph update failed: ${String((e as Error).message ?? e)}`));
      }
    });
    this.graphRun = run;
    return run;
  }

  private async writeGraph(observations: Observation[]): Promise<void> {
    const { entities, relationships } = deriveGraph(observations, Date.now());
    // Edge weights count sightings. Stored weights are read once per edge (by exact key) and
    // then kept here; known entities are not rewritten.
    const key = (r: Row): string => `${r.project}\u0000${r.source}\u0000${r.target}\u0000${r.type}`;
    if (this.edgeWeights.size > 200_000) this.edgeWeights.clear();
    if (this.knownEntities.size > 200_000) this.knownEntities.clear();
    const unknown = relationships.filter((r) => !this.edgeWeights.has(key(r)));
    const byProject = new Map<string, Row[]>();
    for (const r of unknown) byProject.set(String(r.project), [...(byProject.get(String(r.project)) ?? []), r]);
    for (const [project, rows] of byProject) {
      for (let i = 0; i < rows.length; i += 200) {
        const chunk = rows.slice(i, i + 200);
        const sources = sqlStringList([...new Set(chunk.map((r) => String(r.source)))]);
        const targets = sqlStringList([...new Set(chunk.map((r) => String(r.target)))]);
        const stored = await this.store.rows(TABLES.relationships, `project = ${sqlString(project)} AND source IN ${sources} AND target IN ${targets}`, {
          select: ['project', 'source', 'target', 'type', 'weight'],
        });
        for (const r of stored) this.edgeWeights.set(key(r), Number(r.weight));
      }
    }
    for (const r of relationships) {
      r.weight = Number(r.weight) + (this.edgeWeights.get(key(r)) ?? 0);
      this.edgeWeights.set(key(r), Number(r.weight));
    }
    const fresh = entities.filter((e) => !this.knownEntities.has(`${e.project}\u0000${e.id}`));
    await this.store.upsert(TABLES.entities, ['project', 'id'], fresh);
    for (const e of fresh) this.knownEntities.add(`${e.project}\u0000${e.id}`);
    await this.store.upsert(TABLES.relationships, ['project', 'source', 'target', 'type'], relationships);
  }

  async remember(input: MemoryInput, scope: Scope): Promise<Memory> {
    this.assertOpen();
    projectWhere(scope);
    if (!input || typeof input.title !== 'string' || !input.title.trim() || typeof input.text !== 'string') {
      throw new FilterError('a memory needs a title and a text');
    }
    const [id] = await this.store.ids.allocate(1);
    const memory = buildMemory(id, {
      ...input,
      title: redact(input.title.trim()),
      text: redact(input.text),
      memory_type: validType(input.memory_type ?? 'note'),
      files: cleanList(input.files, 'files'),
      branch: input.branch ?? scope.branch,
    }, scope, Date.now(), 'explicit');
    return applyMemoryFacts(this, memory, []);
  }

  /** Writes a new memory row and its L2 cell. */
  async writeMemory(memory: Memory, extra: { source_ids?: number[] } = {}): Promise<void> {
    await this.store.add(TABLES.memories, [memoryToRow(memory, extra)]);
    await this.store.add(TABLES.cells, [memoryCell(memory, this.store.dimension)]);
    this.writesSinceOptimize++;
    this.kickVectors();
    // Decisions and conventions about files become 'decided' edges of the graph.
    const files = memory.files ? (JSON.parse(memory.files) as string[]) : [];
    if (files.length > 0 && ['decision', 'convention'].includes(memory.memory_type)) {
      const now = Date.now();
      const id = `memory:${memory.id}`;
      await this.store
        .upsert(TABLES.entities, ['project', 'id'], [{ project: memory.project, id, label: memory.title, type: 'memory', properties: JSON.stringify({ memory_type: memory.memory_type }), updated_at_epoch: now }])
        .then(() =>
          this.store.upsert(
            TABLES.relationships,
            ['project', 'source', 'target', 'type'],
            files.slice(0, 50).map((f) => ({ project: memory.project, source: id, target: `file:${f}`, type: 'decided', weight: 1, updated_at_epoch: now })),
          ),
        )
        .catch((e) => this.log(`graph update failed: ${String((e as Error).message ?? e)}`));
    }
  }

  /** Replaces a memory row in place and re-creates its cell (text or status changed). */
  async rewriteMemory(memory: Memory): Promise<void> {
    const old = await this.store.rows(TABLES.memories, `id = ${sqlInt(memory.id)}`);
    const prev = old[0] ?? {};
    await this.store.upsert(TABLES.memories, 'id', [
      memoryToRow(memory, {
        source_ids: prev.source_ids ? (JSON.parse(String(prev.source_ids)) as number[]) : undefined,
        access_count: Number(prev.access_count ?? 0),
        last_accessed_epoch: prev.last_accessed_epoch === null || prev.last_accessed_epoch === undefined ? null : Number(prev.last_accessed_epoch),
      }),
    ]);
    // Update the cell in place so that its node id (held by clients) stays valid.
    const cell = memoryCell(memory, this.store.dimension);
    const where = `source_kind = 'memory' AND source_id = ${sqlInt(memory.id)}`;
    if ((await this.store.count(TABLES.cells, where)) === 0) {
      await this.store.add(TABLES.cells, [cell], 'node_id');
    } else {
      await this.store.update(TABLES.cells, where, {
        title: sqlString(String(cell.title)),
        text: sqlString(String(cell.text)),
        search_text: sqlString(String(cell.search_text)),
        status: sqlString(String(cell.status)),
        type: sqlString(String(cell.type)),
        embed_model: "''",
      });
    }
    this.kickVectors();
  }

  /** Writes a session summary row and its L1 cell. */
  async writeSummary(summary: SessionSummary, row: Row, branch: string | null, files: string[]): Promise<void> {
    await this.store.add(TABLES.sessionSummaries, [row]);
    await this.store.add(TABLES.cells, [summaryCell(summary, branch, files, this.store.dimension)]);
    this.writesSinceOptimize++;
    this.kickVectors();
  }

  /** Writes observations built by compression (merged observations) with their cells. */
  async writeDerivedObservations(observations: Observation[]): Promise<void> {
    await this.store.add(TABLES.observations, observations.map((o) => observationToRow(o, {})));
    await this.store.add(TABLES.cells, observations.map((o) => observationCell(o, null, this.store.dimension)));
    this.kickVectors();
  }

  // ---------------------------------------------------------------- reading

  async search(text: string, options: SearchOptions): Promise<SearchHit[]> {
    this.assertOpen();
    const where = scopeWhere(options.scope, options.filter, options.layers);
    const limit = Math.max(1, Math.min(200, Math.floor(options.limit ?? 10)));
    return retryVanished(() => hybridSearch({ cells: this.store.table(TABLES.cells), embedder: this.embedder }, String(text ?? ''), where, limit));
  }

  async getObservations(ids: number[], scope: Scope, options: { includeSuppressed?: boolean } = {}): Promise<Observation[]> {
    const checked = checkIds(ids);
    if (checked.length === 0) return [];
    let where = `${projectWhere({ project: scope.project })} AND id IN ${sqlIntList(checked)}`;
    if (!options.includeSuppressed) where += ` AND status <> 'suppressed'`;
    const rows = (await this.store.rows(TABLES.observations, where)).map(rowToObservation);
    return orderBy(rows, checked);
  }

  async getSessionSummaries(ids: number[], scope: Scope): Promise<SessionSummary[]> {
    const checked = checkIds(ids);
    if (checked.length === 0) return [];
    const rows = await this.store.rows(TABLES.sessionSummaries, `${projectWhere({ project: scope.project })} AND id IN ${sqlIntList(checked)}`);
    return orderBy(rows.map(rowToSessionSummary), checked);
  }

  async getMemories(ids: number[], scope: Scope, options: { includeSuppressed?: boolean } = {}): Promise<Memory[]> {
    const checked = checkIds(ids);
    if (checked.length === 0) return [];
    let where = `${projectWhere({ project: scope.project })} AND id IN ${sqlIntList(checked)}`;
    if (!options.includeSuppressed) where += ` AND status <> 'suppressed'`;
    return orderBy((await this.store.rows(TABLES.memories, where)).map(rowToMemory), checked);
  }

  async touch(kind: SourceKind, ids: number[], scope: Scope): Promise<void> {
    const checked = checkIds(ids);
    if (checked.length === 0) return;
    const table = kind === 'memory' ? TABLES.memories : kind === 'observation' ? TABLES.observations : null;
    const now = String(Date.now());
    const where = `${projectWhere({ project: scope.project })}`;
    if (table) await this.store.update(table, `${where} AND id IN ${sqlIntList(checked)}`, { last_accessed_epoch: now });
    await this.store.update(TABLES.cells, `${where} AND source_kind = ${sqlString(kind)} AND source_id IN ${sqlIntList(checked)}`, {
      last_accessed_epoch: now,
      access_count: 'access_count + 1',
    });
  }

  async getNode(nodeId: string, scope: Scope): Promise<NodeDetail | null> {
    if (typeof nodeId !== 'string' || !/^[0-9a-f-]{36}$/i.test(nodeId)) return null;
    const rows = await this.store.rows(TABLES.cells, `${projectWhere({ project: scope.project })} AND node_id = ${sqlString(nodeId)}`, {
      select: ['node_id', 'layer', 'source_kind', 'source_id', 'project', 'branch', 'type', 'title', 'text', 'files', 'commit_sha', 'session_id', 'created_at_epoch', 'last_accessed_epoch', 'access_count', 'status'],
    });
    if (rows.length === 0) return null;
    const cell = rowToCell(rows[0]);
    const all = { includeSuppressed: true };
    const source =
      cell.source_kind === 'observation'
        ? (await this.getObservations([cell.source_id], scope, all))[0]
        : cell.source_kind === 'memory'
          ? (await this.getMemories([cell.source_id], scope, all))[0]
          : (await this.getSessionSummaries([cell.source_id], scope))[0];
    return source ? { cell, source } : null;
  }

  async listSessions(scope: Scope, limit = 20): Promise<SessionInfo[]> {
    const rows = await this.store.rows(TABLES.observations, projectWhere(scope), { select: ['memory_session_id', 'branch', 'created_at_epoch'] });
    const byId = new Map<string, SessionInfo>();
    for (const r of rows) {
      const id = String(r.memory_session_id);
      const t = Number(r.created_at_epoch);
      const s = byId.get(id) ?? { memory_session_id: id, project: scope.project, branch: (r.branch as string | null) ?? null, started_at_epoch: t, ended_at_epoch: null, observation_count: 0, summary: null };
      s.started_at_epoch = Math.min(s.started_at_epoch, t);
      s.observation_count++;
      byId.set(id, s);
    }
    const sessions = [...byId.values()].sort((a, b) => b.started_at_epoch - a.started_at_epoch).slice(0, Math.max(1, Math.min(500, limit)));
    if (sessions.length > 0) {
      const summaries = await this.store.rows(
        TABLES.sessionSummaries,
        `${projectWhere({ project: scope.project })} AND memory_session_id IN ${sqlStringList(sessions.map((s) => s.memory_session_id))}`,
      );
      for (const r of summaries) {
        const s = sessions.find((x) => x.memory_session_id === r.memory_session_id);
        if (s) {
          s.summary = rowToSessionSummary(r);
          s.ended_at_epoch = s.summary.created_at_epoch;
        }
      }
    }
    return sessions;
  }

  async listObservations(scope: Scope, options: { sessionId?: string; limit?: number } = {}): Promise<Observation[]> {
    let where = `${projectWhere(scope)} AND status <> 'suppressed'`;
    if (options.sessionId !== undefined) where += ` AND memory_session_id = ${sqlString(options.sessionId)}`;
    const rows = (await this.store.rows(TABLES.observations, where)).map(rowToObservation);
    rows.sort((a, b) => b.created_at_epoch - a.created_at_epoch || b.id - a.id);
    return rows.slice(0, Math.max(1, Math.min(10_000, options.limit ?? 100)));
  }

  async listMemories(scope: Scope, options: { includeSuppressed?: boolean } = {}): Promise<Memory[]> {
    let where = projectWhere(scope);
    if (!options.includeSuppressed) where += ` AND status <> 'suppressed'`;
    const rows = (await this.store.rows(TABLES.memories, where)).map(rowToMemory);
    return rows.sort((a, b) => b.updated_at_epoch - a.updated_at_epoch || b.id - a.id);
  }

  async entities(scope: Scope, names: string[]): Promise<{ entities: Entity[]; relationships: Relationship[] }> {
    await this.drainGraph();
    const project = `project = ${sqlString(scope.project)}`;
    const wanted = (names ?? []).map(String).filter(Boolean).slice(0, 100);
    if (wanted.length === 0) return { entities: [], relationships: [] };
    const entities = (await this.store.rows(TABLES.entities, `${project} AND (label IN ${sqlStringList(wanted)} OR id IN ${sqlStringList(wanted)})`)).map(rowToEntity);
    const ids = entities.map((e) => e.id);
    const relationships = ids.length
      ? (await this.store.rows(TABLES.relationships, `${project} AND (source IN ${sqlStringList(ids)} OR target IN ${sqlStringList(ids)})`, { limit: 500 })).map(rowToRelationship)
      : [];
    relationships.sort((a, b) => b.weight - a.weight);
    return { entities, relationships };
  }

  // ---------------------------------------------------------------- curation

  async setStatus(kind: SourceKind, id: number, status: string, scope: Scope): Promise<void> {
    const allowed = ['active', 'suppressed', 'merged', 'superseded'];
    if (!allowed.includes(status)) throw new FilterError(`unknown status '${status}': use ${allowed.join(', ')}`);
    const [checked] = checkIds([id]);
    const where = `${projectWhere({ project: scope.project })}`;
    const table = kind === 'memory' ? TABLES.memories : kind === 'observation' ? TABLES.observations : TABLES.sessionSummaries;
    if ((await this.store.count(table, `${where} AND id = ${checked}`)) === 0) throw new Error(`No ${kind} ${checked} in project ${scope.project}`);
    await this.store.update(table, `${where} AND id = ${checked}`, { status: sqlString(status) });
    await this.store.update(TABLES.cells, `${where} AND source_kind = ${sqlString(kind)} AND source_id = ${checked}`, { status: sqlString(status) });
  }

  async promote(observationId: number, scope: Scope): Promise<Memory> {
    const [o] = await this.getObservations([observationId], scope);
    if (!o) throw new Error(`No observation ${observationId} in project ${scope.project}`);
    const [id] = await this.store.ids.allocate(1);
    const text = [o.narrative, ...(JSON.parse(o.facts ?? '[]') as string[])].filter(Boolean).join('\n') || (o.title ?? o.type);
    const memory = buildMemory(id, {
      title: o.title ?? o.type,
      text,
      memory_type: 'note',
      branch: o.branch ?? undefined,
      files: observationFiles(o),
      session_id: o.memory_session_id,
    }, scope, Date.now(), 'promoted');
    return applyMemoryFacts(this, memory, [o.id]);
  }

  async forget(request: ForgetRequest, scope: Scope | null): Promise<ForgetReport> {
    this.assertOpen();
    await this.flush();
    await this.drainGraph();
    // The purge rewrites tables: let the embedding queue finish its batch first.
    await this.backfill?.idle();
    const report = await forgetRecords(this.store, request, scope);
    this.edgeWeights.clear();
    this.knownEntities.clear();
    if (request.all) this.sessions.clear();
    else if (request.project) this.sessions.delete(request.project);
    return report;
  }

  // ---------------------------------------------------------------- prompts and request log

  async addPrompt(sessionId: string, prompt: string): Promise<void> {
    const now = Date.now();
    await this.store.add(TABLES.sessionPrompts, [{ session_id: String(sessionId), prompt: redact(String(prompt)), created_at_epoch: now }]);
    // Keep the last five per session and nothing older than 30 days.
    const rows = await this.store.rows(TABLES.sessionPrompts, `session_id = ${sqlString(String(sessionId))}`, { select: ['created_at_epoch'] });
    const times = rows.map((r) => Number(r.created_at_epoch)).sort((a, b) => b - a);
    if (times.length > PROMPTS_PER_SESSION) {
      await this.store.delete(TABLES.sessionPrompts, `session_id = ${sqlString(String(sessionId))} AND created_at_epoch < ${sqlInt(times[PROMPTS_PER_SESSION - 1])}`);
    }
    await this.store.delete(TABLES.sessionPrompts, `created_at_epoch < ${sqlInt(now - PROMPT_TTL_MS)}`);
  }

  async recentPrompts(sessionId: string, limit: number): Promise<string[]> {
    const since = Date.now() - PROMPT_TTL_MS;
    const rows = await this.store.rows(TABLES.sessionPrompts, `session_id = ${sqlString(String(sessionId))} AND created_at_epoch >= ${sqlInt(since)}`);
    rows.sort((a, b) => Number(b.created_at_epoch) - Number(a.created_at_epoch));
    return rows.slice(0, Math.max(0, Math.min(PROMPTS_PER_SESSION, limit))).map((r) => String(r.prompt));
  }

  async logRequest(entry: RequestLogEntry): Promise<void> {
    await this.store.add(TABLES.requestLog, [{ ...entry, arguments: redact(entry.arguments), response: redact(entry.response) }]);
  }

  async listRequests(scope: Scope, limit = 50): Promise<RequestLogEntry[]> {
    const rows = await this.store.rows(TABLES.requestLog, `project = ${sqlString(scope.project)}`);
    rows.sort((a, b) => Number(b.created_at_epoch) - Number(a.created_at_epoch));
    return rows.slice(0, Math.max(1, Math.min(1000, limit))).map(rowToRequest);
  }

  // ---------------------------------------------------------------- portability, health

  async exportJsonl(write: (line: string) => void, scope: Scope | null): Promise<number> {
    await this.flush();
    await this.drainGraph();
    return exportJsonl(this.store, write, scope);
  }

  async importJsonl(lines: AsyncIterable<string>): Promise<number> {
    this.assertOpen();
    const n = await importJsonl(this, lines);
    this.edgeWeights.clear();
    this.knownEntities.clear();
    this.kickVectors();
    return n;
  }

  async stats(scope: Scope | null): Promise<StoreStats> {
    const where = scope ? `project = ${sqlString(scope.project)}` : undefined;
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

  /** New cells wait for vectors: wake the background embedding queue. */
  kickVectors(): void {
    this.backfill?.kick();
  }

  /** Resolves when the embedding queue has caught up (for tools that need vectors now, and tests). */
  async waitForVectors(): Promise<void> {
    await this.backfill?.idle();
  }

  /**
   * Compaction, FTS index merge and pruning of old versions, then the ANN index once the store
   * is big enough. Runs in the background on a timer; never throws.
   */
  optimize(olderThanMs?: number): Promise<void> {
    if (this.maintenance) return this.maintenance;
    this.writesSinceOptimize = 0;
    this.maintenance = (async () => {
      await this.store.optimize(olderThanMs);
      if (this.embedder && !this.closed) await ensureAnnIndex(this.store.table(TABLES.cells), { logger: this.log });
    })()
      .catch((e) => this.log(`maintenance failed: ${String((e as Error).message ?? e)}`))
      .finally(() => {
        this.maintenance = null;
      });
    return this.maintenance;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    for (const t of this.timers) clearInterval(t);
    for (const t of this.timers) clearTimeout(t);
    await this.flush();
    for (const s of [...this.sessions.values()]) {
      await this.endSession(s.id, 'shutdown').catch((e) => this.log(`ending session ${s.id} on shutdown: ${String(e)}`));
    }
    await this.drainGraph();
    if (this.maintenance) await this.maintenance;
    this.closed = true;
    await this.backfill?.stop();
    await this.embedder?.close?.();
    this.store.close();
  }
}

function orderBy<T extends { id: number }>(rows: T[], ids: number[]): T[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id)).filter((r): r is T => r !== undefined);
}
