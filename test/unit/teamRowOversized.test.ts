// A row a teammate wrote by hand with a text far beyond anything a client writes (longer than one
// line of an export holds, 16 MiB): each read of it (redaction, the local copy's full-text
// index, every search, recall_context's token count) went over the whole text, so one row of a
// few hundred megabytes stalled every teammate's tools. It is left out of every read like any
// row no client of this version writes (with a line in the log), and the rest of the team store
// is kept.
import { strict as assert } from 'node:assert';
import { teamItemsSchema } from '../../src/core/team/teamTable';
import { MAX_TEAM_VALUE_CHARS, safeTeamRow } from '../../src/core/team/teamMemory';
import { handTeamRow, injectTeamRows, teamHarness } from './teamFixture';
import type { S3Server } from './fixtures/s3Server';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';
const scope = { project: PROJECT };
const HAND_ID = '11111111-2222-5333-8444-5555555555dd';

const WOMBAT = { node_id: HAND_ID, project: PROJECT, title: 'Wombat notes', text: 'wombat burrow notes', search_text: 'wombat burrow notes' };
const handRow = (dim: number, over: Record<string, unknown>): Record<string, unknown> => handTeamRow(dim, { ...WOMBAT, ...over });

const HUGE = 'wombat burrow '.repeat(Math.ceil((MAX_TEAM_VALUE_CHARS + 10) / 14));

describe('team store: a row with a text beyond what a record holds', function () {
  this.timeout(300_000);
  const team = teamHarness();

  for (const column of ['title', 'text', 'search_text', 'shared_by', 'files']) {
    it(`safeTeamRow leaves out a row whose ${column} is longer than ${MAX_TEAM_VALUE_CHARS} characters`, () => {
      const value = column === 'files' ? JSON.stringify([HUGE]) : HUGE;
      const row = safeTeamRow(handRow(16, { [column]: value }), teamItemsSchema(16));
      assert.equal(typeof row, 'string', `kept: ${column} of ${String(value.length)} characters`);
      assert.match(row as string, new RegExp(`${column} is longer than`));
    });
  }

  it('safeTeamRow keeps a row of as many characters (an edited memory may pass the million an imported field holds)', () => {
    const row = safeTeamRow(handRow(16, { text: HUGE.slice(0, MAX_TEAM_VALUE_CHARS) }), teamItemsSchema(16));
    assert.equal(typeof row, 'object');
  });

  it('left out of searches, lists and look-ups, before the local copy and from it; the other items stay', async () => {
    const s: S3Server = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    const m = await alice.remember({ title: 'Wombat release', text: 'the wombat release checklist' }, scope);
    assert.equal((await alice.share('memory', m.id, scope)).delivery, 'sent');
    await injectTeamRows(s, { ...WOMBAT, text: HUGE });
    const logged: string[] = [];
    const bob = await team.person('Bob', s, { online: true, logger: (l) => logged.push(l) });
    for (const when of ['before the local copy', 'from the local copy']) {
      if (when === 'from the local copy') await bob.syncTeam();
      const listed = (await bob.listShared(scope)).map((r) => r.title);
      const found = (await bob.search('wombat', { scope })).filter((h) => h.origin?.store === 'team').map((h) => h.cell.title);
      const node = await bob.getNode(HAND_ID, scope);
      assert.deepEqual({ listed, found, node: node === null }, { listed: ['Wombat release'], found: ['Wombat release'], node: true }, when);
    }
    assert.ok(logged.some((l) => /left out/.test(l) && /text is longer than/.test(l)), logged.join('\n'));
  });
});
