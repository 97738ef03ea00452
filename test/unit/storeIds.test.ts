import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LocalBlockAllocator, RandomBlockAllocator } from '../../src/core/store/ids';

describe('store: id allocation', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-ids-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('hands out disjoint ascending ids to allocators sharing a folder', async () => {
    const a = new LocalBlockAllocator(dir, async () => 1, 16);
    const b = new LocalBlockAllocator(dir, async () => 1, 16);
    const got = await Promise.all([...Array(20)].map((_, i) => (i % 2 ? a : b).allocate(7)));
    const all = got.flat();
    assert.equal(new Set(all).size, all.length);
    for (const ids of got) assert.deepEqual(ids, [...ids].sort((x, y) => x - y));
    assert.ok(all.every((id) => Number.isSafeInteger(id) && id >= 1));
  });

  it('starts above the stored ids when the counter file is missing, and honours ensureAtLeast', async () => {
    const a = new LocalBlockAllocator(dir, async () => 5001, 10);
    assert.deepEqual(await a.allocate(2), [5001, 5002]);
    await a.ensureAtLeast(9000);
    const b = new LocalBlockAllocator(dir, async () => 1, 10);
    assert.deepEqual(await b.allocate(1), [9000]);
    assert.equal(fs.readFileSync(path.join(dir, 'ids.next'), 'utf8'), '9010');
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
