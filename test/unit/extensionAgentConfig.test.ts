import * as assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { storeChildEnv } from '../../src/core/processEnv';
import { agentSnippet, mergeMcpJson, serverEntry } from '../../src/extension/agents/agentConfig';
import type { AgentSettings } from '../../src/extension/agents/agentConfig';
import { CliBundle } from './cliFixture';
import { removeDir, tempDir } from './mcpFixture';
import { withVscodeStub } from './vscodeStub';

/** The settings' defaults (package.json). */
const defaults: AgentSettings = { embeddingProvider: 'use-lite', embeddingEndpoint: '', embeddingModel: '', rerankEndpoint: '', rerankModel: '', rerankCandidates: 30, teamStore: '', storeEndpoint: '', requestLogRetentionDays: 30, requestLogMaxRows: 10_000, sessionIdleMinutes: 30 };
const launch = { runtime: '/opt/VS Code/code', cliPath: '/ext/dist/cli.js', storeUri: '/home/me/.code-memory/store', project: 'github.com/me/app', settings: defaults };

describe('extension: agent configuration snippets', () => {
  it('runs the bundled CLI over stdio on the same store and project', () => {
    const e = serverEntry(launch);
    assert.equal(e.command, launch.runtime);
    assert.deepEqual(e.args, ['/ext/dist/cli.js', 'mcp', '--project', 'github.com/me/app', '--store', '/home/me/.code-memory/store', '--embedder', 'use-lite']);
    assert.equal(e.env.ELECTRON_RUN_AS_NODE, '1');
    // Two malloc arenas: the server's memory, measured by bench/scale.ts with the same environment.
    assert.equal(e.env.MALLOC_ARENA_MAX, '2');
    assert.equal(e.env.NODE_OPTIONS, '--max-semi-space-size=4');
  });

  it("gives the store's upkeep child the same environment, under what the parent set itself", () => {
    const env = storeChildEnv({ PATH: '/bin', MALLOC_ARENA_MAX: '4', LANCEDB_LOG: 'debug', ELECTRON_RUN_AS_NODE: '' });
    assert.deepEqual(env, { PATH: '/bin', MALLOC_ARENA_MAX: '4', LANCEDB_LOG: 'debug', ELECTRON_RUN_AS_NODE: '1', NODE_OPTIONS: '--max-semi-space-size=4' });
    assert.deepEqual(storeChildEnv({}), { ELECTRON_RUN_AS_NODE: '1', LANCEDB_LOG: 'error', MALLOC_ARENA_MAX: '2', NODE_OPTIONS: '--max-semi-space-size=4' });
  });

  it('writes valid JSON for Claude Code and Cursor, and TOML for Codex', () => {
    const claude = JSON.parse(agentSnippet('claude', launch).text);
    assert.equal(claude.mcpServers['code-memory'].type, 'stdio');
    const cursor = JSON.parse(agentSnippet('cursor', launch).text);
    assert.equal(cursor.mcpServers['code-memory'].command, launch.runtime);
    const codex = agentSnippet('codex', launch).text;
    assert.match(codex, /^\[mcp_servers\.code-memory\]\ncommand = "\/opt\/VS Code\/code"\nargs = \["\/ext\/dist\/cli\.js", "mcp", /);
    assert.match(agentSnippet('stdio', launch).text, /ELECTRON_RUN_AS_NODE=1 LANCEDB_LOG=error MALLOC_ARENA_MAX=2 NODE_OPTIONS=--max-semi-space-size=4 '\/opt\/VS Code\/code' \/ext\/dist\/cli\.js mcp/);
    assert.match(codex, /^env = \{ ELECTRON_RUN_AS_NODE = "1", LANCEDB_LOG = "error", MALLOC_ARENA_MAX = "2", NODE_OPTIONS = "--max-semi-space-size=4" \}$/m);
  });

  it("carries the extension's model, reranker, team store and object-store endpoint, never a key", () => {
    const ollama = serverEntry({ ...launch, settings: { ...defaults, embeddingProvider: 'openai' } });
    assert.deepEqual(ollama.args.slice(6), ['--embedder', 'openai', '--embedding-endpoint', 'http://127.0.0.1:11434/v1', '--embedding-model', 'nomic-embed-text']);
    const all = serverEntry({
      ...launch,
      storeUri: 's3://team-bucket/me',
      settings: { ...defaults, embeddingProvider: 'openai', embeddingEndpoint: 'http://127.0.0.1:1234/v1', embeddingModel: 'mxbai-embed-large', rerankEndpoint: 'http://127.0.0.1:8080/v1', rerankModel: 'bge-reranker-v2-m3', rerankCandidates: 50, teamStore: 'az://shared/memory', storeEndpoint: 'http://127.0.0.1:9000' },
    });
    assert.deepEqual(all.args.slice(6), [
      '--embedder', 'openai', '--embedding-endpoint', 'http://127.0.0.1:1234/v1', '--embedding-model', 'mxbai-embed-large',
      '--rerank-endpoint', 'http://127.0.0.1:8080/v1', '--rerank-model', 'bge-reranker-v2-m3', '--rerank-candidates', '50',
      '--team-store', 'az://shared/memory',
    ]);
    assert.equal(all.env.AWS_ENDPOINT_URL, 'http://127.0.0.1:9000');
    assert.equal(all.env.AZURE_STORAGE_ENDPOINT, 'http://127.0.0.1:9000');
    assert.ok(!Object.keys(all.env).some((k) => /KEY|TOKEN|SECRET/.test(k)));
    // The request log's retention and the session idle time: the agent's server may hold the
    // store's maintenance lease, and then its values are the ones applied.
    const kept = serverEntry({ ...launch, settings: { ...defaults, requestLogRetentionDays: 7, requestLogMaxRows: 500, sessionIdleMinutes: 10 } });
    assert.deepEqual(kept.args.slice(6), ['--embedder', 'use-lite', '--request-log-days', '7', '--request-log-max-rows', '500', '--session-idle-minutes', '10']);
    // A folder store and no object store: no endpoint in the environment.
    assert.equal(serverEntry({ ...launch, settings: { ...defaults, storeEndpoint: 'http://127.0.0.1:9000' } }).env.AWS_ENDPOINT_URL, undefined);
  });

  it('the configured server starts and answers with those options (the built CLI over stdio)', async function () {
    this.timeout(180_000);
    const bundle = new CliBundle('test-agent-config');
    const store = tempDir('agent-config-store');
    const team = tempDir('agent-config-team');
    await bundle.build();
    const entry = serverEntry({
      runtime: process.execPath,
      cliPath: bundle.cli,
      storeUri: store,
      project: 'github.com/me/app',
      // No reranker listens there: searches fall back to the first stage's order.
      settings: { ...defaults, embeddingProvider: 'hashed', rerankEndpoint: 'http://127.0.0.1:9/v1', rerankModel: 'm', teamStore: team, requestLogRetentionDays: 7, requestLogMaxRows: 500, sessionIdleMinutes: 10 },
    });
    const client = new Client({ name: 'agent-config-test', version: '1.0.0' });
    try {
      await client.connect(new StdioClientTransport({ command: entry.command, args: entry.args, env: { ...(process.env as Record<string, string>), ...entry.env }, stderr: 'pipe' }));
      const tools = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(tools.includes('recall'), tools.join(', '));
      const out = (await client.callTool({ name: 'recall', arguments: { text: 'anything' } })) as { isError?: boolean };
      assert.notEqual(out.isError, true);
    } finally {
      await client.close();
      removeDir(store);
      removeDir(team);
      bundle.remove();
    }
  });

  it('adds the server to an existing .mcp.json without dropping the others', () => {
    const merged = JSON.parse(mergeMcpJson('{"mcpServers":{"other":{"command":"x"}}}', agentSnippet('claude', launch).text));
    assert.deepEqual(Object.keys(merged.mcpServers).sort(), ['code-memory', 'other']);
    assert.ok(JSON.parse(mergeMcpJson(undefined, agentSnippet('claude', launch).text)).mcpServers['code-memory']);
  });
});

describe('extension: settings as read', () => {
  /** readConfig over these settings.json values (package.json's defaults for the rest). */
  function readWith(settings: Record<string, unknown>): import('../../src/extension/config').CodeMemoryConfig {
    const stub = { workspace: { getConfiguration: () => ({ get: <T>(key: string, fallback: T): T => (key in settings ? (settings[key] as T) : fallback) }) } };
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { readConfig } = withVscodeStub(stub, () => require('../../src/extension/config') as typeof import('../../src/extension/config'));
    return readConfig();
  }

  it('trims the embedding endpoint and model as it trims the rerank ones: a pasted space is not part of a URL or model name', () => {
    const c = readWith({ 'embedding.endpoint': ' http://127.0.0.1:11434/v1\n', 'embedding.model': '\tnomic-embed-text ', 'rerank.endpoint': ' http://127.0.0.1:8080/v1 ', 'rerank.model': ' bge ' });
    assert.deepEqual(
      [c.embeddingEndpoint, c.embeddingModel, c.rerankEndpoint, c.rerankModel],
      ['http://127.0.0.1:11434/v1', 'nomic-embed-text', 'http://127.0.0.1:8080/v1', 'bge'],
    );
    const blank = readWith({ 'embedding.endpoint': '   ', 'embedding.model': ' ' });
    assert.deepEqual([blank.embeddingEndpoint, blank.embeddingModel], ['', '']);
  });
});
