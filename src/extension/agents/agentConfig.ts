// Configuration snippets for agents outside VS Code. They run the CLI bundled with this
// extension (dist/cli.js) with the runtime VS Code itself runs on, against the same store and
// project, so every agent shares one memory.

import { STORE_PROCESS_ENV } from '../../core/processEnv';

export type AgentTarget = 'claude' | 'cursor' | 'codex' | 'stdio';

export interface AgentLaunch {
  /** The Node runtime (process.execPath): Electron's binary in desktop VS Code, hence ELECTRON_RUN_AS_NODE. */
  runtime: string;
  cliPath: string;
  storeUri: string;
  project: string;
  embedder: string;
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
  return {
    command: l.runtime,
    args: [l.cliPath, 'mcp', '--project', l.project, '--store', l.storeUri, '--embedder', l.embedder],
    env: { ...STORE_PROCESS_ENV },
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
        location: '.mcp.json at the project root (or run the `claude mcp add-json` line below)',
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
export function mergeMcpJson(existing: string | undefined, snippet: string): string {
  const add = JSON.parse(snippet) as { mcpServers: Record<string, unknown> };
  if (!existing?.trim()) return `${JSON.stringify(add, null, 2)}\n`;
  const current = JSON.parse(existing) as { mcpServers?: Record<string, unknown> };
  current.mcpServers = { ...(current.mcpServers ?? {}), ...add.mcpServers };
  return `${JSON.stringify(current, null, 2)}\n`;
}

function tomlString(s: string): string {
  return JSON.stringify(s);
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
