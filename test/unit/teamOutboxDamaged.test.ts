// A queued team write is renamed into place whole, so a file of the outbox that is no entry (a
// damaged disk, a hand edit) never becomes one. It held back every later share ("Cannot read
// properties of null"), kept the queued count above zero for good (not JSON), or, with no op,
// spun the sender for ever and hung the process ('{}'). It is removed, with a line in the log.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bucketHolds, teamHarness } from './teamFixture';

process.env.LANCEDB_LOG ??= 'error';

const P = 'git.example.com/acme/tools';
const DAMAGED = [
  ['not JSON', '{"op":"sha'],
  ['null', 'null'],
  ['a share without rows', '{"op":"share"}'],
  ['an unshare without ids', '{"op":"unshare","project":"git.example.com/acme/tools"}'],
  ['no op', '{}'],
] as const;

describe('team store: a damaged entry in the queue of team writes', function () {
  this.timeout(120_000);
  const team = teamHarness();

  for (const [label, bytes] of DAMAGED) {
    it(`(${label}) is removed with a line in the log, and holds back no later share`, async () => {
      const s = await team.server();
      const said: string[] = [];
      const alice = await team.person('Alice', s, { online: true, logger: (m: string) => said.push(m) });
      const scope = { project: P };
      const first = await alice.remember({ title: 'First', text: 'sent before the damage' }, scope);
      assert.equal((await alice.share('memory', first.id, scope)).delivery, 'sent');
      const teamDir = path.join(team.dir(), 'Alice-store', 'team');
      const [id] = fs.readdirSync(teamDir).filter((n) => fs.statSync(path.join(teamDir, n)).isDirectory());
      const outbox = path.join(teamDir, id, 'outbox');
      const damaged = path.join(outbox, '000000000000001-000000000-00000000-0000-0000-0000-000000000000.json');
      fs.writeFileSync(damaged, bytes);

      const later = await alice.remember({ title: 'After the damage', text: 'marker-after-the-damage' }, scope);
      await alice.share('memory', later.id, scope);
      await alice.syncTeam();
      assert.ok((await bucketHolds(s, 'marker-after-the-damage')).length > 0, 'the later share went out');
      assert.equal((await alice.teamStatus())?.pending, 0);
      assert.equal(fs.existsSync(damaged), false);
      assert.match(said.join('\n'), /queued entry 0+1-.*\.json removed, (not JSON|not a share or an unshare): it could never be sent/);
    });
  }
});
