// Lists of user data as long as a big project makes them (a session of 200,000 observations, a
// forget of 200,000 at once, a project of 200,000 sessions) go through code that once spread them
// into a call (`Math.max(...ids)`, `out.push(...rows)`), which overflows the call stack past
// ~120,000 items: the end of a session, a forget, the id allocator's reservation, the details
// panel's timelines. The engine's steps run in a child process with a small stack (fixtures/bigProject.ts),
// where a spread overflows at ~20,000 items. src/core/lists.ts holds the helpers that take a list
// of any length.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as path from 'node:path';
import type { SessionInfo } from '../../src/core/api';
import { append, largest, smallest } from '../../src/core/lists';
import { LocalBlockAllocator } from '../../src/core/store/ids';
import type { TimelinePoint } from '../../src/extension/webviews/timeline';
import { withVscodeStub } from './vscodeStub';

// The timeline's module reads capturedLog, which loads `vscode`: none of it is used here.
const { fileActivitySvg, sessionsSvg } = withVscodeStub({}, () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../../src/extension/webviews/timeline') as typeof import('../../src/extension/webviews/timeline');
});

const MANY = 200_000;
const AT = 1_767_225_600_000;
const BIG_PROJECT = path.join(__dirname, 'fixtures', 'bigProject.ts');
/** Observations enough to overflow a 100 KB stack when spread into one call (~15,000 do). */
const BIG_SESSION = 20_000;

/** Runs `step` of fixtures/bigProject.ts on a new store of BIG_SESSION observations in `dir`, with a 100 KB stack; its printed outcome. */
async function bigProject(dir: string, step: 'end' | 'forget'): Promise<Record<string, unknown>> {
  const child = spawn(process.execPath, ['--stack-size=100', '-r', require.resolve('tsx/cjs'), BIG_PROJECT, dir, String(BIG_SESSION), step], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0, `${step} failed: ${err.split('\n').slice(0, 6).join('\n')}`);
  return JSON.parse(out.trim().split('\n').pop() as string) as Record<string, unknown>;
}

describe('long lists of user data', function () {
  this.timeout(120_000);
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-long-lists-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('ends a session of many observations: its summary written, its edits merged', async () => {
    const outcome = await bigProject(dir, 'end');
    assert.equal(typeof outcome.summary, 'number');
    assert.equal(outcome.merged, 'merged');
  });

  it('forgets many observations at once', async () => {
    const outcome = await bigProject(dir, 'forget');
    assert.equal(outcome.left, 0, `still stored after the forget (it reported ${String(outcome.forgotten)} forgotten)`);
  });

  it('reserves ids past 200,000 given at once (an import reserves its batches)', async () => {
    const allocator = new LocalBlockAllocator(dir, async () => 1, 10);
    const ids = Array.from({ length: MANY }, (_, i) => i + 1);
    assert.deepEqual(await allocator.reserve(ids), [1, MANY + 1]);
  });

  it('draws the activity per file of a session of 200,000 observations', () => {
    const points: TimelinePoint[] = Array.from({ length: MANY }, (_, i) => ({ at: AT + i * 1000, type: 'edit', files: [`src/f${i}.ts`], title: `edit ${i}` }));
    const svg = fileActivitySvg(points);
    assert.match(svg, /<svg class="timeline"/);
    assert.match(svg, new RegExp(`${MANY - 14} more file\\(s\\) not shown`));
  });

  it("draws a project's 200,000 sessions", () => {
    const sessions: SessionInfo[] = Array.from({ length: MANY }, (_, i) => ({
      memory_session_id: `s-${i}`,
      project: 'p',
      branch: null,
      started_at_epoch: AT + i * 60_000,
      ended_at_epoch: AT + i * 60_000 + 30_000,
      observation_count: i % 50,
      summary: null,
    }));
    const svg = sessionsSvg(sessions, 's-7');
    assert.match(svg, /<svg/);
  });

  it('append, largest and smallest take lists of any length, as push, Math.max and Math.min take short ones', () => {
    const long = Array.from({ length: MANY }, (_, i) => (i * 7919) % MANY);
    assert.equal(append([1, 2], long).length, MANY + 2);
    assert.equal(largest(long), MANY - 1);
    assert.equal(smallest(long), 0);
    assert.equal(largest(new Set(long).values()), MANY - 1);
    for (const short of [[], [3], [2, 9, -4], [1, NaN, 5], [-Infinity]]) {
      assert.deepEqual(largest(short), Math.max(...short), `largest of ${short.join(', ')}`);
      assert.deepEqual(smallest(short), Math.min(...short), `smallest of ${short.join(', ')}`);
    }
  });
});
