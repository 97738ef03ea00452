// GET /v1/nodes/{id} and `code-memory node` on a branch scope: a node recorded on another branch
// is not found (404 exactly as an unknown id's), as recall and get_observations leave it out;
// what holds on every branch (no branch, main, the repository's default branch) is served.
// A real engine on LanceDB in a temp folder, a real server, the CLI as a real process.

import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import * as path from 'node:path';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { cellNodeId } from '../../src/core/store/cells';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { REPO_ROOT, openTestEngine, removeDir } from './mcpFixture';

const PROJECT = 'github.com/acme/branchy';
const FEATURE: Scope = { project: PROJECT, branch: 'feature-x' };
const UNKNOWN = '6f9619ff-8b86-d011-b42d-00cf4fc964ff';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(s: RunningHttpServer, target: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: s.port, path: target, headers: { host: `127.0.0.1:${s.port}`, authorization: `Bearer ${s.token}` }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function recall(s: RunningHttpServer, text: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'recall', arguments: { text, k: 20 } } });
    const req = request(
      { host: '127.0.0.1', port: s.port, method: 'POST', path: '/v1/mcp/memory', headers: { host: `127.0.0.1:${s.port}`, authorization: `Bearer ${s.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** `code-memory node` run from the sources, as a real process. */
function cliNode(store: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const tsx = require.resolve('tsx/cjs');
  const cli = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--require', tsx, cli, 'node', '--store', store, '--project', PROJECT, '--embedder', 'hashed', ...args],
      { cwd: REPO_ROOT, env: { ...process.env, LANCEDB_LOG: 'error', CODE_MEMORY_STORE: '', CODE_MEMORY_PROJECT: '' }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('a branch-scoped server and `node --branch`: nodes of another branch are not found', function () {
  this.timeout(180_000);
  let engine: MemoryEngine | undefined;
  let dir: string;
  let feature: RunningHttpServer | undefined;
  const node: Record<string, string> = {};

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    const add = async (key: string, branch: string | undefined, scope: Scope = { project: PROJECT, ...(branch ? { branch } : {}) }): Promise<void> => {
      const [o] = await engine!.observe([{ type: 'edit', title: `Queue consumer note ${key}`, narrative: `queue consumer written on ${key}`, ...(branch ? { branch } : {}) }], scope);
      node[key] = cellNodeId(PROJECT, 'observation', o.id);
    };
    await add('spike', 'spike-y');
    await add('feature', 'feature-x');
    await add('main', 'main');
    await add('none', undefined);
    // The repository's default branch, as its callers name it: its records hold on every branch.
    await add('develop', 'develop', { project: PROJECT, branch: 'develop', defaultBranch: 'develop' });
    await engine.flush();
    feature = await startHttpServer({ engine, scope: FEATURE });
  });
  after(async () => {
    await feature?.close();
    await engine?.close();
    if (dir) removeDir(dir);
  });

  it("GET /v1/nodes/{id} of another branch's node is 404, the same answer as an unknown id's", async () => {
    const s = feature!;
    const r = await recall(s, 'queue consumer');
    assert.equal(r.status, 200);
    assert.ok(!r.body.includes(node.spike), "control: recall on feature-x leaves spike-y's node out");
    const spike = await get(s, `/v1/nodes/${node.spike}`);
    const unknown = await get(s, `/v1/nodes/${UNKNOWN}`);
    assert.equal(spike.status, 404, `feature-x's server hydrated spike-y's node: ${spike.body.slice(0, 200)}`);
    assert.equal(unknown.status, 404);
    assert.equal(spike.body.replace(node.spike, 'ID'), unknown.body.replace(UNKNOWN, 'ID'));
    assert.deepEqual(Object.keys(spike.headers).filter((k) => k !== 'date').sort(), Object.keys(unknown.headers).filter((k) => k !== 'date').sort());
    assert.ok(!spike.body.includes('spike-y'));
  });

  it("serves the scope branch's own nodes and those that hold on every branch (no branch, main, the default branch)", async () => {
    const wrong: string[] = [];
    for (const key of ['feature', 'main', 'none', 'develop']) {
      const r = await get(feature!, `/v1/nodes/${node[key]}`);
      if (r.status !== 200 || !r.body.includes(`Queue consumer note ${key}`)) wrong.push(`${key}: ${r.status} ${r.body.slice(0, 120)}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('engine.getNode: null on another branch, found with no branch or on its own branch', async () => {
    assert.equal(await engine!.getNode(node.spike, FEATURE), null);
    assert.equal((await engine!.getNode(node.spike, { project: PROJECT }))?.cell.branch, 'spike-y');
    assert.equal((await engine!.getNode(node.spike, { project: PROJECT, branch: 'spike-y' }))?.cell.branch, 'spike-y');
    assert.equal((await engine!.getNode(node.feature, { project: PROJECT, branch: 'spike-y' })), null);
  });

  it('`code-memory node --branch` leaves another branch\'s node out as an unknown one, and reads its own', async () => {
    await feature!.close();
    feature = undefined;
    await engine!.close();
    engine = undefined;
    const other = await cliNode(dir, ['--branch', 'feature-x', node.spike]);
    const unknown = await cliNode(dir, ['--branch', 'feature-x', UNKNOWN]);
    assert.equal(other.code, 1, `node --branch feature-x read spike-y's node: ${other.stdout.slice(0, 200)}`);
    assert.equal(other.stderr.replace(node.spike, 'ID'), unknown.stderr.replace(UNKNOWN, 'ID'));
    const own = await cliNode(dir, ['--branch', 'spike-y', node.spike]);
    assert.equal(own.code, 0, own.stderr);
    assert.match(own.stdout, /Queue consumer note spike/);
  });
});
