// Configuration snippets for agents outside VS Code. They run the CLI bundled with this
// extension (dist/cli.js) with the runtime VS Code itself runs on, against the same store and
// project, so every agent shares one memory.

import { DEFAULT_OPENAI_EMBEDDING } from '../../core/embed/embedder';
import { STORE_PROCESS_ENV } from '../../core/processEnv';
import { expandHome } from '../../core/store/location';
import { DAY_MS, DEFAULT_REQUEST_LOG_RETENTION } from '../../core/store/retention';
import { DEFAULT_SESSION_IDLE_MINUTES } from '../../core/sessions';
import type { CodeMemoryConfig } from '../config';

export type AgentTarget = 'claude' | 'cursor' | 'codex' | 'stdio';

export interface AgentLaunch {
  /** The Node runtime (process.execPath): Electron's binary in desktop VS Code, hence ELECTRON_RUN_AS_NODE. */
  runtime: string;
  cliPath: string;
  storeUri: string;
  project: string;
  /** The extension's settings the agent's server needs to answer as the extension does. */
  settings: AgentSettings;
}

export type AgentSettings = Pick<
  CodeMemoryConfig,
  'embeddingProvider' | 'embeddingEndpoint' | 'embeddingModel' | 'rerankEndpoint' | 'rerankModel' | 'rerankCandidates' | 'teamStore' | 'storeEndpoint' | 'requestLogRetentionDays' | 'requestLogMaxRows' | 'sessionIdleMinutes'
>;

/**
 * The CLI options and environment that give the agent's server the extension's model, reranker
 * and team store: a server with another embedder would re-embed the whole store it shares with
 * VS Code, and one without the team store would not search what the team shared. The request
 * log's retention and the session idle time too, where they are not the defaults: the process
 * holding the store's maintenance lease applies its own. API keys stay in the environment the
 * user gives the agent (CODE_MEMORY_EMBEDDING_API_KEY, ...), never in a file.
 */
export function settingOptions(s: AgentSettings, storeUri: string): { args: string[]; env: Record<string, string> } {
  const embedder = ['use-lite', 'hashed', 'none', 'openai'].includes(s.embeddingProvider) ? s.embeddingProvider : 'use-lite';
  const args = ['--embedder', embedder];
  if (embedder === 'openai') args.push('--embedding-endpoint', s.embeddingEndpoint || DEFAULT_OPENAI_EMBEDDING.baseUrl, '--embedding-model', s.embeddingModel || DEFAULT_OPENAI_EMBEDDING.model);
  if (s.rerankEndpoint) args.push('--rerank-endpoint', s.rerankEndpoint, ...(s.rerankModel ? ['--rerank-model', s.rerankModel] : []), '--rerank-candidates', String(s.rerankCandidates));
  const teamStore = s.teamStore ? expandHome(s.teamStore) : '';
  if (teamStore) args.push('--team-store', teamStore);
  // Each only where it is not what the server takes by default.
  if (s.requestLogRetentionDays * DAY_MS !== DEFAULT_REQUEST_LOG_RETENTION.maxAgeMs) args.push('--request-log-days', String(s.requestLogRetentionDays));
  if (s.requestLogMaxRows !== DEFAULT_REQUEST_LOG_RETENTION.maxRows) args.push('--request-log-max-rows', String(s.requestLogMaxRows));
  if (s.sessionIdleMinutes !== DEFAULT_SESSION_IDLE_MINUTES) args.push('--session-idle-minutes', String(s.sessionIdleMinutes));
  // codeMemory.store.endpoint: the S3-compatible or Blob service the object stores are on.
  const env: Record<string, string> = {};
  const schemes = new Set([storeUri, teamStore].map((u) => /^([a-z0-9]+):\/\//.exec(u)?.[1]));
  if (s.storeEndpoint && schemes.has('s3')) env.AWS_ENDPOINT_URL = s.storeEndpoint;
  if (s.storeEndpoint && schemes.has('az')) env.AZURE_STORAGE_ENDPOINT = s.storeEndpoint;
  return { args, env };
}

export interface AgentSnippet {
  target: AgentTarget;
  title: string;
  /** Workspace-relative file the snippet belongs in, when it lives in the project. */
  workspaceFile?: string;
  /** Where it goes otherwise (shown to the user). */
  location: string;
  language: 'json' | 'toml' | 'shellscript';
  text: string;
}

export function serverEntry(l: AgentLaunch): { command: string; args: string[]; env: Record<string, string> } {
  const settings = settingOptions(l.settings, l.storeUri);
  return {
    command: l.runtime,
    args: [l.cliPath, 'mcp', '--project', l.project, '--store', l.storeUri, ...settings.args],
    env: { ...STORE_PROCESS_ENV, ...settings.env },
  };
}

export function agentSnippet(target: AgentTarget, l: AgentLaunch): AgentSnippet {
  const entry = serverEntry(l);
  switch (target) {
    case 'claude':
      return {
        target,
        title: 'Claude Code',
        workspaceFile: '.mcp.json',
        location: '.mcp.json at the project root',
        language: 'json',
        text: JSON.stringify({ mcpServers: { 'code-memory': { type: 'stdio', ...entry } } }, null, 2),
      };
    case 'cursor':
      return {
        target,
        title: 'Cursor',
        workspaceFile: '.cursor/mcp.json',
        location: '.cursor/mcp.json in the project (or ~/.cursor/mcp.json for every project)',
        language: 'json',
        text: JSON.stringify({ mcpServers: { 'code-memory': entry } }, null, 2),
      };
    case 'codex':
      return {
        target,
        title: 'Codex',
        location: '~/.codex/config.toml',
        language: 'toml',
        text: [
          '[mcp_servers.code-memory]',
          `command = ${tomlString(entry.command)}`,
          `args = [${entry.args.map(tomlString).join(', ')}]`,
          `env = { ${Object.entries(entry.env)
            .map(([k, v]) => `${k} = ${tomlString(v)}`)
            .join(', ')} }`,
          '',
        ].join('\n'),
      };
    case 'stdio':
      return {
        target,
        title: 'Any MCP client (stdio)',
        location: 'your client\'s MCP server settings',
        language: 'shellscript',
        text: [
          '# Command line of the stdio server (MCP over stdin/stdout; logs on stderr):',
          `${Object.entries(entry.env)
            .map(([k, v]) => `${k}=${shellQuote(v)}`)
            .join(' ')} ${[entry.command, ...entry.args].map(shellQuote).join(' ')}`,
          '',
          '# As JSON, for clients configured with {command, args, env}:',
          ...JSON.stringify(entry, null, 2)
            .split('\n')
            .map((line) => `# ${line}`),
          '',
        ].join('\n'),
      };
  }
}

/** Adds (or replaces) the code-memory server in an existing mcpServers JSON file's text. */
export function mergeMcpJson(existing: string | undefined, snippet: string, file = 'the configuration file'): string {
  const add = JSON.parse(snippet) as { mcpServers: Record<string, unknown> };
  if (!existing?.trim()) return `${JSON.stringify(add, null, 2)}\n`;
  // A file this cannot merge into is refused, never rewritten: a list or a string would be written
  // back without the server, and comments would be lost. The snippet is on the clipboard.
  const refuse = (why: string): Error => new Error(`${file} ${why}; it was left as it is. Add the configuration by hand: it is on the clipboard.`);
  let current: unknown;
  try {
    current = JSON.parse(existing);
  } catch (err) {
    throw refuse(`is not plain JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(current)) throw refuse('does not hold a JSON object');
  if (current.mcpServers !== undefined && !isObject(current.mcpServers)) throw refuse('has an "mcpServers" that is not an object');
  current.mcpServers = { ...(current.mcpServers ?? {}), ...add.mcpServers };
  return `${JSON.stringify(current, null, 2)}\n`;
}

function tomlString(s: string): string {
  return JSON.stringify(s);
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
