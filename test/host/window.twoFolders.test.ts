// A window of two repositories of different projects, inside a real VS Code (runCodeServer.mjs
// opens a .code-workspace file of two folders, each a git repository with its own remote): each
// folder is its own project, each project has its own MCP server, and neither server, nor the
// Memories view, nor capture lets one project's memory reach the other's. The servers are driven
// by the real MCP SDK client over HTTP with their tokens, and recall's node ids read back through
// the REST route an agent hydrates them with; the language-model tools answer from the active file's project.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as vscode from 'vscode';
import type { Memory, Observation, Scope } from '../../src/core/model/records';
import type { CodeMemoryExtensionApi } from '../../src/extension/extension';
import type { TreeSnapshot } from '../../src/extension/views/snapshot';
import { codeMemoryApi, sleep, waitFor } from './helpers';

interface Side {
  folder: vscode.WorkspaceFolder;
  scope: Scope;
  memory: Memory;
  /** What recall finds: it ranks observations (L0). */
  observation: Observation;
}

/** Every label under `nodes`, depth first. */
function labels(nodes: TreeSnapshot[]): string[] {
  return nodes.flatMap((n) => [String(n.label), ...labels(n.children)]);
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'host-test-two-folders', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

describe('a window of two repositories (inside the VS Code host)', function () {
  this.timeout(180_000);
  let api: CodeMemoryExtensionApi;
  let sides: [Side, Side];

  before(async () => {
    api = await codeMemoryApi();
    const folders = vscode.workspace.workspaceFolders ?? [];
    assert.deepEqual(
      folders.map((f) => f.name),
      ['alpha', 'beta'],
    );
    await api.gitReady();
    const engine = await api.engine();
    const made: Side[] = [];
    for (const folder of folders) {
      const scope = await api.scopeFor(folder.uri);
      assert.ok(scope, `${folder.name} has a project`);
      // The same rare word in both, so that a search by it finds either if the scope let it.
      const memory = await engine.remember({ memory_type: 'decision', title: `${folder.name} caches quokka tiles in Redis`, text: `The ${folder.name} service caches quokka map tiles in Redis for ten minutes.` }, { project: scope.project });
      const [observation] = await engine.observe([{ type: 'note', title: `${folder.name} quokka tiles moved to the Redis cache`, narrative: `Moved the quokka map tile cache of ${folder.name} to Redis.` }], { project: scope.project });
      made.push({ folder, scope: { project: scope.project }, memory, observation });
    }
    sides = made as [Side, Side];
  });

  it('each folder is a project of its own, with a server of its own', async () => {
    const [alpha, beta] = sides;
    assert.notEqual(alpha.scope.project, beta.scope.project);
    assert.match(alpha.scope.project, /acme\/alpha$/);
    assert.match(beta.scope.project, /acme\/beta$/);
    const servers = await Promise.all(sides.map((s) => api.mcpServer(s.folder.uri)));
    assert.deepEqual(
      servers.map((s) => s.project),
      [alpha.scope.project, beta.scope.project],
    );
    assert.notEqual(servers[0].url, servers[1].url);
    assert.notEqual(servers[0].token, servers[1].token);
    // One project's token opens no other project's server.
    const crossed = await fetch(servers[0].url, { method: 'POST', headers: { 'content-type': 'application/json', Authorization: `Bearer ${servers[1].token}` }, body: '{}' });
    assert.equal(crossed.status, 401);
  });

  for (const [own, other] of [
    [0, 1],
    [1, 0],
  ] as const) {
    it(`the ${own === 0 ? 'first' : 'second'} folder's server answers with its project's memory only, through every tool`, async () => {
      const mine = sides[own];
      const theirs = sides[other];
      const { url, token } = await api.mcpServer(mine.folder.uri);
      const client = await connect(url, token);
      try {
        const query = 'where are the quokka map tiles cached';
        const retrieved = JSON.stringify(await client.callTool({ name: 'retrieve_memory', arguments: { prompt: query } }));
        assert.ok(retrieved.includes(mine.memory.title), retrieved.slice(0, 2000));
        assert.ok(!retrieved.includes(theirs.memory.title), 'retrieve_memory gave the other project');

        const context = JSON.stringify(await client.callTool({ name: 'recall_context', arguments: { query, max_items: 10 } }));
        assert.ok(context.includes(mine.memory.title), context.slice(0, 2000));
        assert.ok(!context.includes(theirs.memory.title), 'recall_context gave the other project');

        const recalled = await client.callTool({ name: 'recall', arguments: { text: query, k: 10 } });
        const nodes = (recalled.structuredContent as { nodes: { node_id: string }[] }).nodes;
        assert.ok(nodes.length > 0, JSON.stringify(recalled));
        const origin = new URL(url).origin;
        const hydrated: string[] = [];
        for (const { node_id } of nodes) {
          const res = await fetch(`${origin}/v1/nodes/${encodeURIComponent(node_id)}`, { headers: { Authorization: `Bearer ${token}` } });
          assert.equal(res.status, 200, `node ${node_id}`);
          hydrated.push(await res.text());
        }
        assert.ok(hydrated.some((h) => h.includes(mine.observation.title ?? '?')), hydrated.join('\n').slice(0, 2000));
        assert.ok(!hydrated.some((h) => h.includes(theirs.observation.title ?? '?') || h.includes(theirs.memory.title)), 'recall gave a node of the other project');

        // By id, and naming the other project: nothing of it.
        const own = JSON.stringify(await client.callTool({ name: 'get_observations', arguments: { ids: [mine.memory.id], source: 'memory' } }));
        assert.ok(own.includes(mine.memory.title), own);
        for (const [id, source, title] of [
          [theirs.memory.id, 'memory', theirs.memory.title],
          [theirs.observation.id, 'observation', theirs.observation.title ?? '?'],
        ] as const) {
          for (const args of [{ ids: [id], source }, { ids: [id], source, project: theirs.scope.project }]) {
            const got = JSON.stringify(await client.callTool({ name: 'get_observations', arguments: args }));
            assert.ok(!got.includes(title), `get_observations ${JSON.stringify(args)}: ${got}`);
          }
        }
        // The other project's node ids, as its own server hands them out, read through this one's route.
        const elsewhere = await api.mcpServer(theirs.folder.uri);
        const theirClient = await connect(elsewhere.url, elsewhere.token);
        try {
          const theirNodes = ((await theirClient.callTool({ name: 'recall', arguments: { text: query, k: 10 } })).structuredContent as { nodes: { node_id: string }[] }).nodes;
          assert.ok(theirNodes.length > 0, 'control: the other server recalls its own');
          for (const { node_id } of theirNodes) {
            const res = await fetch(`${origin}/v1/nodes/${encodeURIComponent(node_id)}`, { headers: { Authorization: `Bearer ${token}` } });
            const body = await res.text();
            assert.notEqual(res.status, 200, `node ${node_id}: ${body}`);
            assert.ok(!body.includes(theirs.observation.title ?? '?') && !body.includes(theirs.memory.title), body);
          }
        } finally {
          await theirClient.close();
        }
      } finally {
        await client.close();
      }
    });
  }

  it('the Memories view shows each project under its own node, with its own memories', async () => {
    const tree = await waitFor('a node per project', async () => {
      const t = await api.memoriesTree();
      return t.length === 2 ? t : undefined;
    });
    for (const [i, side] of sides.entries()) {
      const node = tree.find((n) => labels([n]).includes(side.memory.title));
      assert.ok(node, `${side.memory.title} in ${JSON.stringify(labels(tree))}`);
      assert.ok(!labels([node]).includes(sides[1 - i].memory.title), `the node of ${side.folder.name} holds the other's memory`);
    }
  });

  it("what is edited in one folder is captured in that folder's project only", async () => {
    const [alpha, beta] = sides;
    const file = path.join(beta.folder.uri.fsPath, 'index.js');
    const editor = await vscode.window.showTextDocument(vscode.Uri.file(file));
    const end = editor.document.lineAt(editor.document.lineCount - 1).range.end;
    await editor.edit((b) => b.insert(end, '\nexport function wombatTiles(zoom) {\n  return 4 ** zoom;\n}\n'));
    await waitFor('index.js to be saved', async () => (await editor.document.save()) || !editor.document.isDirty, 20_000);
    assert.match(fs.readFileSync(file, 'utf8'), /wombatTiles/);
    await sleep(300);
    await api.flushCapture();
    const engine = await api.engine();
    const mentions = (o: { files_modified: string | null; title: string | null; narrative?: string | null }): boolean => `${o.files_modified ?? ''} ${o.title ?? ''} ${o.narrative ?? ''}`.includes('index.js');
    await waitFor('the edit in the second folder', async () => (await engine.listObservations(beta.scope, { limit: 500 })).some(mentions), 30_000);
    const inAlpha = await engine.listObservations(alpha.scope, { limit: 500 });
    assert.ok(!inAlpha.some(mentions), `the first folder's project got the edit: ${JSON.stringify(inAlpha.map((o) => o.title))}`);
  });

  it("the language-model tools answer from the active file's project", async () => {
    for (const [i, side] of sides.entries()) {
      await vscode.window.showTextDocument(vscode.Uri.file(path.join(side.folder.uri.fsPath, 'README.md')));
      const result = await vscode.lm.invokeTool('codeMemory_recall_context', { input: { query: 'where are the quokka map tiles cached', max_items: 10 }, toolInvocationToken: undefined });
      const text = result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
      assert.ok(text.includes(side.memory.title), text);
      assert.ok(!text.includes(sides[1 - i].memory.title), `with ${side.folder.name}'s file active the tool answered from the other project: ${text}`);
    }
  });
});
