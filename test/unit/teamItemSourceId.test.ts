// A team item's number (its cell's source_id, the id of the memory a look-up by node id gives) is
// derived from its node id, as every writer makes it (teamSourceId). A row written by hand with
// the id of one of the reader's own records (`source_id: 1`) made recall_context's Location say
// `memory/1` and a look-up by node id give memory 1: an agent following either read the reader's
// own memory 1 for the teammate's item.
import { strict as assert } from 'node:assert';
import { teamItemsSchema } from '../../src/core/team/teamTable';
import type { TeamRow } from '../../src/core/team/teamTable';
import { safeTeamRow } from '../../src/core/team/teamMemory';
import { teamSourceId } from '../../src/core/team/shareRows';
import { recallContext } from '../../src/core/tools/recallContext';
import { handTeamRow, injectTeamRows, teamHarness } from './teamFixture';
import type { S3Server } from './fixtures/s3Server';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';
const scope = { project: PROJECT };
const HAND_ID = '11111111-2222-5333-8444-5555555555ff';

const NUMBAT = { node_id: HAND_ID, project: PROJECT, title: 'Numbat feeding rule', text: 'numbats are fed termites at noon', search_text: 'numbat feeding rule numbats are fed termites at noon', origin: 'memory/7' };
const handRow = (dim: number, sourceId: number): Record<string, unknown> => handTeamRow(dim, { ...NUMBAT, source_id: sourceId });
const inject = (s: S3Server, sourceId: number): Promise<void> => injectTeamRows(s, { ...NUMBAT, source_id: sourceId });

describe("team store: a team item's number is its node id's, whatever the row says", function () {
  this.timeout(300_000);
  const team = teamHarness();

  it('safeTeamRow gives the row the source_id its node id derives, and keeps the origin it names', () => {
    const row = safeTeamRow(handRow(16, 1), teamItemsSchema(16));
    assert.equal(typeof row, 'object', String(row));
    const { source_id, origin } = row as TeamRow;
    assert.deepEqual([source_id, origin], [teamSourceId(HAND_ID), 'memory/7']);
  });

  it("a row under the id of one of the reader's memories: recall_context's Location and a look-up by node id do not name that memory", async () => {
    const s = await team.server();
    const bob = await team.person('Bob', s, { online: true });
    const own = await bob.remember({ title: 'Numbat enclosure', text: 'the numbat enclosure is cleaned on mondays' }, scope);
    await inject(s, own.id);
    await bob.syncTeam();
    const pack = await recallContext({ engine: bob, scope }, { query: 'numbat feeding termites' });
    const item = pack.items.find((i) => i.reference === HAND_ID);
    assert.ok(item, `the teammate item is in the pack: ${pack.text}`);
    const node = await bob.getNode(HAND_ID, scope);
    const seen = { source_id: item.source_id, location: item.location, node: (node?.source as { id?: number } | undefined)?.id };
    const derived = teamSourceId(HAND_ID);
    assert.deepEqual(seen, { source_id: derived, location: `memory/${derived}`, node: derived }, `bob's own memory is ${own.id}`);
  });
});
