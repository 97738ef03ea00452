// What the team store brings in is redacted before it is written to this machine: a teammate's
// item that holds a secret (shared by an older build with fewer rules, or put in the bucket by
// hand) was written to the personal store folder (the team cache under it) as it was. Also one
// whose key is split by a terminal escape sequence or a control character: the text is made
// printable first, then redacted (as capture does), or the key came out whole once the sequence
// was taken out, after redaction had looked.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { TeamTable, teamItemsSchema } from '../../src/core/team/teamTable';
import { rowsToArrow } from '../../src/core/store/arrowRows';
import { objectStorageOptions, parseObjectLocation } from '../../src/core/store/objectStorage';
import { redact } from '../../src/core/capture/redact';
import { safeTeamRow } from '../../src/core/team/teamMemory';
import { filesContaining } from './diskFixture';
import { teamHarness } from './teamFixture';
import type { S3Server } from './fixtures/s3Server';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';
const AWS_KEY = 'AKIAZQ9TEAMCACHE7XK2';

async function remoteOf(s: S3Server): Promise<TeamTable> {
  return TeamTable.open('s3://team/acme', objectStorageOptions(parseObjectLocation('s3://team/acme')!, s.env), 16);
}

describe('team store: what a refresh brings in is redacted', function () {
  this.timeout(300_000);
  const team = teamHarness();

  it('a team item holding an AWS key is not written raw into the personal store folder (team cache)', async () => {
    assert.notEqual(redact(`key ${AWS_KEY}`), `key ${AWS_KEY}`, 'control: this build redacts the key');
    const s = await team.server();
    const alice = await team.person('Alice', s, { online: true });
    const m = await alice.remember({ title: 'Legit aardwolf item', text: 'a legit shared item about aardwolf' }, { project: PROJECT });
    assert.equal((await alice.share('memory', m.id, { project: PROJECT })).delivery, 'sent');
    const remote = await remoteOf(s);
    const now = Date.now();
    await remote.table.add(
      rowsToArrow(teamItemsSchema(remote.dimension), [
        {
          node_id: '11111111-2222-5333-8444-555555555555', layer: 'L2', source_kind: 'memory', source_id: 4242, project: PROJECT, branch: null, type: 'note',
          title: 'Deploy credentials aardwolf', text: `The deploy user key is ${AWS_KEY} marker-teamrow-okapi`, search_text: `deploy user key ${AWS_KEY} okapi`,
          files: null, commit_sha: null, session_id: null, created_at_epoch: now, last_accessed_epoch: null, access_count: 0, status: 'active',
          embed_model: '', vector: new Array(remote.dimension).fill(0), shared_by: 'Old Build <old@example.com>', shared_at_epoch: now, origin: 'memory/1',
        },
      ]),
    );
    remote.close();
    const bob = await team.person('Bob', s, { online: true });
    await bob.syncTeam();
    const hits = (await bob.search('okapi aardwolf', { scope: { project: PROJECT } })).filter((h) => h.origin?.store === 'team');
    assert.ok(hits.length > 0, 'control: the teammate item reached Bob');
    await bob.close();
    const bobStore = path.join(team.dir(), 'Bob-store');
    assert.ok(filesContaining(bobStore, 'marker-teamrow-okapi').length > 0, 'control: the byte scan sees the cached item');
    assert.deepEqual(filesContaining(bobStore, AWS_KEY), [], 'no file under the personal store folder holds the AWS key');
  });
  const SPLIT_KEY = 'AKIAZQ9T\u001b[0mEAMSPLIT\u00077XK2';
  const JOINED_KEY = 'AKIAZQ9TEAMSPLIT7XK2';

  it('safeTeamRow redacts a key split by a terminal escape sequence or a control character in the title and text', () => {
    assert.notEqual(redact(`key ${JOINED_KEY}`), `key ${JOINED_KEY}`, 'control: this build redacts the key once joined');
    const now = Date.now();
    const row = safeTeamRow(
      {
        node_id: '11111111-2222-5333-8444-555555555566', layer: 'L2', source_kind: 'memory', source_id: 4242, project: PROJECT, branch: null, type: 'note',
        title: `Deploy ${SPLIT_KEY}`, text: `The deploy user key is ${SPLIT_KEY}`, search_text: 'deploy user key', files: null, commit_sha: null, session_id: null,
        created_at_epoch: now, last_accessed_epoch: null, access_count: 0, status: 'active', embed_model: '', vector: new Array(16).fill(0),
        shared_by: 'Old Build <old@example.com>', shared_at_epoch: now, origin: 'memory/1',
      },
      teamItemsSchema(16),
    );
    assert.equal(typeof row, 'object', String(row));
    const { title, text } = row as { title: string; text: string };
    assert.deepEqual([title.includes(JOINED_KEY), text.includes(JOINED_KEY)], [false, false], `title ${JSON.stringify(title)}, text ${JSON.stringify(text)}`);
  });

  it('a team item whose key is split by an escape sequence is not written whole into the personal store folder', async () => {
    const s = await team.server();
    const remote = await remoteOf(s);
    const now = Date.now();
    await remote.table.add(
      rowsToArrow(teamItemsSchema(remote.dimension), [
        {
          node_id: '11111111-2222-5333-8444-555555555577', layer: 'L2', source_kind: 'memory', source_id: 4242, project: PROJECT, branch: null, type: 'note',
          title: 'Deploy credentials aardwolf', text: `The deploy user key is ${SPLIT_KEY} marker-teamrow-okapi`, search_text: 'deploy user key okapi aardwolf',
          files: null, commit_sha: null, session_id: null, created_at_epoch: now, last_accessed_epoch: null, access_count: 0, status: 'active',
          embed_model: '', vector: new Array(remote.dimension).fill(0), shared_by: 'Old Build <old@example.com>', shared_at_epoch: now, origin: 'memory/1',
        },
      ]),
    );
    remote.close();
    const bob = await team.person('Bob', s, { online: true });
    await bob.syncTeam();
    const [item] = await bob.listShared({ project: PROJECT });
    assert.ok(item?.text.includes('marker-teamrow-okapi'), 'control: the teammate item reached Bob');
    assert.ok(!item.text.includes(JOINED_KEY), `listed: ${JSON.stringify(item.text)}`);
    await bob.close();
    assert.deepEqual(filesContaining(path.join(team.dir(), 'Bob-store'), JOINED_KEY), [], 'no file under the personal store folder holds the AWS key');
  });
});
