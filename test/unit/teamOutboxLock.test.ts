import { strict as assert } from 'node:assert';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Outbox } from '../../src/core/team/outbox';

// Another process (an editor window, or the CLI) sending the same outbox: it takes the sending
// lock, says so, and holds it until killed (the timer keeps it running: a pending promise alone
// does not, and a sender that exited has left its lock to the next).
const SENDER = `
setInterval(() => {}, 60_000);
const { Outbox } = require(${JSON.stringify(path.join(__dirname, '../../src/core/team/outbox.ts'))});
new Outbox(process.argv[1]).exclusive(() => { process.stdout.write('sending\\n'); return new Promise(() => {}); });
`;

describe('team store: one sender per outbox', function () {
  this.timeout(60_000);
  let dir: string;
  let sender: ChildProcess | undefined;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-outbox-'));
  });
  afterEach(async () => {
    if (sender && sender.exitCode === null && sender.signalCode === null) {
      sender.kill('SIGKILL');
      await once(sender, 'exit');
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function startSender(): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['-r', 'tsx/cjs', '-e', SENDER, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout?.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`the sender exited (${code})`)));
    });
    return child;
  }

  function lockFiles(): string[] {
    return fs.readdirSync(dir).filter((n) => n.includes('lock'));
  }

  it('leaves a long send to the process doing it, however long ago it began, and takes over at once from one that died', async () => {
    sender = await startSender();
    const [lock] = lockFiles();
    assert.ok(lock, 'the sender holds a lock file');
    // A send of a large queue over a slow network: its lock was taken an hour ago.
    const anHourAgo = new Date(Date.now() - 3_600_000);
    fs.utimesSync(path.join(dir, lock), anHourAgo, anHourAgo);
    let ran = false;
    assert.equal(await new Outbox(dir).exclusive(async () => void (ran = true)), false);
    assert.equal(ran, false, 'a second sender sent the queue the running one is sending');
    sender.kill('SIGKILL');
    await once(sender, 'exit');
    // Killed mid-send: the next sender goes at once.
    assert.equal(await new Outbox(dir).exclusive(async () => void (ran = true)), true);
    assert.equal(ran, true);
    assert.deepEqual(lockFiles(), []);
  });

  it('takes over, once its heartbeat stopped, the lock of a thread of this process that was terminated mid-send', async () => {
    // A holder with this process's pid that is gone: its heartbeat, not its pid, tells.
    const code = `require('tsx/cjs');
const { parentPort, workerData } = require('node:worker_threads');
setInterval(() => {}, 60_000);
const { Outbox } = require(${JSON.stringify(path.join(__dirname, '../../src/core/team/outbox.ts'))});
new Outbox(workerData).exclusive(() => { parentPort.postMessage('sending'); return new Promise(() => {}); });`;
    const worker = new Worker(code, { eval: true, workerData: dir });
    await new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
    });
    assert.equal(await new Outbox(dir).exclusive(async () => undefined), false, 'the running thread lost its lock');
    await worker.terminate();
    // The next engine thread sends once the lock has gone untouched for its stale time (10 s).
    const until = Date.now() + 20_000;
    let sent = false;
    while (!sent && Date.now() < until) {
      sent = await new Outbox(dir).exclusive(async () => undefined);
      if (!sent) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.equal(sent, true, 'the outbox stayed locked by a thread that no longer exists');
  });

  it("leaves a running sender of the previous release its lock (the sender's pid, never touched)", async () => {
    const old = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    sender = old;
    await once(old, 'spawn');
    const lock = path.join(dir, '.sending.lock');
    fs.writeFileSync(lock, String(old.pid));
    const minuteAgo = new Date(Date.now() - 60_000);
    fs.utimesSync(lock, minuteAgo, minuteAgo);
    assert.equal(await new Outbox(dir).exclusive(async () => undefined), false, 'a second sender sent the queue a live older sender is sending');
    old.kill('SIGKILL');
    await once(old, 'exit');
    assert.equal(await new Outbox(dir).exclusive(async () => undefined), true);
  });
});

