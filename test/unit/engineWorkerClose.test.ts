// The extension's engine process (EngineClient and dist/engineWorker.js). Closed while writes
// are under way (a window closing, the store's settings changed): the writes under way are kept.
// It ran as a thread of the extension host, which aborted the whole host (SIGABRT) when ended
// under native work, and crashed it (SIGSEGV) once the host had LanceDB on another thread. The
// hosts here run in a process of their own, so that a crash is seen as their exit, not as the end
// of this test run.

import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { EngineClient } from '../../src/extension/engineWorker/engineClient';
import { engineClientOptions } from './fixtures/engineClient';
import { buildNodeBundle } from './cliFixture';
import { removeDir, tempDir } from './mcpFixture';

const REPO = path.resolve(__dirname, '..', '..');
const ROUNDS = 4;
const WRITES = 20;
const HOST_ROUNDS = 8;
const HOST_WRITES = 150;
const FIXTURE = path.join(__dirname, 'fixtures', 'engineClient.ts');

/** Runs `code` as the host (the extension host's part: EngineClient) in a Node process of its own; fails unless it exits 0, printing "closed cleanly". */
async function runHost(code: string): Promise<{ stdout: string }> {
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', '-e', code], { cwd: REPO, env: { ...process.env, LANCEDB_LOG: 'error' } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const [code_, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
  assert.equal(signal, null, `the process was ended by ${signal}: ${stdout} ${stderr.slice(-500)}`);
  assert.equal(code_, 0, `exit ${code_} (134 is an abort, 139 a segmentation fault): ${stdout} ${stderr.slice(-500)}`);
  assert.match(stdout, /closed cleanly/);
  return { stdout };
}

/** Whether a process runs (a zombie, ended but not yet reaped, does not). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('the engine process: closing it while writes are under way, a crash, a host that goes', function () {
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
      const { engineClientOptions } = require(${JSON.stringify(FIXTURE)});
      (async () => {
        for (let round = 0; round < ${ROUNDS}; round++) {
          const client = await EngineClient.start(engineClientOptions(${JSON.stringify(path.join(out, 'engineWorker.js'))}, path.join(${JSON.stringify(stores)}, 'r' + round), { embedder: { provider: 'hashed' } }));
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
    const { stdout } = await runHost(code);

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

  // The test runner and the CLI load LanceDB in their main thread. With the engine on a thread
  // of the same process, LanceDB's native layer (napi-rs 3.9.4) hands the buffers a write of the
  // engine's thread lets go of to the main thread's environment, which frees them there: the
  // process crashed (SIGSEGV, or glibc's malloc_consolidate abort) a few engines later.
  it('a host that has LanceDB loaded itself survives engines that write and close, one after another', async () => {
    const code = `
      const path = require('node:path');
      const lancedb = require('@lancedb/lancedb');
      const { EngineClient } = require(${JSON.stringify(path.join(REPO, 'src/extension/engineWorker/engineClient'))});
      const { engineClientOptions } = require(${JSON.stringify(FIXTURE)});
      (async () => {
        const own = await (await lancedb.connect(path.join(${JSON.stringify(stores)}, 'host'))).createTable('rows', [{ id: 0, text: 'host' }], { mode: 'overwrite' });
        for (let round = 0; round < ${HOST_ROUNDS}; round++) {
          const client = await EngineClient.start(engineClientOptions(${JSON.stringify(path.join(out, 'engineWorker.js'))}, path.join(${JSON.stringify(stores)}, 'h' + round)));
          const scope = { project: 'github.com/acme/app' };
          for (let i = 0; i < ${HOST_WRITES}; i++) await client.observe([{ type: 'note', title: 'note ' + i, narrative: 'round ' + round + ' write ' + i + ' '.padEnd(400, 'x') }], scope);
          await own.add([{ id: round + 1, text: 'host round ' + round }]);
          await client.close();
          process.stdout.write('round ' + round + ' ');
        }
        if (global.gc) global.gc();
        process.stdout.write('rows ' + (await own.countRows()) + '\\nclosed cleanly\\n');
      })().catch((err) => { process.stderr.write(String((err && err.stack) || err)); process.exit(3); });
    `;
    const { stdout } = await runHost(code);
    assert.match(stdout, new RegExp(`rows ${HOST_ROUNDS + 1}`));
    for (let round = 0; round < HOST_ROUNDS; round += HOST_ROUNDS - 1) {
      const engine = await MemoryEngine.open({ storeUri: path.join(stores, `h${round}`), embedder: 'none', maintenanceIntervalMs: 0, summariseOrphanSessions: false });
      try {
        assert.equal((await engine.stats({ project: 'github.com/acme/app' })).observations, HOST_WRITES, `round ${round}`);
      } finally {
        await engine.close();
      }
    }
  });

  it('a crash of the engine process leaves the host running: a call under way fails saying how it ended, and the store opens again', async () => {
    const storeUri = path.join(stores, 'crash');
    const scope = { project: 'github.com/acme/app' };
    const client = await EngineClient.start(engineClientOptions(path.join(out, 'engineWorker.js'), storeUri));
    await client.observe([{ type: 'note', title: 'written before the crash', narrative: 'kept' }], scope);
    const pid = client.pid!;
    assert.notEqual(pid, process.pid);
    process.kill(pid, 'SIGSTOP');
    const underWay = client.observe([{ type: 'note', title: 'asked of a stopped engine', narrative: 'lost' }], scope);
    process.kill(pid, 'SIGKILL');
    await assert.rejects(underWay, /The Code Memory engine stopped \(signal SIGKILL\)\. It restarts on the next use\./);
    await client.exited;
    await assert.rejects(client.observe([{ type: 'note', title: 'after', narrative: 'x' }], scope), /The Code Memory engine is closed\./);

    const again = await EngineClient.start(engineClientOptions(path.join(out, 'engineWorker.js'), storeUri));
    try {
      assert.deepEqual((await again.search('written before the crash', { scope, limit: 5 })).map((h) => h.cell.title), ['written before the crash']);
    } finally {
      await again.close();
    }
  });

  it("a crash's message ends with the engine's last output, also a line printed as it died", async () => {
    // A stand-in engine: ready at once, and at the first call it prints a long trace (more than a
    // pipe holds), its last line, and exits, as a native panic does (written at once, as Rust's
    // panic hook does: Node's own stderr to a pipe may drop what process.exit finds unwritten).
    const fake = path.join(out, 'panics.js');
    fs.writeFileSync(
      fake,
      `process.on('message', (m) => {
        if (m.type === 'open') process.send({ type: 'ready', storeUri: 'x', embedder: null });
        else { require('node:fs').writeSync(2, 'frame\\n'.repeat(60000) + 'thread panicked: the last words\\n'); process.exit(101); }
      });`,
    );
    for (let i = 0; i < 5; i++) {
      const client = await EngineClient.start(engineClientOptions(fake, 'x'));
      await assert.rejects(client.stats({ project: 'github.com/acme/app' }), /The Code Memory engine stopped \(exit code 101\)\. It restarts on the next use\. Its last output: .*thread panicked: the last words$/);
    }
  });

  it('a host that goes (killed) leaves no engine process behind: the engine closes its store and ends', async () => {
    const storeUri = path.join(stores, 'orphan');
    const code = `
      const { EngineClient } = require(${JSON.stringify(path.join(REPO, 'src/extension/engineWorker/engineClient'))});
      const { engineClientOptions } = require(${JSON.stringify(FIXTURE)});
      (async () => {
        const client = await EngineClient.start(engineClientOptions(${JSON.stringify(path.join(out, 'engineWorker.js'))}, ${JSON.stringify(storeUri)}));
        await client.observe([{ type: 'note', title: 'written before the host went', narrative: 'kept' }], { project: 'github.com/acme/app' });
        process.stdout.write('engine ' + client.pid + '\\n');
        setInterval(() => undefined, 1000);
      })();
    `;
    const host = spawn(process.execPath, ['-r', 'tsx/cjs', '-e', code], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    const pid = await new Promise<number>((resolve, reject) => {
      host.stdout.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
        const m = /engine (\d+)/.exec(stdout);
        if (m) resolve(Number(m[1]));
      });
      host.once('exit', (c) => reject(new Error(`the host ended (${c}) before its engine started: ${stdout}`)));
    });
    assert.equal(running(pid), true, 'control: the engine runs while its host does');
    host.kill('SIGKILL');
    const until = Date.now() + 30_000;
    while (running(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    assert.equal(running(pid), false, 'the engine process still runs 30 s after its host went');
    const engine = await MemoryEngine.open({ storeUri, embedder: 'none', maintenanceIntervalMs: 0, summariseOrphanSessions: false });
    try {
      const stats = await engine.stats({ project: 'github.com/acme/app' });
      assert.equal(stats.observations, 1);
      // The session the host's capture opened was ended by the engine's close, with its summary.
      assert.equal(stats.session_summaries, 1, 'the store was not closed: the open session has no summary');
    } finally {
      await engine.close();
    }
  });
});
