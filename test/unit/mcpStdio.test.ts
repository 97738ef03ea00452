import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { importGitHistory } from '../../src/core/capture/gitImport';
import type { Scope } from '../../src/core/model/records';
import { REPO_ROOT, makeGitRepo, openTestEngine, removeDir, seed, tempDir } from './mcpFixture';
import type { TestRepo } from './mcpFixture';

const scope: Scope = { project: 'github.com/acme/app' };
const other: Scope = { project: 'github.com/evil/other' };
const TSX = require.resolve('tsx/cjs');
const CLI = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');

type CallResult = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };

function runInspector(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const bin = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'inspector', 'cli', 'build', 'cli.js');
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, '--cli', process.execPath, '--require', TSX, CLI, 'mcp', ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 90_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('MCP over stdio (code-memory mcp)', function () {
  this.timeout(120_000);
  let dir: string;
  let repo: TestRepo;
  let client: Client;

  before(async () => {
    const opened = await openTestEngine(tempDir('stdio-store'));
    dir = opened.dir;
    await seed(opened.engine, scope, other);
    repo = makeGitRepo();
    await importGitHistory(opened.engine, repo.dir, { scope });
    await opened.engine.close();
    client = new Client({ name: 'code-memory-stdio-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--require', TSX, CLI, 'mcp', '--store', dir, '--project', scope.project, '--embedder', 'hashed'],
        cwd: REPO_ROOT,
        env: { ...(process.env as Record<string, string>), LANCEDB_LOG: 'error' },
        stderr: 'pipe',
      }),
    );
  });
  after(async () => {
    await client?.close();
    removeDir(dir);
    removeDir(repo.dir);
  });

  it("introduces itself with package.json's version", () => {
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.deepEqual(client.getServerVersion(), { name: 'code-memory', title: 'Code Memory', version: pkg.version });
  });

  it('lists the tools with input and output schemas', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['get_observations', 'observe', 'recall', 'recall_context', 'remember', 'retrieve_memory']);
    // recall_context's public profile answers with text, not a structured object (its page).
    for (const t of tools) assert.ok((t.name === 'recall_context' ? t.outputSchema === undefined : t.outputSchema) && t.inputSchema.properties, t.name);
  });

  it('answers questions about the imported commits through each read tool', async () => {
    const rc = (await client.callTool({ name: 'recall_context', arguments: { query: 'where do we parse CSV lines for the import wizard?' } })) as CallResult;
    assert.match(rc.content[0].text!, /^### XMemo Context\nItems: \d+\n/);
    assert.match(rc.content[0].text!, /Location: src\/parser\/csvParser\.ts/);
    const rm = (await client.callTool({ name: 'retrieve_memory', arguments: { prompt: 'Which commit added the dark mode toggle?' } })) as CallResult;
    assert.equal(rm.structuredContent?.status, 'ok');
    assert.ok(String(rm.structuredContent?.content_text).includes(repo.shas.darkmode.slice(0, 12)), String(rm.structuredContent?.content_text));
    const r = (await client.callTool({ name: 'recall', arguments: { text: 'exponential backoff retries', k: 2 } })) as CallResult;
    assert.ok((r.structuredContent as { nodes: unknown[] }).nodes.length >= 1);
    const bad = (await client.callTool({ name: 'retrieve_memory', arguments: { prompt: 'x', extra: 1 } })) as CallResult;
    assert.equal(bad.structuredContent?.error_code, 'invalid_arguments');
  });

  it('supersedes by topic_key over stdio: the newer decision comes first, the older only for a history question', async () => {
    const call = async (name: string, args: Record<string, unknown>): Promise<CallResult> => (await client.callTool({ name, arguments: args })) as CallResult;
    const first = await call('remember', { memory_type: 'decision', title: 'Database choice', text: 'We use PostgreSQL 14 for the orders service', topic_key: 'orders-db', files: ['orders/db.ts'] });
    const second = await call('remember', { memory_type: 'decision', title: 'Database choice', text: 'We moved the orders service to SQLite with LiteFS', topic_key: 'orders-db' });
    const pgId = Number(first.structuredContent?.id);
    assert.deepEqual(second.structuredContent?.superseded, [pgId]);
    assert.match(second.content[0].text!, new RegExp(`Superseded: memory ${pgId}`));

    const now = (await call('recall_context', { query: 'which database does the orders service use' })).content[0].text!;
    const body = now.slice(now.indexOf('Context:'));
    assert.match(body, /^Context:\n\[1\] Database choice \(memory \d+, [\d-]+\) \[CURRENT since [\d-]+; replaces memory \d+\]\nDatabase choice\nWe moved the orders service to SQLite/, now);
    assert.doesNotMatch(now, /PostgreSQL/);

    const past = (await call('recall_context', { query: 'what did the orders service use before SQLite?' })).content[0].text!;
    assert.ok(past.indexOf('SQLite with LiteFS') < past.indexOf('PostgreSQL 14'), past);
    assert.match(past, new RegExp(`\\(memory ${pgId}, [\\d-]+\\) \\[HISTORY: superseded by memory \\d+ on [\\d-]+; held from [\\d-]+ to [\\d-]+\\]`));

    const byId = await call('get_observations', { ids: [pgId] });
    assert.equal(byId.isError, false);
    assert.equal((byId.structuredContent as { details: Array<{ status: string }> }).details[0].status, 'superseded');
  });

  it('works with the MCP Inspector CLI (a third-party client): tools/list and tools/call', async () => {
    const env = { CODE_MEMORY_STORE: dir, CODE_MEMORY_PROJECT: scope.project, CODE_MEMORY_EMBEDDER: 'hashed', LANCEDB_LOG: 'error' };
    const list = await runInspector(['--method', 'tools/list'], env);
    assert.equal(list.code, 0, list.stderr);
    const tools = (JSON.parse(list.stdout) as { tools: Array<{ name: string; annotations: Record<string, boolean> }> }).tools;
    assert.equal(tools.find((t) => t.name === 'recall')?.annotations.readOnlyHint, true);
    assert.equal(tools.find((t) => t.name === 'get_observations')?.annotations.readOnlyHint, false);
    const call = await runInspector(['--method', 'tools/call', '--tool-name', 'recall_context', '--tool-arg', 'query=dark mode settings page', '--tool-arg', 'max_items=2'], env);
    assert.equal(call.code, 0, call.stderr);
    const result = JSON.parse(call.stdout) as CallResult;
    assert.match(result.content[0].text!, /^### XMemo Context\nItems: [12]\n/);
    assert.match(result.content[0].text!, /Dark mode toggle in the settings page/);
  });
});
