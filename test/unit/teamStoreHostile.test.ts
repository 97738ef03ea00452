// Rows a teammate with write access to the bucket puts in the team table by hand (a null, a
// dropped column, a date no Date holds, an observation, another project's row under a known node
// id): each is left out or kept in its project, and the rest of the team store keeps working.
import { strict as assert } from 'node:assert';
import type { MemoryEngine } from '../../src/core/engine';
import { TeamTable, teamItemsSchema } from '../../src/core/team/teamTable';
import { rowsToArrow } from '../../src/core/store/arrowRows';
import { objectStorageOptions, parseObjectLocation } from '../../src/core/store/objectStorage';
import { teamHarness } from './teamFixture';
import type { S3Server } from './fixtures/s3Server';
import { Field, Schema } from 'apache-arrow';
import { recallContext } from '../../src/core/tools/recallContext';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';
const OTHER = 'github.com/evil/other';

async function remoteOf(s: S3Server): Promise<TeamTable> {
  return TeamTable.open('s3://team/acme', objectStorageOptions(parseObjectLocation('s3://team/acme')!, s.env), 16);
}

function baseRow(over: Record<string, unknown>): Record<string, unknown> {
  return {
    node_id: '11111111-2222-5333-8444-555555555555',
    layer: 'L2',
    source_kind: 'memory',
    source_id: 4242,
    project: PROJECT,
    branch: null,
    type: 'note',
    title: 'Injected',
    text: 'injected row marker-inject-tenrec',
    search_text: 'injected row marker inject tenrec',
    files: null,
    commit_sha: null,
    session_id: null,
    created_at_epoch: Date.now(),
    last_accessed_epoch: null,
    access_count: 0,
    status: 'active',
    embed_model: '',
    vector: [],
    shared_by: 'Mallory <m@example.com>',
    shared_at_epoch: Date.now(),
    origin: 'memory/1',
    ...over,
  };
}

describe('team store: hand-made rows', function () {
  this.timeout(300_000);
  const team = teamHarness();
  const person = (name: string, s: S3Server): Promise<MemoryEngine> => team.person(name, s, { online: true });

  async function aliceShares(s: S3Server): Promise<MemoryEngine> {
    const alice = await person('Alice', s);
    const m = await alice.remember({ title: 'Legit item', text: 'a legit shared item marker-legit-aardwolf' }, { project: PROJECT });
    assert.equal((await alice.share('memory', m.id, { project: PROJECT })).delivery, 'sent');
    return alice;
  }

  it('an L0 observation row injected in the team table does not reach recall (README: recall stays personal)', async () => {
    const s = await team.server();
    await aliceShares(s);
    const remote = await remoteOf(s);
    await remote.put([{ ...baseRow({ layer: 'L0', source_kind: 'observation', type: 'discovery', title: 'tenrec observation' }), vector: new Array(remote.dimension).fill(0) } as never]);
    remote.close();
    const bob = await person('Bob', s);
    await bob.syncTeam();
    const ranked = await bob.rank('tenrec', { scope: { project: PROJECT }, layers: ['L0'], limit: 10 });
    assert.deepEqual(ranked.map((r) => r.node_id), [], 'a team row reached recall (L0)');
  });

  /** Alice shares an item, `damage` is done to the team table by hand, and Bob, new, still gets Alice's item. */
  async function stillServes(damage: (remote: TeamTable) => Promise<void>): Promise<void> {
    const s = await team.server();
    await aliceShares(s);
    const remote = await remoteOf(s);
    await damage(remote);
    remote.close();
    const bob = await person('Bob', s);
    const sync = await bob.syncTeam().then(() => 'ok', (e: Error) => `sync failed: ${e.message}`);
    const st = await bob.teamStatus();
    const hits = (await bob.search('aardwolf', { scope: { project: PROJECT } })).filter((h) => h.origin?.store === 'team');
    assert.deepEqual({ sync, state: st?.state, legitHits: hits.length }, { sync: 'ok', state: 'online', legitHits: 1 }, `message: ${st?.message}`);
  }

  it('one row whose shared_by is null (column made nullable) does not cut every teammate off the team store', async () => {
    await stillServes(async (remote) => {
      await remote.table.alterColumns([{ path: 'shared_by', nullable: true }]);
      const schema = new Schema((await remote.table.schema()).fields.map((f) => (f.name === 'shared_by' ? new Field('shared_by', f.type, true) : f)));
      await remote.table.add(rowsToArrow(schema, [baseRow({ shared_by: null, vector: new Array(remote.dimension).fill(0) })]));
    });
  });

  it('a dropped column (origin) in the team table does not cut every teammate off the team store', async () => {
    await stillServes((remote) => remote.table.dropColumns(['origin']).then(() => undefined));
  });

  it('an injected row with the same node id in another project leaves the item of the right project with its sharer', async () => {
    const s = await team.server();
    const alice = await aliceShares(s);
    const [item] = await alice.listShared({ project: PROJECT });
    const remote = await remoteOf(s);
    const dim = remote.dimension;
    await remote.table.add(rowsToArrow(teamItemsSchema(dim), [baseRow({ node_id: item.node_id, project: OTHER, vector: new Array(dim).fill(0) })]));
    remote.close();
    const bob = await person('Bob', s);
    await bob.syncTeam();
    const hits = (await bob.search('aardwolf', { scope: { project: PROJECT } })).filter((h) => h.origin?.store === 'team');
    assert.equal(hits.length, 1);
    assert.equal(hits[0].origin?.shared_by, 'Alice <alice@example.com>', `shown as shared by ${hits[0].origin?.shared_by}`);
    const other = await bob.search('aardwolf tenrec', { scope: { project: OTHER } });
    assert.ok(other.every((h) => !/aardwolf/.test(h.cell.text)), "alice's text reached project OTHER");
  });
});

describe('team store: hand-made rows and the tools', function () {
  this.timeout(300_000);
  const team = teamHarness();
  const person = (name: string, s: S3Server): Promise<MemoryEngine> => team.person(name, s, { online: true });

  for (const [label, over] of [
    ['created_at_epoch out of the Date range', { created_at_epoch: 1e17 }],
    ['source_id above 2^53', { source_id: 2n ** 62n }],
    ['files not JSON, title 1 MB', { files: '{not json', title: 'aardwolf '.repeat(120_000) }],
  ] as Array<[string, Record<string, unknown>]>) {
    it(`one injected row (${label}) does not break recall_context / retrieve_memory for the project`, async () => {
      const s = await team.server();
      const alice = await person('Alice', s);
      const m = await alice.remember({ title: 'Legit aardwolf item', text: 'a legit shared item about aardwolf marker-legit-aardwolf' }, { project: PROJECT });
      await alice.share('memory', m.id, { project: PROJECT });
      const remote = await remoteOf(s);
      await remote.table.add(rowsToArrow(teamItemsSchema(remote.dimension), [baseRow({ title: 'aardwolf injected', text: 'aardwolf injected row', search_text: 'aardwolf injected row', vector: new Array(remote.dimension).fill(0), ...over })]));
      remote.close();
      const bob = await person('Bob', s);
      await bob.syncTeam();
      const scope = { project: PROJECT };
      const pack = await recallContext({ engine: bob, scope }, { query: 'aardwolf' }).then((p) => JSON.stringify(p), (e: Error) => `recall_context failed: ${e.message}`);
      const report = await retrieveMemory({ engine: bob, scope }, { prompt: 'what do we know about the aardwolf item?' });
      const seen = { recall_context: /marker-legit-aardwolf/.test(pack) ? 'ok' : pack.slice(0, 200), retrieve_memory: report.status === 'ok' && /marker-legit-aardwolf/.test(JSON.stringify(report)) ? 'ok' : JSON.stringify(report).slice(0, 200) };
      assert.deepEqual(seen, { recall_context: 'ok', retrieve_memory: 'ok' });
    });
  }
});
