// Capture inside a real VS Code: open, edit and save files, let another process create one,
// commit and switch branch in the workspace's git repository; then find the observations
// through the extension's API, through the MCP server the extension runs (a real SDK client
// over HTTP with the token), and through the language-model tools it registered.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as vscode from 'vscode';
import type { Observation } from '../../src/core/model/records';
import type { CodeMemoryExtensionApi } from '../../src/extension/extension';
import { codeMemoryApi, parseList, sleep, waitFor, workspaceFolder } from './helpers';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, '-c', 'user.name=Host Test', '-c', 'user.email=host@test.invalid', ...args], { encoding: 'utf8' }).trim();
}

describe('capture in the editor (inside the VS Code host)', function () {
  this.timeout(180_000);
  let api: CodeMemoryExtensionApi;
  let root: string;
  let project: string;
  let commitSha: string;
  let all: Observation[] = [];

  before(async () => {
    api = await codeMemoryApi();
    root = workspaceFolder().uri.fsPath;
    await api.gitReady();
    const scope = await api.scopeFor(workspaceFolder().uri);
    assert.ok(scope, 'the workspace folder has a project scope');
    project = scope.project;
  });

  it('activates without loading LanceDB or the embedding model', () => {
    console.log(`      activation took ${api.activationMs.toFixed(1)} ms; engine open: ${api.isEngineOpen()}`);
    assert.deepEqual(api.heavyModulesAtActivation, []);
    assert.ok(api.activationMs < 1000, `activation took ${api.activationMs} ms`);
  });

  it('records files read, edited and saved, and created by another process', async () => {
    const indexUri = vscode.Uri.file(path.join(root, 'index.js'));
    const readmeUri = vscode.Uri.file(path.join(root, 'README.md'));
    const editor = await vscode.window.showTextDocument(indexUri);
    await sleep(1500); // focus long enough to count as reading
    await vscode.window.showTextDocument(readmeUri);
    await sleep(300);
    // The read is written now: a read and an edit of one file written together are one edit
    // (observationBuilder.ts), and the queue gathers what comes within 1.5 s of its first event.
    await api.flushCapture();

    const again = await vscode.window.showTextDocument(indexUri);
    assert.equal(again.document.uri.toString(), editor.document.uri.toString());
    const end = again.document.lineAt(again.document.lineCount - 1).range.end;
    await again.edit((b) => b.insert(end, '\nexport function multiplyMatrices(a, b) {\n  return a.map((row) => row.map((_, j) => row.reduce((s, x, k) => s + x * b[k][j], 0)));\n}\n'));
    fs.writeFileSync(path.join(root, 'notes.txt'), 'written by another process\n');
    // A loaded machine can time out other extensions' save participants; saving again is what a user would do.
    await waitFor('index.js to be saved', async () => (await again.document.save()) || !again.document.isDirty, 20_000);

    fs.writeFileSync(path.join(root, '.env.local'), 'API_KEY=do-not-capture\n');
    await waitFor('the watcher to report notes.txt', async () => {
      await api.flushCapture();
      const o = await (await api.engine()).listObservations({ project }, { limit: 500 });
      return o.some((x) => x.type === 'create' && parseList(x.files_modified).includes('notes.txt'));
    });

    const engine = await api.engine();
    all = await engine.listObservations({ project }, { limit: 500 });
    const read = all.find((o) => o.type === 'read' && parseList(o.files_read).includes('index.js'));
    assert.ok(read, `a read of index.js among: ${all.map((o) => o.title).join(' | ')}`);
    const edit = all.find((o) => o.type === 'edit' && parseList(o.files_modified).includes('index.js'));
    assert.ok(edit, 'an edit of index.js');
    assert.match(edit.title ?? '', /Edited index\.js/);
    assert.ok(!all.some((o) => JSON.stringify(o).includes('.env.local')), 'the excluded .env.local was never captured');
    assert.ok(all.every((o) => o.project === project));
  });

  it('records a commit and a branch switch from the Git extension', async () => {
    const before = api.headOf(workspaceFolder().uri)?.sha;
    git(root, 'add', 'index.js', 'notes.txt');
    git(root, 'commit', '-q', '-m', 'Add matrix multiplication helper');
    commitSha = git(root, 'rev-parse', 'HEAD');
    assert.notEqual(commitSha, before);
    await waitFor('the Git extension to see the commit', () => api.headOf(workspaceFolder().uri)?.sha === commitSha, 60_000);

    git(root, 'checkout', '-q', '-b', 'feature/host-test');
    await waitFor('the Git extension to see the new branch', () => api.headOf(workspaceFolder().uri)?.branch === 'feature/host-test', 60_000);
    await api.flushCapture();

    const engine = await api.engine();
    const observations = await waitFor('commit and checkout observations', async () => {
      await api.flushCapture();
      const o = await engine.listObservations({ project }, { limit: 500 });
      return o.some((x) => x.type === 'commit' && x.commit_sha === commitSha) && o.some((x) => x.type === 'checkout' && x.branch === 'feature/host-test') ? o : undefined;
    });
    const commit = observations.find((o) => o.type === 'commit' && o.commit_sha === commitSha);
    assert.ok(commit);
    assert.equal(commit.title, 'Add matrix multiplication helper');
    assert.equal(commit.branch, 'main');
    assert.deepEqual(parseList(commit.files_modified).sort(), ['index.js', 'notes.txt']);
    const checkout = observations.find((o) => o.type === 'checkout');
    assert.ok(checkout);
    assert.match(checkout.title ?? '', /feature\/host-test/);

    // The branch switch started a new session: the commit and the checkout are in different ones.
    assert.notEqual(commit.memory_session_id, checkout.memory_session_id);
    const sessions = await engine.listSessions({ project });
    assert.ok(sessions.some((s) => s.branch === 'main') && sessions.some((s) => s.branch === 'feature/host-test'), JSON.stringify(sessions.map((s) => s.branch)));
  });

  it('keeps event handlers cheap', () => {
    const s = api.captureStats();
    console.log(`      ${s.events} events, handler ${((s.handlerMs / s.handlerCalls) * 1000).toFixed(1)} µs/call over ${s.handlerCalls} calls (max ${s.handlerMaxMs.toFixed(2)} ms), ${s.drains} writes, ${s.observations} observations`);
    assert.ok(s.events > 0 && s.drains > 0);
    assert.equal(s.errors, 0, s.lastError ?? '');
  });

  it('finds the captured work through the extension API search', async () => {
    const engine = await api.engine();
    const hits = await engine.search('matrix multiplication helper', { scope: { project }, limit: 10 });
    assert.ok(hits.length > 0, 'search returned nothing');
    assert.ok(
      hits.some((h) => h.cell.commit_sha === commitSha || (h.cell.files ?? '').includes('index.js')),
      hits.map((h) => h.cell.title).join(' | '),
    );
  });

  it('serves the same observations through the MCP server the extension registered', async () => {
    assert.equal(api.mcpDefinitionProviderRegistered, true, 'the MCP server definition provider is registered');
    const { url, token } = await api.mcpServer();
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/v1\/mcp\/memory$/);

    const unauthenticated = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(unauthenticated.status, 401);

    const client = new Client({ name: 'host-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const name of ['retrieve_memory', 'recall_context', 'get_observations', 'recall']) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);

      const pack = await client.callTool({ name: 'recall_context', arguments: { query: 'matrix multiplication helper in index.js', max_items: 5 } });
      const text = (pack.content as { type: string; text: string }[])[0].text;
      assert.match(text, /^### XMemo Context/);
      assert.match(text, /index\.js/);

      const engine = await api.engine();
      const commit = (await engine.listObservations({ project }, { limit: 500 })).find((o) => o.commit_sha === commitSha);
      assert.ok(commit);
      const details = await client.callTool({ name: 'get_observations', arguments: { ids: [commit.id], source: 'observation' } });
      assert.notEqual(details.isError, true, JSON.stringify(details.content));
      const structured = details.structuredContent as { details: Observation[] };
      assert.equal(structured.details[0].commit_sha, commitSha);
    } finally {
      await client.close();
    }
  });

  it('offers the tools as language-model tools', async () => {
    const names = vscode.lm.tools.map((t) => t.name);
    assert.ok(names.includes('codeMemory_recall_context'), names.join(', '));
    const result = await vscode.lm.invokeTool('codeMemory_recall_context', { input: { query: 'matrix multiplication', max_items: 3 }, toolInvocationToken: undefined });
    const text = result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
    assert.match(text, /### XMemo Context/);
  });
});
