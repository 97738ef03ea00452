import * as vscode from 'vscode';
import { DEFAULT_SESSION_IDLE_MINUTES } from '../core/sessions';
import { relativeFolder } from '../core/store/location';
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

/**
 * The settings as the code uses them. A hand-edited settings.json may hold any JSON where a setting
 * belongs (VS Code only underlines it): a value of the wrong type, or outside the range package.json
 * declares, is never used as it is (a string port would make node listen on a Unix socket, a NaN
 * idle time end no session, a text retention of "30" delete the request log). Each such setting
 * takes its default, or its nearest bound, and says so in settingProblems().
 */
export function readConfig(): CodeMemoryConfig {
  const s = new Settings(vscode.workspace.getConfiguration('codeMemory'));
  const config: CodeMemoryConfig = {
    storeLocation: s.location('storeLocation', 'the default store, ~/.code-memory/store'),
    teamStore: s.location('teamStore', 'no team store'),
    storeEndpoint: s.text('store.endpoint'),
    captureEnabled: s.flag('capture.enabled', true),
    exclude: s.list('capture.exclude', DEFAULT_EXCLUDES),
    sessionIdleMinutes: s.number('session.idleMinutes', DEFAULT_SESSION_IDLE_MINUTES, 1, Infinity, false),
    summariser: s.choice('summariser.provider', ['extractive', 'languageModel'] as const, 'extractive'),
    summariserTokenBudget: s.number('summariser.tokenBudget', 4000, 500, Infinity, false),
    embeddingProvider: s.choice('embedding.provider', ['use-lite', 'hashed', 'openai', 'none'] as const, 'use-lite'),
    embeddingEndpoint: s.text('embedding.endpoint'),
    embeddingModel: s.text('embedding.model'),
    rerankEndpoint: s.text('rerank.endpoint'),
    rerankModel: s.text('rerank.model'),
    rerankCandidates: s.number('rerank.candidates', 30, 2, 100, true),
    serverPort: s.port('server.port'),
    requestLogRetentionDays: s.number('requestLog.retentionDays', 30, 1, 36_500, true),
    requestLogMaxRows: s.number('requestLog.maxRows', 10_000, 1, 10_000_000, true),
  };
  lastProblems = s.problems;
  return config;
}

let lastProblems: string[] = [];

/** What the last readConfig() did not take as written: one line per setting, naming it, the value and what is used instead. */
export function settingProblems(): readonly string[] {
  return lastProblems;
}

let reported = '';

/** Reads the settings and tells the user, once per change, of each one that is not used as written. */
export function reportSettingProblems(log: (message: string) => void): void {
  readConfig();
  const text = lastProblems.join('\n');
  if (text === reported) return;
  reported = text;
  if (!text) return;
  for (const p of lastProblems) log(p);
  void vscode.window.showWarningMessage(`Code Memory: ${lastProblems.length === 1 ? lastProblems[0] : `${lastProblems.length} settings are not valid (see Show Log): ${lastProblems[0]}`}`);
}

class Settings {
  readonly problems: string[] = [];

  constructor(private readonly c: vscode.WorkspaceConfiguration) {}

  private raw(key: string): unknown {
    const value = this.c.get<unknown>(key);
    return value === null ? undefined : value;
  }

  private problem(key: string, value: unknown, use: unknown, why: string): void {
    this.problems.push(`codeMemory.${key} is ${shown(value)}, ${why}; using ${shown(use)}.`);
  }

  text(key: string): string {
    const value = this.raw(key);
    if (value === undefined) return '';
    if (typeof value === 'string') return value.trim();
    this.problem(key, value, '', 'not text');
    return '';
  }

  /**
   * A store: a URI (s3://…), or a folder by its absolute path, ~/… or file://. A relative path is
   * not used: the extension host's working folder is no place the user chose, and the CLI that
   * Copy Agent Configuration sets up would read it from another folder, a store of its own.
   */
  location(key: string, instead: string): string {
    const value = this.text(key);
    if (!value || !relativeFolder(value)) return value;
    this.problems.push(`codeMemory.${key} is ${shown(value)}, a relative path; give the folder as an absolute path or ~/…; using ${instead}.`);
    return '';
  }

  flag(key: string, fallback: boolean): boolean {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    if (typeof value === 'boolean') return value;
    const word = typeof value === 'string' ? value.trim().toLowerCase() : '';
    // "false" typed with quotes means false: read as any other string it would be true.
    if (word === 'true' || word === 'false') return word === 'true';
    this.problem(key, value, fallback, 'not true or false');
    return fallback;
  }

  list(key: string, fallback: readonly string[]): string[] {
    const value = this.raw(key);
    if (value === undefined) return [...fallback];
    // One pattern written without the brackets is that pattern.
    if (typeof value === 'string') return [value];
    if (!Array.isArray(value)) {
      this.problem(key, value, fallback, 'not a list of patterns');
      return [...fallback];
    }
    const strings = value.filter((v): v is string => typeof v === 'string');
    if (strings.length < value.length) this.problem(key, value.filter((v) => typeof v !== 'string'), strings, 'not text (left out)');
    return strings;
  }

  choice<T extends string>(key: string, values: readonly T[], fallback: T): T {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    if (values.includes(value as T)) return value as T;
    this.problem(key, value, fallback, `not one of ${values.join(', ')}`);
    return fallback;
  }

  number(key: string, fallback: number, min: number, max: number, whole: boolean): number {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value.trim()) : Number.NaN;
    if (!Number.isFinite(n)) {
      this.problem(key, value, fallback, 'not a number');
      return fallback;
    }
    const used = Math.min(max, Math.max(min, whole ? Math.round(n) : n));
    if (used !== n) this.problem(key, value, used, `outside ${min} to ${max === Infinity ? 'any' : max}${whole ? ' or not a whole number' : ''}`);
    else if (typeof value === 'string') this.problem(key, value, used, 'text, not a number');
    return used;
  }

  /** A TCP port: a whole number from 0 to 65535; anything else is 0 (a free port), never a string node would take for a socket path. */
  port(key: string): number {
    const value = this.raw(key);
    if (value === undefined) return 0;
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 65_535) return value;
    this.problem(key, value, 0, 'not a port (a whole number from 0 to 65535)');
    return 0;
  }
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

export function affectsConfig(e: vscode.ConfigurationChangeEvent, key: string): boolean {
  return e.affectsConfiguration(`codeMemory.${key}`);
}
