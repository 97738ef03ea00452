// Closing the window as VS Code does it: deactivate() is called, and the extension's
// subscriptions are disposed right after, without waiting for the promise it returned.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CaptureQueue } from '../../src/extension/capture/captureQueue';
import type { CaptureEvent } from '../../src/extension/capture/events';
import { WindowShutdown } from '../../src/extension/windowShutdown';

function created(name: string): CaptureEvent {
  return { kind: 'create', folder: 'file:///ws', path: name, at: 0 };
}

function appendTo(file: string): (events: CaptureEvent[]) => Promise<number> {
  return async (events) => {
    await fs.promises.appendFile(file, events.map((e) => ('path' in e ? e.path : e.kind) + '\n').join(''));
    return events.length;
  };
}

describe('extension: closing the window', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-close-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes the pending capture even though the subscriptions are disposed while it runs', async () => {
    const file = path.join(dir, 'captured.txt');
    const queue = new CaptureQueue(appendTo(file), { delayMs: 60_000 });
    queue.push(created('a.ts'));
    queue.push(created('b.ts'));
    const order: string[] = [];
    const shutdown = new WindowShutdown(
      async () => {
        await queue.drainAndDispose(60_000);
        order.push('capture written');
      },
      [{ dispose: () => order.push('services disposed') }],
    );
    const deactivating = shutdown.run(60_000);
    shutdown.dispose();
    await deactivating;
    assert.equal(fs.readFileSync(file, 'utf8'), 'a.ts\nb.ts\n');
    assert.deepEqual(order, ['capture written', 'services disposed']);
  });

  it('runs once, whichever starts it, and stops waiting after its timeout', async () => {
    // A write into a FIFO nobody reads hangs, as a store that does not answer would.
    const fifo = path.join(dir, 'hung');
    execFileSync('mkfifo', [fifo]);
    const queue = new CaptureQueue(appendTo(fifo), { delayMs: 60_000 });
    queue.push(created('a.ts'));
    let runs = 0;
    let disposed = 0;
    const shutdown = new WindowShutdown(
      async () => {
        runs++;
        await queue.flush();
      },
      [{ dispose: () => disposed++ }],
    );
    shutdown.dispose();
    await shutdown.run(50);
    await shutdown.run(50);
    assert.equal(runs, 1);
    assert.equal(disposed, 0, 'services disposed while the shutdown still used them');
    // The store answers at last: the shutdown ends, and only then are the services disposed.
    assert.equal(await fs.promises.readFile(fifo, 'utf8'), 'a.ts\n');
    await shutdown.run(60_000);
    assert.equal(disposed, 1);
    queue.dispose();
  });
});
