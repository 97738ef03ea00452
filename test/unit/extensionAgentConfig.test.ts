import * as assert from 'node:assert/strict';
import { storeChildEnv } from '../../src/core/processEnv';
import { agentSnippet, mergeMcpJson, serverEntry } from '../../src/extension/agents/agentConfig';

const launch = { runtime: '/opt/VS Code/code', cliPath: '/ext/dist/cli.js', storeUri: '/home/me/.code-memory/store', project: 'github.com/me/app', embedder: 'use-lite' };

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

  it('adds the server to an existing .mcp.json without dropping the others', () => {
    const merged = JSON.parse(mergeMcpJson('{"mcpServers":{"other":{"command":"x"}}}', agentSnippet('claude', launch).text));
    assert.deepEqual(Object.keys(merged.mcpServers).sort(), ['code-memory', 'other']);
    assert.ok(JSON.parse(mergeMcpJson(undefined, agentSnippet('claude', launch).text)).mcpServers['code-memory']);
  });
});
