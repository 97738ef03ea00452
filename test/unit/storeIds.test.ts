import { strict as assert } from 'node:assert';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { LocalBlockAllocator, RandomBlockAllocator } from '../../src/core/store/ids';
import { LockFile } from '../../src/core/store/lockFile';
import { MaintenanceLease } from '../../src/core/store/lease';
import { processStarted, thisProcess } from '../../src/core/store/processRef';

const TSX = require.resolve('tsx/cli');
const ALLOCATOR = path.join(__dirname, 'fixtures', 'idAllocator.ts');

// Another process that takes the id lock the way the allocator does, claims ids `from`..`to`
// when it gets a line on stdin, then releases the lock and exits.
const HOLDER = `
const fs = require('node:fs');
const os = require('node:os');
const [lock, counter, to] = process.argv.slice(1);
fs.writeFileSync(lock, JSON.stringify({ pid: process.pid, host: os.hostname(), at: Date.now(), token: 'holder' }), { flag: 'wx' });
process.stdout.write('held\\n');
process.stdin.once('data', () => {
  fs.writeFileSync(counter, to);
  fs.unlinkSync(lock);
  process.exit(0);
});
`;

/** The next line of a child's output; lines that came before anyone asked are kept. */
function lineReader(child: ChildProcess): () => Promise<string> {
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })[Symbol.asyncIterator]();
  return async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`child exited without writing a line (exit ${child.exitCode})`);
    return value;
  };
}

describe('store: id allocation', () => {
  let dir: string;
  let children: ChildProcess[];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-ids-'));
    children = [];
  });
  afterEach(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function holdLock(counterTo: number): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['-e', HOLDER, path.join(dir, 'ids.lock'), path.join(dir, 'ids.next'), String(counterTo)], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(child);
    assert.equal(await lineReader(child)(), 'held');
    return child;
  }

  function backdate(file: string): void {
    const anHourAgo = new Date(Date.now() - 3_600_000);
    fs.utimesSync(file, anHourAgo, anHourAgo);
  }

  /** Counts how often a waiter found the lock held; `reached` resolves at the `times`-th. */
  function waitCounter(times: number): { tick: () => void; reached: Promise<void> } {
    let count = 0;
    let reach!: () => void;
    const reached = new Promise<void>((resolve) => (reach = resolve));
    const tick = (): void => {
      if (++count === times) reach();
    };
    return { tick, reached };
  }

  /** 'waited' once the waiter has found the lock held three times; 'settled' if `work` ended first. */
  function waitedOrSettled(waits: { reached: Promise<void> }, work: Promise<unknown>): Promise<'waited' | 'settled'> {
    return Promise.race([waits.reached.then(() => 'waited' as const), work.then(() => 'settled' as const, () => 'settled' as const)]);
  }

  it('hands out disjoint ascending ids to allocators sharing a folder', async () => {
    const a = new LocalBlockAllocator(dir, async () => 1, 16);
    const b = new LocalBlockAllocator(dir, async () => 1, 16);
    const got = await Promise.all([...Array(20)].map((_, i) => (i % 2 ? a : b).allocate(7)));
    const all = got.flat();
    assert.equal(new Set(all).size, all.length);
    for (const ids of got) assert.deepEqual(ids, [...ids].sort((x, y) => x - y));
    assert.ok(all.every((id) => Number.isSafeInteger(id) && id >= 1));
  });

  it('hands every id to exactly one of three processes allocating at once', async function () {
    this.timeout(120_000);
    const calls = 80;
    const perCall = 5;
    // 80 x 5 = 400 ids per process, 50 whole blocks of 8: together exactly ids 1..1,200.
    const procs = [0, 1, 2].map(() => {
      const child = spawn(process.execPath, [TSX, ALLOCATOR, dir, String(calls), String(perCall), '8'], { stdio: ['pipe', 'pipe', 'inherit'] });
      children.push(child);
      const nextLine = lineReader(child);
      const ready = nextLine();
      const done = ready.then(async () => {
        const ids = JSON.parse(await nextLine()) as number[];
        const [code] = child.exitCode === null && child.signalCode === null ? await once(child, 'exit') : [child.exitCode];
        assert.equal(code, 0, 'an allocating process failed');
        return ids;
      });
      return { child, ready, done };
    });
    for (const { ready } of procs) assert.equal(await ready, 'ready');
    // All three start allocating at once.
    for (const { child } of procs) child.stdin?.write('go\n');
    const outputs = procs.map(({ done }) => done);
    const got = await Promise.all(outputs);
    for (const ids of got) assert.equal(ids.length, calls * perCall);
    const all = got.flat().sort((x, y) => x - y);
    assert.deepEqual(all, Array.from({ length: 3 * calls * perCall }, (_, i) => i + 1));
    assert.equal(fs.readFileSync(path.join(dir, 'ids.next'), 'utf8'), String(3 * calls * perCall + 1));
  });

  // With no counter to trust (missing, garbled, behind the stored ids) a claim starts past the
  // stored ids by this much: past what blocks other processes hold unused.
  const GAP = 2 ** 20;

  it('starts past the stored ids when the counter file is missing, and honours ensureAtLeast', async () => {
    const a = new LocalBlockAllocator(dir, async () => 5001, 10);
    assert.deepEqual(await a.allocate(2), [5001 + GAP, 5002 + GAP]);
    await a.ensureAtLeast(9000 + GAP);
    const b = new LocalBlockAllocator(dir, async () => 1, 10);
    assert.deepEqual(await b.allocate(1), [9000 + GAP]);
    assert.equal(fs.readFileSync(path.join(dir, 'ids.next'), 'utf8'), String(9010 + GAP));
  });

  it('starts at 1 in a new store (no counter, no stored id)', async () => {
    assert.deepEqual(await new LocalBlockAllocator(dir, async () => 1, 10).allocate(2), [1, 2]);
  });

  it('starts past the stored ids when the counter file says less (cut short, or restored from an older copy)', async () => {
    const a = new LocalBlockAllocator(dir, async () => 1, 10);
    assert.deepEqual(await a.allocate(1), [1]);
    fs.writeFileSync(path.join(dir, 'ids.next'), '5'); // the stored ids run to 300
    // Stored: 1-300 and 1000-1009 (a sparse history); every claim checks its block.
    const rangeUsed = async (lo: number, hi: number): Promise<boolean> => lo < 301 || (lo < 1010 && hi > 1000);
    const b = new LocalBlockAllocator(dir, async () => 1010, 10, { rangeUsed });
    assert.deepEqual(await b.allocate(2), [1010 + GAP, 1011 + GAP]);
    assert.equal(fs.readFileSync(path.join(dir, 'ids.next'), 'utf8'), String(1020 + GAP));
    const c = new LocalBlockAllocator(dir, async () => 1010, 10, { rangeUsed: async () => false });
    assert.deepEqual(await c.allocate(1), [1020 + GAP], 'a free block is taken as the counter says');
  });

  it('never hands two allocators of this process (two projects) the same ids when the counter is deleted or rolled back between their claims', async () => {
    const stored = new Set<number>();
    const rangeUsed = async (lo: number, hi: number): Promise<boolean> => [...stored].some((id) => id >= lo && id < hi);
    const floor = async (): Promise<number> => Math.max(0, ...stored) + 1;
    const a = new LocalBlockAllocator(dir, floor, 10, { rangeUsed });
    const b = new LocalBlockAllocator(dir, floor, 10, { rangeUsed });
    const handed: number[] = [];
    const take = async (x: LocalBlockAllocator, n: number): Promise<void> => {
      for (const id of await x.allocate(n)) {
        handed.push(id);
        stored.add(id);
      }
    };
    await take(a, 1);
    fs.rmSync(path.join(dir, 'ids.next'));
    await take(b, 1);
    await take(a, 3);
    fs.writeFileSync(path.join(dir, 'ids.next'), '2');
    await take(b, 12);
    await take(a, 8);
    assert.equal(new Set(handed).size, handed.length, `ids handed twice: ${handed.join(', ')}`);
  });

  it('reserves for an import only ids above every claimed block, and never hands them out', async () => {
    const a = new LocalBlockAllocator(dir, async () => 5001, 10);
    const G = GAP;
    assert.deepEqual(await a.allocate(3), [5001 + G, 5002 + G, 5003 + G]);
    // 5005 lies in a's block (claimed, not used up): not reservable. 5020 and up are.
    assert.deepEqual(await a.reserve([5005 + G, 5025 + G]), [5011 + G, 5026 + G]);
    assert.equal(await a.reserve([5005 + G]), null);
    const b = new LocalBlockAllocator(dir, async () => 1, 10);
    assert.deepEqual(await b.allocate(1), [5026 + G]);
    const rest = await a.allocate(8);
    assert.deepEqual(rest, [5004, 5005, 5006, 5007, 5008, 5009, 5010, 5036].map((n) => n + G));
  });

  it('waits for a lock held by a live process on this host, however old, and takes none of its ids', async () => {
    const lockPath = path.join(dir, 'ids.lock');
    fs.writeFileSync(path.join(dir, 'ids.next'), '1000');
    const holder = await holdLock(1100);
    backdate(lockPath);
    const waits = waitCounter(3);
    const work = new LocalBlockAllocator(dir, async () => 1, 10, { onLockWait: waits.tick }).allocate(1);
    assert.equal(await waitedOrSettled(waits, work), 'waited', `the allocator broke the lock of live process ${holder.pid}`);
    assert.equal(JSON.parse(fs.readFileSync(lockPath, 'utf8')).pid, holder.pid);
    holder.stdin?.write('release\n');
    assert.deepEqual(await work, [1100]);
    assert.equal(fs.existsSync(lockPath), false);
  });

  it('breaks at once the lock of a process on this host that died holding it', async () => {
    const lockPath = path.join(dir, 'ids.lock');
    fs.writeFileSync(path.join(dir, 'ids.next'), '1000');
    const holder = await holdLock(1100);
    holder.kill('SIGKILL');
    await once(holder, 'exit');
    assert.equal(JSON.parse(fs.readFileSync(lockPath, 'utf8')).pid, holder.pid);
    let waits = 0;
    const alloc = new LocalBlockAllocator(dir, async () => 1, 10, { onLockWait: () => waits++ });
    assert.deepEqual(await alloc.allocate(1), [1000]);
    assert.equal(waits, 0);
    assert.equal(fs.existsSync(lockPath), false);
  });

  it('breaks at once a lock whose pid now names another process (its holder ended, the pid was reused), and waits while it names its holder', async function () {
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    children.push(other);
    await once(other, 'spawn');
    const started = processStarted(other.pid as number);
    if (!started) this.skip(); // no start times here (not Linux): the pid alone decides
    const lockPath = path.join(dir, 'ids.lock');
    const held = (startedAt: string): string => JSON.stringify({ pid: other.pid, host: os.hostname(), started: startedAt, at: Date.now(), token: 'old' });
    // Written by a process that started at another time (before a reboot, say) and had this pid.
    fs.writeFileSync(lockPath, held(started.replace(/\/\d+$/, '/1')));
    let waits = 0;
    assert.equal(await new LockFile(lockPath, { onWait: () => waits++ }).withLock(async () => 'taken'), 'taken');
    assert.equal(waits, 0, `the lock of an ended holder was waited for because pid ${other.pid} runs again`);
    // Written by that very process: it holds the lock.
    fs.writeFileSync(lockPath, held(started));
    backdate(lockPath);
    const counter = waitCounter(3);
    const work = new LockFile(lockPath, { onWait: counter.tick }).withLock(async () => 'taken');
    assert.equal(await waitedOrSettled(counter, work), 'waited', 'the lock of a running holder was broken');
    fs.unlinkSync(lockPath);
    assert.equal(await work, 'taken');
  });

  it('breaks at once the lock of a holder that died and awaits its parent (a zombie still answers signals)', async function () {
    // `sleep 0` ends at once; the shell becomes `sleep 60`, which never reaps it.
    const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(parent);
    const zombie = Number(await lineReader(parent)());
    let state = '';
    for (let i = 0; i < 100 && state !== 'Z'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      state = (fs.existsSync(`/proc/${zombie}/stat`) ? fs.readFileSync(`/proc/${zombie}/stat`, 'utf8') : '').replace(/^.*\) /s, '')[0] ?? '';
    }
    if (state !== 'Z') this.skip(); // no /proc here
    const lockPath = path.join(dir, 'ids.lock');
    fs.writeFileSync(lockPath, JSON.stringify({ pid: zombie, host: os.hostname(), at: Date.now(), token: 'zombie' }));
    let waits = 0;
    assert.equal(await new LockFile(lockPath, { onWait: () => waits++ }).withLock(async () => 'taken'), 'taken');
    assert.equal(waits, 0, `the lock of dead process ${zombie} was waited for`);
  });

  it('judges the lock of a process in another pid namespace (a container with this host name) by its heartbeat, not by this namespace\'s pids', async () => {
    const lockPath = path.join(dir, 'ids.lock');
    // Pid 1 of another namespace: here pid 1 is init, running; there it may be anything.
    const container = JSON.stringify({ pid: 1, host: os.hostname(), pidns: 'pid:[1]', at: Date.now(), token: 'container' });
    fs.writeFileSync(lockPath, container);
    const waits = waitCounter(3);
    const work = new LockFile(lockPath, { onWait: waits.tick }).withLock(async () => 'taken');
    assert.equal(await waitedOrSettled(waits, work), 'waited', 'a fresh lock of a container process was broken');
    fs.unlinkSync(lockPath);
    assert.equal(await work, 'taken');
    fs.writeFileSync(lockPath, container);
    backdate(lockPath);
    let oldWaits = 0;
    assert.equal(await new LockFile(lockPath, { onWait: () => oldWaits++ }).withLock(async () => 'taken'), 'taken');
    assert.equal(oldWaits, 0, 'an untouched lock of a container process was waited for (pid 1 runs here)');
  });

  it('takes over the maintenance lease of an ended holder whose pid was reused, not that of a running one, before it expires', async function () {
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    children.push(other);
    await once(other, 'spawn');
    const started = processStarted(other.pid as number);
    if (!started) this.skip();
    const lease = (startedAt: string): string => JSON.stringify({ pid: other.pid, host: os.hostname(), started: startedAt, token: 'old', expires: Date.now() + 60_000 });
    fs.writeFileSync(path.join(dir, 'maintenance.lease'), lease(started));
    assert.equal(await new MaintenanceLease(dir).refresh(), false, 'the running holder lost its lease');
    fs.writeFileSync(path.join(dir, 'maintenance.lease'), lease(started.replace(/\/\d+$/, '/1')));
    assert.equal(await new MaintenanceLease(dir).refresh(), true, `the lease waited for pid ${other.pid}, which is not its holder`);
  });

  it('waits for a lock another thread of this process holds, and breaks one that thread stopped touching or an earlier process left', async () => {
    const lockPath = path.join(dir, 'ids.lock');
    for (const self of [thisProcess(), { pid: process.pid, host: os.hostname() }]) {
      const ours = (at: number): string => JSON.stringify({ ...self, at, token: `${process.pid}-${at}` });
      // As another thread of this process (the engine's worker thread) writes it, and touches it while it holds it.
      fs.writeFileSync(lockPath, ours(Date.now()));
      const waits = waitCounter(3);
      const work = new LockFile(lockPath, { onWait: waits.tick }).withLock(async () => 'taken');
      assert.equal(await waitedOrSettled(waits, work), 'waited', `a lock of this very process was broken (${JSON.stringify(self)})`);
      fs.unlinkSync(lockPath);
      assert.equal(await work, 'taken');
      // Untouched for an hour: the thread that held it was terminated.
      fs.writeFileSync(lockPath, ours(Date.now()));
      backdate(lockPath);
      let staleWaits = 0;
      assert.equal(await new LockFile(lockPath, { onWait: () => staleWaits++ }).withLock(async () => 'taken'), 'taken');
      assert.equal(staleWaits, 0, `a lock this process's threads stopped touching was waited for (${JSON.stringify(self)})`);
    }
    // Written an hour before this process started, fresh on disk: an earlier process that had the same pid.
    fs.writeFileSync(lockPath, JSON.stringify({ pid: process.pid, host: os.hostname(), at: Date.now() - process.uptime() * 1000 - 3_600_000, token: 'earlier' }));
    let oldWaits = 0;
    assert.equal(await new LockFile(lockPath, { onWait: () => oldWaits++ }).withLock(async () => 42), 42);
    assert.equal(oldWaits, 0);
    assert.equal(fs.existsSync(lockPath), false);
  });

  it('judges a lock from another host, or one it cannot read, by how long ago it was touched', async () => {
    const lockPath = path.join(dir, 'ids.lock');
    const elsewhere = JSON.stringify({ pid: process.pid, host: `not-${os.hostname()}`, at: Date.now(), token: 'remote' });
    for (const text of [elsewhere, '', '{"pid": 12']) {
      // Fresh: its holder may be working; wait, and take the lock once it is gone.
      fs.writeFileSync(lockPath, text);
      const waits = waitCounter(3);
      const work = new LockFile(lockPath, { onWait: waits.tick }).withLock(async () => fs.readFileSync(lockPath, 'utf8'));
      assert.equal(await waitedOrSettled(waits, work), 'waited', `a fresh lock ${JSON.stringify(text)} was broken`);
      fs.unlinkSync(lockPath);
      assert.notEqual(await work, text);
      // Untouched for an hour: its holder stopped; broken at once.
      fs.writeFileSync(lockPath, text);
      backdate(lockPath);
      let oldWaits = 0;
      assert.equal(await new LockFile(lockPath, { onWait: () => oldWaits++ }).withLock(async () => 'taken'), 'taken', JSON.stringify(text));
      assert.equal(oldWaits, 0, `an old lock ${JSON.stringify(text)} was waited for`);
    }
  });

  it('keeps touching the lock while it holds it, so other hosts do not judge it stale', async function () {
    this.timeout(30_000);
    const lockPath = path.join(dir, 'ids.lock');
    await new LockFile(lockPath).withLock(async () => {
      backdate(lockPath);
      const old = fs.statSync(lockPath).mtimeMs;
      while (fs.statSync(lockPath).mtimeMs === old) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(fs.statSync(lockPath).mtimeMs > Date.now() - 60_000, 'the lock was touched, but not to now');
    });
    assert.equal(fs.existsSync(lockPath), false);
  });

  it('creates the counter and lock files readable by their owner only', async () => {
    const counter = path.join(dir, 'ids.next');
    fs.writeFileSync(counter, '7');
    fs.chmodSync(counter, 0o644);
    // As a crash between writing the counter and renaming it into place leaves it.
    const leftover = `${counter}.${process.pid}.tmp`;
    fs.writeFileSync(leftover, '3');
    fs.chmodSync(leftover, 0o644);
    const lockPath = path.join(dir, 'ids.lock');
    const mode = await new LockFile(lockPath).withLock(async () => fs.statSync(lockPath).mode & 0o777);
    assert.equal(mode.toString(8), '600');
    assert.deepEqual(await new LocalBlockAllocator(dir, async () => 1, 10).allocate(1), [7]);
    assert.equal((fs.statSync(counter).mode & 0o777).toString(8), '600');
    assert.deepEqual(fs.readdirSync(dir).sort(), ['ids.next']);
  });

  it('claims unused random blocks on object storage, above the local range', async () => {
    const used: [number, number][] = [];
    let first = true;
    const alloc = new RandomBlockAllocator(async (lo, hi) => {
      used.push([lo, hi]);
      if (first) {
        first = false;
        return true; // the first block drawn is taken: draw another
      }
      return false;
    });
    const ids = await alloc.allocate(3);
    assert.equal(used.length, 2);
    assert.deepEqual(ids, [used[1][0], used[1][0] + 1, used[1][0] + 2]);
    assert.ok(ids[0] >= 2 ** 32 && ids[2] < Number.MAX_SAFE_INTEGER);
  });
});
