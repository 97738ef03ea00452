// A teammate's title or text holding terminal escape sequences (a clipboard write, a screen clear,
// a window title) is shown without them wherever a team item is read: `code-memory team`'s list,
// a look-up by node id, the rows made safe (safeTeamRow), as every read of a search cell is.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { TeamTable, teamItemsSchema } from '../../src/core/team/teamTable';
import { safeTeamRow } from '../../src/core/team/teamMemory';
import { rowsToArrow } from '../../src/core/store/arrowRows';
import { objectStorageOptions, parseObjectLocation } from '../../src/core/store/objectStorage';
import { teamHarness } from './teamFixture';
import type { S3Server } from './fixtures/s3Server';
import { runMain } from './cliInProcess';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';
const scope = { project: PROJECT };
const HAND_ID = '11111111-2222-5333-8444-5555555555aa';
const TITLE = 'Deploy \u001b]52;c;ZWNobyBwd25lZA==\u0007note \u001b[2J\u001b[31mred';
const TEXT = 'gorvanthic \u001b]0;pwned\u0007deploy\r\nsecond \u0008line';
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const ESCAPE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

function handRow(dim: number): Record<string, unknown> {
  const now = Date.now();
  return {
    node_id: HAND_ID, layer: 'L2', source_kind: 'memory', source_id: 4242, project: PROJECT, branch: null, type: 'note',
    title: TITLE, text: TEXT, search_text: 'gorvanthic deploy note', files: null, commit_sha: null, session_id: null, created_at_epoch: now,
    last_accessed_epoch: null, access_count: 0, status: 'active', embed_model: '', vector: new Array(dim).fill(0),
    shared_by: 'Mallory <m@example.com>', shared_at_epoch: now, origin: 'memory/1',
  };
}

/** Puts the row in the team store by hand (anyone who can write the bucket can). */
async function inject(s: S3Server): Promise<void> {
  const remote = await TeamTable.open('s3://team/acme', objectStorageOptions(parseObjectLocation('s3://team/acme')!, s.env), 16);
  await remote.table.add(rowsToArrow(teamItemsSchema(remote.dimension), [handRow(remote.dimension)]));
  remote.close();
}

describe('team store: terminal escape sequences in rows a teammate wrote', function () {
  this.timeout(120_000);
  const team = teamHarness();

  it('safeTeamRow takes them out of the title and text, keeping the words and line breaks', () => {
    const row = safeTeamRow(handRow(16), teamItemsSchema(16));
    assert.equal(typeof row, 'object');
    const { title, text } = row as { title: string; text: string };
    assert.equal(title, 'Deploy note red');
    assert.equal(text, 'gorvanthic deploy\nsecond line');
  });

  it('code-memory team lists the item without them', async () => {
    const s = await team.server();
    await inject(s);
    const store = path.join(team.dir(), 'cli-store');
    const r = await runMain(['team', '--store', store, '--team-store', 's3://team/acme', '--project', PROJECT], { ...s.env, CODE_MEMORY_EMBEDDER: 'none' });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /1 shared item\(s\)[\s\S]*Deploy note red/);
    assert.ok(!ESCAPE.test(r.out.replace(/\n/g, '')), `printed: ${JSON.stringify(r.out)}`);
  });

  it('a look-up by node id and a list give the record without them, from the local copy and before it', async () => {
    const s = await team.server();
    await inject(s);
    // Before the first refresh (read from the team store), then from the local copy.
    const bob = await team.person('Bob', s, { online: true });
    for (const when of ['before the local copy', 'from the local copy']) {
      if (when === 'from the local copy') await bob.syncTeam();
      const node = await bob.getNode(HAND_ID, scope);
      assert.ok(node, `${when}: found`);
      const source = node.source as { title: string; text: string };
      const [item] = await bob.listShared(scope);
      for (const [what, value] of [['node title', source.title], ['node text', source.text], ['list title', item.title], ['list text', item.text]]) {
        assert.ok(!ESCAPE.test(value.replace(/\n/g, '')), `${when}, ${what}: ${JSON.stringify(value)}`);
      }
      assert.match(source.text, /gorvanthic deploy/);
    }
  });
});
