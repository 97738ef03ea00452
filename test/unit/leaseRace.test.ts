// The file lease (lease.ts) when its holder renews it at the moment another process takes it over
// because it expired: as the store's maintenance lease (one process per store does upkeep) and as
// capture's lease per repository (one window stores its file and checkout events). Only one may
// hold it, or both do the upkeep, and the same event is stored twice.

import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MaintenanceLease } from '../../src/core/store/lease';
import { FolderLeases } from '../../src/extension/capture/folderLeases';

const ROUNDS = 300;

/** Expires the lease file as its holder left it, then asks both at once; counts the rounds both held it. */
async function bothHeld(file: string, ask: () => Promise<[boolean, boolean]>): Promise<number> {
  const held = JSON.parse(fs.readFileSync(file, 'utf8'));
  let both = 0;
  for (let round = 0; round < ROUNDS; round++) {
    // The holder has renewed nothing for longer than the lease's time: expired, its process alive.
    fs.writeFileSync(file, JSON.stringify({ ...held, expires: Date.now() - 1 }));
    const [a, b] = await ask();
    if (a && b) both++;
  }
  return both;
}

describe('the file lease at expiry', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-lease-race-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the store\'s maintenance lease: its holder renewing while another process takes it over never leaves both holding it', async () => {
    const a = new MaintenanceLease(dir);
    const b = new MaintenanceLease(dir);
    try {
      assert.equal(await a.refresh(), true);
      assert.equal(await b.refresh(), false, 'control: a live lease is not taken');
      const both = await bothHeld(path.join(dir, 'maintenance.lease'), async () => Promise.all([a.refresh(), b.refresh()]));
      assert.equal(both, 0, `both processes held the maintenance lease in ${both} of ${ROUNDS} rounds`);
    } finally {
      await a.release();
      await b.release();
    }
  });

  it('capture\'s lease: two windows on one repository, the holder renewing while the other takes it, never both record', async () => {
    const store = '/tmp/some-store';
    const repo = 'file:///work/shop';
    const a = new FolderLeases(() => store, dir);
    const b = new FolderLeases(() => store, dir);
    const file = path.join(dir, `${createHash('sha256').update(`${store}\0${repo}`).digest('hex').slice(0, 32)}.lease`);
    try {
      assert.deepEqual(await a.ranksBefore(repo), [], 'control: the first window ranks first');
      const both = await bothHeld(file, async () => {
        const [ha, hb] = await Promise.all([a.ranksBefore(repo), b.ranksBefore(repo)]);
        return [ha.length === 0, hb.length === 0];
      });
      assert.equal(both, 0, `both windows ranked first (and recorded the same event) in ${both} of ${ROUNDS} rounds`);
    } finally {
      await a.release();
      await b.release();
    }
  });
});
