// The four tools read as an agent author reads their pages (the tool contracts), black-box: the
// stdio server started as the README says agents outside VS Code start it (`code-memory mcp
// --project ...`, a child process, the real MCP SDK client), over a store the test fills through
// the server itself (observe, remember) and `code-memory import-git` of a repository it makes.
// What each page promises: the advertised input schemas (names, required fields, types,
// defaults, bounds), annotations, every documented field of the answers, defaults and limits,
// error shapes, and ids of one tool taken by the tool the page says takes them. Then the same
// over the loopback HTTP server as `code-memory serve` runs it (its token, REST hydration of
// recall's node ids, the request log, the handshake session), and over records a file imported
// (`code-memory import`) whose JSON fields hold other types than capture writes: the answers
// stay under their published output schemas.
import * as assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { REPO_ROOT, makeGitRepo, removeDir, tempDir } from './mcpFixture';
import type { TestRepo } from './mcpFixture';
import { textPack } from './textPack';

const PROJECT = 'github.com/acme/conformance';
const TSX = require.resolve('tsx/cjs');
const CLI = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type CallResult = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };
type Tool = Awaited<ReturnType<Client['listTools']>>['tools'][number];
type JsonObject = Record<string, unknown>;

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--require', TSX, CLI, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 110_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('contract conformance over stdio (code-memory mcp, as an agent outside VS Code starts it)', function () {
  this.timeout(180_000);
  let store: string;
  let repo: TestRepo;
  let client: Client;
  let tools: Tool[];
  const observations: number[] = [];
  let memoryId: number;

  const call = async (name: string, args?: JsonObject): Promise<CallResult> => (await client.callTool({ name, arguments: args })) as CallResult;
  const tool = (name: string): Tool => {
    const found = tools.find((t) => t.name === name);
    assert.ok(found, `tools/list has no ${name}`);
    return found;
  };
  const props = (name: string): Record<string, JsonObject> => (tool(name).inputSchema.properties ?? {}) as Record<string, JsonObject>;
  const errorText = (r: CallResult): string => {
    assert.equal(r.isError, true, `expected a tool error, got ${JSON.stringify(r).slice(0, 300)}`);
    return r.content[0].text ?? '';
  };

  before(async () => {
    store = tempDir('conformance-store');
    repo = makeGitRepo();
    // The project's own documents, which import-git keeps for retrieve_memory's `documents`.
    mkdirSync(path.join(repo.dir, 'docs'), { recursive: true });
    writeFileSync(path.join(repo.dir, 'README.md'), '# Import wizard\n\nThe import wizard reads CSV files line by line.\n\n## Uploads\n\nFailed uploads are retried with exponential backoff, at most five attempts.\n');
    writeFileSync(path.join(repo.dir, 'docs', 'theme.md'), '# Theme\n\nDark mode is toggled in the settings page.\n');
    const git = (args: string[]): void => void execFileSync('git', args, { cwd: repo.dir, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: repo.dir } });
    git(['add', '-A']);
    git(['commit', '-q', '-m', 'Document the import wizard and the theme']);
    const env = { LANCEDB_LOG: 'error', CODE_MEMORY_STORE: store, CODE_MEMORY_EMBEDDER: 'hashed' };
    const imported = await cli(['import-git', repo.dir, '--project', PROJECT], env);
    assert.equal(imported.code, 0, imported.stderr);
    client = new Client({ name: 'conformance-agent', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--require', TSX, CLI, 'mcp', '--project', PROJECT],
        cwd: REPO_ROOT,
        env: { ...(process.env as Record<string, string>), ...env },
        stderr: 'pipe',
      }),
    );
    tools = (await client.listTools()).tools;
    const observed = await call('observe', {
      observations: [
        { type: 'edit', title: 'Switched the vector store to LanceDB', narrative: 'We replaced the SQLite vector extension with LanceDB because it runs embedded.', files_modified: ['src/core/store/store.ts'], commit_sha: 'a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0' },
        { type: 'edit', title: 'Token budgets use the o200k tokenizer', narrative: 'recall_context counts tokens with gpt-tokenizer.', files_modified: ['src/core/tokens.ts'] },
        ...Array.from({ length: 12 }, (_, i) => ({ type: 'note', title: `Vector store benchmark ${i}`, narrative: `LanceDB vector store benchmark run ${i}: search latency measured on ${i + 1} thousand cells.` })),
      ],
    });
    assert.equal(observed.isError, false, observed.content[0].text);
    observations.push(...(observed.structuredContent!.ids as number[]));
    const remembered = await call('remember', { title: 'Decision: embedded LanceDB is the vector store', text: 'The team decided to keep all memory in an embedded LanceDB vector store on the user disk.', memory_type: 'decision' });
    assert.equal(remembered.isError, false, remembered.content[0].text);
    memoryId = remembered.structuredContent!.id as number;
  });
  after(async () => {
    await client?.close();
    if (store) removeDir(store);
    if (repo) removeDir(repo.dir);
  });

  describe('tools/list as the pages publish them', () => {
    it('the four tools are listed, each with its own input schema that refuses unknown arguments', () => {
      for (const name of ['retrieve_memory', 'recall_context', 'get_observations', 'recall']) {
        const schema = tool(name).inputSchema as JsonObject;
        assert.equal(schema.type, 'object', name);
        assert.equal(schema.additionalProperties, false, `${name}: unknown arguments must be refused`);
      }
    });

    it('retrieve_memory: prompt (required string, at most 8,000 characters) and session_id (optional string) only', () => {
      const p = props('retrieve_memory');
      assert.deepEqual(Object.keys(p).sort(), ['prompt', 'session_id']);
      assert.deepEqual(tool('retrieve_memory').inputSchema.required, ['prompt']);
      assert.equal(p.prompt.type, 'string');
      assert.equal(p.prompt.maxLength, 8000);
      assert.equal(p.session_id.type, 'string');
      assert.equal(tool('retrieve_memory').annotations?.readOnlyHint, true, 'the page: read-only tool');
    });

    it('recall_context: query required; max_items integer default 8 in 1-50; max_tokens integer default 1500 in 1-12000; no output schema (text profile)', () => {
      const p = props('recall_context');
      assert.deepEqual(Object.keys(p).sort(), ['max_items', 'max_tokens', 'query']);
      assert.deepEqual(tool('recall_context').inputSchema.required, ['query']);
      assert.equal(p.query.type, 'string');
      assert.deepEqual([p.max_items.type, p.max_items.default, p.max_items.minimum, p.max_items.maximum], ['integer', 8, 1, 50]);
      assert.deepEqual([p.max_tokens.type, p.max_tokens.default, p.max_tokens.minimum, p.max_tokens.maximum], ['integer', 1500, 1, 12000]);
      assert.equal(tool('recall_context').outputSchema, undefined);
      assert.equal(tool('recall_context').annotations?.readOnlyHint, true, 'the page: it modifies nothing');
    });

    it('get_observations: ids required (integers), source default memory, project, include_suppressed default false; the page\'s output schema and Destructive hint', () => {
      const p = props('get_observations');
      assert.deepEqual(Object.keys(p).sort(), ['ids', 'include_suppressed', 'project', 'source']);
      assert.deepEqual(tool('get_observations').inputSchema.required, ['ids']);
      assert.equal(p.ids.type, 'array');
      assert.equal((p.ids.items as JsonObject).type, 'integer');
      assert.deepEqual([p.source.type, p.source.default], ['string', 'memory']);
      assert.equal(p.project.type, 'string');
      assert.deepEqual([p.include_suppressed.type, p.include_suppressed.default], ['boolean', false]);
      const out = tool('get_observations').outputSchema as JsonObject;
      assert.equal(out.title, 'ObservationDetailsOutput');
      assert.deepEqual(out.required, ['details']);
      const defs = out.$defs as Record<string, JsonObject>;
      assert.deepEqual(Object.keys(defs).sort(), ['CompressedObservationSourceOutput', 'DetailOutput', 'MemoryDetailOutput', 'MemoryTemporalFactOutput', 'ObservationDetailOutput', 'SessionSummaryDetailOutput', 'TopicTraceOutput']);
      assert.deepEqual(defs.MemoryDetailOutput.required, ['id', 'project', 'title', 'text', 'memory_type', 'created_at_epoch', 'updated_at_epoch', 'status', 'scope', 'classification', 'classification_reason', 'current_context_eligible']);
      assert.deepEqual(defs.ObservationDetailOutput.required, ['id', 'memory_session_id', 'type', 'created_at', 'created_at_epoch', 'status']);
      assert.deepEqual(defs.SessionSummaryDetailOutput.required, ['id', 'memory_session_id', 'created_at', 'created_at_epoch']);
      assert.equal(tool('get_observations').annotations?.destructiveHint, true);
    });

    it('recall: text required, k integer default 10 minimum 1, filter object; output {nodes: [{node_id, distance}]}; the page\'s annotations', () => {
      const p = props('recall');
      assert.deepEqual(Object.keys(p).sort(), ['filter', 'k', 'text']);
      assert.deepEqual(tool('recall').inputSchema.required, ['text']);
      assert.equal(p.text.type, 'string');
      assert.deepEqual([p.k.type, p.k.default, p.k.minimum], ['integer', 10, 1]);
      assert.equal(p.filter.type, 'object');
      const out = tool('recall').outputSchema as JsonObject;
      const nodes = (out.properties as Record<string, JsonObject>).nodes;
      assert.deepEqual(Object.keys((nodes.items as JsonObject).properties as JsonObject).sort(), ['distance', 'node_id']);
      const { readOnlyHint, destructiveHint, idempotentHint, openWorldHint } = tool('recall').annotations ?? {};
      assert.deepEqual({ readOnlyHint, destructiveHint, idempotentHint, openWorldHint }, { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    });
  });

  describe('recall', () => {
    it('the page\'s example request: {nodes: [{node_id: <uuid>, distance}]} nearest first, as structuredContent and as its JSON text, isError false', async () => {
      const r = await call('recall', { text: 'which vector store did we pick?', k: 3 });
      assert.equal(r.isError, false);
      const nodes = r.structuredContent!.nodes as Array<{ node_id: string; distance: number }>;
      assert.equal(nodes.length, 3);
      assert.deepEqual(JSON.parse(r.content[0].text!), r.structuredContent);
      for (const n of nodes) {
        assert.deepEqual(Object.keys(n).sort(), ['distance', 'node_id']);
        assert.match(n.node_id, UUID);
        assert.equal(typeof n.distance, 'number');
      }
      assert.deepEqual(nodes.map((n) => n.distance), [...nodes.map((n) => n.distance)].sort((a, b) => a - b));
    });

    it('k defaults to 10; a larger k returns more; k below 1, fractional or a string is invalid_arguments', async () => {
      const byDefault = (await call('recall', { text: 'LanceDB vector store benchmark' })).structuredContent!.nodes as unknown[];
      assert.equal(byDefault.length, 10);
      const more = (await call('recall', { text: 'LanceDB vector store benchmark', k: 14 })).structuredContent!.nodes as unknown[];
      assert.ok(more.length > 10, `k=14 gave ${more.length}`);
      for (const k of [0, -1, 2.5, '3']) assert.match(errorText(await call('recall', { text: 'LanceDB', k })), /^invalid_arguments: k/);
    });

    it('recall is L0 only: the remembered memory (L2) is never among its nodes, and a filter AND-s after the scope', async () => {
      const ctx = textPack(await call('recall_context', { query: 'Decision: embedded LanceDB is the vector store', max_items: 1 }));
      const memoryNode = ctx.items[0].reference;
      const nodes = (await call('recall', { text: 'Decision: embedded LanceDB is the vector store', k: 50 })).structuredContent!.nodes as Array<{ node_id: string }>;
      assert.ok(!nodes.some((n) => n.node_id === memoryNode), 'a memory (L2) answered by recall');
      const filtered = (await call('recall', { text: 'vector store', filter: { files: ['src/core/store/store.ts'] } })).structuredContent!.nodes as unknown[];
      assert.equal(filtered.length, 1);
      assert.deepEqual((await call('recall', { text: 'vector store', filter: { branch: "main' OR '1'='1" } })).structuredContent, { nodes: [] });
      assert.match(errorText(await call('recall', { text: 'vector store', filter: { type: "edit' OR 1=1 --" } })), /^invalid_arguments: filter\.type/);
      assert.match(errorText(await call('recall', { text: 'vector store', filter: { where: '1=1' } })), /^invalid_arguments: unknown argument/);
    });
  });

  describe('recall_context', () => {
    it('the literal text pack: header, Items, one Reference line per item, Context: and the body; no Budget line when nothing was dropped', async () => {
      const r = await call('recall_context', { query: 'Decision: embedded LanceDB is the vector store', max_items: 50, max_tokens: 12000 });
      const pack = textPack(r);
      const lines = pack.text.split('\n');
      assert.equal(lines[0], '### XMemo Context');
      assert.equal(lines[1], `Items: ${pack.items.length}`);
      assert.ok(!pack.text.includes('\nBudget: '), pack.text.slice(0, 400));
      assert.equal(lines[2 + pack.items.length], 'Context:');
      for (const item of pack.items) assert.match(item.reference, UUID);
    });

    it('a Budget line when items were dropped (used_items, used_tokens); the body within max_tokens', async () => {
      const pack = textPack(await call('recall_context', { query: 'LanceDB vector store benchmark', max_items: 2, max_tokens: 60 }));
      assert.ok(pack.budget, pack.text);
      assert.equal(pack.used_items, 2);
      assert.ok(pack.used_tokens <= 60);
      assert.ok(pack.budget.dropped > 0);
    });

    it('the no-match text, and out-of-range limits as errors', async () => {
      assert.equal((await call('recall_context', { query: 'zebra giraffe quantum' })).content[0].text, '### XMemo Context\nItems: 0\nNo matching XMemo memory was found.');
      for (const args of [{ max_items: 0 }, { max_items: 51 }, { max_tokens: 0 }, { max_tokens: 12001 }, { max_items: 2.5 }]) {
        assert.match(errorText(await call('recall_context', { query: 'LanceDB', ...args })), /^invalid_arguments: max_(items|tokens)/);
      }
      assert.match(errorText(await call('recall_context', { query: 'LanceDB', filter: {} })), /^invalid_arguments: unknown argument/);
    });

    it('References are the node ids recall answers for the same records', async () => {
      const pack = textPack(await call('recall_context', { query: 'Token budgets use the o200k tokenizer', max_items: 1 }));
      const nodes = (await call('recall', { text: 'Token budgets use the o200k tokenizer', k: 1 })).structuredContent!.nodes as Array<{ node_id: string }>;
      assert.equal(pack.items[0].reference, nodes[0].node_id);
    });
  });

  describe('get_observations', () => {
    let validate: (value: unknown) => boolean;
    before(() => {
      // The validator an MCP client checks structuredContent with, over the schema the page prints.
      const check = new AjvJsonSchemaValidator().getValidator(tool('get_observations').outputSchema as never);
      validate = (value) => check(value).valid;
    });

    it('ids from observe (source observation) and from remember (the default source) return details valid under the page\'s schema, in the order asked', async () => {
      const asked = [observations[1], observations[0]];
      const obs = await call('get_observations', { ids: asked, source: 'observation' });
      assert.equal(obs.isError, false, obs.content[0].text);
      assert.ok(validate(obs.structuredContent), JSON.stringify(obs.structuredContent).slice(0, 300));
      assert.deepEqual((obs.structuredContent!.details as JsonObject[]).map((d) => d.id), asked);
      for (const d of obs.structuredContent!.details as JsonObject[]) assert.equal(typeof d.last_accessed_epoch, 'number', 'access is recorded');
      const mem = await call('get_observations', { ids: [memoryId] });
      assert.equal(mem.isError, false, mem.content[0].text);
      assert.ok(validate(mem.structuredContent));
      assert.deepEqual(JSON.parse(mem.content[0].text!), mem.structuredContent);
      assert.equal((mem.structuredContent!.details as JsonObject[])[0].memory_type, 'decision');
    });

    it('a missing id, an unknown source and bad arguments are tool errors', async () => {
      assert.match(errorText(await call('get_observations', { ids: [memoryId, 987654] })), /^not_found: .*987654/);
      assert.match(errorText(await call('get_observations', { ids: [observations[0]] })), /^not_found/, 'an observation id is no memory id');
      assert.match(errorText(await call('get_observations', { ids: [memoryId], source: 'memories' })), /^invalid_source/);
      assert.match(errorText(await call('get_observations', {})), /^invalid_arguments: ids/);
      assert.match(errorText(await call('get_observations', { ids: ['1'] })), /^invalid_arguments: ids/);
      assert.match(errorText(await call('get_observations', { ids: [memoryId], limit: 3 })), /^invalid_arguments: unknown argument/);
    });
  });

  describe('retrieve_memory', () => {
    it('structuredContent holds every documented field; content text is content_text; facts point at records get_observations returns', async () => {
      const r = await call('retrieve_memory', { prompt: 'Which vector store did we pick, and why?', session_id: 'cursor-thread-k7m2p' });
      assert.equal(r.isError, false, r.content[0].text);
      const s = r.structuredContent!;
      assert.equal(s.status, 'ok');
      assert.equal(typeof s.memory_ready, 'boolean');
      assert.equal(typeof s.readiness_state, 'string');
      assert.equal(s.content_text, r.content[0].text);
      assert.equal(r.content.length, 1);
      assert.equal(r.content[0].type, 'text');
      for (const key of ['triage', 'phase1', 'retrieval', 'diagnostics']) assert.equal(typeof s[key], 'object', key);
      const retrieval = s.retrieval as JsonObject;
      for (const key of ['facts', 'entities', 'relationships', 'documents']) assert.ok(Array.isArray(retrieval[key]), key);
      assert.equal(typeof retrieval.context_summary, 'string');
      assert.equal(typeof retrieval.total_items, 'number');
      assert.equal(typeof retrieval.avg_relevance_score, 'number');
      assert.equal(typeof retrieval.coverage_assessment, 'string');
      const facts = retrieval.facts as Array<{ statement: string; relevance_score: number; source_path: string }>;
      assert.ok(facts.length > 0);
      for (const f of facts) {
        const [, source, id] = /^(memory|observation|session_summary)\/(\d+)$/.exec(f.source_path) ?? [];
        assert.ok(source, f.source_path);
        const detail = await call('get_observations', { ids: [Number(id)], source });
        assert.equal(detail.isError, false, `${f.source_path}: ${detail.content[0].text}`);
      }
      assert.match((s.diagnostics as JsonObject).request_id as string, UUID);
    });

    it('documents are relevant excerpts: a prompt about nothing in the store gets none, and a document sharing nothing with the prompt is not among them', async () => {
      // The page: documents are "Relevant document excerpts"; the README: hits below the relevance
      // floor (0.05) do not count as matches, in retrieve_memory as in recall_context.
      const none = await call('retrieve_memory', { prompt: 'zebra giraffe quantum' });
      const retrieval = none.structuredContent!.retrieval as { facts: unknown[]; documents: Array<{ title: string }>; coverage_assessment: string };
      assert.equal(retrieval.facts.length, 0);
      assert.deepEqual(retrieval.documents.map((d) => d.title), [], 'documents answered for a prompt nothing matches');
      assert.doesNotMatch(none.content[0].text!, /## Documents/);
      const asked = await call('retrieve_memory', { prompt: 'How are failed uploads retried?' });
      const documents = (asked.structuredContent!.retrieval as { documents: Array<{ title: string; source_path: string }> }).documents;
      assert.ok(documents.some((d) => d.title.startsWith('Import wizard > Uploads')), JSON.stringify(documents));
      assert.ok(!documents.some((d) => d.title.startsWith('Theme')), `a document about the theme answered for a question about uploads: ${JSON.stringify(documents)}`);
      // A document's source_path names its record as a fact's does.
      for (const d of documents) {
        const [, source, id] = /^(memory|observation|session_summary)\/(\d+)$/.exec(d.source_path) ?? [];
        assert.ok(source, d.source_path);
        assert.equal((await call('get_observations', { ids: [Number(id)], source })).isError, false, d.source_path);
      }
    });

    it('anything but prompt and session_id, no prompt, or a prompt over 8,000 characters: status error, invalid_arguments', async () => {
      for (const args of [{ prompt: 'x', k: 3 }, {}, { prompt: 'x'.repeat(8001) }, { prompt: 'x', session_id: 7 }]) {
        const r = await call('retrieve_memory', args);
        assert.equal(r.isError, true);
        assert.equal(r.structuredContent?.status, 'error');
        assert.equal(r.structuredContent?.error_code, 'invalid_arguments');
        assert.equal(typeof r.structuredContent?.error_message, 'string');
      }
      assert.equal((await call('retrieve_memory', { prompt: 'x'.repeat(8000) })).structuredContent?.status, 'ok');
    });
  });
});

describe('contract conformance over the loopback HTTP server (code-memory serve, with its token)', function () {
  this.timeout(180_000);
  let store: string;
  let child: ChildProcess;
  let url: string;
  let token: string;
  let client: Client;
  const call = async (name: string, args?: JsonObject, c = client): Promise<CallResult> => (await c.callTool({ name, arguments: args })) as CallResult;
  const connect = async (): Promise<Client> => {
    const c = new Client({ name: 'conformance-agent', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    return c;
  };
  const rest = async (route: string): Promise<{ status: number; body: JsonObject }> => {
    const reply = await fetch(new URL(route, url), { headers: { Authorization: `Bearer ${token}` } });
    return { status: reply.status, body: (await reply.json()) as JsonObject };
  };

  before(async () => {
    store = tempDir('conformance-serve');
    child = spawn(process.execPath, ['--require', TSX, CLI, 'serve', '--store', store, '--project', PROJECT, '--embedder', 'hashed'], {
      cwd: REPO_ROOT,
      env: { ...process.env, LANCEDB_LOG: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The README: it prints the URL and where the token is (server.json in the store folder).
    let printed = '';
    url = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        printed += chunk.toString();
        const found = /url:\s+(\S+)/.exec(printed);
        if (found && printed.includes('token:')) resolve(found[1]);
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${printed}`)));
    });
    token = (JSON.parse(readFileSync(path.join(store, 'server.json'), 'utf8')) as { token: string }).token;
    client = await connect();
    const observed = await call('observe', {
      observations: [
        { type: 'edit', title: 'Switched the vector store to LanceDB', narrative: 'We replaced the SQLite vector extension with LanceDB because it runs embedded.', files_modified: ['src/core/store/store.ts'] },
        { type: 'edit', title: 'Retry failed uploads with exponential backoff', narrative: 'Uploads are retried five times.', files_modified: ['src/net/retry.ts'] },
      ],
    });
    assert.equal(observed.isError, false, observed.content[0].text);
    assert.equal((await call('remember', { title: 'Decision: LanceDB is the vector store', text: 'Keep memory in an embedded LanceDB vector store.', memory_type: 'decision' })).isError, false);
  });
  after(async () => {
    await client?.close();
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    if (store) removeDir(store);
  });

  it('no token or a wrong one: 401', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    for (const headers of [{}, { Authorization: 'Bearer wrong' }] as Array<Record<string, string>>) {
      const reply = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers }, body });
      assert.equal(reply.status, 401);
    }
  });

  it('recall\'s node ids and recall_context\'s references hydrate through GET /v1/nodes/{id}, the surface the recall page names', async () => {
    const nodes = (await call('recall', { text: 'vector store', k: 5 })).structuredContent!.nodes as Array<{ node_id: string }>;
    assert.ok(nodes.length > 0);
    for (const { node_id } of nodes) {
      const reply = await rest(`/v1/nodes/${node_id}`);
      assert.equal(reply.status, 200, node_id);
      assert.equal((reply.body.cell as JsonObject).layer, 'L0');
    }
    const pack = textPack(await call('recall_context', { query: 'vector store' }));
    assert.ok(pack.items.length > 1);
    for (const item of pack.items) assert.equal((await rest(`/v1/nodes/${item.reference}`)).status, 200, item.reference);
  });

  it('every retrieve_memory call is in the request log with its full prompt and response, under the request_id of its diagnostics', async () => {
    const prompt = `Which vector store did we pick? ${'(long prompt) '.repeat(400)}`.slice(0, 8000);
    const r = await call('retrieve_memory', { prompt, session_id: 'log-check' });
    assert.equal(r.structuredContent?.status, 'ok');
    const refused = await call('retrieve_memory', { prompt: 'x', limit: 3 });
    assert.equal(refused.structuredContent?.error_code, 'invalid_arguments');
    const requests = (await rest('/v1/dev/mcp-requests?limit=50')).body.requests as Array<{ request_id: string; status: string; arguments: string; response: string }>;
    assert.equal(requests[0].status, 'error', 'newest first');
    assert.deepEqual(JSON.parse(requests[0].response), refused.structuredContent);
    const logged = requests.find((q) => q.request_id === (r.structuredContent!.diagnostics as JsonObject).request_id);
    assert.ok(logged, 'the call is not in the request log under its request_id');
    assert.equal((JSON.parse(logged.arguments) as JsonObject).prompt, prompt);
    assert.deepEqual(JSON.parse(logged.response), r.structuredContent);
  });

  it('session: without session_id the handshake session holds the prompts; an explicit session_id overrides it for that call', async () => {
    const first = await connect();
    const second = await connect();
    try {
      await call('retrieve_memory', { prompt: 'How are failed uploads retried?' }, first);
      // Another connection of the same account, no session_id: the handshake session, whose last prompt is the one above.
      const followUp = await call('retrieve_memory', { prompt: 'and why?' }, second);
      assert.match((followUp.structuredContent!.triage as JsonObject).rewritten_query as string, /failed uploads/);
      const own = await call('retrieve_memory', { prompt: 'and why?', session_id: 'tab-without-history' }, second);
      assert.equal((own.structuredContent!.triage as JsonObject).rewritten_query, 'and why?');
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('contract conformance over records imported from a file (code-memory import)', function () {
  this.timeout(180_000);
  const dirs: string[] = [];
  let client: Client;
  let memoryId: number;
  let validate: (value: unknown) => boolean;
  const call = async (name: string, args?: JsonObject): Promise<CallResult> => (await client.callTool({ name, arguments: args })) as CallResult;

  before(async () => {
    // An export of a store with a git import (graph entities) and a memory, then lines as another
    // version or a hand edit may write them: JSON fields whose values have other types.
    const source = tempDir('conformance-export');
    const target = tempDir('conformance-import');
    const repo = makeGitRepo();
    dirs.push(source, target, repo.dir);
    const env = { LANCEDB_LOG: 'error', CODE_MEMORY_EMBEDDER: 'hashed' };
    assert.equal((await cli(['import-git', repo.dir, '--project', PROJECT, '--store', source], env)).code, 0);
    const file = path.join(source, 'export.jsonl');
    assert.equal((await cli(['export', '--project', PROJECT, '--store', source, '--out', file], env)).code, 0);
    const fact = { project: PROJECT, subject: 'vector store', predicate: 'is', object: 'LanceDB', learned_at_epoch: 1, confidence: 0.9, status: 'current', valid_from_epoch: null, valid_to_epoch: null };
    const memory = {
      id: 900, project: PROJECT, title: 'Decision: LanceDB is the vector store', text: 'Keep memory in an embedded LanceDB vector store.', memory_type: 'decision',
      created_at_epoch: 1_700_000_000_000, updated_at_epoch: 1_700_000_000_000, status: 'active', scope: 'project',
      classification: 'decision', classification_reason: 'saved explicitly', current_context_eligible: true,
      temporal_facts: JSON.stringify([fact, { ...fact, subject: 42, confidence: 'high' }]),
      topic_trace: JSON.stringify([{ id: 900, topic_key: 'vector-store' }]),
    };
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const parsed = JSON.parse(line) as { kind: string; record: JsonObject };
        if (parsed.kind === 'entity' && String(parsed.record.id).startsWith('commit:')) parsed.record.properties = JSON.stringify({ title: 'A commit', files: 3, tags: ['a'] });
        return JSON.stringify(parsed);
      });
    lines.push(JSON.stringify({ kind: 'memory', record: memory }));
    writeFileSync(file, `${lines.join('\n')}\n`);
    const imported = await cli(['import', file, '--store', target], env);
    assert.equal(imported.code, 0, imported.stderr);
    client = new Client({ name: 'conformance-agent', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: ['--require', TSX, CLI, 'mcp', '--project', PROJECT, '--store', target], cwd: REPO_ROOT, env: { ...(process.env as Record<string, string>), ...env }, stderr: 'pipe' }),
    );
    const tool = (await client.listTools()).tools.find((t) => t.name === 'get_observations')!;
    const check = new AjvJsonSchemaValidator().getValidator(tool.outputSchema as never);
    validate = (value) => check(value).valid;
    const pack = textPack(await call('recall_context', { query: 'Decision: LanceDB is the vector store', max_items: 1 }));
    memoryId = Number(/^memory\/(\d+)$/.exec(pack.items[0].location)?.[1]);
    assert.ok(memoryId > 0, pack.text);
  });
  after(async () => {
    await client?.close();
    for (const dir of dirs) removeDir(dir);
  });

  it('retrieve_memory: entities\' properties are strings whatever an imported graph holds (an answer under its own output schema)', async () => {
    const r = await call('retrieve_memory', { prompt: 'Retry failed uploads with exponential backoff' });
    assert.equal(r.isError, false, r.content[0].text);
    const entities = (r.structuredContent!.retrieval as { entities: Array<{ label: string; properties: JsonObject }> }).entities;
    const commit = entities.find((e) => e.properties.title === 'A commit');
    assert.ok(commit, JSON.stringify(entities));
    for (const value of Object.values(commit.properties)) assert.equal(typeof value, 'string');
  });

  it('get_observations: a memory whose imported temporal facts or topic trace have other shapes still answers exactly per the page\'s schema', async () => {
    const r = await call('get_observations', { ids: [memoryId] });
    assert.equal(r.isError, false, r.content[0].text);
    assert.ok(validate(r.structuredContent), JSON.stringify(r.structuredContent));
    const [detail] = r.structuredContent!.details as Array<{ temporal_facts: Array<{ subject: string }> | null }>;
    assert.deepEqual(detail.temporal_facts?.map((f) => f.subject), ['vector store'], 'the well-formed fact is kept');
  });
});
