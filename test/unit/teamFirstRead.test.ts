// A first run (no local copy of the team store yet) reads the team store itself: a search, a
// look-up by node id and a list made right after the open, while the connection is still being
// made (a one-shot CLI command, an agent's first tool call), found nothing of the team, and an
// unshare of an item not in the project said it was unshared.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { MemoryEngine } from '../../src/core/engine';
import { bucketHolds, teamHarness } from './teamFixture';
import { runMain } from './cliInProcess';

process.env.LANCEDB_LOG ??= 'error';
const PROJECT = 'github.com/acme/shared';
const OTHER = 'github.com/acme/other';
const scope = { project: PROJECT };

describe('team store: the first read of a first run', function () {
  this.timeout(120_000);
  const team = teamHarness();

  async function shared(s: Awaited<ReturnType<typeof team.server>>): Promise<string> {
    const alice = await team.person('Alice', s, { online: true });
    const m = await alice.remember({ title: 'Zorblax rollout plan', text: 'zorblax flimwobble marker-first-read' }, scope);
    const result = await alice.share('memory', m.id, scope);
    assert.equal(result.delivery, 'sent');
    return result.preview.node_id;
  }

  it('a search, a look-up by node id and a list right after the open find the item', async () => {
    const s = await team.server();
    const nodeId = await shared(s);
    const fresh = async (name: string): Promise<MemoryEngine> => {
      const engine = await team.person(name, s);
      assert.equal((await engine.teamStatus())?.state, 'connecting', 'the read is made while the connection is being made');
      return engine;
    };
    const hits = await (await fresh('Bob')).search('zorblax flimwobble', { scope, limit: 5 });
    assert.ok(hits.some((h) => h.origin?.store === 'team' && h.cell.node_id === nodeId), `search: ${JSON.stringify(hits.map((h) => h.cell.title))}`);
    assert.equal((await (await fresh('Carol')).getNode(nodeId, scope))?.cell.title, 'Zorblax rollout plan', 'getNode');
    assert.deepEqual((await (await fresh('Dave')).listShared(scope)).map((i) => i.node_id), [nodeId], 'listShared');
  });

  it('CLI on a new store: search and node find the item; unshare of it from another project says nothing was unshared', async () => {
    const s = await team.server();
    const nodeId = await shared(s);
    const env = { ...s.env, CODE_MEMORY_EMBEDDER: 'none' };
    const run = (project: string, ...args: string[]) =>
      runMain([...args, '--store', path.join(team.dir(), `cli-${args[0]}`), '--team-store', 's3://team/acme', '--project', project], env);
    const found = await run(PROJECT, 'search', 'zorblax flimwobble');
    assert.match(found.out, /Zorblax rollout plan[^\n]*\[team, shared by Alice/, found.out + found.err);
    const node = await run(PROJECT, 'node', nodeId);
    assert.equal(node.code, 0, node.err);
    assert.match(node.out, /marker-first-read/);
    const un = await run(OTHER, 'unshare', '--node', nodeId);
    assert.notEqual(un.code, 0, un.out);
    assert.match(un.err, /nothing was unshared/);
    assert.ok((await bucketHolds(s, 'marker-first-read')).length > 0, 'the item stays');
  });
});
