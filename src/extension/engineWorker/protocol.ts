// Messages between the extension host and the engine process (its IPC channel, with Node's
// 'advanced' serialization: structured clone). So only plain data: records, options, results; never functions.

import type { SummaryContext, SummaryResult } from '../../core/compress/summariser';
import type { EmbedderConfig } from '../../core/embed/factory';
import type { RerankerConfig } from '../../core/retrieve/rerank';
import type { Observation } from '../../core/model/records';
import type { RequestLogRetention } from '../../core/store/retention';

export interface WorkerOpenOptions {
  storeUri: string;
  /** null: no vectors (full-text search only). */
  embedder: EmbedderConfig | null;
  /** Absent or null: no second-stage reranker. */
  reranker?: RerankerConfig | null;
  sessionIdleMs: number;
  requestLogRetention: RequestLogRetention;
  /** Ask the extension host for a language-model summary at session end. */
  languageModelSummaries: boolean;
  /** The team store and who shares (git author of the workspace). */
  team?: { uri: string; author: string };
  /** S3-compatible endpoint for s3:// stores. */
  objectStore?: { endpoint?: string };
}

export type ToMainMessage =
  | { type: 'ready'; storeUri: string; embedder: string | null }
  | { type: 'failed'; error: string }
  | { type: 'result'; id: number; value: unknown }
  | { type: 'error'; id: number; error: string; code?: string }
  | { type: 'progress'; id: number; done: number; total: number }
  | { type: 'summarise'; id: number; observations: Observation[]; budgetTokens: number; context?: SummaryContext }
  | { type: 'log'; message: string };

export type ToWorkerMessage =
  /** The first message: what to open. */
  | { type: 'open'; options: WorkerOpenOptions }
  | { type: 'call'; id: number; method: string; args: unknown[] }
  | { type: 'cancel'; id: number }
  | { type: 'summary'; id: number; fields: SummaryResult | null }
  | { type: 'setLanguageModelSummaries'; enabled: boolean };
