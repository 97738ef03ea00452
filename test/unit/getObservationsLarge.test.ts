// get_observations of records within observe's own limits, read by the MCP SDK's own stdio client:
// an answer too large for one message is a clear tool error that says how many ids fit, not a
// connection the client drops (its stdio reader takes at most 10 MiB a message).
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Scope } from '../../src/core/model/records';
import { REPO_ROOT, openTestEngine, removeDir, tempDir } from './mcpFixture';

const scope: Scope = { project: 'github.com/acme/app' };
const CLI = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');
type CallResult = { content: Array<{ type: string; text?: string }>; structuredContent?: { details?: Array<{ id: number; last_accessed_epoch?: number }> }; isError?: boolean };

describe('get_observations: an answer too large for one message', function () {
  this.timeout(300_000);
  let dir: string;
  const ids: number[] = [];
  let client: Client;
  let closed = false;

  before(async () => {
    const opened = await openTestEngine(tempDir('large-answer'));
    dir = opened.dir;
    // 200 observations, each within observe's limits: a 20,000-character narrative (CJK, 3 bytes a character in UTF-8).
    const narrative = '日本語のテキストです。'.repeat(2000).slice(0, 20000);
    for (let b = 0; b < 4; b++) ids.push(...(await opened.engine.observe(Array.from({ length: 50 }, (_, i) => ({ type: 'note', title: `Note ${b}-${i}`, narrative })), scope)).map((o) => o.id));
    await opened.engine.flush();
    await opened.engine.close();
    client = new Client({ name: 'large-answer', version: '1' });
    client.onclose = () => (closed = true);
    const env = { ...(process.env as Record<string, string>), LANCEDB_LOG: 'error' };
    await client.connect(new StdioClientTransport({ command: process.execPath, args: ['--require', require.resolve('tsx/cjs'), CLI, 'mcp', '--store', dir, '--project', scope.project, '--embedder', 'hashed'], cwd: REPO_ROOT, env, stderr: 'pipe' }));
  });
  after(async () => {
    await client?.close().catch(() => undefined);
    removeDir(dir);
  });

  it('200 ids of 20,000-character observations: response_too_large naming how many fit, and the connection survives', async () => {
    const r = (await client.callTool({ name: 'get_observations', arguments: { ids, source: 'observation' } }, undefined, { timeout: 60_000 })) as CallResult;
    assert.equal(closed, false, 'the client dropped the connection');
    assert.equal(r.isError, true);
    const text = r.content[0].text ?? '';
    assert.match(text, /^response_too_large: the 200 records asked for are [\d.]+ MB as JSON, more than the 4 MB one answer holds; ask for fewer ids at once \(the first (\d+) fit\); no access was recorded$/, text);
    const fit = Number(/the first (\d+) fit/.exec(text)![1]);
    assert.ok(fit > 10 && fit < 200, text);

    // As many as it says fit are answered whole, on the same connection.
    const answer = (await client.callTool({ name: 'get_observations', arguments: { ids: ids.slice(0, fit), source: 'observation' } }, undefined, { timeout: 60_000 })) as CallResult;
    assert.equal(answer.isError, false, answer.content[0].text?.slice(0, 300));
    assert.deepEqual(answer.structuredContent?.details?.map((d) => d.id), ids.slice(0, fit));
    assert.equal(closed, false);
  });
});
