// The extension's loopback server token. VS Code's SecretStorage is the extension's, shared by every
// window (every workspace, every project): with one key, two windows on two projects served two
// projects behind one token, and a client given one project's server (VS Code's definition, Show
// MCP Server Info's "copy header") opened the other project's with it. Real McpServerHost, real
// HTTP servers on a real engine; `vscode` is a stub (as in webviewInjection.test.ts).

import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { openTestEngine, removeDir } from './mcpFixture';
import { health, windowEngines } from './fixtures/windowServer';
import { EventEmitter, withVscodeStub } from './vscodeStub';

let configuredPort = 0;
const vscodeStub = {
  EventEmitter,
  workspace: { getConfiguration: () => ({ get: <T>(key: string, fallback: T): T => (key === 'server.port' ? (configuredPort as T) : fallback) }) },
};

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { McpServerHost } = withVscodeStub(vscodeStub, () => require('../../src/extension/agents/mcpServerHost') as typeof import('../../src/extension/agents/mcpServerHost'));

/** The extension's SecretStorage: one per extension, the same in every window. */
class SharedSecrets {
  private readonly map = new Map<string, string>();
  async get(key: string): Promise<string | undefined> {
    return this.map.get(key);
  }
  async store(key: string, value: string): Promise<void> {
    this.map.set(key, value);
  }
  async delete(key: string): Promise<void> {
    this.map.delete(key);
  }
  onDidChange = (): { dispose(): void } => ({ dispose: () => undefined });
}

/** One VS Code window: its engine thread (here: an in-process server on the shared store) and its project. */
function windowFor(engine: MemoryEngine, scope: Scope, secrets: SharedSecrets): { host: InstanceType<typeof McpServerHost>; servers: RunningHttpServer[] } {
  const { engines, servers } = windowEngines(engine);
  const folder = { uri: { scheme: 'untitled', toString: () => `untitled:${scope.project}` } };
  const scopes = { current: async () => scope, currentFolder: () => folder, scopeFor: async () => scope, folders: () => [folder], onDidChangeProjects: () => ({ dispose: () => undefined }) };
  const host = new McpServerHost(engines as never, scopes as never, secrets as never, () => undefined);
  return { host, servers };
}

describe('extension: the server token across windows (projects)', function () {
  this.timeout(60_000);
  let engine: MemoryEngine;
  let dir: string;

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    await engine.observe([{ type: 'note', title: 'Beta secret roadmap', narrative: 'only beta may read this' }], { project: 'beta' });
    await engine.flush();
  });
  after(async () => {
    await engine?.close();
    removeDir(dir);
  });

  it("two windows on two projects: alpha's server token does not open beta's server", async () => {
    configuredPort = 0;
    const secrets = new SharedSecrets();
    const a = windowFor(engine, { project: 'alpha' }, secrets);
    const b = windowFor(engine, { project: 'beta' }, secrets);
    try {
      const sa = await a.host.start();
      const sb = await b.host.start();
      const probe = await health({ baseUrl: sb.baseUrl, token: sa.token });
      assert.deepEqual(probe.status, 401, `alpha's token on beta's server: ${probe.status}, project '${probe.project}' (tokens equal: ${sa.token === sb.token})`);
    } finally {
      await a.host.stop();
      await b.host.stop();
    }
  });

  it("keeps a project's token across windows and restarts, and rotating it leaves other projects' tokens alone", async () => {
    configuredPort = 0;
    const secrets = new SharedSecrets();
    const a = windowFor(engine, { project: 'alpha' }, secrets);
    const a2 = windowFor(engine, { project: 'alpha' }, secrets);
    const b = windowFor(engine, { project: 'beta' }, secrets);
    try {
      const first = (await a.host.start()).token;
      assert.equal((await a2.host.start()).token, first, 'a second window on alpha serves it behind the same token');
      const beta = (await b.host.start()).token;
      await a.host.rotateToken();
      const rotated = (await a.host.start()).token;
      assert.notEqual(rotated, first);
      assert.equal((await health({ baseUrl: (await a.host.start()).baseUrl, token: first })).status, 401, 'the old token is refused');
      await b.host.stop();
      assert.equal((await b.host.start()).token, beta, "beta's token did not change");
    } finally {
      await a.host.stop();
      await a2.host.stop();
      await b.host.stop();
    }
  });

  it('with codeMemory.server.port set: after alpha\'s window closes, its clients (URL + token) do not reach the next window\'s project on that port', async () => {
    const secrets = new SharedSecrets();
    const a = windowFor(engine, { project: 'alpha' }, secrets);
    const sa0 = await a.host.start();
    const port = sa0.port;
    await a.host.stop();
    configuredPort = port;
    const a2 = windowFor(engine, { project: 'alpha' }, secrets);
    const sa = await a2.host.start();
    assert.equal(sa.port, port);
    await a2.host.stop();
    const b = windowFor(engine, { project: 'beta' }, secrets);
    try {
      const sb = await b.host.start();
      assert.equal(sb.port, port, 'beta took the configured port');
      const probe = await health(sa);
      assert.notEqual(probe.status, 200, `alpha's client (${sa.url}, its token) now reads project '${probe.project}'`);
    } finally {
      configuredPort = 0;
      await b.host.stop();
    }
  });
});
