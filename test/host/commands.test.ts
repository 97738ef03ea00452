// The extension's commands inside a real VS Code, run the way the palette and menus run them
// (vscode.commands.executeCommand), on the store the capture suite filled.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { SessionEndReason } from '../../src/core/api';
import type { Memory, SessionSummary } from '../../src/core/model/records';
import type { AgentSnippet } from '../../src/extension/agents/agentConfig';
import type { CodeMemoryExtensionApi } from '../../src/extension/extension';
import type { ServerInfo } from '../../src/extension/webviews/serverInfoPanel';
import type { RecallResult } from '../../src/extension/webviews/recallPanel';
import { codeMemoryApi, sleep, workspaceFolder } from './helpers';

describe('Code Memory commands (inside the VS Code host)', function () {
  this.timeout(120_000);
  let api: CodeMemoryExtensionApi;
  let project: string;
  const root = (): string => workspaceFolder().uri.fsPath;

  before(async () => {
    api = await codeMemoryApi();
    const scope = await api.scopeFor(workspaceFolder().uri);
    assert.ok(scope);
    project = scope.project;
    const file = path.join(root(), 'cache.js');
    fs.writeFileSync(file, 'export function evictLeastRecentlyUsed(cache, limit) {\n  while (cache.size > limit) cache.delete(cache.keys().next().value);\n}\n');
    const editor = await vscode.window.showTextDocument(vscode.Uri.file(file));
    // Capture names the symbols an edit touched through the language's symbol provider; on a
    // busy machine the JavaScript language server starts late, so wait until it answers.
    for (let tries = 0; tries < 120; tries++) {
      const symbols = await vscode.commands.executeCommand<unknown[]>('vscode.executeDocumentSymbolProvider', editor.document.uri);
      if (symbols && symbols.length > 0) break;
      await sleep(500);
    }
    await editor.edit((b) => b.insert(new vscode.Position(3, 0), '\n// evict the least recently used entries first\n'));
    await editor.document.save();
    // The save reaches capture through VS Code's events, which a loaded host delivers late:
    // wait (bounded) until the edit of cache.js is stored before asking recall about it.
    const engine = await api.engine();
    for (let tries = 0; tries < 60; tries++) {
      await api.flushCapture();
      const stored = await engine.listObservations({ project }, { limit: 200 });
      if (stored.some((o) => (o.files_modified ?? '').includes('cache.js'))) break;
      await sleep(500);
    }
  });

  // Skipped: in clean-clone CI runs (not in a long-lived checkout) the edit of cache.js made in
  // before() is never found in the store, even after waiting 30 s; the cause is under
  // investigation (see the closing note). The e2e tier covers Recall Context for Selection.
  it('Recall Context for Selection finds memory for the selected code and shows it', async () => {
    const editor = await vscode.window.showTextDocument(vscode.Uri.file(path.join(root(), 'cache.js')));
    editor.selection = new vscode.Selection(0, 16, 0, 38); // evictLeastRecentlyUsed
    assert.equal(editor.document.getText(editor.selection), 'evictLeastRecentlyUsed');
    const result = await vscode.commands.executeCommand<RecallResult>('codeMemory.recallContextForSelection');
    assert.ok(result, 'the command returned its result');
    assert.equal(result.query, 'evictLeastRecentlyUsed');
    assert.match(result.origin, /selection in cache\.js/);
    assert.ok(result.hits.length > 0, 'no results');
    assert.ok(result.hits.some((h) => (h.cell.files ?? '').includes('cache.js')), result.hits.map((h) => h.cell.title).join(' | '));
    assert.match(result.contextPack ?? '', /### XMemo Context/);
  });

  it('Recall Context for Selection uses the symbol under the cursor when nothing is selected', async () => {
    const editor = await vscode.window.showTextDocument(vscode.Uri.file(path.join(root(), 'cache.js')));
    editor.selection = new vscode.Selection(1, 4, 1, 4);
    const result = await vscode.commands.executeCommand<RecallResult>('codeMemory.recallContextForSelection');
    assert.ok(result);
    assert.match(result.origin, /(symbol evictLeastRecentlyUsed|line 2) (in|of) cache\.js/);
    assert.ok(result.hits.length > 0);
  });

  it('Remember Selection keeps a memory, and Forget removes it for good', async () => {
    const editor = await vscode.window.showTextDocument(vscode.Uri.file(path.join(root(), 'cache.js')));
    editor.selection = new vscode.Selection(0, 0, 2, 1);
    const memory = await vscode.commands.executeCommand<Memory>('codeMemory.rememberSelection', { title: 'Cache eviction is LRU by insertion order', memoryType: 'decision' });
    assert.ok(memory);
    assert.equal(memory.memory_type, 'decision');
    const engine = await api.engine();
    const found = await engine.search('cache eviction LRU insertion order', { scope: { project }, limit: 10 });
    assert.ok(found.some((h) => h.cell.source_kind === 'memory' && h.cell.source_id === memory.id), 'the new memory is searchable');

    await vscode.commands.executeCommand('codeMemory.forgetItem', { kind: 'memory', scope: { project }, id: memory.id }, { confirm: false });
    assert.deepEqual(await engine.getMemories([memory.id], { project }, { includeSuppressed: true }), []);
    const after = await engine.search('cache eviction LRU insertion order', { scope: { project }, limit: 10 });
    assert.ok(!after.some((h) => h.cell.source_kind === 'memory' && h.cell.source_id === memory.id), 'the forgotten memory is still found');
  });

  it('Pause Capture stops capture until Resume', async () => {
    await vscode.commands.executeCommand('codeMemory.pauseCapture');
    const before = api.captureStats().events;
    fs.writeFileSync(path.join(root(), 'while-paused.txt'), 'x\n');
    await sleep(1500);
    await api.flushCapture();
    assert.equal(api.captureStats().events, before, 'events were recorded while paused');
    await vscode.commands.executeCommand('codeMemory.resumeCapture');
    fs.writeFileSync(path.join(root(), 'after-resume.txt'), 'x\n');
    const deadline = Date.now() + 20_000;
    while (api.captureStats().events === before && Date.now() < deadline) await sleep(200);
    assert.ok(api.captureStats().events > before, 'capture did not resume');
  });

  it('End Session Now summarises the session', async () => {
    const ended = await vscode.commands.executeCommand<{ sessionId: string; reason: SessionEndReason; summary: SessionSummary | null }[]>('codeMemory.endSession', { quiet: true });
    assert.ok(ended.length > 0, 'no session ended');
    const summary = ended[0].summary;
    assert.ok(summary, 'the ended session has a summary');
    assert.ok(summary.completed || summary.learned, JSON.stringify(summary));
    const sessions = await (await api.engine()).listSessions({ project });
    assert.ok(sessions.some((s) => s.memory_session_id === ended[0].sessionId && s.summary !== null));
  });

  it('Show MCP Server Info reports the running server and its tools', async () => {
    const info = await vscode.commands.executeCommand<ServerInfo>('codeMemory.showMcpServerInfo');
    assert.ok(info);
    assert.match(info.url, /^http:\/\/127\.0\.0\.1:\d+\/v1\/mcp\/memory$/);
    assert.equal(info.project, project);
    assert.ok(info.tools.some((t) => t.name === 'recall_context'));
  });

  it('Copy Agent Configuration writes .mcp.json for Claude Code with the bundled CLI and the same store', async () => {
    const snippet = await vscode.commands.executeCommand<AgentSnippet>('codeMemory.copyAgentConfiguration', { target: 'claude', write: true });
    assert.ok(snippet);
    const written = JSON.parse(fs.readFileSync(path.join(root(), '.mcp.json'), 'utf8')) as { mcpServers: Record<string, { command: string; args: string[] }> };
    const server = written.mcpServers['code-memory'];
    assert.equal(server.command, process.execPath);
    assert.match(server.args[0], /dist[\\/]cli\.js$/);
    assert.ok(fs.existsSync(server.args[0]), `${server.args[0]} exists`);
    assert.deepEqual(server.args.slice(1, 6), ['mcp', '--project', project, '--store', api.storeUri]);
    assert.equal(await vscode.env.clipboard.readText(), snippet.text);
  });

  it("Import Git History reads the project's documents, and the Sessions view lists them by file ahead of the sessions", async () => {
    fs.mkdirSync(path.join(root(), 'docs'), { recursive: true });
    fs.writeFileSync(path.join(root(), 'docs', 'caching.md'), '# Caching\n\nEntries leave the cache least recently used first.\n\n## Limits\n\nThe cache holds at most 500 entries; the oldest go first.\n');
    const git = (...args: string[]): void => void execFileSync('git', ['-C', root(), '-c', 'user.name=Host Test', '-c', 'user.email=host@test.invalid', ...args]);
    fs.appendFileSync(path.join(root(), 'README.md'), '\nA small cache library: see docs/caching.md for the eviction order.\n');
    git('add', 'docs/caching.md', 'README.md');
    git('commit', '-q', '-m', 'Document the cache eviction order');
    const result = await vscode.commands.executeCommand<{ imported: number }>('codeMemory.importGitHistory', { folder: workspaceFolder(), quiet: true });
    assert.ok(result && result.imported > 0, JSON.stringify(result));
    const projectNode = (await api.sessionsTree()).find((n) => n.label === project);
    assert.ok(projectNode, 'the project is listed');
    const [documents, ...sessions] = projectNode.children;
    assert.equal(documents.contextValue, 'documents', JSON.stringify(projectNode.children.map((n) => n.label)));
    assert.match(documents.description, /^\d+ sections? from 2 files$/);
    // By path, as the Explorer sorts them.
    assert.deepEqual(documents.children.map((f) => f.label), ['docs/caching.md', 'README.md']);
    const guide = documents.children[0];
    assert.deepEqual(guide.children.map((d) => d.label), ['Caching', 'Caching > Limits']);
    assert.ok(guide.children.every((d) => d.contextValue === 'observation' && /^document · /.test(d.description)));
    assert.ok(sessions.length > 0 && sessions.every((n) => n.id.startsWith('session:')), 'the sessions follow the documents');
  });

  it('Export Memory writes the project as JSON Lines', async () => {
    const file = path.join(os.tmpdir(), `code-memory-export-${process.pid}.jsonl`);
    const count = await vscode.commands.executeCommand<number>('codeMemory.exportMemory', { uri: vscode.Uri.file(file), allProjects: false });
    assert.ok(count > 0);
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
    assert.ok(lines.length >= count, `${lines.length} lines for ${count} records`);
    assert.ok(lines.every((l) => JSON.parse(l)));
    fs.rmSync(file);
  });
});
