import * as vscode from 'vscode';
import { DEFAULT_EXCLUDES } from './capture/excludes';

export type SummariserChoice = 'extractive' | 'languageModel';

/** Typed view of the `codeMemory.*` settings, read fresh on every call (settings can change at any time). */
export interface CodeMemoryConfig {
  storeLocation: string;
  /** The team store (codeMemory.teamStore); '' for none. */
  teamStore: string;
  /** Endpoint for s3:// (S3-compatible) and az:// (Blob service) stores (codeMemory.store.endpoint); '' for the environment's. */
  storeEndpoint: string;
  captureEnabled: boolean;
  exclude: string[];
  sessionIdleMinutes: number;
  summariser: SummariserChoice;
  summariserTokenBudget: number;
  embeddingProvider: string;
  embeddingEndpoint: string;
  embeddingModel: string;
  /** The reranker's base URL (codeMemory.rerank.endpoint); '' turns reranking off. */
  rerankEndpoint: string;
  rerankModel: string;
  rerankCandidates: number;
  serverPort: number;
  requestLogRetentionDays: number;
  requestLogMaxRows: number;
}

export function readConfig(): CodeMemoryConfig {
  const c = vscode.workspace.getConfiguration('codeMemory');
  return {
    storeLocation: c.get<string>('storeLocation', '').trim(),
    teamStore: c.get<string>('teamStore', '').trim(),
    storeEndpoint: c.get<string>('store.endpoint', '').trim(),
    captureEnabled: c.get<boolean>('capture.enabled', true),
    exclude: c.get<string[]>('capture.exclude', DEFAULT_EXCLUDES),
    sessionIdleMinutes: Math.max(1, c.get<number>('session.idleMinutes', 30)),
    summariser: c.get<SummariserChoice>('summariser.provider', 'extractive'),
    summariserTokenBudget: Math.max(500, c.get<number>('summariser.tokenBudget', 4000)),
    embeddingProvider: c.get<string>('embedding.provider', 'use-lite'),
    embeddingEndpoint: c.get<string>('embedding.endpoint', '').trim(),
    embeddingModel: c.get<string>('embedding.model', '').trim(),
    rerankEndpoint: c.get<string>('rerank.endpoint', '').trim(),
    rerankModel: c.get<string>('rerank.model', '').trim(),
    rerankCandidates: Math.min(100, Math.max(2, clampCount(c.get<number>('rerank.candidates', 30), 100))),
    serverPort: c.get<number>('server.port', 0),
    // Whole numbers within the ranges package.json declares (a hand-edited settings.json may hold others).
    requestLogRetentionDays: clampCount(c.get<number>('requestLog.retentionDays', 30), 36_500),
    requestLogMaxRows: clampCount(c.get<number>('requestLog.maxRows', 10_000), 10_000_000),
  };
}

function clampCount(value: number, max: number): number {
  return Number.isFinite(value) ? Math.min(max, Math.max(1, Math.round(value))) : 1;
}

export function affectsConfig(e: vscode.ConfigurationChangeEvent, key: string): boolean {
  return e.affectsConfiguration(`codeMemory.${key}`);
}
