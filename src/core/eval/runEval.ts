// The retrieval evaluation: imports a repository's history into a fresh store through the
// product's own git import, asks every question through the real tools (recall,
// recall_context, retrieve_memory), maps each answer back to commit SHAs and scores the rank
// of the first gold commit. Used by `code-memory eval` and bench/eval.ts.

import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { MemoryEngineApi } from '../api';
import type { Embedder } from '../embed/embedder';
import { createEmbedder } from '../embed/factory';
import type { EmbedderConfig } from '../embed/factory';
import { VectorBackfill } from '../embed/backfill';
import { WorkerEmbedder } from '../embed/workerEmbedder';
import { importGitHistory } from '../capture/gitImport';
import { MemoryEngine } from '../engine';
import type { RerankerConfig } from '../retrieve/rerank';
import { recall } from '../tools/recall';
import { recallContext } from '../tools/recallContext';
import { TABLES } from '../store/schema';
import { retrieveMemory } from '../tools/retrieveMemory';
import type { Scope } from '../model/records';
import type { ToolContext } from '../tools/types';
import { firstGoldRank, latencyMetrics, rankMetrics, uniqueInOrder } from './metrics';
import type { LatencyMetrics, RankMetrics } from './metrics';
import { EVAL_TOOLS } from './evalTools';
import type { EvalTool } from './evalTools';
import { loadQuestions } from './queries';
import { commitSubjects, shortSha } from './subjects';
import type { EvalQuestion } from './queries';
import { errorMessage } from '../errorText';

export interface EvalOptions {
  /** The git repository whose history is imported. */
  repo: string;
  /** JSON Lines questions file, or the questions themselves. */
  queries: string | EvalQuestion[];
  /** Revision to import (default HEAD). */
  rev?: string;
  /** 'use-lite' (the product default), 'hashed' (fast, for tests), 'none' (full text only), or any provider's config. */
  embedder?: 'use-lite' | 'hashed' | 'none' | EmbedderConfig;
  /** Run the embedder in a worker thread as the product does (default true). */
  embedderWorker?: boolean;
  /** The optional second-stage reranker, as the product would use it. */
  reranker?: RerankerConfig | null;
  tools?: EvalTool[];
  /** Answers scored per question (default 10). */
  k?: number;
  includeMerges?: boolean;
  /** Keep pull-request messages with their commits (default true). */
  pullRequestText?: boolean;
  /** Import the project's documents with the history (default true; see capture/projectDocs.ts). */
  documents?: boolean;
  /** Store folder; a fresh temporary one (removed afterwards) by default. */
  storeDir?: string;
  /** With storeDir: when it already holds an import, ask its questions without importing again. */
  reuseStore?: boolean;
  /** Longest wait for background embedding before questions are asked (default 30 min). */
  embedTimeoutMs?: number;
  log?: (message: string) => void;
}

export interface QuestionResult {
  id: string;
  kind: string | null;
  question: string;
  gold_commits: string[];
  /** Rank (1-based) of the first gold commit per tool, null when not in the top k. */
  ranks: Partial<Record<EvalTool, number | null>>;
  latency_ms: Partial<Record<EvalTool, number>>;
  /** The first answers per tool (short SHAs), for reading misses. */
  top: Partial<Record<EvalTool, string[]>>;
}

export interface ToolReport {
  metrics: RankMetrics;
  latency: LatencyMetrics;
  by_kind: Record<string, RankMetrics>;
}

export interface EvalReport {
  repository: string;
  rev: string;
  questions: number;
  k: number;
  embedder: string;
  /** The reranker's model and endpoint, or null when none was used. */
  reranker: string | null;
  import: { imported: number; skipped: number; sessions: number; seconds: number; embed_seconds: number; cells: number; cells_with_vectors: number };
  tools: Partial<Record<EvalTool, ToolReport>>;
  per_question: QuestionResult[];
  /** Subject of each commit the report names (gold commits, first answers), by its first 10 hex digits. */
  subjects: Record<string, string>;
}

async function makeEmbedder(kind: EvalOptions['embedder'], worker: boolean): Promise<Embedder | 'none'> {
  if (kind === 'none') return 'none';
  const config: EmbedderConfig = typeof kind === 'object' ? kind : kind === 'hashed' ? { provider: 'hashed' } : { provider: 'use-lite' };
  return worker ? WorkerEmbedder.start(config) : createEmbedder(config);
}

/**
 * Waits until the engine's background embedding has embedded every cell. An engine that does
 * not embed in the background gets a backfill run here, so vectors are measured either way.
 */
async function waitForVectors(engine: MemoryEngine, scope: Scope, timeoutMs: number, log: (m: string) => void): Promise<{ cells: number; withVectors: number }> {
  const started = Date.now();
  let last = -1;
  let lastChange = Date.now();
  let own: VectorBackfill | null = null;
  try {
    for (;;) {
      const s = await engine.stats(scope);
      if (s.embedder.name === 'none' || !engine.embedder || s.cells_with_vectors >= s.cells) return { cells: s.cells, withVectors: s.cells_with_vectors };
      if (s.cells_with_vectors !== last) {
        last = s.cells_with_vectors;
        lastChange = Date.now();
        log(`embedding: ${s.cells_with_vectors}/${s.cells} cells`);
      }
      // Only when nothing at all was embedded for a while: an engine without a background queue.
      if (!own && last <= 0 && Date.now() - started > 20_000) {
        log('no background embedding seen; embedding the cells here');
        own = new VectorBackfill({ cells: () => engine.store.table(TABLES.cells), embedder: engine.embedder, onError: (e) => log(`embedding failed: ${errorMessage(e)}`) });
        own.kick();
        lastChange = Date.now();
      }
      // No progress for a long while means nothing is embedding: measure what is there.
      if (Date.now() - started > timeoutMs || Date.now() - lastChange > 120_000) {
        log(`embedding incomplete (${s.cells_with_vectors}/${s.cells}); asking the questions anyway`);
        return { cells: s.cells, withVectors: s.cells_with_vectors };
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await own?.stop();
  }
}

/** Commit SHA of each node id, in order (a node without a commit gives null). */
async function shasOfNodes(engine: MemoryEngineApi, scope: Scope, ids: string[]): Promise<Array<string | null>> {
  const out: Array<string | null> = [];
  for (const id of ids) {
    const node = await engine.getNode(id, scope);
    out.push(node?.cell.commit_sha ?? null);
  }
  return out;
}

async function shasOfObservations(engine: MemoryEngineApi, scope: Scope, sourcePaths: string[]): Promise<Array<string | null>> {
  const ids = sourcePaths.map((p) => /^observation\/(\d+)/.exec(p)?.[1]).map((x) => (x ? Number(x) : null));
  const wanted = ids.filter((x): x is number => x !== null);
  const found = new Map((await engine.getObservations(wanted, scope)).map((o) => [o.id, o.commit_sha]));
  return ids.map((id) => (id === null ? null : (found.get(id) ?? null)));
}

type Asker = (question: string) => Promise<{ ms: number; shas: string[] }>;

function toolAskers(ctx: ToolContext, k: number): Record<EvalTool, Asker> {
  const { engine, scope } = ctx;
  return {
    async recall(question) {
      const t0 = performance.now();
      const out = await recall(ctx, { text: question, k });
      const ms = performance.now() - t0;
      return { ms, shas: uniqueInOrder(await shasOfNodes(engine, scope, out.nodes.map((n) => n.node_id))) };
    },
    async recall_context(question) {
      const t0 = performance.now();
      const out = await recallContext(ctx, { query: question, max_items: k });
      const ms = performance.now() - t0;
      return { ms, shas: uniqueInOrder(await shasOfNodes(engine, scope, out.items.map((i) => i.reference))) };
    },
    async retrieve_memory(question) {
      const t0 = performance.now();
      const out = await retrieveMemory(ctx, { prompt: question });
      const ms = performance.now() - t0;
      if (out.status !== 'ok') throw new Error(`retrieve_memory failed: ${JSON.stringify(out)}`);
      const facts = out.retrieval?.facts ?? [];
      return { ms, shas: uniqueInOrder(await shasOfObservations(engine, scope, facts.map((f) => f.source_path))) };
    },
  };
}

/** An imported, embedded store that questions can be asked of, more than once. */
export interface EvalSession {
  /** Asks every question through the tools (default: the session's tools) and scores them. */
  ask(tools?: EvalTool[]): Promise<EvalReport>;
  close(): Promise<void>;
}

/** Imports the history into a fresh store and waits for its vectors. */
export async function openEvalSession(options: EvalOptions): Promise<EvalSession> {
  process.env.LANCEDB_LOG ??= 'error';
  const log = options.log ?? (() => undefined);
  const k = options.k ?? 10;
  const questions = typeof options.queries === 'string' ? loadQuestions(options.queries) : options.queries;
  const repo = path.resolve(options.repo);
  const storeDir = options.storeDir ?? mkdtempSync(path.join(os.tmpdir(), 'code-memory-eval-'));
  const embedderKind = options.embedder ?? 'use-lite';
  const embedder = await makeEmbedder(embedderKind, options.embedderWorker ?? true);
  // The imported sessions stay unsummarised while questions are asked: summaries written
  // meanwhile would move the full-text statistics, and two runs of one set would differ.
  const engine = await MemoryEngine.open({ storeUri: storeDir, embedder, reranker: options.reranker, summariseOrphanSessions: false, logger: (m: string) => log(m) });
  const scope: Scope = { project: 'eval' };
  const close = async (): Promise<void> => {
    await engine.close();
    if (!options.storeDir) rmSync(storeDir, { recursive: true, force: true });
  };
  let importInfo: EvalReport['import'];
  try {
    const existing = options.reuseStore && options.storeDir ? await engine.stats(scope) : null;
    if (existing && existing.cells > 0) {
      log(`reusing the import in ${storeDir} (${existing.cells} cells)`);
      const vectors = await waitForVectors(engine, scope, options.embedTimeoutMs ?? 30 * 60_000, log);
      importInfo = { imported: 0, skipped: 0, sessions: 0, seconds: 0, embed_seconds: 0, cells: vectors.cells, cells_with_vectors: vectors.withVectors };
    } else {
    const t0 = Date.now();
    let lastLog = 0;
    const imported = await importGitHistory(engine, repo, {
      scope,
      rev: options.rev,
      includeMerges: options.includeMerges,
      pullRequestText: options.pullRequestText,
      documents: options.documents,
      onProgress: (done, total) => {
        if (Date.now() - lastLog > 2000 || done === total) {
          lastLog = Date.now();
          log(`import: ${done}/${total} commits`);
        }
      },
    });
    await engine.flush();
    const importSeconds = (Date.now() - t0) / 1000;
    const t1 = Date.now();
    const vectors = await waitForVectors(engine, scope, options.embedTimeoutMs ?? 30 * 60_000, log);
    importInfo = {
      ...imported,
      seconds: Math.round(importSeconds * 10) / 10,
      embed_seconds: Math.round(((Date.now() - t1) / 1000) * 10) / 10,
      cells: vectors.cells,
      cells_with_vectors: vectors.withVectors,
    };
    }
  } catch (error) {
    await close();
    throw error;
  }

  const ctx: ToolContext = { engine, scope, transportSessionId: 'eval' };
  const askers = toolAskers(ctx, k);
  const ask = async (tools: EvalTool[] = options.tools ?? [...EVAL_TOOLS]): Promise<EvalReport> => {
    const perQuestion: QuestionResult[] = questions.map((q) => ({
      id: q.id,
      kind: q.kind ?? null,
      question: q.question,
      gold_commits: q.gold_commits,
      ranks: {},
      latency_ms: {},
      top: {},
    }));
    for (const tool of tools) {
      // One unscored call first: the first query pays for loading models and opening files.
      await askers[tool]('warm up');
      for (let i = 0; i < questions.length; i++) {
        const { ms, shas } = await askers[tool](questions[i].question);
        const top = shas.slice(0, k);
        perQuestion[i].ranks[tool] = firstGoldRank(top, questions[i].gold_commits);
        perQuestion[i].latency_ms[tool] = Math.round(ms * 10) / 10;
        perQuestion[i].top[tool] = top.slice(0, 5).map(shortSha);
      }
      log(`asked ${questions.length} questions through ${tool}`);
    }
    const report: EvalReport = {
      repository: repo,
      rev: options.rev ?? 'HEAD',
      questions: questions.length,
      k,
      embedder: embedder === 'none' ? 'none' : embedder.name,
      reranker: options.reranker ? `${options.reranker.model || 'the server\'s model'} at ${options.reranker.endpoint}` : null,
      import: importInfo,
      tools: {},
      per_question: perQuestion,
      subjects: await commitSubjects(repo, options.rev ?? 'HEAD', perQuestion.flatMap((q) => [...q.gold_commits, ...Object.values(q.top).flat()])).catch((error: unknown) => {
        log(`commit subjects not read: ${errorMessage(error)}`);
        return {};
      }),
    };
    for (const tool of tools) {
      const kinds = [...new Set(perQuestion.map((q) => q.kind ?? 'all'))];
      // No prototype: a question kind may be any string, "__proto__" too.
      const byKind: Record<string, RankMetrics> = Object.create(null) as Record<string, RankMetrics>;
      if (kinds.length > 1) {
        for (const kind of kinds) byKind[kind] = rankMetrics(perQuestion.filter((q) => (q.kind ?? 'all') === kind).map((q) => q.ranks[tool] ?? null));
      }
      report.tools[tool] = {
        metrics: rankMetrics(perQuestion.map((q) => q.ranks[tool] ?? null)),
        latency: latencyMetrics(perQuestion.map((q) => q.latency_ms[tool] ?? 0)),
        by_kind: byKind,
      };
    }
    return report;
  };
  return { ask, close };
}

export async function runEval(options: EvalOptions): Promise<EvalReport> {
  const session = await openEvalSession(options);
  try {
    return await session.ask();
  } finally {
    await session.close();
  }
}
