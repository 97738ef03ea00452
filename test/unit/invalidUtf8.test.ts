// Input that is not UTF-8 is refused, never decoded with U+FFFD: two dedupe keys (or session ids,
// titles) that differ only in invalid bytes would otherwise reach the store as one. REST bodies get
// a JSON 400, the MCP HTTP route a JSON-RPC -32700, a stdio line a -32602 under its id (-32700
// with id null where none can be read); nothing of a refused body or line is stored, and the
// server goes on answering.

import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { decodeUtf8 } from '../../src/mcp/utf8';
import { openTestEngine, removeDir, tempDir } from './mcpFixture';
import { initialize, start, stop } from './stdioChild';


/** An observation whose dedupe key ends in one raw byte (0xff and 0xfe are never UTF-8). */
function itemWithByte(byte: number, title: string, keyPrefix: string): Buffer {
  return Buffer.concat([Buffer.from(`{"type":"note","title":"${title}","dedupe_key":"${keyPrefix}`), Buffer.from([byte]), Buffer.from('"}')]);
}

/** Two observations whose dedupe keys differ only in an invalid byte, as a JSON array. */
function twoKeysDifferingInInvalidBytes(keyPrefix: string): Buffer {
  return Buffer.concat([Buffer.from('['), itemWithByte(0xff, 'one', keyPrefix), Buffer.from(','), itemWithByte(0xfe, 'two', keyPrefix), Buffer.from(']')]);
}

describe('decodeUtf8', () => {
  it('decodes valid UTF-8 as Buffer#toString does, a leading BOM kept', () => {
    for (const text of ['', 'plain', 'naïve café – ключ 🙂', '\ufeff{"a":1}', 'a\u0000b']) {
      assert.equal(decodeUtf8(Buffer.from(text, 'utf8')), text);
    }
  });

  it('refuses invalid bytes, overlong forms, encoded surrogates and a truncated sequence', () => {
    const bad: Array<[string, number[]]> = [
      ['0xff', [0x61, 0xff]],
      ['0xfe', [0xfe]],
      ['a lone continuation byte', [0x80]],
      ['an overlong "/"', [0xc0, 0xaf]],
      ['an encoded surrogate', [0xed, 0xa0, 0x80]],
      ['a sequence cut short at the end', [0x61, 0xe2, 0x82]],
      ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ];
    for (const [name, bytes] of bad) assert.equal(decodeUtf8(Buffer.from(bytes)), undefined, name);
  });
});

describe('the HTTP server refuses a request body that is not UTF-8', function () {
  this.timeout(120_000);
  const scope: Scope = { project: 'github.com/acme/invalid-utf8' };
  let engine: MemoryEngine;
  let dir: string;
  let server: RunningHttpServer;

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    server = await startHttpServer({ engine, scope });
  });
  after(async () => {
    await server?.close();
    await engine?.close();
    removeDir(dir);
  });

  const observations = async (): Promise<number> => (await engine.stats(scope)).observations;

  async function post(route: string, body: Buffer | string): Promise<{ status: number; text: string; json: Record<string, unknown> | null }> {
    const res = await fetch(`${server.baseUrl}${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body,
    });
    const text = await res.text();
    let json: Record<string, unknown> | null = null;
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      json = null;
    }
    return { status: res.status, text, json };
  }

  it('POST /v1/observations: two dedupe keys differing only in invalid bytes are a 400 invalid_utf8, and nothing is stored', async () => {
    const before = await observations();
    const r = await post('/v1/observations', twoKeysDifferingInInvalidBytes('rk'));
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json?.error, 'invalid_utf8', r.text);
    assert.match(String(r.json?.message), /not valid UTF-8/);
    assert.equal(await observations(), before);
    // The key the invalid byte would have been read as was not stored either.
    const stored = await post('/v1/observations', JSON.stringify({ type: 'note', title: 'one', dedupe_key: 'rk\ufffd' }));
    assert.equal(stored.status, 201, stored.text);
    assert.equal((stored.json as { stored: number }).stored, 1, stored.text);
  });

  it('POST /v1/observations: a binary or UTF-16 body is a JSON 400, and nothing is stored', async () => {
    const before = await observations();
    const binary = Buffer.alloc(4096);
    for (let i = 0; i < binary.length; i++) binary[i] = (i * 2654435761) >>> 24;
    const utf16 = Buffer.from(`\ufeff${JSON.stringify({ type: 'note', title: 'utf16' })}`, 'utf16le');
    const wrong: string[] = [];
    for (const [name, body] of [['binary', binary], ['UTF-16', utf16]] as Array<[string, Buffer]>) {
      const r = await post('/v1/observations', body);
      if (r.status !== 400 || typeof r.json?.error !== 'string' || typeof r.json?.message !== 'string') wrong.push(`${name}: ${r.status} ${r.text.slice(0, 200)}`);
    }
    assert.deepEqual(wrong, []);
    assert.equal(await observations(), before);
  });

  it('POST /v1/observations: keys in valid UTF-8 (non-ASCII too) are still stored as sent', async () => {
    const r = await post('/v1/observations', Buffer.from(JSON.stringify([{ type: 'note', title: 'ключ', dedupe_key: 'rk-é' }, { type: 'note', title: '🙂', dedupe_key: 'rk-è' }]), 'utf8'));
    assert.equal(r.status, 201, r.text);
    const ids = (r.json as { ids: number[] }).ids;
    assert.equal(new Set(ids).size, 2, r.text);
  });

  it('POST /v1/mcp/memory: an observe call that is not UTF-8 is a 400 JSON-RPC -32700 with id null, nothing is stored, and the server answers after', async () => {
    const before = await observations();
    const body = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"observe","arguments":{"observations":'), twoKeysDifferingInInvalidBytes('mk'), Buffer.from('}}}')]);
    const r = await post('/v1/mcp/memory', body);
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(r.json?.id, null, r.text);
    const error = r.json?.error as { code: number; message: string } | undefined;
    assert.equal(error?.code, -32700, r.text);
    assert.match(error?.message ?? '', /not valid UTF-8/);
    assert.equal(await observations(), before);
    const health = await fetch(`${server.baseUrl}/v1/health`, { headers: { authorization: `Bearer ${server.token}` } });
    assert.equal(health.status, 200);
  });
});

describe('the stdio server refuses a line that is not UTF-8', function () {
  this.timeout(120_000);
  let store: string;
  before(() => (store = tempDir('invalid-utf8-stdio')));
  after(() => removeDir(store));

  it('observe with two dedupe keys differing only in invalid bytes: refused under its id (-32602, a client waits on it), nothing stored, the server goes on', async () => {
    const c = start(store, 'invalid-utf8-stdio');
    const answer = async (id: unknown): Promise<Record<string, unknown>> => {
      const got = await c.waitForId(id, 60_000);
      assert.ok(got, `no answer to ${JSON.stringify(id)}: ${c.stderr().slice(-300)}`);
      return got;
    };
    const observe = (id: number, observations: Buffer | string): Buffer =>
      Buffer.concat([Buffer.from(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"observe","arguments":{"observations":`), Buffer.from(observations), Buffer.from('}}}\n')]);
    try {
      await initialize(c);
      c.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);

      c.write(observe(2, twoKeysDifferingInInvalidBytes('sk')));
      const refusal = (await answer(2)) as { error?: { code: number; message: string } };
      assert.equal(refusal.error?.code, -32602);
      assert.match(refusal.error?.message ?? '', /not valid UTF-8/);
      // A line whose id cannot be read is refused with id null.
      c.write(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"k'), Buffer.from([0xff]), Buffer.from('","method":"tools/list"}\n')]));
      assert.equal(((await answer(null)) as { error?: { code: number } }).error?.code, -32700);

      // The server goes on; the refused line stored nothing: the key its invalid byte would have
      // been read as is new.
      c.write(observe(3, JSON.stringify([{ type: 'note', title: 'one', dedupe_key: 'sk\ufffd' }, { type: 'note', title: 'two', dedupe_key: 'sk-other' }])));
      const stored = (await answer(3)) as { result?: { isError?: boolean; structuredContent?: { stored: number; ids: number[] } } };
      assert.notEqual(stored.result?.isError, true, JSON.stringify(stored));
      assert.equal(stored.result?.structuredContent?.stored, 2, JSON.stringify(stored));
      assert.equal(new Set(stored.result?.structuredContent?.ids).size, 2, JSON.stringify(stored));
      assert.equal(c.lines.filter((l) => /"id":2\b/.test(l)).length, 1, 'one answer to the refused request');
      assert.ok(c.lines.every((l) => l.startsWith('{')), 'stdout carries only JSON-RPC lines');
    } finally {
      await stop(c);
    }
  });
});
