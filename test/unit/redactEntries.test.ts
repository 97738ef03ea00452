// Secrets at the entry points the field rules did not cover: an observation's type and a memory's
// memory_type (refused, never stored or quoted), what errors quote back to a caller (a refused
// type, an unknown key or record kind, a line that is not JSON, a model server's endpoint and
// answer), a plugged-in summariser's answer, and the cost of the facts derived from memory text.
// Real engines and stores in temp folders, a real local HTTP server for the model servers, and
// the real stdio server.

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main';
import type { SearchHit } from '../../src/core/api';
import { registerSecret } from '../../src/core/capture/redact';
import type { Summariser } from '../../src/core/compress/summariser';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { OpenAiCompatibleEmbedder } from '../../src/core/embed/openaiCompatible';
import { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { Reranker } from '../../src/core/retrieve/rerank';
import { observeTool } from '../../src/core/tools/write';
import { filesContaining } from './diskFixture';
import { REPO_ROOT, openTestEngine, removeDir, tempDir, toolContext } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const scope: Scope = { project: 'acme/entries' };
const CLI_ENV = { CODE_MEMORY_EMBEDDER: 'hashed', CODE_MEMORY_PROJECT: '', CODE_MEMORY_TEAM_STORE: '', CODE_MEMORY_STORE: '' };

/** `code-memory <args>` through main() in this process, with `input` on stdin and `env` set for the call. */
async function runCli(args: string[], input: string, env: Record<string, string> = CLI_ENV): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const stdin = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  stdin.end(input);
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    const code = await main(args, { stdout, stderr, stdin }, new AbortController().signal);
    return { code, out, err };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

function leakedIn(dir: string, markers: string[]): string[] {
  return markers.filter((m) => filesContaining(dir, m).length > 0);
}

describe('a type or memory_type that holds a secret is refused, never stored or quoted', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;

  beforeEach(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  afterEach(async () => {
    await engine.close().catch(() => undefined);
    removeDir(dir);
  });

  it('MCP observe: a token given as the type is refused, unquoted, and nothing of it reaches the store', async () => {
    const aws = 'AKIAZQ9ENTRYTYPE1234';
    const glpat = 'glpat-Zq9EntryTypeGlpat012345';
    for (const type of [aws, glpat]) {
      const r = await observeTool.run(toolContext(engine, scope), { observations: [{ type, title: 'fine' }] });
      assert.equal(r.isError, true, r.text);
      assert.match(r.text, /^invalid_arguments: observations\.0\.type: invalid type: a type must not hold a secret/);
      assert.ok(!r.text.includes(type), r.text);
    }
    // The engine keeps the rule for callers that skip the tool schema (the capture queue, the extension, the CLI).
    await assert.rejects(engine.observe([{ type: glpat, narrative: 'no title: the type would be the title' }], scope), (e: Error) => /must not hold a secret/.test(e.message) && !e.message.includes(glpat));
    // A refused filter value is not quoted either.
    await assert.rejects(engine.search('anything', { scope, filter: { type: aws } }), (e: Error) => /must not hold a secret/.test(e.message) && !e.message.includes(aws));
    assert.equal((await engine.stats(scope)).observations, 0);
    await engine.close();
    assert.deepEqual(leakedIn(dir, [aws, glpat]), []);
  });

  it('engine.remember: a memory_type that holds a secret is refused and not stored; ordinary types still pass', async () => {
    const aws = 'AKIAZQ9ENTRYMEMTYPE1';
    await assert.rejects(engine.remember({ title: 'deploy notes', text: 'how we deploy', memory_type: aws }, scope), (e: Error) => /must not hold a secret/.test(e.message) && !e.message.includes(aws));
    const m = await engine.remember({ title: 'deploy notes', text: 'how we deploy', memory_type: 'decision' }, scope);
    assert.equal(m.memory_type, 'decision');
    const [o] = await engine.observe([{ type: 'tool:bash.run', title: 'an ordinary type with its punctuation' }], scope);
    assert.equal(o.type, 'tool:bash.run');
    await engine.close();
    assert.deepEqual(leakedIn(dir, [aws]), []);
  });

  it("a refused type is not quoted in the engine's 'capture event dropped' log; a harmless one still is", async () => {
    const logs: string[] = [];
    const logged = await MemoryEngine.open({ storeUri: path.join(dir, 'logged'), embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, logger: (m) => logs.push(m) });
    try {
      logged.enqueue({ type: 'terminal: curl -u admin:Zq9EntryEnqueuePw https://x' }, scope);
      logged.enqueue({ type: 'two words' }, scope);
      await logged.flush();
    } finally {
      await logged.close();
    }
    assert.ok(!logs.some((l) => l.includes('Zq9EntryEnqueuePw')), logs.join('\n'));
    assert.ok(logs.some((l) => /capture event dropped: invalid type: a type must not hold a secret/.test(l)), logs.join('\n'));
    assert.ok(logs.some((l) => l.includes("invalid type 'two words'")), logs.join('\n'));
  });

  it('CLI observe: a refused type that is a pasted command with a token is not echoed to stderr', async () => {
    const line = JSON.stringify({ type: 'bash export GITHUB_TOKEN=ghp_Zq9EntryStderrType0123456789abcdefghij', title: 'ran a command' });
    const r = await runCli(['observe', '--store', path.join(dir, 'cli'), '--project', scope.project], `${line}\n`);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /line 1: type: .*invalid type: a type must not hold a secret/);
    assert.ok(!r.err.includes('Zq9EntryStderrType'), r.err);
  });
});

describe('what a share sends: the type is redacted too', function () {
  this.timeout(120_000);
  let root: string;
  let alice: MemoryEngine | undefined;

  beforeEach(() => {
    root = tempDir('entries-team');
  });
  afterEach(async () => {
    await alice?.close().catch(() => undefined);
    removeDir(root);
  });

  it('a record stored with a type the rules now know as a secret is shared with the type replaced', async () => {
    // Capture refuses such a type today; a record stored before a rule knew the secret (here: a
    // secret registered after the record was written) still has it.
    const marker = 'Zq9EntryTeamTypeMarker01';
    alice = await MemoryEngine.open({
      storeUri: path.join(root, 'alice-store'),
      embedder: new HashedEmbedder(),
      maintenanceIntervalMs: 0,
      team: { uri: path.join(root, 'team'), author: 'Alice <alice@example.com>', refreshMs: 0, retryMs: 200 },
    });
    const m = await alice.remember({ title: 'Team deploy notes', text: 'Deploys go through the pipeline.', memory_type: marker }, scope);
    const unregister = registerSecret(marker);
    try {
      const preview = await alice.previewShare('memory', m.id, scope);
      assert.equal(preview.type, 'redacted');
      await alice.share('memory', m.id, scope, preview);
      await alice.syncTeam().catch(() => undefined);
      const teamDir = path.join(root, 'team');
      assert.ok(fs.existsSync(teamDir), 'the team store was written');
      assert.deepEqual(filesContaining(teamDir, marker), []);
    } finally {
      unregister();
    }
  });
});

describe('errors quote no secret the caller sent', function () {
  this.timeout(120_000);
  let dir: string;

  beforeEach(() => {
    dir = tempDir('entries-errors');
  });
  afterEach(() => removeDir(dir));

  it('an unknown key named by a secret is redacted in the tool error and on the CLI stderr; a harmless one is still named', async () => {
    const key = 'AKIAZQ9ENTRYKEYNAME1';
    const engine = await MemoryEngine.open({ storeUri: path.join(dir, 'store'), embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    try {
      const r = await observeTool.run(toolContext(engine, scope), { observations: [{ type: 'note', title: 'x', [key]: 'v', colour: 'blue' }] });
      assert.equal(r.isError, true);
      assert.ok(!r.text.includes(key), r.text);
      assert.match(r.text, /unknown argument\(s\) '\[REDACTED\]', 'colour' in observations\.0/);
    } finally {
      await engine.close();
    }
    const line = JSON.stringify({ type: 'note', title: 'x', [key]: 'v' });
    const cli = await runCli(['observe', '--store', path.join(dir, 'cli'), '--project', scope.project], `${line}\n`);
    assert.equal(cli.code, 2, cli.err);
    assert.ok(!cli.err.includes(key), cli.err);
    assert.match(cli.err, /unknown argument\(s\) '\[REDACTED\]'/);
  });

  it('CLI import: an unknown record kind is redacted in the error; a harmless one is still quoted', async () => {
    const file = path.join(dir, 'in.jsonl');
    fs.writeFileSync(file, `${JSON.stringify({ kind: 'ghp_Zq9EntryKindToken0123456789abcdefghij', record: {} })}\n`);
    const r = await runCli(['import', file, '--store', path.join(dir, 'store')], '');
    assert.notEqual(r.code, 0);
    assert.ok(!r.err.includes('Zq9EntryKindToken'), r.err);
    assert.match(r.err, /unknown record kind '\[REDACTED\]'/);
    fs.writeFileSync(file, `${JSON.stringify({ kind: 'widget', record: {} })}\n`);
    const plain = await runCli(['import', file, '--store', path.join(dir, 'store')], '');
    assert.match(plain.err, /unknown record kind 'widget'/);
  });

  it('MCP over stdio: a line that is not JSON is not quoted to stderr or to the client', async () => {
    const tsx = require.resolve('tsx/cjs');
    const child = spawn(process.execPath, ['--require', tsx, path.join(REPO_ROOT, 'src', 'cli', 'main.ts'), 'mcp', '--store', path.join(dir, 'store'), '--project', scope.project, '--embedder', 'hashed'], {
      cwd: REPO_ROOT,
      env: { ...process.env, LANCEDB_LOG: 'error', RUST_BACKTRACE: '0', CODE_MEMORY_STORE: '', CODE_MEMORY_PROJECT: '', CODE_MEMORY_TEAM_STORE: '' },
    });
    let stderr = '';
    let stdout = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stdin.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    try {
      // A short password pasted whole (V8 quotes up to 20 characters), a value that lost its
      // quotes (V8 quotes 10 characters around the error), and a cut message (a position).
      child.stdin.write('Zq9Entry#Pw-2024\n');
      child.stdin.write('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"remember","arguments":{"title":"db","text": Zq9EntryUnquoted0123}}}\n');
      child.stdin.write('{"jsonrpc":"2.0","id":8,"method":"tools/list"}}\n');
      const deadline = Date.now() + 60_000;
      while ((stdout.match(/"error"/g) ?? []).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    } finally {
      child.stdin.end();
      await Promise.race([closed, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    const errors = stdout
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string } })
      .filter((m) => m.error);
    assert.deepEqual(
      errors.map((e) => e.error!.code),
      [-32700, -32700, -32700],
      stdout,
    );
    assert.match(errors[0].error!.message, /^parse error: the line is not valid JSON/);
    assert.match(errors[2].error!.message, /^parse error: the line is not valid JSON \(at character \d+\)$/);
    for (const text of [stderr, stdout]) assert.ok(!text.includes('Zq9Entry'), text);
    assert.match(stderr, /mcp: the line is not valid JSON/);
  });
});

describe('model servers: endpoints shown without credentials, answers redacted', function () {
  this.timeout(60_000);

  const hit = (id: number): SearchHit =>
    ({ cell: { node_id: `n${id}`, source_kind: 'memory', source_id: id, title: `t${id}`, text: `text ${id}`, layer: 'L2', type: 'note', project: 'p' }, score: 0.5, distance: 0.5 }) as unknown as SearchHit;

  /** A real server on 127.0.0.1 answering every request with `answer`. */
  async function serve(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ base: string; close: () => Promise<void> }> {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => answer(req, res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    return {
      base: `http://127.0.0.1:${port}/v1`,
      close: async () => {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      },
    };
  }

  /** Answers 401 with the bearer token it was sent, as some servers' "Incorrect API key" errors do. */
  const echoKey = (req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `Incorrect API key provided: ${String(req.headers.authorization).replace(/^Bearer /, '')}` }));
  };

  it('a rerank endpoint with user:password is logged and shown without them', async () => {
    const logs: string[] = [];
    const reranker = new Reranker({ endpoint: 'http://rerank:Zq9EntryRerankPw@127.0.0.1:9/v1?api-key=Zq9EntryQueryKey', model: 'm' }, (m) => logs.push(m));
    assert.ok(!reranker.url.includes('Zq9Entry'), reranker.url);
    await reranker.rerank('a query', [hit(1), hit(2)], 2);
    assert.ok(logs.length > 0, 'a warning was logged');
    assert.ok(!logs.some((l) => l.includes('Zq9Entry')), logs.join('\n'));
    assert.match(logs[0], /Reranker http:\/\/\*\*\*@127\.0\.0\.1:9\/v1/);
  });

  it("a rerank server's error that echoes the API key is logged without it; a bad index it sends is not quoted raw", async () => {
    const apiKey = 'Zq9EntryRerankApiKey0123456789';
    const echo = await serve(echoKey);
    try {
      const logs: string[] = [];
      await new Reranker({ endpoint: echo.base, model: 'm', apiKey }, (m) => logs.push(m)).rerank('a query', [hit(1), hit(2)], 2);
      assert.ok(logs.length > 0, 'a warning was logged');
      assert.match(logs[0], /answered 401: .*Incorrect API key provided: \[REDACTED\]/);
      assert.ok(!logs.some((l) => l.includes(apiKey)), logs.join('\n'));
    } finally {
      await echo.close();
    }
    const bad = await serve((req, res) => {
      const key = String(req.headers.authorization).replace(/^Bearer /, '');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results: [{ index: key, relevance_score: 1 }, { index: 1, relevance_score: 0 }] }));
    });
    try {
      await assert.rejects(new Reranker({ endpoint: bad.base, model: 'm', apiKey }).scores('q', ['a', 'b']), (e: Error) => /bad or repeated index/.test(e.message) && !e.message.includes(apiKey));
    } finally {
      await bad.close();
    }
  });

  it('an embedding endpoint with user:password, and a server that echoes the key, leave neither in the error', async () => {
    await assert.rejects(
      OpenAiCompatibleEmbedder.create({ baseUrl: 'http://admin:Zq9EntryEmbedPw@127.0.0.1:9/v1', model: 'm' }),
      (e: Error) => /^Embedding server http:\/\/\*\*\*@127\.0\.0\.1:9\/v1\/embeddings is not reachable/.test(e.message) && !e.message.includes('Zq9EntryEmbedPw'),
    );
    const apiKey = 'Zq9EntryEmbedApiKey0123456789';
    const echo = await serve(echoKey);
    try {
      await assert.rejects(OpenAiCompatibleEmbedder.create({ baseUrl: echo.base, model: 'm', apiKey }), (e: Error) => /answered 401: .*\[REDACTED\]/.test(e.message) && !e.message.includes(apiKey));
    } finally {
      await echo.close();
    }
  });

  it('CLI: an embedding endpoint with user:password is not printed to stderr when the embedder cannot start', async () => {
    const dir = tempDir('entries-embed');
    try {
      const r = await runCli(
        ['observe', '--store', path.join(dir, 'store'), '--project', scope.project, '--embedder', 'openai', '--embedding-endpoint', 'http://admin:Zq9EntryCliEmbedPw@127.0.0.1:9/v1', '--embedding-model', 'm'],
        `${JSON.stringify({ type: 'note', title: 'hello' })}\n`,
        { ...CLI_ENV, CODE_MEMORY_EMBEDDER: '' },
      );
      assert.ok(!r.err.includes('Zq9EntryCliEmbedPw'), r.err);
    } finally {
      removeDir(dir);
    }
  });
});

describe("a plugged-in summariser's answer is redacted before it is stored", function () {
  this.timeout(120_000);

  it('every text field of the summary (and the name it gives) is redacted', async () => {
    const echoing: Summariser = {
      name: 'echo',
      async summarise() {
        return {
          request: 'rotate keys with ghp_Zq9EntrySummaryReq0123456789abcdefghij',
          learned: 'The new key is AKIAZQ9ENTRYSUMMAR12 with DB_PASSWORD=Zq9EntrySummaryPassword',
          completed: 'export OPENAI_API_KEY=sk-proj-Zq9EntrySummaryDone0123456789',
          decisions: 'Use glpat-Zq9EntrySummaryDecision012345 for CI',
          next_steps: 'curl -u admin:Zq9EntrySummaryNext https://x',
          preferences: null,
          summariser: 'model glpat-Zq9EntrySummaryName0123456789',
        };
      },
    };
    const dir = tempDir('entries-summary');
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, summariser: echoing });
    try {
      await engine.observe([{ type: 'note', title: 'rotated keys', memory_session_id: 'sum-1' }], scope);
      const summary = await engine.endSession(scope, 'sum-1', 'request');
      assert.ok(summary);
      assert.match(String(summary.learned), /The new key is \[REDACTED\] with DB_PASSWORD=\[REDACTED\]/);
      assert.equal(summary.preferences, null);
      await engine.close();
      const markers = ['Zq9EntrySummaryReq', 'AKIAZQ9ENTRYSUMMAR12', 'Zq9EntrySummaryPassword', 'Zq9EntrySummaryDone', 'Zq9EntrySummaryDecision', 'Zq9EntrySummaryNext', 'Zq9EntrySummaryName'];
      assert.deepEqual(leakedIn(dir, markers), []);
    } finally {
      await engine.close().catch(() => undefined);
      removeDir(dir);
    }
  });
});
