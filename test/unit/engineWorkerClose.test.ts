// The extension's engine thread closed (EngineClient.close: a window closing, the store's settings
// changed) while writes are under way: the thread is not ended while the store's native code works
// in it, which aborted the whole process (the extension host) with SIGABRT, and the writes under
// way are kept. Run in a child process, so that an abort is seen as its exit, not as the end of
// this test run.

import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { buildNodeBundle } from './cliFixture';
import { removeDir, tempDir } from './mcpFixture';

const REPO = path.resolve(__dirname, '..', '..');
const ROUNDS = 4;
const WRITES = 20;

describe('closing the engine thread while writes are under way', function () {
  this.timeout(300_000);
  let out: string;
  let stores: string;

  before(async () => {
    // In the repository, so that the bundle finds the native modules it leaves out in node_modules.
    out = path.join(REPO, 'out', 'engine-close', String(process.pid));
    stores = tempDir('engine-close-stores');
    await buildNodeBundle({ entryPoints: { engineWorker: path.join(REPO, 'src/extension/engineWorker/worker.ts') }, outdir: out });
  });
  after(() => {
    removeDir(out);
    removeDir(stores);
  });

  it('neither aborts the process nor loses a write', async () => {
    const code = `
      const path = require('node:path');
      const { EngineClient } = require(${JSON.stringify(path.join(REPO, 'src/extension/engineWorker/engineClient'))});
      const { requestLogRetention } = require(${JSON.stringify(path.join(REPO, 'src/core/store/retention'))});
      (async () => {
        for (let round = 0; round < ${ROUNDS}; round++) {
          const client = await EngineClient.start({
            workerPath: ${JSON.stringify(path.join(out, 'engineWorker.js'))}, storeUri: path.join(${JSON.stringify(stores)}, 'r' + round),
            embedder: { provider: 'hashed' }, sessionIdleMs: 30 * 60_000, requestLogRetention: requestLogRetention(30, 10_000),
            languageModelSummaries: false, log: () => undefined, summarise: () => Promise.resolve(null),
          });
          const scope = { project: 'github.com/acme/app' };
          await client.remember({ title: 'first', text: 'written before the close' }, scope);
          const writes = Promise.allSettled(Array.from({ length: ${WRITES} }, (_, i) => client.remember({ title: 'note ' + i, text: 'written as the window closed ' + i }, scope)));
          await client.close();
          const settled = await writes;
          process.stdout.write('round ' + round + ': ' + settled.filter((s) => s.status === 'fulfilled').length + ' written\\n');
        }
        process.stdout.write('closed cleanly\\n');
      })().catch((err) => { process.stderr.write(String((err && err.stack) || err)); process.exit(3); });
    `;
    const child = spawn(process.execPath, ['-r', 'tsx/cjs', '-e', code], { cwd: REPO, env: { ...process.env, LANCEDB_LOG: 'error' } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const [code_, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
    assert.equal(signal, null, `the process was ended by ${signal}: ${stdout} ${stderr.slice(-500)}`);
    assert.equal(code_, 0, `exit ${code_} (134 is an abort): ${stdout} ${stderr.slice(-500)}`);
    assert.match(stdout, /closed cleanly/);

    // Every write the close let through is in the store; none was half-written.
    for (let round = 0; round < ROUNDS; round++) {
      const written = Number(new RegExp(`round ${round}: (\\d+) written`).exec(stdout)?.[1]);
      assert.equal(written, WRITES, `round ${round}: the writes under way were all answered`);
      const engine = await MemoryEngine.open({ storeUri: path.join(stores, `r${round}`), embedder: 'none', maintenanceIntervalMs: 0, summariseOrphanSessions: false });
      try {
        const memories = await engine.listMemories({ project: 'github.com/acme/app' });
        assert.equal(memories.length, WRITES + 1, `round ${round}`);
      } finally {
        await engine.close();
      }
    }
  });
});
