// A lease whose holder closed but could not remove its file (a full disk refuses the lock file the
// release is written under): the file names a live process, this one, and a time not yet past.
// Another engine this process opens on the store (a window reopening it once space is freed)
// must not wait for that lease to expire before its upkeep (the repair of cells, the backfill) runs.

import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MaintenanceLease } from '../../src/core/store/lease';

describe('a lease its holder gave up but could not release', function () {
  this.timeout(60_000);
  let dir = '';
  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-lease-full-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'ignore' });
    } catch {
      fs.rmSync(dir, { recursive: true, force: true });
      this.skip();
    }
  });
  after(() => {
    try {
      execFileSync('umount', ['-l', dir]);
    } catch {
      // not mounted
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is taken at once by another lease of the same process, and still not by one of another process', async () => {
    const closed = new MaintenanceLease(dir);
    assert.equal(await closed.refresh(), true);
    const filler = path.join(dir, 'filler');
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=4k', 'count=64'], { stdio: 'ignore' });
    } catch {
      // dd stops at the full disk: that is the point
    }
    await closed.release();
    assert.ok(fs.existsSync(path.join(dir, 'maintenance.lease')), 'control: the full disk kept the release from removing the lease file');
    fs.rmSync(filler);

    const reopened = new MaintenanceLease(dir);
    try {
      assert.equal(await reopened.refresh(), true, 'the lease this process gave up is free to it at once');
      // What another process holds (a live holder, not expired) is not taken.
      const lease = JSON.parse(fs.readFileSync(path.join(dir, 'maintenance.lease'), 'utf8'));
      await reopened.release();
      fs.writeFileSync(path.join(dir, 'maintenance.lease'), JSON.stringify({ ...lease, token: 'another-process-lease', pid: process.ppid, started: undefined }));
      assert.equal(await new MaintenanceLease(dir).refresh(), false, "another process's live lease is not taken");
    } finally {
      await reopened.release();
    }
  });
});
