// The stdio server (`code-memory mcp`) fed bad lines: invalid UTF-8, NUL bytes, batches, bare
// values, odd ids, deep nesting, a 1 MB id. Each gets a JSON-RPC answer whose error message is one
// line (a client's response and a blank line are ignored), stdout carries only JSON-RPC lines, the
// server keeps answering, and a client that closes stdin mid-line sees it exit cleanly.

import * as assert from 'node:assert/strict';
import { removeDir, tempDir } from './mcpFixture';
import { initialize, start, stop } from './stdioChild';
import type { Child } from './stdioChild';


describe('the stdio server fed bad lines', function () {
  this.timeout(120_000);
  let store: string;
  let c: Child;
  let next = 100;
  const ping = async (): Promise<boolean> => {
    const id = next++;
    c.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`);
    return (await c.waitForId(id, 20_000)) !== undefined;
  };

  before(async () => {
    store = tempDir('stdio-bad-lines');
    c = start(store);
    await initialize(c);
    c.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  });
  after(async () => {
    await stop(c);
    removeDir(store);
  });

  it('answers every bad line in JSON-RPC, with one-line error messages (a request with an id of its own gets its answer), and keeps answering', async () => {
    const wrong: string[] = [];
    const cases: Array<[string, string | Buffer, boolean]> = [
      ['invalid UTF-8', Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":2,"method":"ping","x":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}\n')]), true],
      ['NUL bytes', Buffer.from('\u0000\u0000\u0000\n'), true],
      ['a JSON-RPC batch (array)', `${JSON.stringify([{ jsonrpc: '2.0', id: 3, method: 'ping' }])}\n`, true],
      ['an empty array', '[]\n', true],
      ['a bare number', '42\n', true],
      ['a JSON string', '"hello"\n', true],
      ['CRLF line end', `${JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping' })}\r\n`, true],
      ['id that is an object', `${JSON.stringify({ jsonrpc: '2.0', id: { a: 1 }, method: 'ping' })}\n`, true],
      ['unknown method', `${JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'no/such' })}\n`, true],
      ['jsonrpc 1.0', `${JSON.stringify({ jsonrpc: '1.0', id: 6, method: 'ping' })}\n`, true],
      ['a response object from the client', `${JSON.stringify({ jsonrpc: '2.0', id: 7, result: {} })}\n`, false],
      ['nested 2,000,000 deep', `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"retrieve_memory","arguments":{"prompt":"x","session_id":${'['.repeat(2_000_000)}${']'.repeat(2_000_000)}}}}\n`, true],
      ['nested 2,000,000 deep, no JSON-RPC', `${'['.repeat(2_000_000)}${']'.repeat(2_000_000)}\n`, true],
      ['a 1 MB id', `${JSON.stringify({ jsonrpc: '2.0', id: 'i'.repeat(1_000_000), method: 'ping' })}\n`, true],
      ['whitespace only', '   \n', false],
    ];
    for (const [label, line, answered] of cases) {
      const before = c.lines.length;
      c.write(line);
      // A request with an id of its own: wait for its answer (a deep one takes seconds).
      // (A batch and a jsonrpc 1.0 message are no valid request: an error with id null is their answer.)
      const ownId = label === 'a JSON-RPC batch (array)' || label === 'jsonrpc 1.0' ? undefined : /"id":(\d+),"method"/.exec(typeof line === 'string' ? line.slice(0, 200) : '')?.[1];
      if (ownId && !(await c.waitForId(Number(ownId), 30_000))) wrong.push(`${label}: no answer to id ${ownId} in 30 s`);
      const alive = await ping();
      if (!alive) {
        wrong.push(`${label}: the server stopped answering (exit ${String(c.child.exitCode)}; stderr ${c.stderr().slice(-300)})`);
        break;
      }
      const got = c.lines.slice(before, -1);
      if (answered && got.length === 0) wrong.push(`${label}: no answer at all`);
      for (const l of got) {
        try {
          const m = JSON.parse(l) as { jsonrpc?: string; error?: { code: number; message: string }; result?: unknown };
          if (m.jsonrpc !== '2.0') wrong.push(`${label}: a stdout line that is no JSON-RPC: ${l.slice(0, 160)}`);
          if (m.error && /\n/.test(m.error.message)) wrong.push(`${label}: a multi-line error message: ${m.error.message.slice(0, 160)}`);
        } catch {
          wrong.push(`${label}: a stdout line that is not JSON: ${l.slice(0, 160)}`);
        }
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('answers a valid JSON-RPC request whose params MCP refuses (a _meta of another shape, params an array) under its own id (-32602), and goes on', async () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ['tools/call with an object progressToken', { jsonrpc: '2.0', id: 50, method: 'tools/call', params: { name: 'recall', arguments: { text: 'x' }, _meta: { progressToken: { x: 1 } } } }],
      ['tools/list with _meta an array', { jsonrpc: '2.0', id: 'list-53', method: 'tools/list', params: { _meta: [] } }],
      ['tools/list with params an array', { jsonrpc: '2.0', id: 54, method: 'tools/list', params: [] }],
      ['tools/call with _meta a string', { jsonrpc: '2.0', id: 55, method: 'tools/call', params: { name: 'recall', arguments: { text: 'x' }, _meta: 'x' } }],
    ];
    const wrong: string[] = [];
    for (const [label, request] of cases) {
      c.write(`${JSON.stringify(request)}\n`);
      const answer = (await c.waitForId(request.id, 20_000)) as { error?: { code: number; message: string } } | undefined;
      if (!answer) wrong.push(`${label}: no answer under id ${JSON.stringify(request.id)}`);
      else if (answer.error?.code !== -32602 || /\n/.test(answer.error.message)) wrong.push(`${label}: ${JSON.stringify(answer).slice(0, 300)}`);
    }
    assert.deepEqual(wrong, [], c.lines.join('\n').slice(-3000));
    // Each answered once, and a valid request with a _meta of MCP's shape is still served.
    for (const [, request] of cases) assert.equal(c.lines.filter((l) => l.includes(`"id":${JSON.stringify(request.id)},`)).length, 1);
    c.write(`${JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list', params: { _meta: { progressToken: 'p1' } } })}\n`);
    assert.ok(((await c.waitForId(99, 20_000)) as { result?: { tools?: unknown[] } } | undefined)?.result?.tools?.length, c.stderr());
  });

  it('writes only JSON-RPC lines to stdout', () => {
    const bad = c.lines.filter((l) => {
      try {
        return (JSON.parse(l) as { jsonrpc?: string }).jsonrpc !== '2.0';
      } catch {
        return true;
      }
    });
    assert.deepEqual(bad.map((l) => l.slice(0, 160)), []);
  });

  it('exits cleanly (code 0) within seconds when its client closes stdin mid-line', async () => {
    const s = tempDir('stdio-eof');
    const d = start(s);
    try {
      await initialize(d);
      d.write('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"recall","argu');
      d.child.stdin.end();
      const code = await Promise.race([new Promise<number | null>((r) => d.child.once('exit', (c2) => r(c2))), new Promise<string>((r) => setTimeout(() => r('still running'), 15_000))]);
      assert.equal(code, 0, d.stderr().slice(-300));
    } finally {
      if (d.child.exitCode === null) d.child.kill('SIGKILL');
      removeDir(s);
    }
  });
});
