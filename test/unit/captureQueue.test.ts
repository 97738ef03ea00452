// The capture queue between the editor's event handlers and the store, with a sink that
// writes each batch as JSON lines to a real file: while the file's folder is missing every
// write fails, as on a full or unmounted disk, and a FIFO nobody reads is a write that hangs.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CaptureSink } from '../../src/extension/capture/captureQueue';
import { CaptureQueue } from '../../src/extension/capture/captureQueue';
import type { CaptureEvent } from '../../src/extension/capture/events';

function created(name: string): CaptureEvent {
  return { kind: 'create', folder: 'file:///ws', path: name, at: 0 };
}

/** Appends each batch to `file`; `onFailure` runs after a write failed, before the queue hears of it. */
function fileSink(file: string, onFailure: () => void = () => undefined): CaptureSink & { calls: number } {
  const sink = async (events: CaptureEvent[]): Promise<number> => {
    sink.calls++;
    try {
      await fs.promises.appendFile(file, events.map((e) => JSON.stringify(e) + '\n').join(''));
    } catch (error) {
      onFailure();
      throw error;
    }
    return events.length;
  };
  sink.calls = 0;
  return sink;
}

function writtenPaths(file: string): string[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { path: string }).path);
}

// A drain starts only from flush() here: the timer's delay is never reached.
const options = { delayMs: 60_000, maxBatch: 500, maxPending: 5000, maxAttempts: 3, retryDelayMs: 1 };

describe('extension capture: the queue to the store', () => {
  let dir: string;
  let out: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-queue-'));
    out = path.join(dir, 'out');
    file = path.join(out, 'captured.jsonl');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('retries a batch whose write failed, and writes it before the events that came after', async () => {
    // The first write fails; meanwhile an event arrives and the disk comes back.
    const sink = fileSink(file, () => {
      if (sink.calls === 1) {
        queue.push(created('c.ts'));
        fs.mkdirSync(out);
      }
    });
    const queue = new CaptureQueue(sink, options);
    queue.push(created('a.ts'));
    queue.push(created('b.ts'));
    await queue.flush();
    assert.deepEqual(writtenPaths(file), ['a.ts', 'b.ts', 'c.ts']);
    assert.equal(queue.stats.errors, 1);
    assert.equal(queue.stats.dropped, 0);
    assert.equal(queue.stats.observations, 3);
    assert.match(queue.stats.lastError ?? '', /ENOENT/);
    queue.dispose();
  });

  it('drops a batch after three failed writes, counting it with the error, and goes on with the next', async () => {
    const sink = fileSink(file);
    const queue = new CaptureQueue(sink, options);
    queue.push(created('a.ts'));
    queue.push(created('b.ts'));
    await queue.flush();
    assert.equal(sink.calls, 3);
    assert.equal(queue.stats.errors, 3);
    assert.equal(queue.stats.dropped, 2);
    assert.match(queue.stats.lastError ?? '', /ENOENT/);
    assert.equal(queue.size, 0);
    fs.mkdirSync(out);
    queue.push(created('c.ts'));
    await queue.flush();
    assert.deepEqual(writtenPaths(file), ['c.ts']);
    assert.equal(queue.stats.dropped, 2);
    queue.dispose();
  });

  it('keeps at most maxPending events while a batch waits for its retry, dropping the oldest', async () => {
    const sink = fileSink(file, () => {
      if (sink.calls > 1) return;
      for (const name of ['d.ts', 'e.ts', 'f.ts', 'g.ts']) queue.push(created(name));
      fs.mkdirSync(out);
    });
    const queue = new CaptureQueue(sink, { ...options, maxBatch: 3, maxPending: 5 });
    for (const name of ['a.ts', 'b.ts', 'c.ts']) queue.push(created(name));
    await queue.flush();
    // Seven events for five places: the two oldest, from the failed batch, made way.
    assert.deepEqual(writtenPaths(file), ['c.ts', 'd.ts', 'e.ts', 'f.ts', 'g.ts']);
    assert.equal(queue.stats.dropped, 2);
    assert.equal(queue.stats.errors, 1);
    queue.dispose();
  });

  it('writes what is pending when it closes, and then takes no more events', async () => {
    fs.mkdirSync(out);
    const queue = new CaptureQueue(fileSink(file), options);
    queue.push(created('a.ts'));
    queue.push(created('b.ts'));
    await queue.drainAndDispose(60_000);
    assert.deepEqual(writtenPaths(file), ['a.ts', 'b.ts']);
    queue.push(created('c.ts'));
    assert.equal(queue.size, 0);
    await queue.flush();
    assert.deepEqual(writtenPaths(file), ['a.ts', 'b.ts']);
    assert.deepEqual([queue.stats.events, queue.stats.observations, queue.stats.dropped], [2, 2, 0]);
  });

  it('counts what it leaves unwritten when disposed without closing', () => {
    fs.mkdirSync(out);
    const queue = new CaptureQueue(fileSink(file), options);
    queue.push(created('a.ts'));
    queue.push(created('b.ts'));
    queue.dispose();
    assert.equal(queue.stats.dropped, 2);
    assert.match(queue.stats.lastError ?? '', /2 events/);
    assert.equal(fs.existsSync(file), false);
  });

  it('stops waiting for a write that hangs once its close timeout is over, and never retries it', async () => {
    fs.mkdirSync(out);
    execFileSync('mkfifo', [file]);
    const sink = fileSink(file);
    const queue = new CaptureQueue(sink, options);
    queue.push(created('a.ts'));
    await queue.drainAndDispose(100);
    assert.equal(sink.calls, 1);
    assert.equal(queue.size, 0);
    queue.push(created('b.ts'));
    assert.equal(queue.size, 0);
    // Reading the FIFO lets the hung write finish: the one batch, once.
    const text = await fs.promises.readFile(file, 'utf8');
    assert.deepEqual(
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { path: string }).path),
      ['a.ts'],
    );
    assert.equal(sink.calls, 1);
  });
});
