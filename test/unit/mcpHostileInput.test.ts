// Hostile input at the edges the SDK owns: argument names its request parsing mangles, a stdio line
// over its buffer or not JSON at all, signals while a client holds stdin open, a damaged store.

import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { readdirSync, statSync, truncateSync } from 'node:fs';
import * as path from 'node:path';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { findTool } from '../../src/core/tools/registry';
import { retrieveMemoryTool } from '../../src/core/tools/retrieveMemory';
import { observe, observeTool, rememberTool } from '../../src/core/tools/write';
import { createMcpServer } from '../../src/mcp/mcpServer';
import { runMain } from './cliInProcess';
import { REPO_ROOT, openTestEngine, removeDir, seed, tempDir, toolContext } from './mcpFixture';

const scope: Scope = { project: 'github.com/acme/app' };
const other: Scope = { project: 'github.com/evil/other' };
const TSX = require.resolve('tsx/cjs');
const CLI = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');

interface StdioChild {
  child: ChildProcessWithoutNullStreams;
  replies: Array<{ id?: number | null; result?: unknown; error?: unknown }>;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  send: (message: unknown) => void;
  waitFor: (id: number, ms: number) => Promise<boolean>;
}

/** `code-memory mcp` as a child speaking raw JSON-RPC lines, so that any line can be sent. */
function startStdio(store: string): StdioChild {
  const child = spawn(process.execPath, ['--require', TSX, CLI, 'mcp', '--store', store, '--project', scope.project, '--embedder', 'hashed'], {
    cwd: REPO_ROOT,
    env: { ...process.env, LANCEDB_LOG: 'error', RUST_BACKTRACE: '0' },
  });
  const replies: StdioChild['replies'] = [];
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    let nl: number;
    while ((nl = out.indexOf('\n')) >= 0) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      if (line.trim()) replies.push(JSON.parse(line) as StdioChild['replies'][number]);
    }
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdin.on('error', () => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const send = (message: unknown): void => {
    child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  };
  const waitFor = async (id: number, ms: number): Promise<boolean> => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (replies.some((r) => r.id === id)) return true;
      if (child.exitCode !== null || child.signalCode !== null) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  };
  return { child, replies, stderr: () => err, exited, send, waitFor };
}

async function initialize(s: StdioChild): Promise<void> {
  s.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } });
  assert.ok(await s.waitFor(1, 60_000), `no initialize answer; stderr: ${s.stderr()}`);
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

async function stop(s: StdioChild): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  s.child.stdin.end();
  const done = await Promise.race([s.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);
  if (!done) s.child.kill('SIGKILL');
}

describe('hostile input at the SDK\'s edges', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    await seed(engine, scope, other);
  });
  after(async () => {
    await engine?.close();
    if (dir) removeDir(dir);
  });

  /** One request line, exactly as a transport hands it over after JSON.parse, to a fresh server. */
  async function callOnce(line: string): Promise<{ result?: { isError?: boolean; content?: Array<{ text: string }>; structuredContent?: { status?: string; error_code?: string } } }> {
    const server = createMcpServer({ context: () => toolContext(engine, scope) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const replies = new Map<number, Record<string, unknown>>();
    clientSide.onmessage = (m: JSONRPCMessage) => {
      if ('id' in m && typeof m.id === 'number') replies.set(m.id, m as unknown as Record<string, unknown>);
    };
    await server.connect(serverSide);
    await clientSide.start();
    try {
      await clientSide.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } });
      await clientSide.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      await clientSide.send(JSON.parse(line) as JSONRPCMessage);
      for (let i = 0; i < 400 && !replies.has(2); i++) await new Promise((r) => setTimeout(r, 25));
      const reply = replies.get(2);
      assert.ok(reply, 'no reply');
      return reply;
    } finally {
      await server.close();
    }
  }

  it('answers invalid_arguments for arguments named `__proto__` or `constructor` (the SDK drops the one and refuses the other itself)', async () => {
    const reply = await callOnce('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"retrieve_memory","arguments":{"prompt":"which vector store did we pick","__proto__":{"session_id":"someone-else"}}}}');
    assert.equal(reply.result?.structuredContent?.status, 'error', `a call with an extra '__proto__' argument was answered: ${JSON.stringify(reply).slice(0, 300)}`);
    assert.equal(reply.result?.structuredContent?.error_code, 'invalid_arguments');
    assert.equal(reply.result?.isError, true);
    // `constructor` made the SDK's own request schema answer a raw -32603.
    const ctor = await callOnce('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"recall","arguments":{"text":"vector store","constructor":{"a":1}}}}');
    assert.equal(ctor.result?.isError, true, JSON.stringify(ctor));
    assert.match(ctor.result?.content?.[0]?.text ?? '', /^invalid_arguments: unknown argument\(s\) 'constructor'/);
  });

  it('answers each tool\'s invalid_arguments for arguments that are no object (the SDK answered a raw -32603 dump)', async () => {
    for (const args of ['["x"]', '"x"', '7']) {
      const rm = await callOnce(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"retrieve_memory","arguments":${args}}}`);
      assert.equal(rm.result?.structuredContent?.error_code, 'invalid_arguments', `retrieve_memory with arguments ${args}: ${JSON.stringify(rm).slice(0, 300)}`);
      const r = await callOnce(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"recall","arguments":${args}}}`);
      assert.equal(r.result?.isError, true, JSON.stringify(r).slice(0, 300));
      assert.match(r.result?.content?.[0]?.text ?? '', /^invalid_arguments: arguments: .*expected object/, args);
    }
  });

  it('says a number argument of 1e400 (Infinity once parsed) must be finite', async () => {
    const r = await callOnce('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"recall","arguments":{"text":"x","k":1e400}}}');
    assert.equal(r.result?.content?.[0]?.text, 'invalid_arguments: k: must be a finite number');
    const rc = await callOnce('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"recall_context","arguments":{"query":"x","max_items":-1e400}}}');
    assert.equal(rc.result?.content?.[0]?.text, 'invalid_arguments: max_items: must be a finite number');
  });

  it('answers a tools/call without a tool name with -32602 and its id, in one line', async () => {
    for (const params of ['{"arguments":{"text":"x"}}', '{"name":7}', '[]']) {
      const reply = (await callOnce(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":${params}}`)) as { error?: { code: number; message: string } };
      assert.equal(reply.error?.code, -32602, `params ${params}: ${JSON.stringify(reply).slice(0, 300)}`);
      assert.doesNotMatch(reply.error?.message ?? '', /\n/);
    }
  });

  it('observe refuses a NUL in a session id, branch, dedupe key or file path, stores nothing, and the project\'s sessions stay readable', async () => {
    const before = (await engine.stats(scope)).observations;
    const ok = { type: 'note', title: 'fine' };
    for (const field of ['memory_session_id', 'content_session_id', 'branch', 'dedupe_key']) {
      // No filter can name such a value again: once stored, it broke every read of the project's sessions.
      await assert.rejects(observe(toolContext(engine, scope), { observations: [ok, { type: 'note', title: 'poison', [field]: 'a\u0000b' }] }), new RegExp(`: observations\\.1\\.${field}: may not contain NUL`));
      await assert.rejects(engine.observe([{ type: 'note', title: 'poison', [field]: 'a\u0000b' }], scope), new RegExp(`${field} may not contain NUL`));
    }
    for (const field of ['files_read', 'files_modified']) {
      const r = await observeTool.run(toolContext(engine, scope), { observations: [ok, { type: 'note', title: 'poison', [field]: ['src/a\u0000b.ts'] }] });
      assert.match(r.text, new RegExp(`^invalid_arguments: observations\\.1\\.${field}\\.0: may not contain NUL`));
      // The engine keeps the rule for callers that skip the tool schema (the capture queue, the extension).
      await assert.rejects(engine.observe([{ type: 'note', title: 'poison', [field]: ['src/a\u0000b.ts'] }], scope), new RegExp(`${field} may not contain NUL`));
    }
    assert.equal((await engine.stats(scope)).observations, before);
    assert.ok((await engine.listSessions(scope)).length > 0);
  });

  it('refuses a lone surrogate in a key, a path or a filter value, which the store would keep as U+FFFD (two keys becoming one)', async () => {
    const before = (await engine.stats(scope)).observations;
    for (const [field, value] of [['memory_session_id', 's-\ud801'], ['dedupe_key', 'k-\udc00'], ['branch', 'b-\ud83d'], ['files_read', ['src/\udc01.ts']]] as Array<[string, unknown]>) {
      const r = await observeTool.run(toolContext(engine, scope), { observations: [{ type: 'note', title: 'fine' }, { type: 'note', title: 'half a pair', [field]: value }] });
      assert.match(r.text, new RegExp(`^invalid_arguments: observations\\.1\\.${field}(\\.0)?: may not contain NUL characters or lone surrogates`));
      await assert.rejects(engine.observe([{ type: 'note', title: 'half a pair', [field]: value }], scope), /lone surrogates/);
    }
    const r = await findTool('recall')!.run(toolContext(engine, scope), { text: 'half a pair', filter: { session_id: 's-\ud801' } });
    assert.match(r.text, /^invalid_arguments: .*lone surrogates/);
    // A whole pair is text like any other.
    const ok = await observeTool.run(toolContext(engine, scope), { observations: [{ type: 'note', title: 'a whole pair', dedupe_key: 'k-\ud83d\ude00' }] });
    assert.equal(ok.isError, false, ok.text);
    assert.equal((await engine.stats(scope)).observations, before + 1);
    // retrieve_memory serves any session id: two that differ only there keep two prompt histories.
    await engine.addPrompt(scope, 'chat-\ud801', 'first half');
    await engine.addPrompt(scope, 'chat-\udc01', 'second half');
    assert.deepEqual([await engine.recentPrompts(scope, 'chat-\ud801', 5), await engine.recentPrompts(scope, 'chat-\udc01', 5)], [['first half'], ['second half']]);
  });

  it('recall refuses a lone surrogate in any filter value, filter.files too (a path with U+FFFD is not found for it)', async () => {
    await engine.observe([{ type: 'note', title: 'Edited the odd file of the wombat parser', files_modified: ['src/odd\ufffd.ts'] }], scope);
    await engine.flush();
    const recall = findTool('recall')!;
    for (const filter of [{ branch: 'b-\ud801' }, { session_id: 's-\udc01' }, { files: ['src/odd\ud801.ts'] }, { files: ['src/fine.ts', 'src/odd\udc00.ts'] }]) {
      const r = await recall.run(toolContext(engine, scope), { text: 'wombat parser', filter });
      assert.equal(r.isError, true, `${JSON.stringify(filter)} was served: ${r.text}`);
      assert.match(r.text, /^invalid_arguments: .*lone surrogates/, JSON.stringify(filter));
    }
    // A whole pair is a path like any other.
    const ok = await recall.run(toolContext(engine, scope), { text: 'wombat parser', filter: { files: ['src/odd\ud83d\ude00.ts'] } });
    assert.equal(ok.isError, false, ok.text);
  });

  it('remember refuses a NUL in its branch, topic_key, session_id or a file path, storing nothing', async () => {
    const before = (await engine.stats(scope)).memories;
    for (const [field, value] of [['branch', 'a\u0000b'], ['topic_key', 'a\u0000b'], ['session_id', 'a\u0000b'], ['files', ['src/a\u0000b.ts']]] as Array<[string, unknown]>) {
      const r = await rememberTool.run(toolContext(engine, scope), { title: `nul in ${field}`, text: 'A NUL probe.', [field]: value });
      assert.match(r.text, new RegExp(`^invalid_arguments: ${field}(\\.0)?: may not contain NUL`));
    }
    await assert.rejects(engine.remember({ title: 'nul in files', text: 'A NUL probe.', files: ['src/a\u0000b.ts'] }, scope), /files may not contain NUL/);
    assert.equal((await engine.stats(scope)).memories, before);
  });

  it('retrieve_memory accepts a prompt of 8,000 characters even when they lie outside the BMP', async () => {
    // 5,000 characters (10,000 UTF-16 code units): within "Maximum length: 8,000 characters".
    const out = await retrieveMemoryTool.run(toolContext(engine, scope), { prompt: '\u{1F600}'.repeat(5000) });
    const structured = out.structured as { status?: string; error_code?: string; error_message?: string };
    assert.equal(structured.status, 'ok', `${structured.error_code}: ${structured.error_message}`);
  });

  it('the stdio server survives a request line over 10 MiB and keeps answering', async () => {
    const store = tempDir('probe-stdio-big');
    const s = startStdio(store);
    try {
      await initialize(s);
      s.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'recall', arguments: { text: 'x'.repeat(10.5 * 1024 * 1024) } } });
      await new Promise((r) => setTimeout(r, 1500));
      s.send('{"jsonrpc": "2.0", "id": 4, "method": "tools/list"');
      s.send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
      const answered = await s.waitFor(3, 20_000);
      assert.ok(answered, `after an oversized request the server stopped (exit code ${String(s.child.exitCode)}, stderr: '${s.stderr().slice(0, 300)}'); got replies to ${JSON.stringify(s.replies.map((r) => r.id))}`);
      // The oversized line and the line that is not JSON were each answered with an error.
      const codes = s.replies.filter((r) => r.id === null).map((r) => (r.error as { code: number }).code);
      assert.deepEqual(codes, [-32600, -32700]);
      // A message that is no JSON-RPC request (params null) is told so in one line, not with the SDK's schema dump.
      s.send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: null });
      s.send({ jsonrpc: '2.0', id: 6, method: 'tools/list' });
      assert.ok(await s.waitFor(6, 20_000), 'the server kept answering');
      const invalid = s.replies.filter((r) => r.id === null).map((r) => (r.error as { message: string }).message);
      assert.equal(invalid.length, 3, JSON.stringify(invalid));
      assert.match(invalid[2], /^invalid request: not a JSON-RPC 2\.0 message/);
      assert.doesNotMatch(invalid[2], /\n|invalid_union/);
    } finally {
      await stop(s);
      removeDir(store);
    }
  });

  it('`code-memory mcp` exits on SIGTERM while its client keeps stdin open', async () => {
    const store = tempDir('probe-stdio-term');
    const s = startStdio(store);
    try {
      await initialize(s);
      s.child.kill('SIGTERM');
      const result = await Promise.race([s.exited, new Promise<null>((r) => setTimeout(() => r(null), 8000))]);
      assert.ok(result, 'still running 8 s after SIGTERM (only a second signal ends it, with exit code 130 and no engine close)');
    } finally {
      await stop(s);
      removeDir(store);
    }
  });

  it('doctor reports a store whose observation data files are damaged', async () => {
    const broken = tempDir('probe-damaged');
    const opened = await openTestEngine(broken);
    await seed(opened.engine, scope, other);
    await opened.engine.close();
    const data = path.join(broken, 'observations.lance', 'data');
    for (const f of readdirSync(data)) if (statSync(path.join(data, f)).size > 100) truncateSync(path.join(data, f), 100);
    try {
      // The store cannot be read: stats (and get_observations) fail on it.
      const stats = await runMain(['stats', '--store', broken, '--project', scope.project, '--json']);
      assert.notEqual(stats.code, 0, 'precondition: stats fails on the damaged store');
      const doctor = await runMain(['doctor', '--store', broken, '--project', scope.project, '--embedder', 'none', '--json']);
      assert.notEqual(doctor.code, 0, `doctor says the damaged store is fine: ${doctor.out.slice(0, 400)}`);
      assert.match(doctor.out, /table observations cannot be read/);
    } finally {
      removeDir(broken);
    }
  });
});
