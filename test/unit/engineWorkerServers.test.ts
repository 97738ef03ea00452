// The engine process's loopback servers, one per project of the window (a window of several
// repositories lists a server for each). The process held one server: starting a second project's
// closed the first's, so an agent of the first lost its server, and a stop closed whatever ran.
// Real engine process (dist bundle of the worker), real EngineClient, real HTTP servers.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { EngineClient } from '../../src/extension/engineWorker/engineClient';
import { buildNodeBundle } from './cliFixture';
import { engineClientOptions } from './fixtures/engineClient';
import { health } from './fixtures/windowServer';
import { REPO_ROOT, removeDir, tempDir } from './mcpFixture';

const workerDir = path.join(REPO_ROOT, 'out', 'test-worker-servers', String(process.pid));

describe("the engine process: a server per project of the window", function () {
  this.timeout(240_000);
  let client: EngineClient;
  let dir: string;

  before(async () => {
    await buildNodeBundle({ entryPoints: { engineWorker: path.join(REPO_ROOT, 'src/extension/engineWorker/worker.ts') }, outdir: workerDir });
    dir = tempDir('worker-servers');
    client = await EngineClient.start(engineClientOptions(path.join(workerDir, 'engineWorker.js'), dir, { embedder: { provider: 'hashed' } }));
  });
  after(async () => {
    await client?.close();
    removeDir(dir);
    removeDir(workerDir);
  });

  it("runs alpha's and beta's servers side by side; a stop names the project it stops, or stops them all", async () => {
    const alpha = await client.startHttpServer({ scope: { project: 'alpha' }, port: 0, token: 'a'.repeat(32) });
    const beta = await client.startHttpServer({ scope: { project: 'beta' }, port: 0, token: 'b'.repeat(32) });
    const project = async (s: { baseUrl: string; token: string }): Promise<string> => (await health(s)).project ?? 'no answer';
    assert.deepEqual([await project(alpha), await project(beta)], ['alpha', 'beta']);
    // A project's server started again replaces that project's own, not another's.
    const alpha2 = await client.startHttpServer({ scope: { project: 'alpha' }, port: 0, token: 'c'.repeat(32) });
    assert.deepEqual([await project(alpha), await project(alpha2), await project(beta)], ['no answer', 'alpha', 'beta']);
    await client.stopHttpServer('alpha');
    assert.deepEqual([await project(alpha2), await project(beta)], ['no answer', 'beta']);
    // Two starts of one project at once: one server of it is left listening, never two.
    const both = await Promise.all([1, 2].map((i) => client.startHttpServer({ scope: { project: 'delta' }, port: 0, token: `${i}`.repeat(32) })));
    assert.deepEqual((await Promise.all(both.map(project))).sort(), ['delta', 'no answer']);
    await client.startHttpServer({ scope: { project: 'gamma' }, port: 0, token: 'd'.repeat(32) }).then(async (gamma) => {
      await client.stopHttpServer();
      assert.deepEqual([await project(beta), await project(gamma)], ['no answer', 'no answer']);
    });
  });
});
