// The optional second stage of retrieval: a cross-encoder reranker behind a local server's
// Jina/Cohere-style endpoint (POST {endpoint}/rerank with {model, query, documents, top_n},
// answered by {results: [{index, relevance_score}]}), as llama.cpp's `llama-server --reranking`,
// vLLM, Infinity and LocalAI speak it. It rescores the best first-stage hits of every search;
// whatever goes wrong, the first-stage order stands and the search still answers.

import type { SearchHit } from '../api';
import { postJson } from '../modelServer';
import { displayUri } from '../store/objectStorage';
import { redact, registerSecret } from '../capture/redact';
import { cutText } from '../tokens';

/** Plain data, so that it can cross to the engine's worker thread. */
export interface RerankerConfig {
  /** Base URL, e.g. http://127.0.0.1:8080/v1; `/rerank` is appended. */
  endpoint: string;
  /** Sent as `model` when not empty; servers hosting one model ignore it. */
  model: string;
  /** Sent as a bearer token when set; never logged. */
  apiKey?: string;
  /** First-stage hits rescored per search (default 30). */
  candidates?: number;
  /** Per request (default 10 s). */
  timeoutMs?: number;
  /** After a failure, searches skip the reranker this long (default 30 s). */
  retryAfterMs?: number;
}

export const DEFAULT_RERANK_CANDIDATES = 30;
export const MAX_RERANK_CANDIDATES = 100;
/** Weight of the reranker's score in the final one; the first-stage score has the rest. */
export const RERANK_WEIGHT = 0.7;
/** Characters of each candidate (title, then text) and of the query sent: rerankers read about 512 tokens. */
export const RERANK_DOCUMENT_CHARS = 1500;
const RERANK_QUERY_CHARS = 1000;
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_RETRY_AFTER_MS = 30_000;

interface RerankResponse {
  results?: Array<{ index?: unknown; relevance_score?: unknown }>;
}

/** The document text a candidate is judged by. */
export function rerankDocument(hit: SearchHit): string {
  const { title, text } = hit.cell;
  const doc = title && !text.startsWith(title) ? `${title}\n${text}` : text || title;
  return cutText(doc, RERANK_DOCUMENT_CHARS);
}

/**
 * Relevance scores in [0, 1]. Scores already in that range (Jina, Cohere, Infinity, vLLM) are
 * kept; a response with any score outside it carries raw logits (llama.cpp with a bge reranker),
 * which the logistic function maps into it, order unchanged.
 */
export function normaliseScores(scores: number[]): number[] {
  if (scores.every((s) => s >= 0 && s <= 1)) return scores;
  return scores.map((s) => 1 / (1 + Math.exp(-s)));
}

export class Reranker {
  /** The rerank URL as it may be shown (logs, doctor): without credentials or a query written into it. */
  readonly url: string;
  readonly candidates: number;
  /** The rerank URL requests go to. */
  private readonly requestUrl: string;
  private pausedUntil = 0;

  constructor(
    private readonly config: RerankerConfig,
    private readonly log: (message: string) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {
    if (!config.endpoint) throw new Error('The reranker needs an endpoint, e.g. http://127.0.0.1:8080/v1.');
    this.requestUrl = config.endpoint.replace(/\/+$/, '') + '/rerank';
    this.url = displayUri(this.requestUrl);
    if (config.apiKey) registerSecret(config.apiKey);
    this.candidates = Math.min(MAX_RERANK_CANDIDATES, Math.max(2, Math.floor(config.candidates ?? DEFAULT_RERANK_CANDIDATES)));
  }

  /** How many first-stage hits a search for `limit` should fetch. */
  fetchFor(limit: number): number {
    return Math.max(limit, this.candidates);
  }

  /**
   * The best `limit` of `hits` (first-stage order, best first). The top `candidates` are scored
   * by the reranker; each hit's score becomes (1 - RERANK_WEIGHT) x its first-stage score +
   * RERANK_WEIGHT x the reranker's (0 for hits beyond the candidates), and distance 1 - score.
   * On any failure the hits come back in first-stage order, with a warning in the log.
   */
  async rerank(query: string, hits: SearchHit[], limit: number): Promise<SearchHit[]> {
    if (hits.length === 0 || !query.trim() || this.now() < this.pausedUntil) return hits.slice(0, limit);
    const head = hits.slice(0, this.candidates);
    let scores: number[];
    try {
      scores = normaliseScores(await this.scores(query, head.map(rerankDocument)));
    } catch (error) {
      const retryAfter = this.config.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
      this.pausedUntil = this.now() + retryAfter;
      this.log(
        // Redacted: what the server answered may echo the key it refused (registered, so redact() knows it).
        `warning: reranking failed, first-stage order kept (${redact(error instanceof Error ? error.message : String(error))}); ` +
          `the reranker is tried again in ${Math.round(retryAfter / 1000)} s. Check that its server runs, or change the rerank endpoint.`,
      );
      return hits.slice(0, limit);
    }
    const keep = 1 - RERANK_WEIGHT;
    const rescored = hits.map((hit, i) => {
      const score = keep * hit.score + (i < scores.length ? RERANK_WEIGHT * scores[i] : 0);
      return { ...hit, score, distance: 1 - score };
    });
    // Stable: equal scores keep the first-stage order.
    return rescored.sort((a, b) => b.score - a.score).slice(0, limit);
  }

  /** One request; the raw scores in the order of `documents`, or an error saying what was wrong. */
  async scores(query: string, documents: string[]): Promise<number[]> {
    const json = (await postJson(
      this.requestUrl,
      { ...(this.config.model ? { model: this.config.model } : {}), query: cutText(query, RERANK_QUERY_CHARS), documents, top_n: documents.length },
      { label: 'Reranker', apiKey: this.config.apiKey, timeoutMs: this.config.timeoutMs ?? DEFAULT_TIMEOUT_MS },
    )) as RerankResponse | null;
    const results = json?.results;
    if (!Array.isArray(results) || results.length !== documents.length) {
      throw new Error(`${this.url} returned ${Array.isArray(results) ? results.length : 'no'} results for ${documents.length} documents`);
    }
    const scores: Array<number | undefined> = documents.map(() => undefined);
    for (const r of results) {
      const index = r?.index;
      const score = r?.relevance_score;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= documents.length || scores[index] !== undefined) {
        throw new Error(`${this.url} returned a result with a bad or repeated index (${redact(String(JSON.stringify(index))).slice(0, 40)})`);
      }
      if (typeof score !== 'number' || !Number.isFinite(score)) throw new Error(`${this.url} returned a result without a numeric relevance_score`);
      scores[index] = score;
    }
    return scores as number[];
  }
}
