// The window's MCP servers when the engine closes (a setting of the store changed, or the engine's
// process ended) while VS Code starts a server again: the engine opened anew served it, but the
// close, reported once the old engine was gone, forgot the new server with the old ones. Nothing
// stopped it any more: its folder left the window and it went on serving that project's memory to
// the agent. Real McpServerHost, real HTTP servers on a real engine (two engine processes of the
// window as EngineHost holds them, one after the other); `vscode` is a stub.

import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { openTestEngine, removeDir } from './mcpFixture';
import { health, windowEngines } from './fixtures/windowServer';
import { EventEmitter, withVscodeStub } from './vscodeStub';

const vscodeStub = { EventEmitter, workspace: { getConfiguration: () => ({ get: <T>(_key: string, fallback: T): T => fallback }) } };

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { McpServerHost } = withVscodeStub(vscodeStub, () => require('../../src/extension/agents/mcpServerHost') as typeof import('../../src/extension/agents/mcpServerHost'));

describe("extension: the window's MCP servers when the engine closes while one starts", function () {
  this.timeout(60_000);
  let engine: MemoryEngine;
  let dir: string;

  before(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  after(async () => {
    await engine?.close();
    removeDir(dir);
  });

  it('a server started on the engine opened anew as the old one closed is still stopped when its folder leaves the window', async () => {
    // EngineHost: the open engine, the one opening (get() waits for it), onDidClose once the old one is closed.
    const first = windowEngines(engine);
    const second = windowEngines(engine);
    let open: unknown = first.engines.peek();
    let opened: (() => void) | undefined;
    const didClose = new EventEmitter<void>();
    const engines = {
      peek: () => open,
      get: async () => {
        if (open) return open;
        await new Promise<void>((r) => (opened = r));
        open = second.engines.peek();
        return open;
      },
      onDidClose: didClose.event,
    };
    const folderOf = (project: string): { name: string; uri: { scheme: string; toString(): string } } => ({ name: project, uri: { scheme: 'untitled', toString: () => `untitled:${project}` } });
    let folders = [folderOf('alpha'), folderOf('beta')];
    const projectsChanged = new EventEmitter<void>();
    const scopes = {
      folders: () => folders,
      currentFolder: () => folders[1],
      current: async (): Promise<Scope> => ({ project: 'beta' }),
      scopeFor: async (uri: string): Promise<Scope> => ({ project: uri.replace(/^untitled:/, '') }),
      all: async () => folders.map((folder) => ({ folder, scope: { project: folder.name } })),
      onDidChangeProjects: projectsChanged.event,
    };
    const secrets = new Map<string, string>();
    const secretStorage = { get: async (k: string) => secrets.get(k), store: async (k: string, v: string) => void secrets.set(k, v), delete: async (k: string) => void secrets.delete(k) };
    const host = new McpServerHost(engines as never, scopes as never, secretStorage as never, () => undefined);
    try {
      await host.start(folders[1] as never);
      // A setting of the store changed: the servers stop (which tells VS Code), the engine closes.
      await host.stop();
      open = undefined;
      // VS Code starts beta's server again at once: the engine opens anew for it.
      const starting = host.start(folders[1] as never);
      await new Promise((r) => setImmediate(r));
      opened?.();
      const server = await starting;
      assert.equal((await health(server)).project, 'beta');
      // The old engine is now closed.
      didClose.fire();
      assert.deepEqual(
        (await host.definitions()).map((d) => [d.project, d.server?.url]),
        [
          ['alpha', undefined],
          ['beta', server.url],
        ],
        'the running server is no longer known',
      );
      // beta leaves the window: its server stops.
      folders = [folders[0]];
      projectsChanged.fire();
      await host.definitions();
      const probe = await health(server);
      assert.notEqual(probe.status, 200, `beta's server still answers in a window of alpha alone (project '${probe.project}')`);
    } finally {
      await host.stop();
      host.dispose();
      for (const s of [...first.servers, ...second.servers]) await s.close();
    }
  });
});
